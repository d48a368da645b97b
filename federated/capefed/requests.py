"""Every field of a request a node receives, checked once at the node-handler boundary: its type, size and range,
with a message that names the field and says what is allowed (:class:`RequestError`). Nothing below indexes a
request directly.

The round's context travels with every request after the hello: the round id, the public settings (JSON of
``RoundSettings.to_dict``) and the sites' signed statements (:mod:`capefed.trust`); :func:`round_context` verifies
the statements against the roster and recomputes the plan from them, which is the plan the node then checks
everything else against.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import dp
from .trust import Roster, Statement, TrustError, verify_statement

__all__ = ["MAX_BLOB_BYTES", "RequestError", "RoundContext", "array", "blob", "integer", "number", "plan_digest",
           "ring_array", "round_context", "text", "texts"]

MAX_TEXT = 256
MAX_SETTINGS_CHARS = 4096
MAX_BLOB_BYTES = 64 * 1024 * 1024
"""Largest byte string a request field may carry (a sealed share of the largest noise object the plan allows)."""


class RequestError(ValueError):
    """A request field that is missing, of the wrong type, too large or outside the plan; the message says which."""


def text(c: Mapping[str, Any], key: str, *, limit: int = MAX_TEXT, choices: Sequence[str] | None = None) -> str:
    value = c.get(key)
    if not isinstance(value, str) or len(value) > limit:
        raise RequestError(f"the request field {key!r} must be text of at most {limit} characters (got "
                           f"{type(value).__name__})")
    if choices is not None and value not in choices:
        raise RequestError(f"the request field {key!r} must be one of {', '.join(choices)} (got {value[:40]!r})")
    return value


def integer(c: Mapping[str, Any], key: str, lo: int, hi: int) -> int:
    value = c.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise RequestError(f"the request field {key!r} must be an integer in {lo}..{hi} (got {value!r:.40})")
    return value


def number(c: Mapping[str, Any], key: str, lo: float, hi: float) -> float:
    value = c.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)) or not (
            lo <= float(value) <= hi):
        raise RequestError(f"the request field {key!r} must be a finite number in [{lo:g}, {hi:g}] (got "
                           f"{value!r:.40})")
    return float(value)


def texts(c: Mapping[str, Any], key: str, *, most: int, limit: int = MAX_TEXT) -> list[str]:
    value = c.get(key)
    if (not isinstance(value, list) or len(value) > most
            or not all(isinstance(v, str) and len(v) <= limit for v in value)):
        raise RequestError(f"the request field {key!r} must be a list of at most {most} texts of at most {limit} "
                           "characters")
    return list(value)


def blob(c: Mapping[str, Any], key: str, *, most: int = MAX_BLOB_BYTES) -> bytes:
    value = c.get(key)
    if not isinstance(value, bytes) or len(value) > most:
        raise RequestError(f"the request field {key!r} must be bytes, at most {most:,} (got {type(value).__name__})")
    return value


def array(arrays: Mapping[str, np.ndarray], key: str, shape: tuple[int, ...]) -> np.ndarray:
    """A float array of exactly ``shape`` with finite values."""
    value = arrays.get(key)
    if value is None:
        raise RequestError(f"the request has no array {key!r} ({' x '.join(map(str, shape))} needed)")
    value = np.asarray(value)
    if value.shape != shape or not np.issubdtype(value.dtype, np.floating) or not np.all(np.isfinite(value)):
        raise RequestError(f"the request array {key!r} must be {' x '.join(map(str, shape))} finite floating-point "
                           f"numbers (got shape {value.shape}, type {value.dtype})")
    return np.asarray(value, dtype=float)


def ring_array(arrays: Mapping[str, np.ndarray], key: str, shape: tuple[int, ...]) -> np.ndarray:
    """Integers of exactly ``shape`` that travel as ring elements (uint64, two's complement), as int64."""
    value = arrays.get(key)
    if value is None:
        raise RequestError(f"the request has no array {key!r} ({' x '.join(map(str, shape))} integers needed)")
    value = np.asarray(value)
    if value.shape != shape or value.dtype != np.uint64:
        raise RequestError(f"the request array {key!r} must be {' x '.join(map(str, shape))} integers as ring "
                           f"elements (uint64; got shape {value.shape}, type {value.dtype})")
    return value.view(np.int64)


def _settings(c: Mapping[str, Any]) -> dp.RoundSettings:
    raw = text(c, "settings", limit=MAX_SETTINGS_CHARS)
    try:
        data = dp.load_json(raw, "request field 'settings'", max_bytes=MAX_SETTINGS_CHARS)
    except dp.InputError as exc:
        raise RequestError(str(exc)) from None
    if not isinstance(data, dict):
        raise RequestError("the request field 'settings' must be a JSON object")
    fields = dp.RoundSettings.__dataclass_fields__
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise RequestError(f"the round settings have unknown fields: {', '.join(unknown)[:200]}")
    for key, value in data.items():
        if isinstance(value, (dict, list)) or (isinstance(value, str) and len(value) > MAX_TEXT):
            raise RequestError(f"the round setting {key!r} must be a number, a short text or null")
        if isinstance(value, float) and not math.isfinite(value):
            raise RequestError(f"the round setting {key!r} must be finite")
    for key in ("k", "run", "n_restarts", "n_iter", "dropouts"):
        if key in data and (isinstance(data[key], bool) or not isinstance(data[key], int)):
            raise RequestError(f"the round setting {key!r} must be an integer")
    try:
        return dp.RoundSettings(**data).validated()
    except (TypeError, ValueError) as exc:
        raise RequestError(f"the round settings are not valid: {exc}") from exc


def _budget(statement: Statement) -> dp.SiteBudget:
    b = statement.budget
    ints = all(isinstance(b.get(k), int) and not isinstance(b.get(k), bool) for k in ("n", "dim"))
    floats = all(isinstance(b.get(k), (int, float)) and not isinstance(b.get(k), bool) for k in ("eps", "delta"))
    weight = b.get("weight")
    if (not ints or not floats or b.get("name") != statement.name
            or not (weight is None or (isinstance(weight, (int, float)) and not isinstance(weight, bool)))):
        raise RequestError(f"the statement of site {statement.name} has an invalid budget")
    site = dp.Site(name=statement.name, n=b["n"], eps=float(b["eps"]), delta=float(b["delta"]),
                   weight=None if weight is None else float(weight))
    return dp.SiteBudget(site=site, dim=b["dim"])


@dataclass(frozen=True, kw_only=True)
class RoundContext:
    """The verified context of a request: the round, the settings, the sites' statements by name (sorted), the
    plan the node computed from them and ``digest``, the SHA-256 of the round id, the settings and the statements
    (:func:`plan_digest`): every party binds what it seals, signs and releases in a round to it, so two parties shown
    different settings or statements cannot be made to act on two plans."""

    round_id: str
    settings: dp.RoundSettings
    statements: dict[str, Statement]
    plan: dp.RoundPlan
    digest: str = ""

    def index(self, name: str) -> int:
        return self.plan.names.index(name)


def plan_digest(round_id: str, settings: dp.RoundSettings, statements: Mapping[str, str]) -> str:
    """SHA-256 (hex) of the canonical JSON of the round id, the settings and the signed statements' texts, sorted by
    site."""
    text = json.dumps({"round": round_id, "settings": settings.to_dict(),
                       "statements": [statements[name] for name in sorted(statements)]},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@functools.lru_cache(maxsize=16)
def _planned(budgets: tuple[dp.SiteBudget, ...], settings: dp.RoundSettings) -> dp.RoundPlan:
    """``dp.plan_round``, kept for the few rounds a node is in: every request of a round recomputes the same plan from
    the same values (deterministic), and a collusion-robust design takes a tenth of a second."""
    return dp.plan_round(budgets, settings)


def round_context(c: Mapping[str, Any], roster: Roster) -> RoundContext:
    """Verify the round's context of a request and compute the plan (:mod:`capefed.requests` docstring)."""
    round_id = text(c, "round")
    settings = _settings(c)
    statements = texts(c, "statements", most=dp.MAX_SITES, limit=4096)
    signatures = c.get("signatures")
    if not isinstance(signatures, list) or len(signatures) != len(statements):
        raise RequestError("the request must carry one signature per site statement")
    verified: dict[str, Statement] = {}
    for statement, signature in zip(statements, signatures, strict=True):
        try:
            checked = verify_statement(roster, statement, signature, round_id)
        except TrustError as exc:
            raise RequestError(str(exc)) from exc
        if checked.name in verified:
            raise RequestError(f"site {checked.name} appears twice among the statements")
        verified[checked.name] = checked
    budgets = sorted((_budget(s) for s in verified.values()), key=lambda b: b.name)
    try:
        plan = _planned(tuple(budgets), settings)
    except dp.InputError as exc:
        raise RequestError(f"the round's settings cannot be planned: {exc}") from exc
    if plan.refusal:
        raise RequestError(f"the plan computed from the sites' signed budgets is refused: {plan.refusal}")
    return RoundContext(round_id=round_id, settings=settings, statements=dict(sorted(verified.items())), plan=plan,
                        digest=plan_digest(round_id, plan.settings, {n: v.text for n, v in verified.items()}))
