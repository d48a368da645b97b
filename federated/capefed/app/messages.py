"""What travels: payloads (configuration values and arrays) and the log of every message of a round.

A :class:`Payload` is the transport-independent content of one message: a dict of configuration values (int,
float, str, bytes, bool, or lists of one of them) and a dict of float64 arrays. The Flower apps turn it into a
``RecordDict`` (``wire``); the in-process transport passes copies.

The message log (``dpcore.federation.LogEntry``, format ``capefed-message-log-v1``) has two kinds of entries:

* ``protocol`` entries are the messages of the CAPE round as ``dpcore.cape.protocol`` lists them (helper noise,
  aggregator noise, releases, W, the published output), with their logical sender and receiver (a helper share
  is "helper -> site s" although it passes the aggregator sealed: ``route`` says so);
* ``control`` entries are what the real flow needs on top: the hello and its answer, the design the aggregator
  sends the helper, acknowledgements.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import dp

__all__ = ["BUNDLE", "Payload", "bundle", "config_bytes", "message_log_round", "read_log", "site_label", "unbundle",
           "write_log"]

BUNDLE = "bundle"
"""The action of a message that carries several requests (or replies) for one node, one per round."""
_KEYS, _ACTIONS, _SEP = "bundle:keys", "bundle:actions", "#"


def site_label(name: str) -> str:
    """How dpcore.cape.protocol names a site party."""
    return f"site {name}"


@dataclass
class Payload:
    """Configuration values and float64 arrays of one message; ``notes``: lines a party writes into its own log about
    it (never sent)."""

    config: dict[str, Any] = field(default_factory=dict)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def copy(self) -> Payload:
        config = {k: (list(v) if isinstance(v, list) else v) for k, v in self.config.items()}
        return Payload(config, {k: np.array(v, copy=True) for k, v in self.arrays.items()})

    @property
    def nbytes(self) -> int:
        """Bytes of the values themselves: arrays, strings (UTF-8), byte strings, 8 per number."""
        return config_bytes(self.config) + sum(int(a.nbytes) for a in self.arrays.values())


def bundle(items: list[tuple[str, str, Payload]]) -> Payload:
    """One payload holding several (key, action, payload) items; keys must not contain "#"."""
    out = Payload({_KEYS: [k for k, _, _ in items], _ACTIONS: [a for _, a, _ in items]})
    for key, _, payload in items:
        if _SEP in key:
            raise ValueError(f"bundle keys cannot contain {_SEP!r}: {key!r}")
        out.config.update({f"{key}{_SEP}{name}": value for name, value in payload.config.items()})
        out.arrays.update({f"{key}{_SEP}{name}": value for name, value in payload.arrays.items()})
    return out


def unbundle(payload: Payload) -> list[tuple[str, str, Payload]]:
    """The (key, action, payload) items of :func:`bundle`; raises ValueError for anything else."""
    keys, actions = payload.config.get(_KEYS), payload.config.get(_ACTIONS)
    if not isinstance(keys, list) or not isinstance(actions, list) or len(keys) != len(actions):
        raise ValueError("not a bundle of requests")
    items = {str(k): (str(a), Payload()) for k, a in zip(keys, actions, strict=True)}
    for source, target in ((payload.config, "config"), (payload.arrays, "arrays")):
        for name, value in source.items():
            if name in (_KEYS, _ACTIONS):
                continue
            key, _, inner = name.partition(_SEP)
            if key not in items:
                raise ValueError(f"bundle entry {name!r} belongs to no item")
            getattr(items[key][1], target)[inner] = value
    return [(k, a, p) for k, (a, p) in items.items()]


def _value_bytes(value: Any) -> int:
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, list):
        return sum(_value_bytes(v) for v in value)
    return 8


def config_bytes(config: dict[str, Any], keys: list[str] | None = None) -> int:
    """Bytes of some (default all) configuration values, counted as :attr:`Payload.nbytes` does."""
    return sum(_value_bytes(config[k]) for k in (config if keys is None else keys))


def message_log_round(outcome: Mapping[str, Any]) -> dict[str, Any]:
    """One round of the message log (``capefed-message-log-v1``) from the aggregator's outcome: its status, the
    messages, the timings of the exchanges, and the plan's settings and sites (what rebuilds the design)."""
    plan = outcome.get("plan")
    return {"algorithm": outcome["algorithm"], "status": outcome["status"], "reason": outcome["reason"],
            "seconds": outcome["seconds"], "entries": outcome["log"], "exchanges": outcome["exchanges"],
            "plan": None if not plan else {"settings": plan["settings"], "sites": plan["sites"]}}


def write_log(path: str | Path, rounds: list[dict[str, Any]]) -> None:
    """Write the message log ``{"format": LOG_FORMAT, "rounds": [...]}`` (read back by
    ``dpcore.federation.parse_message_log``); each round holds its algorithm, status, reason, seconds, entries,
    exchanges and plan."""
    Path(path).write_text(json.dumps({"format": dp.LOG_FORMAT, "rounds": rounds}, indent=1) + "\n")


def read_log(path: str | Path) -> dp.MessageLog:
    """A message log file, checked (``dpcore.federation.parse_message_log``)."""
    return dp.parse_message_log(dp.read_file(path, dp.MAX_MESSAGE_LOG_BYTES, "the message log"))
