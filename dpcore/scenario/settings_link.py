"""A page's own settings in its link (``?settings=``): the widget values that differ from the page's defaults, as
compact JSON, and back (docs/dashboard.md, "Links"). Nothing a link holds is trusted: every value is checked against
the widget it is meant for, as the page's one table of its widgets describes it (:class:`Setting`: the default, the
label, the range or the choices the widget itself is drawn with), and a value of the wrong type, out of range, not
among the choices, NaN, a 10^30 integer or a string with a lone surrogate is refused with a message that names the
setting, says what is wrong and what is allowed; the page keeps its default for it, never a clamped value, and the
rest of the link still applies."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from ..limits import MAX_SETTINGS_QUERY_CHARS
from ..textio import load_json
from ..validation import InputError, shown

__all__ = ["SETTINGS_KEY", "Setting", "encode_settings", "legacy_settings", "settings_from_query",
           "settings_to_query"]

SETTINGS_KEY = "settings"
MAX_SETTING_TEXT = 500
"""Longest text a link may put into a text widget (an eps grid typed by hand is a few dozen characters)."""

Allowed = Callable[[Any], bool] | Collection[Any]


@dataclass(frozen=True, kw_only=True)
class Setting:
    """One widget of a page, as its table describes it: the ``default`` (its type is the widget's: bool, int, float,
    str, or a list for a multiselect), the ``label`` the page shows, and what it allows: numbers from ``low`` to
    ``high`` (None: unbounded on that side), a value among ``choices`` (a list: each item, at most once), text of at
    most ``max_chars``. ``check`` is an extra rule (a predicate) with ``check_text`` saying what it allows. The page
    draws the widget from these fields (``pages.shared.widgets.widget_range``, ``widget_options``), so a link is
    checked against exactly the range and the choices the widget has."""

    default: Any
    label: str
    low: float | None = None
    high: float | None = None
    choices: tuple[Any, ...] | None = None
    max_chars: int = MAX_SETTING_TEXT
    check: Callable[[Any], bool] | None = None
    check_text: str = ""

    @property
    def kind(self) -> str:
        """'bool', 'int', 'float', 'text' or 'list', from the default."""
        for kind, types in (("bool", bool), ("int", int), ("float", float), ("text", str), ("list", (list, tuple))):
            if isinstance(self.default, types):
                return kind
        raise TypeError(f"a setting's default must be a bool, int, float, str or list (got {self.default!r})")

    def allowed(self) -> str:
        """What the widget allows, in words."""
        kind = self.kind
        if self.choices is not None:
            listed = ", ".join(shown(c, 30) for c in self.choices[:12]) + (", ..." if len(self.choices) > 12 else "")
            text = f"{'a list of' if kind == 'list' else 'one of'} {listed}"
        elif kind in ("int", "float"):
            noun = "an integer" if kind == "int" else "a number"
            low = "" if self.low is None else f" from {self.low:,}" if kind == "int" else f" from {self.low:g}"
            high = "" if self.high is None else f" to {self.high:,}" if kind == "int" else f" to {self.high:g}"
            text = noun + low + high
        elif kind == "bool":
            text = "true or false"
        else:
            text = f"text of at most {self.max_chars} characters"
        return f"{text}{'; ' + self.check_text if self.check_text else ''}"

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` for this widget (None: nothing). Never raises."""
        kind = self.kind
        if kind == "bool":
            return None if isinstance(value, bool) else "must be true or false"
        if kind in ("int", "float"):
            problem = self._number_problem(value, kind)
        elif kind == "text":
            problem = self._text_problem(value)
        else:
            problem = self._list_problem(value)
        if problem is None and self.check is not None:
            try:
                ok = bool(self.check(value))
            except (TypeError, ValueError, OverflowError):
                ok = False
            problem = None if ok else "is not allowed here"
        return problem

    def _number_problem(self, value: Any, kind: str) -> str | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"must be {'an integer' if kind == 'int' else 'a number'}"
        if kind == "int" and not isinstance(value, int):
            return "must be an integer"
        if isinstance(value, float) and not math.isfinite(value):
            return "must be a finite number"
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            return "is out of range"
        if self.choices is not None and value not in self.choices:
            return "is not one of the choices"
        return None

    def _text_problem(self, value: Any) -> str | None:
        if not isinstance(value, str):
            return "must be text"
        if len(value) > self.max_chars:
            return f"is longer than {self.max_chars} characters"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "holds a lone surrogate, which is not text"
        if self.choices is not None and value not in self.choices:
            return "is not one of the choices"
        return None

    def _list_problem(self, value: Any) -> str | None:
        if not isinstance(value, list):
            return "must be a list"
        if self.choices is not None:
            if any(isinstance(v, (list, dict)) or v not in self.choices for v in value):
                return "holds a value that is not one of the choices"
            if len(set(map(repr, value))) != len(value):
                return "holds a value twice"
        elif not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
            return "must be a list of texts or numbers"
        return None

    def value(self, value: Any) -> Any:
        """A checked value as the widget holds it (an integer given for a number widget as a float)."""
        return float(value) if self.kind == "float" else value


def legacy_settings(defaults: Mapping[str, Any], allowed: Mapping[str, Allowed] | None = None) -> dict[str, Setting]:
    """Settings for a page that gives only defaults and allowed values (a predicate or a collection; a list: each
    item): the label is the key, the range the predicate's."""
    out = {}
    for key, default in defaults.items():
        rule = (allowed or {}).get(key)
        if rule is None:
            out[key] = Setting(default=default, label=key)
        elif callable(rule):
            out[key] = Setting(default=default, label=key, check=lambda v, r=rule: all(
                r(x) for x in (v if isinstance(v, list) else [v])), check_text="as the page allows")
        else:
            out[key] = Setting(default=default, label=key, choices=tuple(rule))
    return out


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
    ('' when none differs). ``defaults`` may map a key to its default or to its :class:`Setting`."""
    plain = {k: d.default if isinstance(d, Setting) else d for k, d in defaults.items()}
    return encode_settings({key: values[key] for key in plain if key in values and values[key] != plain[key]})


def settings_from_query(value: Any, settings: Mapping[str, Setting]) -> tuple[dict[str, Any], list[str]]:
    """The settings of a ``?settings=`` value for a page whose widgets are ``settings``, and one message per value
    refused (module docstring). A message about a key the page does not have starts with "the link sets"."""
    if isinstance(value, list):
        value = value[-1] if value else ""
    if not isinstance(value, str) or not value.strip():
        return {}, []
    if len(value) > MAX_SETTINGS_QUERY_CHARS:
        return {}, [f"the page settings in the link are too long ({len(value):,} characters; at most "
                    f"{MAX_SETTINGS_QUERY_CHARS:,}); the page's defaults are used"]
    try:
        data = load_json(value, "page settings", max_bytes=MAX_SETTINGS_QUERY_CHARS, surrogates=True)
    except InputError as exc:
        return {}, [f"the page settings in the link are not usable ({exc}); the page's defaults are used"]
    if not isinstance(data, dict):
        return {}, ["the page settings in the link are not a JSON object; the page's defaults are used"]
    out: dict[str, Any] = {}
    problems = []
    for key, item in data.items():
        setting = settings.get(key)
        if setting is None:
            problems.append(f"the link sets {shown(key)}, which this page does not have; ignored")
            continue
        problem = setting.problem(item)
        if problem is not None:
            problems.append(f"the link's value {shown(item)} for {setting.label} ({key}) {problem}: allowed is "
                            f"{setting.allowed()}; the default {shown(setting.default)} is kept")
            continue
        out[key] = setting.value(item)
    return out, problems
