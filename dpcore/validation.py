"""Input checks shared by every module, with one message per kind of mistake.

Every check raises :class:`InputError` (a ``ValueError``) whose message says what is wrong and
what is allowed, e.g. ``"eps must be > 0 (got -1)"``. The dashboard prints these messages next to
the input that caused them, the command line prints them on one line.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

__all__ = [
    "InputError",
    "check_choice",
    "check_delta",
    "check_epsilon",
    "check_finite_array",
    "check_positive",
    "check_positive_int",
    "check_probability_vector",
    "check_rank",
]


class InputError(ValueError):
    """A user input outside its allowed range. ``field`` names the input when known."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def _is_real(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def check_positive(value: object, name: str, *, allow_zero: bool = False) -> float:
    """A finite real > 0 (or >= 0 with ``allow_zero``)."""
    if not _is_real(value):
        raise InputError(f"{name} must be a number (got {value!r})", name)
    value = float(value)  # type: ignore[arg-type]
    if not math.isfinite(value):
        raise InputError(f"{name} must be finite (got {value})", name)
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise InputError(f"{name} must be {bound} (got {value:g})", name)
    return value


def check_epsilon(eps: object, name: str = "eps") -> float:
    """Privacy parameter epsilon: a finite real > 0."""
    return check_positive(eps, name)


def check_delta(delta: object, name: str = "delta") -> float:
    """Privacy parameter delta: a real in the open interval (0, 1)."""
    if not _is_real(delta):
        raise InputError(f"{name} must be a number in (0, 1) (got {delta!r})", name)
    delta = float(delta)  # type: ignore[arg-type]
    if not (0.0 < delta < 1.0):
        raise InputError(f"{name} must be in the open interval (0, 1) (got {delta:g})", name)
    return delta


def check_positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    """An integer >= ``minimum`` (floats with an integral value are accepted)."""
    if isinstance(value, bool):
        raise InputError(f"{name} must be an integer >= {minimum} (got {value!r})", name)
    if _is_real(value) and not isinstance(value, Integral):
        if not math.isfinite(float(value)) or float(value) != int(value):  # type: ignore[arg-type]
            raise InputError(f"{name} must be an integer >= {minimum} (got {value!r})", name)
        value = int(value)  # type: ignore[arg-type]
    if not isinstance(value, Integral):
        raise InputError(f"{name} must be an integer >= {minimum} (got {value!r})", name)
    if value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum} (got {value})", name)
    return int(value)


def check_choice(value: object, name: str, allowed: tuple[str, ...] | list[str]) -> str:
    """One of a fixed set of strings."""
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise InputError(f"{name} must be one of {options} (got {value!r})", name)
    return str(value)


def check_probability_vector(weights: object, name: str = "weights", *, atol: float = 1e-6) -> np.ndarray:
    """Non-negative finite weights that sum to 1 (within ``atol``)."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0:
        raise InputError(f"{name} must be a non-empty list of numbers", name)
    if not np.all(np.isfinite(w)):
        raise InputError(f"{name} must be finite numbers", name)
    if np.any(w < 0):
        raise InputError(f"{name} must be >= 0 (got {w.min():g})", name)
    total = float(w.sum())
    if abs(total - 1.0) > atol:
        raise InputError(f"{name} must sum to 1 (they sum to {total:.6g})", name)
    return w


def check_finite_array(array: object, name: str) -> np.ndarray:
    """A numeric array with no NaN or infinite entries."""
    try:
        a = np.asarray(array, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numeric ({exc})", name) from exc
    if not np.all(np.isfinite(a)):
        bad = int(np.size(a) - np.count_nonzero(np.isfinite(a)))
        raise InputError(f"{name} contains {bad} NaN or infinite value(s); only finite numbers are allowed", name)
    return a


def check_rank(k: object, dim: int, name: str = "K", dim_name: str = "D") -> int:
    """A target rank 1 <= K <= D."""
    k = check_positive_int(k, name)
    if k > dim:
        raise InputError(f"{name} must be <= {dim_name} = {dim} (got {name} = {k})", name)
    return k
