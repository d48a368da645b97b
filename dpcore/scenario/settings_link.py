"""A page's own settings in its link (``?settings=``): the widget values that differ from the page's defaults, as
compact JSON, and back, each value checked against its default's type and the page's allowed values (docs/dashboard.md,
"Links"). Nothing a link holds is trusted: a value of the wrong type, out of the allowed values or for an unknown key
is dropped with a message, and the page keeps its default for it."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from typing import Any

from ..limits import MAX_SETTINGS_QUERY_CHARS
from ..textio import load_json
from ..validation import InputError

__all__ = ["SETTINGS_KEY", "encode_settings", "settings_from_query", "settings_to_query"]

SETTINGS_KEY = "settings"

Allowed = Callable[[Any], bool] | Collection[Any]


def _plain(value: Any) -> Any:
    """numpy scalars and tuples as JSON values."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    return str(value)


def encode_settings(values: Mapping[str, Any]) -> str:
    """Compact JSON of ``values`` (keys sorted), '' when empty: the ``?settings=`` value."""
    return json.dumps(dict(values), separators=(",", ":"), sort_keys=True, default=_plain) if values else ""


def settings_to_query(values: Mapping[str, Any], defaults: Mapping[str, Any]) -> str:
    """The ``?settings=`` value: compact JSON of the values of ``defaults``' keys that differ from their defaults
    ('' when none differs)."""
    return encode_settings({key: values[key] for key in defaults if key in values and values[key] != defaults[key]})


def _fits(value: Any, default: Any) -> bool:
    """``value`` has ``default``'s type (int for int, a number for float, a list of like items for a list)."""
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, str):
        return isinstance(value, str)
    if isinstance(default, (list, tuple)):
        return isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
                                               for v in value)
    return False


def settings_from_query(value: Any, defaults: Mapping[str, Any], allowed: Mapping[str, Allowed] | None = None,
                        ) -> tuple[dict[str, Any], list[str]]:
    """The settings of a ``?settings=`` value for a page with ``defaults``, and one message per value dropped.
    ``allowed`` maps a key to a predicate or a collection of allowed values (a list value: each item)."""
    allowed = allowed or {}
    if isinstance(value, list):
        value = value[-1] if value else ""
    if not isinstance(value, str) or not value.strip():
        return {}, []
    if len(value) > MAX_SETTINGS_QUERY_CHARS:
        return {}, [f"the page settings in the link are too long ({len(value):,} characters; at most "
                    f"{MAX_SETTINGS_QUERY_CHARS:,}); the page's defaults are used"]
    try:
        data = load_json(value, "page settings")
    except InputError as exc:
        return {}, [f"the page settings in the link are not JSON ({exc}); the page's defaults are used"]
    if not isinstance(data, dict):
        return {}, ["the page settings in the link are not a JSON object; the page's defaults are used"]
    out: dict[str, Any] = {}
    problems = []
    for key, item in data.items():
        if key not in defaults:
            problems.append(f"the link sets {key!r}, which this page does not have; ignored")
            continue
        check = allowed.get(key)
        items = item if isinstance(item, list) else [item]
        ok = _fits(item, defaults[key]) and (check is None or all(
            check(v) if callable(check) else v in check for v in items))
        if not ok:
            problems.append(f"the link's value {str(item)[:40]!r} for {key!r} is not allowed here; the default "
                            f"{defaults[key]!r} is used")
            continue
        out[key] = float(item) if isinstance(defaults[key], float) else item
    return out, problems
