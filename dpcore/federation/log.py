"""The message log of a federated run (format ``capefed-message-log-v1``, written by ``federated/`` as
``federated-run/message-log.json``): reading it back with every size checked, and comparing each round with the
messages :mod:`dpcore.cape.protocol` lists for the same design (docs/federated.md, "The message log").

The file is JSON: ``{"format": "capefed-message-log-v1", "rounds": [round, ...]}``; a round has ``algorithm``,
``status`` ("released", "refused" or "stopped"), ``reason``, ``seconds``, ``entries`` (one :class:`LogEntry` per
message) and ``plan`` (the settings and the sites' reported budgets, from which :func:`plan_round` rebuilds the
design, so the protocol's round for the same design can be listed beside the real one). Other keys (``exchanges``:
timings) are ignored here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..cape import SOLVERS
from ..cape.noise_variants import NOISE_VARIANTS
from ..cape.protocol import Message, ProtocolRound
from ..cape.stages import AGN_MODELS
from ..limits import (
    MAX_FEDERATED_MATRIX_DIM,
    MAX_MESSAGE_LOG_BYTES,
    MAX_MESSAGE_LOG_DEPTH,
    MAX_MESSAGE_LOG_ENTRIES,
    MAX_MESSAGE_LOG_ROUNDS,
    MAX_POWER_ITERATIONS,
    MAX_POWER_RESTARTS,
    MAX_SEED,
    MAX_SIGMA2,
    MAX_SITES,
    NORM_BOUND_RANGE,
    SPLIT_RANGE,
)
from ..privacy import CALIBRATIONS, NEIGHBOURING
from ..scenario import site_errors
from ..tensor.release import M3_NOISE
from ..textio import load_json
from ..validation import InputError, check_choice, check_int_range, check_range
from .algorithms import federated_algorithm
from .plan import AGN_PATHS, ROUND_STAGES, RoundPlan, RoundSettings, SiteBudget, plan_round

__all__ = ["CHANNELS", "LOG_FORMAT", "ROUND_STATUSES", "ComparedMessage", "LogEntry", "LoggedRound", "MessageLog",
           "compare_with_protocol", "parse_message_log", "protocol_differences", "protocol_round",
           "round_protocol"]

LOG_FORMAT = "capefed-message-log-v1"
CHANNELS = ("private", "to aggregator", "broadcast", "public", "control")
"""How a message travels: "private" (to one party; a helper share is sealed and passes the aggregator), "to
aggregator", "broadcast" (the same to every site), "public" (published) or "control" (not a protocol message)."""
ROUND_STATUSES = ("released", "refused", "stopped")
_MAX_TEXT = 300  # characters of one string field
_MAX_DIM = 10**7  # one dimension of a logged shape


@dataclass(frozen=True, kw_only=True)
class LogEntry:
    """One message. ``numbers`` is the dense count of the object (D^2 for a D x D matrix), ``unique`` the entries
    that travel (D(D+1)/2 for a symmetric one), ``bytes`` what the payload occupied (a sealed share: ciphertext).
    ``protocol``: one of the messages :mod:`dpcore.cape.protocol` lists (with its logical sender and receiver;
    ``route`` says which parties it passed), otherwise a control message of the real flow."""

    algorithm: str
    stage: str
    step: int
    sender: str
    receiver: str
    content: str
    shape: tuple[int, ...]
    numbers: int
    unique: int
    bytes: int
    channel: str
    route: tuple[str, ...]
    protocol: bool
    site: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["shape"] = list(self.shape)
        out["route"] = list(self.route)
        return out


@dataclass(frozen=True, kw_only=True)
class LoggedRound:
    """One round of a message log; ``settings`` and ``budgets`` are None when the log has no plan (a round refused
    before the sites answered)."""

    algorithm: str
    status: str
    reason: str | None
    seconds: float
    entries: tuple[LogEntry, ...]
    settings: RoundSettings | None = None
    budgets: tuple[SiteBudget, ...] | None = None


@dataclass(frozen=True, kw_only=True)
class MessageLog:
    rounds: tuple[LoggedRound, ...]


# ---------------------------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------------------------

def _field(data: Mapping[str, Any], key: str, kinds: tuple[type, ...], where: str, *, optional: bool = False) -> Any:
    if key not in data:
        if optional:
            return None
        raise InputError(f"{where}: the field {key!r} is missing")
    value = data[key]
    if value is None and optional:
        return None
    bad_bool = isinstance(value, bool) and bool not in kinds
    if bad_bool or not isinstance(value, kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise InputError(f"{where}: {key} must be {names} (got {type(value).__name__})")
    if isinstance(value, str) and len(value) > _MAX_TEXT:
        raise InputError(f"{where}: {key} is longer than {_MAX_TEXT} characters")
    if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= 10**15:
        raise InputError(f"{where}: {key} must be between 0 and 10^15 (got {value})")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{where}: {key} must be a finite number")
    return value


def _text_list(value: Any, key: str, where: str, longest: int) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > longest or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: {key} must be a list of at most {longest} strings")
    if any(len(v) > _MAX_TEXT for v in value):
        raise InputError(f"{where}: an entry of {key} is longer than {_MAX_TEXT} characters")
    return tuple(value)


def _entry(data: Any, where: str) -> LogEntry:
    if not isinstance(data, dict):
        raise InputError(f"{where}: a message must be a JSON object")
    values: dict[str, Any] = {key: _field(data, key, (str,), where)
                              for key in ("algorithm", "stage", "sender", "receiver", "content", "channel")}
    values.update({key: _field(data, key, (int,), where) for key in ("step", "numbers", "unique", "bytes")})
    values["protocol"] = _field(data, "protocol", (bool,), where)
    values["site"] = _field(data, "site", (str,), where, optional=True)
    shape = data.get("shape")
    if (not isinstance(shape, list) or len(shape) > 3
            or not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= _MAX_DIM for d in shape)):
        raise InputError(f"{where}: shape must be a list of at most 3 sizes between 0 and {_MAX_DIM:,}")
    values["shape"] = tuple(shape)
    values["route"] = _text_list(data.get("route"), "route", where, 4)
    if values["channel"] not in CHANNELS:
        raise InputError(f"{where}: channel must be one of {', '.join(CHANNELS)} (got {values['channel']!r})")
    return LogEntry(**values)


def _optional(check: Callable[..., Any]) -> Callable[..., Any]:
    return lambda value, name: None if value is None else check(value, name)


_SETTING_RULES: dict[str, Callable[[Any, str], Any]] = {
    "algorithm": lambda v, name: check_choice(v, name, tuple(ROUND_STAGES)),
    "k": lambda v, name: check_int_range(v, name, 1, MAX_FEDERATED_MATRIX_DIM),
    "neighbouring": lambda v, name: check_choice(v, name, NEIGHBOURING),
    "calibration": lambda v, name: check_choice(v, name, CALIBRATIONS),
    "solver": lambda v, name: check_choice(v, name, SOLVERS),
    "collusion": _optional(lambda v, name: check_int_range(v, name, 0, MAX_SITES - 1)),
    "split": lambda v, name: check_range(v, name, *SPLIT_RANGE),
    "model": lambda v, name: check_choice(v, name, tuple(AGN_MODELS)),
    "sigma2": _optional(lambda v, name: check_range(v, name, 0.0, MAX_SIGMA2)),
    "norm_bound": _optional(lambda v, name: check_range(v, name, *NORM_BOUND_RANGE)),
    "path": lambda v, name: check_choice(v, name, AGN_PATHS),
    "m3_noise": lambda v, name: check_choice(v, name, tuple(M3_NOISE)),
    "n_restarts": lambda v, name: check_int_range(v, name, 1, MAX_POWER_RESTARTS),
    "n_iter": lambda v, name: check_int_range(v, name, 1, MAX_POWER_ITERATIONS),
    "run": lambda v, name: check_int_range(v, name, 0, MAX_SEED),
    "noise": lambda v, name: check_choice(v, name, tuple(NOISE_VARIANTS)),
    "dropouts": lambda v, name: check_int_range(v, name, 0, MAX_SITES - 1),
}
"""Every setting of a round's plan (:class:`RoundSettings`) with the rule the rest of dpcore applies to it: the
ranges of :mod:`dpcore.limits` (``--split``, ``--norm-bound``, ``--restarts`` ... on the command line), checked
before anything is computed from them; text where a number belongs is refused, not converted."""


def _settings(data: dict[str, Any], where: str) -> RoundSettings:
    values = {}
    for key, value in data.items():
        if key not in _SETTING_RULES:
            continue  # settings of a later format version are not needed to rebuild the design
        try:
            checked = _SETTING_RULES[key](value, key)
        except InputError as exc:
            raise InputError(f"{where}, plan settings: {exc}", key) from None
        values[key] = checked
    try:
        return RoundSettings(**values).validated()
    except (TypeError, InputError) as exc:
        raise InputError(f"{where}, plan settings: {exc}") from None


def _budget(index: int, raw: Any, where: str) -> SiteBudget:
    """One site of a plan with the scenario's rules and messages (name, n, eps, delta, weight) and its D."""
    if not isinstance(raw, dict):
        raise InputError(f"{where}, plan site {index + 1}: a site must be a JSON object")
    errors, site = site_errors(index, {key: value for key, value in raw.items() if key != "dim"})
    if errors:
        raise InputError(f"{where}, plan {'; '.join(str(e) for e in errors)}")
    label = f"{where}, plan site {index + 1} ({site.name})"
    try:
        dim = check_int_range(raw.get("dim"), "dim", 1, MAX_FEDERATED_MATRIX_DIM)
    except InputError as exc:
        raise InputError(f"{label}, {exc}") from None
    return SiteBudget(site=site, dim=dim)


def _plan(data: Any, algorithm: str, where: str) -> tuple[RoundSettings, tuple[SiteBudget, ...]] | None:
    """A round's plan: every setting and every site checked with the rules of the rest of dpcore (the scenario's
    for the sites) before :func:`plan_round` may compute anything from them."""
    if data is None:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("settings"), dict) or not isinstance(
            data.get("sites"), list):
        raise InputError(f"{where}: plan must be an object with 'settings' and 'sites'")
    settings = _settings(data["settings"], where)
    if settings.algorithm != algorithm:
        raise InputError(f"{where}: the plan is for {settings.algorithm}, the round for {algorithm}")
    if len(data["sites"]) > MAX_SITES:
        raise InputError(f"{where}: the plan has more than {MAX_SITES} sites")
    return settings, tuple(_budget(i, site, where) for i, site in enumerate(data["sites"]))


def _round(data: Any, where: str, budget: list[int]) -> LoggedRound:
    if not isinstance(data, dict):
        raise InputError(f"{where}: a round must be a JSON object")
    algorithm = _field(data, "algorithm", (str,), where)
    if algorithm not in ROUND_STAGES:
        raise InputError(f"{where}: algorithm must be one of {', '.join(ROUND_STAGES)} (got {algorithm!r})")
    status = _field(data, "status", (str,), where)
    if status not in ROUND_STATUSES:
        raise InputError(f"{where}: status must be one of {', '.join(ROUND_STATUSES)} (got {status!r})")
    reason = data.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise InputError(f"{where}: reason must be text or null")
    seconds = _field(data, "seconds", (int, float), where, optional=True)
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise InputError(f"{where}: entries must be a list of messages")
    budget[0] -= len(entries)
    if budget[0] < 0:
        raise InputError(f"the message log has more than {MAX_MESSAGE_LOG_ENTRIES:,} messages")
    parsed = tuple(_entry(e, f"{where}, message {i + 1}") for i, e in enumerate(entries))
    plan = _plan(data.get("plan"), algorithm, where)
    return LoggedRound(algorithm=algorithm, status=status, reason=reason[:2000] if reason else None,
                       seconds=float(seconds or 0.0), entries=parsed, settings=plan[0] if plan else None,
                       budgets=plan[1] if plan else None)


def parse_message_log(content: bytes | str) -> MessageLog:
    """A message log from its JSON text, every field checked; raises InputError saying what is wrong (size, JSON,
    format, nesting, a field of a round or message). Bounded before it is parsed (:data:`MAX_MESSAGE_LOG_BYTES`),
    then by :data:`MAX_MESSAGE_LOG_DEPTH`, :data:`MAX_MESSAGE_LOG_ROUNDS` and :data:`MAX_MESSAGE_LOG_ENTRIES`."""
    size = len(content.encode() if isinstance(content, str) else content)
    if size > MAX_MESSAGE_LOG_BYTES:
        raise InputError(f"the message log has {size:,} bytes, more than the {MAX_MESSAGE_LOG_BYTES:,} allowed")
    data = load_json(content, "message log", max_bytes=MAX_MESSAGE_LOG_BYTES, max_depth=MAX_MESSAGE_LOG_DEPTH)
    if not isinstance(data, dict) or data.get("format") != LOG_FORMAT:
        raise InputError(f"not a message log of a federated run: the field 'format' must be {LOG_FORMAT!r}")
    rounds = data.get("rounds")
    if not isinstance(rounds, list) or not rounds:
        raise InputError("the message log has no list of rounds")
    if len(rounds) > MAX_MESSAGE_LOG_ROUNDS:
        raise InputError(f"the message log has {len(rounds)} rounds, more than the {MAX_MESSAGE_LOG_ROUNDS} allowed")
    budget = [MAX_MESSAGE_LOG_ENTRIES]
    return MessageLog(rounds=tuple(_round(r, f"round {i + 1}", budget) for i, r in enumerate(rounds)))


# ---------------------------------------------------------------------------------------------------------------
# Comparing with the protocol
# ---------------------------------------------------------------------------------------------------------------

def protocol_round(plan: RoundPlan) -> ProtocolRound:
    """:mod:`dpcore.cape.protocol`'s round for a planned federated round (capeAGN on the plan's path)."""
    return federated_algorithm(plan.settings.algorithm).protocol(plan)


def round_protocol(logged: LoggedRound) -> ProtocolRound:
    """The protocol's round for the design of a logged round, rebuilt from its plan (:func:`plan_round`); raises
    InputError when the log has no plan or the plan is refused."""
    if logged.settings is None or logged.budgets is None:
        raise InputError(f"the {logged.algorithm} round of this log has no plan (it ended before the sites "
                         "reported their budgets), so there is no design to compare with")
    plan = plan_round(logged.budgets, logged.settings)
    if plan.refusal:
        raise InputError(f"the {logged.algorithm} round was refused: {plan.refusal}")
    return protocol_round(plan)


@dataclass(frozen=True, kw_only=True)
class ComparedMessage:
    """One kind of message (step, sender, receiver, content) in the real run and in the protocol: shape, dense
    count, unique entries and how many times it was sent (0: absent). ``status`` is "same", "different", "only in
    the run" or "only in the protocol"."""

    step: int
    sender: str
    receiver: str
    content: str
    run_shape: tuple[int, ...] | None
    run_numbers: int | None
    run_unique: int | None
    run_count: int
    protocol_shape: tuple[int, ...] | None
    protocol_numbers: int | None
    protocol_unique: int | None
    protocol_count: int
    status: str


def _key(step: int, sender: str, receiver: str, content: str) -> tuple[int, str, str, str]:
    return (int(step), sender, receiver, content)


def _sizes(items: Sequence[Any]) -> tuple[tuple[int, ...], int, int] | None:
    if not items:
        return None
    first = items[0]
    return tuple(int(d) for d in first.shape), int(first.numbers), int(first.unique)


def compare_with_protocol(entries: Sequence[LogEntry], expected: ProtocolRound) -> list[ComparedMessage]:
    """Every protocol message of the log beside the one the protocol lists with the same (step, sender, receiver,
    content), in the protocol's order, then what only the run sent. "same" needs equal shape, dense count, unique
    entries and multiplicity (every copy of a kind must agree)."""
    run: dict[tuple, list[LogEntry]] = {}
    for e in entries:
        if e.protocol:
            run.setdefault(_key(e.step, e.sender, e.receiver, e.content), []).append(e)
    listed: dict[tuple, list[Message]] = {}
    for m in expected.messages:
        listed.setdefault(_key(m.step, m.sender, m.receiver, m.content), []).append(m)
    rows = []
    for key in [*listed, *(k for k in run if k not in listed)]:
        mine, theirs = run.get(key, []), listed.get(key, [])
        real, proto = _sizes(mine), _sizes(theirs)
        if not mine or not theirs:
            status = "only in the run" if mine else "only in the protocol"
        else:
            uniform = len({(tuple(e.shape), e.numbers, e.unique) for e in mine}) == 1
            status = "same" if uniform and real == proto and len(mine) == len(theirs) else "different"
        rows.append(ComparedMessage(
            step=key[0], sender=key[1], receiver=key[2], content=key[3],
            run_shape=real[0] if real else None, run_numbers=real[1] if real else None,
            run_unique=real[2] if real else None, run_count=len(mine),
            protocol_shape=proto[0] if proto else None, protocol_numbers=proto[1] if proto else None,
            protocol_unique=proto[2] if proto else None, protocol_count=len(theirs), status=status))
    return rows


def protocol_differences(entries: Sequence[LogEntry], plan: RoundPlan) -> list[str]:
    """The messages of a log that differ from the protocol's round for ``plan`` (empty: the same steps, parties,
    shapes and counts), one line each."""
    lines = []
    for row in compare_with_protocol(entries, protocol_round(plan)):
        if row.status != "same":
            lines.append(f"{row.status}: step {row.step} {row.sender} -> {row.receiver} {row.content}: run "
                         f"{row.run_shape} x{row.run_count}, protocol {row.protocol_shape} x{row.protocol_count}")
    return lines
