"""A comparison's results as one table, the same for every family (issue 33: the pages' Run sections are generic over
the family contract): one row per algorithm, its title from the family's algorithm table, one column per metric of
the family's metric table (its label), each cell "mean ± std" of the runs that finished (``MetricSummary``, std with
ddof = 1), or "failed" where no run finished."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..textio import printable
from .descriptor import Family
from .run import Comparison

__all__ = ["FAILED_CELL", "fmt", "summary_cell", "summary_rows", "titles"]

FAILED_CELL = "failed"
"""The cell of an algorithm and metric with no finished run."""


def titles(family: Family) -> dict[str, str]:
    """Algorithm name -> its title, from the family's table (the labels of every list and legend)."""
    return {name: entry.title for name, entry in family.algorithms.items()}


def summary_cell(mean: float | None, std: float | None) -> str:
    """"mean ± std" (4 and 2 significant digits; a single run's std is 0), or :data:`FAILED_CELL` without a mean."""
    return FAILED_CELL if mean is None else f"{mean:.4g} ± {(std or 0.0):.2g}"


def summary_rows(family: Family, comparison: Comparison) -> list[dict[str, Any]]:
    """One row per algorithm of ``comparison`` (in the order run): ``algorithm`` (its title), then one cell per metric
    of ``family.metrics`` under the metric's label (:func:`summary_cell`)."""
    names = titles(family)
    rows = []
    for algorithm in comparison.algorithms:
        row: dict[str, Any] = {"algorithm": names[algorithm]}
        for metric, entry in family.metrics.items():
            s = comparison.summary(algorithm, metric)
            row[entry.label] = summary_cell(s.mean, s.std)
        rows.append(row)
    return rows


def fmt(value: Any, digits: int = 4) -> str:
    """One cell of a plain-text table (the command line's): a number to ``digits`` significant digits ("nan",
    "inf"), a flag as "yes"/"NO", None as "-", text with terminal control characters escaped (names and cells come
    from the user)."""
    if value is None:
        return "-"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "NO"
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.{digits}g}"
    return printable(value)
