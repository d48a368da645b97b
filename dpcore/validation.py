"""Input checks shared by every module, with one message per kind of mistake.

Every check raises :class:`InputError` (a ``ValueError``) whose message says what is wrong and
what is allowed, e.g. ``"eps must be > 0 (got -1)"``. The dashboard prints these messages next to
the input that caused them, the command line prints them on one line (docs/architecture.md, "Validate once";
every limit: docs/limits.md).
"""

from __future__ import annotations

import math
import re
from numbers import Integral, Real

import numpy as np

from .limits import DELTA_RANGE, EPS_RANGE, MAX_SEED, SPLIT_RANGE

__all__ = [
    "InputError",
    "as_float",
    "check_choice",
    "check_delta",
    "check_epsilon",
    "check_finite_array",
    "check_int_range",
    "check_magnitude",
    "check_positive",
    "check_positive_int",
    "check_probability_vector",
    "check_range",
    "check_rank",
    "check_seed",
    "check_split",
    "number_text_problem",
    "parse_number_text",
    "shown",
]


class InputError(ValueError):
    """A user input outside its allowed range. ``field`` names the input when known."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def _is_real(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def shown(value: object, limit: int = 40) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters (an integer of 1000 digits stays readable;
    Python refuses to print integers of more than 4300 digits at all)."""
    if isinstance(value, Integral) and not isinstance(value, bool):
        number = int(value)
        if number.bit_length() > 128:
            return f"an integer of about {int(number.bit_length() * 0.30103) + 1} digits"
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # pragma: no cover - objects whose repr fails
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def as_float(value: object) -> float:
    """A real as a float without raising: integers too large for a float become +-inf (never OverflowError)."""
    try:
        return float(value)  # type: ignore[arg-type]
    except OverflowError:
        return math.inf if value > 0 else -math.inf  # type: ignore[operator]


_SPACES = re.compile(r"[\s\u00a0\u202f\u2009']")
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?")
_PLAIN = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_SPACED = re.compile(r"[+-]?\d{1,3}(?:[\s\u00a0\u202f\u2009']\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?")


def parse_number_text(text: str) -> float | None:
    """A number as a person types it or a table shows it, or None: decimal point, exponent in either case (1e-5,
    1E-05), thousands grouped by commas (1,000), spaces, non-breaking or thin spaces or apostrophes (1 000, 1'000) in
    groups of three. A comma that is not a thousands separator (0,5) is refused, never read as something else;
    so are inf and nan."""
    text = text.strip()
    if not text or len(text) > 100:
        return None
    if _GROUPED.fullmatch(text):
        text = text.replace(",", "")
    elif _SPACED.fullmatch(text):
        text = _SPACES.sub("", text)
    if not _PLAIN.fullmatch(text):
        return None
    return as_float(text)


def number_text_problem(text: str) -> str | None:
    """Why :func:`parse_number_text` refuses ``text``, in words (None when it parses)."""
    if parse_number_text(text) is not None:
        return None
    if "," in text:
        return "a comma is read only as a thousands separator (1,000); write decimals with a point (0.5)"
    return "write a number such as 0.5, 1e-5, 1E-05, 0.00001, 1,000 or 1 000"


def check_positive(value: object, name: str, *, allow_zero: bool = False) -> float:
    """A finite real > 0 (or >= 0 with ``allow_zero``)."""
    if not _is_real(value):
        raise InputError(f"{name} must be a number (got {shown(value)})", name)
    value = as_float(value)
    if not math.isfinite(value):
        raise InputError(f"{name} must be finite (got {value})", name)
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise InputError(f"{name} must be {bound} (got {value:g})", name)
    return value


def check_range(value: object, name: str, low: float, high: float, *, high_open: bool = False) -> float:
    """A finite real in [low, high] (or [low, high) with ``high_open``); the message names the range."""
    allowed = f"[{low:g}, {high:g})" if high_open else f"[{low:g}, {high:g}]"
    if not _is_real(value):
        raise InputError(f"{name} must be a number in {allowed} (got {shown(value)})", name)
    number = as_float(value)
    inside = low <= number < high if high_open else low <= number <= high
    if not inside:
        raise InputError(f"{name} must be in {allowed} (got {number:g})", name)
    return number


def check_epsilon(eps: object, name: str = "eps") -> float:
    """Privacy parameter epsilon: a real in :data:`~dpcore.limits.EPS_RANGE`."""
    return check_range(eps, name, *EPS_RANGE)


def check_delta(delta: object, name: str = "delta") -> float:
    """Privacy parameter delta: a real in :data:`~dpcore.limits.DELTA_RANGE` (below 1)."""
    return check_range(delta, name, *DELTA_RANGE, high_open=True)


def _integer(value: object) -> int | None:
    """An integer, or a real with an integral value, as int; None for anything else (NaN, inf, 2.5, text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, Integral):
        return int(value)
    if _is_real(value):
        number = as_float(value)
        if math.isfinite(number) and number == int(number):
            return int(number)
    return None


def check_positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    """An integer >= ``minimum`` (floats with an integral value are accepted)."""
    number = _integer(value)
    if number is None or number < minimum:
        raise InputError(f"{name} must be an integer >= {minimum} (got {shown(value)})", name)
    return number


def check_int_range(value: object, name: str, low: int, high: int) -> int:
    """An integer in low..high (floats with an integral value are accepted); the message names the limit."""
    number = _integer(value)
    if number is None or not low <= number <= high:
        raise InputError(f"{name} must be an integer from {low:,} to {high:,} (got {shown(value)})", name)
    return number


def check_seed(value: object, name: str = "seed") -> int:
    """A seed: an integer 0..:data:`~dpcore.limits.MAX_SEED`."""
    return check_int_range(value, name, 0, MAX_SEED)


def check_choice(value: object, name: str, allowed: tuple[str, ...] | list[str]) -> str:
    """One of a fixed set of strings."""
    try:
        known = isinstance(value, str) and value in allowed
    except TypeError:  # pragma: no cover - unhashable or odd values
        known = False
    if not known:
        options = ", ".join(repr(a) for a in allowed)
        raise InputError(f"{name} must be one of {options} (got {shown(value)})", name)
    return str(value)


def check_probability_vector(weights: object, name: str = "weights", *, atol: float = 1e-6) -> np.ndarray:
    """Non-negative finite weights that sum to 1 (within ``atol``)."""
    try:
        w = np.asarray(weights, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name} must be a non-empty list of numbers", name) from None
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
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{name} must be numeric ({exc})", name) from exc
    if not np.all(np.isfinite(a)):
        bad = int(np.size(a) - np.count_nonzero(np.isfinite(a)))
        raise InputError(f"{name} contains {bad} NaN or infinite value(s); only finite numbers are allowed", name)
    return a


def check_split(value: object, name: str = "split") -> float:
    """A budget share of the first of two stages: a real in :data:`~dpcore.limits.SPLIT_RANGE`."""
    return check_range(value, name, *SPLIT_RANGE)


def check_magnitude(array: np.ndarray, name: str, limit: float) -> np.ndarray:
    """A finite numeric array whose entries are at most ``limit`` in magnitude (e.g.
    :data:`~dpcore.limits.MAX_DATA_MAGNITUDE`: sums of squares then cannot overflow)."""
    a = check_finite_array(array, name)
    largest = float(np.max(np.abs(a))) if a.size else 0.0
    if largest > limit:
        raise InputError(f"{name}: a value of {largest:g} is larger in magnitude than {limit:g}, the largest allowed "
                         "(its square would overflow in the sums); rescale the data", name)
    return a


def check_rank(k: object, dim: int, name: str = "K", dim_name: str = "D") -> int:
    """A target rank 1 <= K <= D."""
    k = check_positive_int(k, name)
    if k > dim:
        raise InputError(f"{name} must be <= {dim_name} = {dim} (got {name} = {k})", name)
    return k
