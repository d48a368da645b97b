"""From a target to a design by inversion (docs/planner.md, "The method"): the utility curve gives the largest
aggregate noise at which single runs still reach the target, and the closed-form noise of the scenario (as a
function of the knob) gives the knob value at which CAPE, and the conventional scheme, carry no more noise than that.

Levels of the answer, from the curve's run-to-run spread (std over runs at each noise level, made monotone):
* ``answer``: where :data:`ANSWER_SHARE` (95 %) of single runs reach the target (mean - 1.645 std, for a metric
  where higher is better);
* ``interval``: from where only 2.5 % of runs reach it (mean + 1.96 std) to where 97.5 % do (mean - 1.96 std);
* ``median``: where the mean reaches it (half the runs).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import norm

from ..experiments.families import FAMILIES
from ..family import PlannerData
from ..scenario import Scenario
from .curve import UtilityCurve
from .knobs import Question, at_value, bounds, knob_value

__all__ = ["ANSWER_SHARE", "INTERVAL_SHARE", "SCHEMES", "Answer", "largest_noise", "noise_scale", "solve_scheme"]

ANSWER_SHARE = 0.95
"""Share of single runs that reach the target at the answer."""
INTERVAL_SHARE = 0.95
"""The interval runs from where (1 - share) / 2 of single runs reach the target to where (1 + share) / 2 do."""
SCHEMES: dict[str, str] = {"cape": "CAPE", "conv": "the conventional scheme"}
"""The two schemes the planner compares (their algorithm names are the same in every family's table)."""
EPS_DIGITS = 3
"""Significant digits of an eps answer (rounded up, so the stated eps still meets the target)."""
_EPS_TOLERANCE = 1e-5
SCALE_ROUNDS = 4
NUDGES = 20
"""Rounds of solving again at the data scale of the previous answer."""


@dataclass(frozen=True, kw_only=True)
class Answer:
    """One scheme's answer: ``answer`` (the knob value; None when unreachable, with ``reason``), ``interval``
    (lo, hi; None where a side is unreachable), ``median``, ``predicted`` (the curve's mean at the answer's noise)
    and ``predicted_range`` (where 95 % of single runs fall there), ``noise`` (per-stage aggregate std at the
    answer), ``scale`` (the common noise scale needed), ``scenario`` (at the answer, as a dict)."""

    scheme: str
    answer: float | int | None
    interval: tuple[float | None, float | None] | None = None
    median: float | int | None = None
    predicted: float | None = None
    predicted_range: tuple[float, float] | None = None
    noise: tuple[float, ...] = ()
    scale: float | None = None
    reason: str | None = None
    notes: tuple[str, ...] = field(default=())
    scenario: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"answer": self.answer, "interval": None if self.interval is None else list(self.interval),
                "median": self.median, "predicted": self.predicted,
                "predicted_range": None if self.predicted_range is None else list(self.predicted_range),
                "noise": list(self.noise), "noise_scale": self.scale, "reason": self.reason,
                "notes": list(self.notes), "scenario": self.scenario}


def noise_scale(family: str, scenario: Scenario, settings: Any, scheme: str, profile: np.ndarray) -> float:
    """The common noise scale of ``scheme`` at ``scenario``: max over stages of std / profile (a stage noisier than
    the curve's profile counts in full: conservative)."""
    stds = FAMILIES[family].planner.noise(scenario, settings)[scheme]
    return float(np.max(np.asarray(stds, dtype=float) / profile))


def largest_noise(curve: UtilityCurve, target: float, z: float) -> tuple[float, str | None]:
    """The largest noise scale at which the curve's band ``mean -/+ z std`` still reaches ``target``: inf when it does
    at every scale measured; 0 with a reason when at none."""
    band = curve.band(z)
    good = band >= target if curve.higher_is_better else band <= target
    if not good[0]:
        return 0.0, "reach"
    if good.all():
        return math.inf, None
    j = int(np.flatnonzero(~good)[0])  # first point that misses; the one before meets (band is monotone)
    a, b = band[j - 1], band[j]
    la, lb = math.log(curve.scales[j - 1]), math.log(curve.scales[j])
    if not (np.isfinite(a) and np.isfinite(b)) or a == b:
        return float(curve.scales[j - 1]), None
    t = (target - a) / (b - a)
    return float(math.exp(la + t * (lb - la))), None


def _solve_knob(sigma_at: Callable[[float], float], sigma: float, lo: float, hi: float, integer: bool) -> float | None:
    """The smallest knob value in [lo, hi] whose noise is at most ``sigma`` (noise falls as the knob grows); None
    when even ``hi`` is too noisy."""
    if sigma_at(hi) > sigma:
        return None
    if sigma_at(lo) <= sigma:
        return lo
    if integer:
        a, b = int(lo), int(hi)  # sigma(a) > sigma >= sigma(b)
        while b - a > 1:
            m = (a + b) // 2
            a, b = (a, m) if sigma_at(m) <= sigma else (m, b)
        return b
    a, b = math.log(lo), math.log(hi)
    while b - a > _EPS_TOLERANCE:
        m = (a + b) / 2
        a, b = (a, m) if sigma_at(math.exp(m)) <= sigma else (m, b)
    return _round_up(math.exp(b))


def _round_up(x: float) -> float:
    digits = EPS_DIGITS - 1 - math.floor(math.log10(x))
    step = 10.0 ** (-digits)
    return round(math.ceil(x / step - 1e-9) * step, max(digits, 0))


def _interp_mean(curve: UtilityCurve, scale: float, z: float = 0.0) -> float:
    """The (monotone) curve's band at ``scale``, linear in log(scale) between grid points, held flat beyond them."""
    band = curve.band(z)
    x = np.log(curve.scales)
    return float(np.interp(math.log(max(scale, 1e-300)), x, band))


# long: the answer, its interval and every plain reason, in order
def solve_scheme(curve: UtilityCurve, scenario: Scenario, data: PlannerData, q: Question, scheme: str) -> Answer:
    """The knob value at which ``scheme`` reaches the target (module docstring), with its interval, the prediction at
    the answer, or the reason it cannot. Where the data's own scale moves with the knob (``data_scale``), the answer
    is solved again at the factor of the previous answer until it stays (at most :data:`SCALE_ROUNDS` rounds)."""
    fam = curve.family
    hooks = FAMILIES[fam].planner
    settings = data.settings
    title = SCHEMES[scheme]
    lo, hi, why_hi = bounds(q, scenario, data.available, data.unit)
    factor = [1.0]

    def sigma_at(value: float) -> float:
        return noise_scale(fam, at_value(q, scenario, value), settings, scheme, curve.profile) * factor[0]

    z_answer = float(norm.ppf(ANSWER_SHARE))
    z_interval = float(norm.ppf((1 + INTERVAL_SHARE) / 2))
    sigma, problem = largest_noise(curve, q.target, z_answer)
    if problem == "reach":
        best = float(curve.band(0.0)[0])
        return Answer(scheme=scheme, answer=None, reason=(
            f"the target is beyond what the runs reach even at the smallest noise measured (mean {best:.4g} at "
            f"noise {curve.scales[0]:.3g}; non-private {curve.reference:.4g})"))
    if hi < lo:
        return Answer(scheme=scheme, answer=None, reason=f"no room for the knob within {why_hi}")
    if q.knob == "eps" and data.available is not None and scenario.total_n > data.available:
        return Answer(scheme=scheme, answer=None, reason=(
            f"the scenario's sites hold N = {scenario.total_n:,} {data.unit}, more than the {data.available:,} you "
            f"have; give the sites fewer {data.unit}, or solve for the samples per site"))
    notes = []
    if math.isinf(sigma):
        sigma = float(curve.scales[-1])
        notes.append(f"the target is met at every noise level measured (up to {sigma:.3g}); the answer is where the "
                     "curve ends, and less may do")
    answer = _solve_knob(sigma_at, sigma, lo, hi, q.integer)
    for _ in range(SCALE_ROUNDS if hooks.data_scale is not None else 0):
        if answer is None:
            break
        new = hooks.data_scale(data, at_value(q, scenario, answer))
        if abs(new - factor[0]) <= 1e-9 * factor[0]:
            break
        factor[0] = new
        answer = _solve_knob(sigma_at, sigma, lo, hi, q.integer)
    answer = _own_scale(hooks, data, q, scenario, answer, sigma, factor, sigma_at, hi)
    if answer is None:
        reached = sigma_at(hi)
        return Answer(scheme=scheme, answer=None, reason=(
            f"{title} would need its aggregate noise at most {sigma:.3g}, but even at {q.words(scenario)} = "
            f"{_fmt(hi, q.integer)} (the limit: {why_hi}) it is {reached:.3g}"))
    if abs(factor[0] - 1.0) > 0.01:
        notes.append(f"the data at the answer are divided by a different largest sample norm than the curve's "
                     f"(max-norm reads it from the data drawn): the same noise weighs {factor[0]:.3g} times as much "
                     "there, and the answer counts it")
    edges = [_edge(curve, q, sigma_at, z, lo, hi) for z in (-z_interval, z_interval)]
    median = _edge(curve, q, sigma_at, 0.0, lo, hi)
    at = at_value(q, scenario, answer, checked=True)
    scale = sigma_at(answer)
    stds = hooks.noise(at, settings)[scheme]
    predicted = _interp_mean(curve, scale)
    spread = (_interp_mean(curve, scale, z_interval), _interp_mean(curve, scale, -z_interval))
    if scale < curve.scales[0]:
        notes.append(f"the answer's noise {scale:.3g} is below the smallest measured ({curve.scales[0]:.3g}): the "
                     "prediction there is the curve's first point")
    return Answer(scheme=scheme, answer=answer, interval=(edges[0], edges[1]), median=median, predicted=predicted,
                  predicted_range=(min(spread), max(spread)), noise=tuple(float(x) for x in stds), scale=scale,
                  notes=tuple(notes), scenario=at.to_dict())


def _own_scale(hooks: Any, data: PlannerData, q: Question, scenario: Scenario, answer: float | None, sigma: float,
               factor: list[float], sigma_at: Callable[[float], float], hi: float) -> float | None:
    """Move the answer up (0.5 % at a time, at most :data:`NUDGES` times) until the data drawn at it, with their own
    scale, carry no more noise than ``sigma`` allows (the scale need not fall monotonically with the knob)."""
    if answer is None or hooks.data_scale is None:
        return answer
    for _ in range(NUDGES):
        factor[0] = hooks.data_scale(data, at_value(q, scenario, answer))
        if sigma_at(answer) <= sigma:
            return answer
        nxt = math.ceil(answer * 1.005) if q.integer else _round_up(answer * 1.005)
        if nxt > hi:
            return None
        answer = nxt
    return answer


def _edge(curve: UtilityCurve, q: Question, sigma_at: Callable[[float], float], z: float, lo: float, hi: float
          ) -> float | None:
    """The knob value where the band ``z`` reaches the target (None when it never does within the range)."""
    s, problem = largest_noise(curve, q.target, z)
    if problem == "reach":
        return None
    return _solve_knob(sigma_at, float(curve.scales[-1]) if math.isinf(s) else s, lo, hi, q.integer)


def _fmt(value: float, integer: bool) -> str:
    return f"{int(value):,}" if integer else f"{value:.4g}"


def current_value(q: Question, scenario: Scenario) -> float:
    """The knob's value in the scenario as given (for the sentences)."""
    return knob_value(q, scenario)
