"""The front door's one entry (``import dpcore``, docs/python-api.md): every public function ``dpcore`` offers
(the names of ``dpcore/__init__.pyi``) is handed out wrapped by :func:`front_door`, which checks each argument before
the function runs:

* by **type**, against the parameter's own annotation (``int``: an integer, never a bool or 1.5; ``float``: a real
  number, never NaN; ``str``: text without lone surrogates; ``Scenario | None``; ``tuple[int, ...]``; ...), so a new
  public function is checked as soon as it is listed, from its signature;
* by **range**, for every parameter whose name is a row of :data:`ARGUMENT_RANGES` (the one table: seeds, budgets,
  sizes, counts, concentrations, each with its limit of :mod:`dpcore.limits`), for a number or each number of a tuple;
* an object a user can build without validation (a ``dpcore.Scenario`` made directly) by its own rules
  (:data:`VALIDITY_HOOK`).

A bad argument is an :class:`~dpcore.validation.InputError` whose message names the function, the argument, what is
wrong and what is allowed (``capepca: seed must be an integer from 0 to 4,294,967,295 (got -1)``), with the argument
as its ``field``; it never reaches the code below as an AttributeError, TypeError, ValueError or OverflowError.
Checks that need more than one argument or the data (K at most D, a site of at least one sample) stay with the
function, which raises InputError too.
"""

from __future__ import annotations

import functools
import inspect
import math
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .limits import (
    DELTA_RANGE,
    E_SCALE_RANGE,
    EPS_RANGE,
    MAX_LDA_ALPHA0,
    MAX_OTD_DIM,
    MAX_RUNS,
    MAX_SEED,
    MAX_SIGMA2,
    MAX_SITE_SIZE,
    MAX_SITES,
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_CELLS,
    MAX_UPLOAD_COLUMNS,
    MAX_VOCABULARY,
    MAX_WORKERS,
    NORM_BOUND_RANGE,
)
from .validation import InputError, shown

__all__ = ["ARGUMENT_RANGES", "FRONT_DOOR_MARK", "Range", "argument_problem", "front_door", "parameter_types"]

FRONT_DOOR_MARK = "__dpcore_front_door__"
"""The attribute a function wrapped by :func:`front_door` carries (True)."""
VALIDITY_HOOK = "front_door_problem"
"""A method of an argument's class that says what makes the object invalid (or None), for objects a user can build
without validation (:meth:`dpcore.scenario.Scenario.front_door_problem`); the front door asks every argument that
has it."""


@dataclass(frozen=True, kw_only=True)
class Range:
    """The allowed values of a numeric argument: ``low`` to ``high`` (an end excluded when ``low_open`` or
    ``high_open``), integers only when ``integer``."""

    low: float
    high: float
    integer: bool = False
    low_open: bool = False
    high_open: bool = False

    def text(self) -> str:
        kind = "an integer" if self.integer else "a number"
        low = f"{self.low:,}" if self.integer else f"{self.low:g}"
        high = f"{self.high:,}" if self.integer else f"{self.high:g}"
        if self.low_open and self.high_open:
            return f"{kind} above {low} and below {high}"
        if self.low_open:
            return f"{kind} above {low} and at most {high}"
        if self.high_open:
            return f"{kind} from {low} up to but not including {high}"
        return f"{kind} from {low} to {high}"

    def holds(self, value: float | int) -> bool:
        """``value`` (an int compared exactly, never converted: 10**30 is not an OverflowError) is in the range."""
        if self.integer and not (isinstance(value, (int, np.integer)) or float(value).is_integer()):
            return False
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return bool(above and below)


ARGUMENT_RANGES: dict[str, Range] = {
    "seed": Range(low=0, high=MAX_SEED, integer=True),
    "eps": Range(low=EPS_RANGE[0], high=EPS_RANGE[1]),
    "delta": Range(low=DELTA_RANGE[0], high=DELTA_RANGE[1], high_open=True),
    "sites": Range(low=1, high=MAX_SITES, integer=True),
    "n_sites": Range(low=1, high=MAX_SITES, integer=True),
    "site_size": Range(low=1, high=MAX_SITE_SIZE, integer=True),
    "collusion": Range(low=0, high=MAX_SITES - 1, integer=True),
    "runs": Range(low=1, high=MAX_RUNS, integer=True),
    "workers": Range(low=1, high=MAX_WORKERS, integer=True),
    "k": Range(low=1, high=MAX_OTD_DIM, integer=True),
    "dim": Range(low=1, high=MAX_OTD_DIM, integer=True),
    "alpha0": Range(low=0.0, high=MAX_LDA_ALPHA0, low_open=True),
    "sigma2": Range(low=0.0, high=MAX_SIGMA2, low_open=True),
    "norm_bound": Range(low=NORM_BOUND_RANGE[0], high=NORM_BOUND_RANGE[1]),
    "e_scale": Range(low=E_SCALE_RANGE[0], high=E_SCALE_RANGE[1]),
    "vocab_size": Range(low=1, high=MAX_VOCABULARY, integer=True),
    "max_cells": Range(low=1, high=MAX_UPLOAD_CELLS, integer=True),
    "max_bytes": Range(low=1, high=MAX_UPLOAD_BYTES, integer=True),
    "max_columns": Range(low=1, high=MAX_UPLOAD_COLUMNS, integer=True),
    "label_column": Range(low=0, high=MAX_UPLOAD_COLUMNS - 1, integer=True),
    "drop_columns": Range(low=0, high=MAX_UPLOAD_COLUMNS - 1, integer=True),
    "image_shape": Range(low=1, high=MAX_UPLOAD_COLUMNS, integer=True),
}
"""The allowed range of every numeric argument of the front door, by the argument's name (for a tuple: of each of
its numbers). A public function's numeric parameter without a row here is checked by type only
(tests/test_front_door.py lists every parameter and fails on one that has neither a row nor a reason)."""


# ---------------------------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------------------------

def _is_bool(value: object) -> bool:
    return isinstance(value, (bool, np.bool_))


def _union_args(tp: Any) -> tuple[Any, ...] | None:
    origin = typing.get_origin(tp)
    return typing.get_args(tp) if origin is typing.Union or origin is types.UnionType else None


def _items_conform(value: object, args: tuple[Any, ...]) -> bool:
    if len(args) == 2 and args[1] is Ellipsis:
        return all(conforms(v, args[0]) for v in value)  # type: ignore[attr-defined]
    return len(value) == len(args) and all(conforms(v, a) for v, a in zip(value, args, strict=True))  # type: ignore


def conforms(value: object, tp: Any) -> bool:
    """``value`` is of type ``tp`` (a resolved annotation), as the front door reads types (module docstring)."""
    if tp is Any or tp is object:
        return True
    if tp is None or tp is type(None):
        return value is None
    union = _union_args(tp)
    if union is not None:
        return any(conforms(value, a) for a in union)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return any(type(value) is type(a) and value == a for a in args)
    if tp is bool:
        return _is_bool(value)
    if tp is int:
        return isinstance(value, (int, np.integer)) and not _is_bool(value)
    if tp is float:
        return isinstance(value, (int, float, np.integer, np.floating)) and not _is_bool(value) and not (
            isinstance(value, (float, np.floating)) and math.isnan(value))
    if tp is str:
        return isinstance(value, str) and _encodable(value)
    if tp is bytes:
        return isinstance(value, (bytes, bytearray))
    if tp is np.ndarray:
        return _numeric_array(value)
    if origin in (tuple, list):
        return isinstance(value, origin) and (not args or _items_conform(value, args))
    if origin is not None:
        return not isinstance(origin, type) or isinstance(value, origin)
    return not isinstance(tp, type) or isinstance(value, tp)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _numeric_array(value: object) -> bool:
    if isinstance(value, (str, bytes)) or _is_bool(value):
        return False
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return False
    return bool(array.size == 0 or np.all(np.isfinite(array)))


def describe(tp: Any) -> str:
    """A type in a message's words: 'an integer', 'a number (not NaN)', 'text', 'a Scenario or None', ..."""
    union = _union_args(tp)
    if union is not None:
        return " or ".join(describe(a) for a in union)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    words = {type(None): "None", bool: "True or False", int: "an integer", float: "a number (not NaN)",
             str: "text (UTF-8, no lone surrogates)", bytes: "bytes", np.ndarray: "an array of finite numbers"}
    if tp is None or tp in words:
        return words[type(None) if tp is None else tp]
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (tuple, list):
        kind = "a tuple" if origin is tuple else "a list"
        if len(args) == 2 and args[1] is Ellipsis:
            return f"{kind} of {describe(args[0])} values"
        return f"{kind} of {len(args)} values ({', '.join(describe(a) for a in args)})" if args else kind
    name = getattr(origin or tp, "__name__", str(tp))
    return f"a {name}"


def parameter_types(func: Callable[..., Any]) -> dict[str, Any]:
    """The resolved annotation of every annotated parameter of ``func`` (a parameter whose annotation cannot be
    resolved is left out: tests/test_front_door.py checks that none of the front door's is)."""
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # noqa: BLE001 - a name only imported for type checkers: resolve the others one by one
        hints = {}
        target = inspect.unwrap(func)
        for name, text in getattr(target, "__annotations__", {}).items():
            try:
                hints[name] = typing.get_type_hints(types.SimpleNamespace(__annotations__={name: text}),
                                                    globalns=target.__globals__)[name]
            except Exception:  # noqa: BLE001, S112 - unresolvable: checked by range only
                continue
    return {name: tp for name, tp in hints.items() if name != "return"}


# ---------------------------------------------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------------------------------------------

def _numbers(value: object) -> list[object]:
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, (int, float, np.integer, np.floating)) and not _is_bool(v)]
    if isinstance(value, (int, float, np.integer, np.floating)) and not _is_bool(value):
        return [value]
    return []


def argument_problem(name: str, value: object, tp: Any | None) -> str | None:
    """What is wrong with ``value`` for the parameter ``name`` of annotation ``tp`` (None: unknown), or None."""
    if tp is not None and not conforms(value, tp):
        return f"{name} must be {describe(tp)} (got {shown(value)})"
    rule = ARGUMENT_RANGES.get(name)
    if rule is not None:
        for number in _numbers(value):
            finite = isinstance(number, (int, np.integer)) or math.isfinite(float(number))
            if not finite or not rule.holds(number):  # type: ignore[arg-type]
                return f"{name} must be {rule.text()} (got {shown(number)})"
    own = getattr(value, VALIDITY_HOOK, None) if not isinstance(value, type) else None
    if callable(own):
        problem = own()
        if problem:
            return f"{name} is not valid: {problem}"
    return None


def front_door(func: Callable[..., Any], public_name: str | None = None) -> Callable[..., Any]:
    """``func`` with every argument checked first (module docstring); a bad argument is an InputError naming
    ``public_name`` (the function's name by default), the argument and what is allowed. Arguments that do not fit
    the signature at all (a missing or unknown keyword) are an InputError too."""
    if getattr(func, FRONT_DOOR_MARK, False):
        return func
    signature = inspect.signature(func)
    label = public_name or getattr(func, "__name__", "dpcore")
    hints: dict[str, Any] | None = None

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        nonlocal hints
        if hints is None:
            hints = parameter_types(func)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise InputError(f"{label}: {exc} (the signature is {label}{signature})") from None
        for name, value in bound.arguments.items():
            kind = signature.parameters[name].kind
            if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                continue
            problem = argument_problem(name, value, hints.get(name))
            if problem is not None:
                raise InputError(f"{label}: {problem}", name)
        return func(*args, **kwargs)

    setattr(checked, FRONT_DOOR_MARK, True)
    return checked
