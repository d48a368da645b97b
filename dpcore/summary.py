"""The result summary of every comparison: mean and standard deviation of one metric of one algorithm over runs; the
share of the conventional scheme's gap a private method closes, from paired runs (:func:`gap_closure`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["CLAIM_Z", "MEET_SHARE", "SHOWN_DIGITS", "Claim", "GapClosure", "MetricSummary", "claim_text",
           "gap_closure", "paired_claim", "shown", "shown_share", "small_difference", "summarise_values"]


@dataclass(frozen=True, kw_only=True)
class MetricSummary:
    """Mean and standard deviation (ddof = 1; 0 for a single run; None for no run) of ``metric`` over the ``runs``
    runs of ``algorithm`` that finished. ``failed`` counts runs that stopped (OTD: whitening failed); it is None for
    a family whose runs cannot fail (PCA), and then left out of :meth:`to_dict`."""

    algorithm: str
    metric: str
    mean: float | None
    std: float | None
    runs: int
    failed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"algorithm": self.algorithm, "metric": self.metric, "mean": self.mean,
                               "std": self.std, "runs": self.runs}
        if self.failed is not None:
            out["failed"] = self.failed
        return out


def summarise_values(algorithm: str, metric: str, values: np.ndarray | list[float], failed: int | None = None
                     ) -> MetricSummary:
    """The :class:`MetricSummary` of the finished runs' ``values``."""
    values = np.asarray(values, dtype=float)
    n = int(values.size)
    mean = float(values.mean()) if n else None
    std = float(values.std(ddof=1)) if n > 1 else (0.0 if n == 1 else None)
    return MetricSummary(algorithm=algorithm, metric=metric, mean=mean, std=std, runs=n, failed=failed)


@dataclass(frozen=True, kw_only=True)
class GapClosure:
    """How much of the conventional scheme's gap a private method closes, from paired runs (docs/dashboard.md,
    "Defaults that show the effect").

    With per-run values p_r (the private method), c_r (conventional), b_r (the non-private result) and w_r (the
    no-information reference: zero captured energy, random vectors), oriented so that larger is better:

    * ``closure`` = mean(p - c) / mean(b - c): the share of the conventional scheme's gap to the non-private result
      that the private method closes (1: all of it, 0: none);
    * ``cost`` = mean(b - c) / mean(b - w): how far privacy moves the conventional scheme from the non-private result
      towards no information (0: no cost, 1: no better than no information).

    ``closure_z`` is the paired z statistic of closure >= ``closure_target``: the mean of
    g_r = (p_r - c_r) - target (b_r - c_r) over its standard error std(g) / sqrt(R); ``cost_z`` likewise with
    h_r = (b_r - c_r) - target (b_r - w_r). Both are +inf when every g_r (h_r) is the same positive number.
    """

    closure: float
    cost: float
    closure_z: float
    cost_z: float
    closure_target: float
    cost_target: float
    runs: int

    def holds(self, z: float) -> bool:
        """Both criteria hold with a margin of ``z`` standard errors."""
        return self.closure_z >= z and self.cost_z >= z


def _paired_z(values: np.ndarray) -> float:
    mean = float(values.mean())
    se = float(values.std(ddof=1)) / math.sqrt(values.size)
    if se == 0.0:
        return math.copysign(math.inf, mean) if mean else 0.0
    return mean / se


def gap_closure(private: np.ndarray | list[float], conventional: np.ndarray | list[float],
                best: np.ndarray | list[float], worst: np.ndarray | list[float], *, larger_is_better: bool,
                closure_target: float = 0.5, cost_target: float = 0.2) -> GapClosure:
    """:class:`GapClosure` of paired per-run values (one entry per run in each array; scalars are broadcast). For an
    error (smaller is better) pass ``larger_is_better=False``: the values are negated first. Needs at least 2 runs."""
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (private, conventional, best, worst)))
    p, c, b, w = (a if larger_is_better else -a for a in arrays)
    if p.ndim != 1 or p.size < 2 or not np.all(np.isfinite(np.stack([p, c, b, w]))):
        raise ValueError("gap_closure needs at least 2 finite paired runs")
    gap, room = float((b - c).mean()), float((b - w).mean())
    return GapClosure(
        closure=float((p - c).mean()) / gap if gap else math.nan, cost=gap / room if room else math.nan,
        closure_z=_paired_z((p - c) - closure_target * (b - c)), cost_z=_paired_z((b - c) - cost_target * (b - w)),
        closure_target=closure_target, cost_target=cost_target, runs=int(p.size))


CLAIM_Z = 2.0
"""A story sentence says one result is better than another only when the paired z of their difference is at least
this (two standard errors of the mean paired difference over the page's runs); otherwise it says they do not differ
clearly (docs/dashboard.md, "Sentences from numbers")."""


@dataclass(frozen=True, kw_only=True)
class Claim:
    """What a sentence may say about results ``a`` and ``b`` (paired runs): ``relation`` "better" (a clearly better
    than b), "worse", or "unclear", from the paired z of a - b oriented so that larger is better."""

    a: str
    b: str
    relation: str
    z: float
    runs: int
    mean_a: float
    mean_b: float


def paired_claim(a_name: str, a: np.ndarray | list[float], b_name: str, b: np.ndarray | list[float], *,
                 larger_is_better: bool, z: float = CLAIM_Z) -> Claim:
    """The :class:`Claim` of paired per-run values (NaN runs dropped from both); fewer than 2 runs give "unclear"."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    diff = (a - b) if larger_is_better else (b - a)
    score = _paired_z(diff) if diff.size >= 2 else 0.0
    relation = "better" if score >= z else "worse" if score <= -z else "unclear"
    return Claim(a=a_name, b=b_name, relation=relation, z=float(score), runs=int(diff.size),
                 mean_a=float(a.mean()) if a.size else math.nan, mean_b=float(b.mean()) if b.size else math.nan)


def claim_text(claim: Claim, titles: dict[str, str], digits: int = 3) -> str:
    """The claim in words with both means: 'A (x) is clearly better than B (y)', or that they do not differ clearly
    over R runs."""
    a = f"{titles.get(claim.a, claim.a)} ({claim.mean_a:.{digits}g})"
    b = f"{titles.get(claim.b, claim.b)} ({claim.mean_b:.{digits}g})"
    if claim.relation == "unclear":
        return f"{a} and {b} do not differ clearly over {claim.runs} runs"
    return f"{a} is clearly {claim.relation} than {b} (paired z = {abs(claim.z):.1f} over {claim.runs} runs)"


MEET_SHARE = 0.05
"""A difference smaller than this share of the range from no information to the non-private result is too small to
see on a chart: two results that differ by less *nearly meet*, even where the paired test tells them apart, and a
sentence never says that CAPE still helps by so little (docs/dashboard.md, "Sentences from numbers")."""


def small_difference(a: float, b: float, best: float, worst: float) -> bool:
    """|a - b| is below :data:`MEET_SHARE` of |best - worst| (the range from no information to the non-private
    result); True when that range is empty or a value is not finite."""
    span = abs(best - worst)
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(span)) or span == 0:
        return True
    return abs(a - b) < MEET_SHARE * span


SHOWN_DIGITS = 3
"""Significant digits of the means a sentence prints; a share computed from them (:func:`shown_share`) is the share of
the numbers the reader sees."""


def shown(x: float, digits: int = SHOWN_DIGITS) -> float:
    """``x`` rounded to ``digits`` significant digits, as a sentence prints it with ``:.{digits}g``."""
    return float(f"{x:.{digits}g}") if math.isfinite(x) else x


def shown_share(private: float, conventional: float, best: float, digits: int = SHOWN_DIGITS) -> float:
    """(p - c) / (b - c) of the values as printed (``digits`` significant digits): the share of the conventional
    scheme's gap to the non-private result that a sentence says the private method closes, computed from the numbers
    the same sentence shows, so that a figure whose shown means agree says the same share (a stored result and its
    live re-run differed in the fifth digit, 0.58499 against 0.58501: 58% against 59%). NaN for an empty gap."""
    p, c, b = (shown(v, digits) for v in (private, conventional, best))
    return (p - c) / (b - c) if b != c else math.nan
