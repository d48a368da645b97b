"""Typed command-line values, checked by argparse before any work starts.

Every numeric flag has a type from this module: an integer range or a finite real range taken from
:mod:`dpcore.limits`, so ``--runs 1000000000``, ``--memory-budget nan`` or ``--dim 100000`` are refused on one line
with the allowed range before a sample is drawn. Files are read with :func:`dpcore.textio.read_file` (bounded
reads: devices and pipes cannot run the memory out).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping
from typing import Any

from ..family.flags import algorithm_names
from ..limits import (
    DELTA_RANGE,
    E_SCALE_RANGE,
    EPS_RANGE,
    MAX_COMPONENTS,
    MAX_DOC_LENGTH,
    MAX_LDA_ALPHA0,
    MAX_LDA_DOC_LENGTH,
    MAX_LDA_DOCUMENTS,
    MAX_LDA_TOP_WORDS,
    MAX_LDA_TOPICS,
    MAX_LDA_VOCABULARY,
    MAX_OTD_DIM,
    MAX_POWER_ITERATIONS,
    MAX_POWER_RESTARTS,
    MAX_RUNS,
    MAX_SEED,
    MAX_SIGMA2,
    MAX_SITE_SIZE,
    MAX_SITES,
    MAX_WORKERS,
    MEMORY_BUDGET_RANGE,
    NORM_BOUND_RANGE,
    SPLIT_RANGE,
)
from ..registry import canonical_name
from ..textio import printable

__all__ = [
    "COMPONENTS",
    "DELTA",
    "DOC_LENGTH",
    "EPS",
    "E_SCALE",
    "ITERATIONS",
    "LDA_ALPHA0",
    "LDA_DOCS",
    "LDA_DOC_LENGTH",
    "LDA_TOPICS",
    "LDA_TOP_WORDS",
    "LDA_VOCAB",
    "MEMORY_MIB",
    "OTD_DIM",
    "POSITIVE",
    "RESTARTS",
    "RUNS",
    "SEED",
    "SIGMA2",
    "SITES",
    "SITE_SIZE",
    "SPLIT",
    "NORM_BOUND",
    "algorithm_choices",
    "algorithm_names",
    "integer",
    "real",
]

_MAX_FLAG_CHARS = 40


class _Names(tuple):
    """argparse choices that list a table's names and also accept the old names it still knows
    (:data:`dpcore.registry.ALIASES`)."""

    table: Mapping[str, Any]

    def __contains__(self, name: object) -> bool:
        return canonical_name(str(name), self.table) in self.table


def algorithm_choices(table: Mapping[str, Any]) -> tuple[str, ...]:
    """The ``choices`` of an algorithm flag: the table's names (listed in help and errors); an old name is accepted
    too (:func:`dpcore.registry.canonical_name` maps it where the names are checked)."""
    names = _Names(table)
    names.table = table
    return names


def integer(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer low..high, written as digits (or as a whole number such as 1e6)."""

    def parse(text: str) -> int:
        value = text.strip().replace("_", "")
        number: int | None = None
        if len(value) <= _MAX_FLAG_CHARS:
            try:
                number = int(value)
            except ValueError:
                try:
                    as_float = float(value)
                except ValueError:
                    as_float = math.nan
                if math.isfinite(as_float) and as_float == int(as_float):
                    number = int(as_float)
        if number is None or not low <= number <= high:
            raise argparse.ArgumentTypeError(
                f"must be an integer from {low:,} to {high:,} (got {printable(text[:_MAX_FLAG_CHARS])!r})")
        return number

    parse.__name__ = "integer"
    return parse


def real(low: float, high: float, *, low_open: bool = False, high_open: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite real in the range (ends open or closed as given)."""
    allowed = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"

    def parse(text: str) -> float:
        try:
            number = float(text) if len(text) <= _MAX_FLAG_CHARS else math.nan
        except ValueError:
            number = math.nan
        above = number > low if low_open else number >= low
        below = number < high if high_open else number <= high
        if not (math.isfinite(number) and above and below):
            raise argparse.ArgumentTypeError(
                f"must be a finite number in {allowed} (got {printable(text[:_MAX_FLAG_CHARS])!r})")
        return number

    parse.__name__ = "number"
    return parse


SITES = integer(1, MAX_SITES)
COLLUSION = integer(0, MAX_SITES - 1)
WORKERS = integer(1, MAX_WORKERS)
SITE_SIZE = integer(1, MAX_SITE_SIZE)
RUNS = integer(1, MAX_RUNS)
SEED = integer(0, MAX_SEED)
OTD_DIM = integer(2, MAX_OTD_DIM)
COMPONENTS = integer(1, MAX_COMPONENTS)
DOC_LENGTH = integer(3, MAX_DOC_LENGTH)
RESTARTS = integer(1, MAX_POWER_RESTARTS)
ITERATIONS = integer(1, MAX_POWER_ITERATIONS)
LDA_DOCS = integer(3, MAX_LDA_DOCUMENTS)
LDA_VOCAB = integer(3, MAX_LDA_VOCABULARY)
LDA_TOPICS = integer(1, MAX_LDA_TOPICS)
LDA_ALPHA0 = real(0.0, MAX_LDA_ALPHA0, low_open=True)
LDA_DOC_LENGTH = integer(3, MAX_LDA_DOC_LENGTH)
LDA_TOP_WORDS = integer(0, MAX_LDA_TOP_WORDS)
EPS = real(*EPS_RANGE)
DELTA = real(*DELTA_RANGE, high_open=True)
E_SCALE = real(*E_SCALE_RANGE)
SIGMA2 = real(0.0, MAX_SIGMA2)
SPLIT = real(*SPLIT_RANGE)
NORM_BOUND = real(*NORM_BOUND_RANGE)
MEMORY_MIB = real(MEMORY_BUDGET_RANGE[0] / 2**20, MEMORY_BUDGET_RANGE[1] / 2**20)
POSITIVE = real(0.0, 1e12, low_open=True)
