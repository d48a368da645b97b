"""From a target to a design by inversion (docs/planner.md, "The method"): the curve of simulated studies gives the
largest aggregate noise at which a share p of fresh studies still meets the target, and the closed-form noise of the
scenario (as a function of the knob) gives the knob value at which CAPE, and the conventional scheme, carry no more
noise than that.

"Meets the target" is one study's result (its own data and noise) at least the target (at most, for an error). The
answer is where a share ``probability`` (p, default :data:`PROBABILITY`) of fresh studies meets it (the curve's
one-sided normal prediction bound, :meth:`~dpcore.planner.curve.UtilityCurve.reach`); ``interval``: from where half
of them do to where (1 + p) / 2 do. A study's data have the answer's size: where the knob moves N (samples per site,
sites), the curve is measured again at the answer's N (a narrow grid around the answer's noise) until the answer's N
is within :data:`SIZE_TOLERANCE` of the curve's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..family import PlannerData
from ..scenario import Scenario
from ..validation import InputError, check_range
from .curve import UtilityCurve
from .design import aggregator_factor, noise_scenario
from .knobs import Question, at_value, bounds, data_limit, knob_value
from .schemes import scheme_bits, scheme_noise, scheme_refusal, scheme_words

__all__ = ["PROBABILITY", "ROUNDS", "SIZE_TOLERANCE", "Answer", "Forward", "SolveProblem",
           "check_probability", "forward", "largest_noise", "noise_scale", "solve_scheme"]

PROBABILITY = 0.9
"""The default share of fresh studies that meet the target at the answer."""
PROBABILITY_RANGE = (0.5, 0.99)
"""The probabilities a user may ask for (the curve's 20 studies do not support a tighter tail)."""
EPS_DIGITS = 3
"""Significant digits of an eps answer (rounded up, so the stated eps still meets the target)."""
_EPS_TOLERANCE = 1e-5
ROUNDS = 4
"""Rounds of solving on a curve (the first at the scenario's N, then at the previous answer's N)."""
SIZE_TOLERANCE = 0.02
"""The answer's N may differ from the N of the studies its curve was measured on by this share."""
FACTOR_ROUNDS = 4
"""Rounds of solving again at the noise factor of the previous answer (the design ``aggregator``)."""

CurveAt = Callable[[int, "float | None"], UtilityCurve]
"""curve_at(N, around): the curve of studies of N samples (on a narrow grid around the noise ``around``, or the
family's grid when None)."""


def check_probability(p: Any) -> float:
    """The share of fresh studies that must meet the target, within :data:`PROBABILITY_RANGE`."""
    return check_range(p, "probability", *PROBABILITY_RANGE)


@dataclass(frozen=True, kw_only=True)
class Answer:
    """One scheme's answer: ``answer`` (the knob value; None when unreachable, with ``reason``) where a share
    ``probability`` of fresh studies meets the target; ``interval`` (from where half of them do to where (1 + p) / 2
    do; None where a side is unreachable), ``median`` (half), ``predicted`` (the curve's mean at the answer's noise),
    ``reach`` (what a share p of studies reaches there) and ``predicted_range`` (where 95 % of studies fall there),
    ``noise`` (per-stage aggregate std at the answer), ``scale`` (the common noise scale), ``scenario`` (at the
    answer, as a dict: the promise), ``noise_scenario`` (the budgets the runs calibrate their noise to: the design's),
    ``factor`` (the design's noise factor), ``any_value`` (the target is met at every noise measured), ``size`` (the
    N of the studies the answer's curve was measured on), ``bits`` (the bits per value its values travel on at the
    answer: a ring's width for discrete CAPE; None: float64)."""

    scheme: str
    answer: float | int | None
    probability: float = PROBABILITY
    interval: tuple[float | None, float | None] | None = None
    median: float | int | None = None
    predicted: float | None = None
    reach: float | None = None
    predicted_range: tuple[float, float] | None = None
    noise: tuple[float, ...] = ()
    scale: float | None = None
    reason: str | None = None
    notes: tuple[str, ...] = field(default=())
    scenario: dict[str, Any] | None = None
    noise_scenario: dict[str, Any] | None = None
    factor: float = 1.0
    any_value: bool = False
    size: int | None = None
    bits: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"answer": self.answer, "probability": self.probability,
                "interval": None if self.interval is None else list(self.interval), "median": self.median,
                "predicted": self.predicted, "reach": self.reach,
                "predicted_range": None if self.predicted_range is None else list(self.predicted_range),
                "noise": list(self.noise), "noise_scale": self.scale, "reason": self.reason,
                "notes": list(self.notes), "scenario": self.scenario, "noise_scenario": self.noise_scenario,
                "noise_factor": self.factor, "any_value": self.any_value, "study_size": self.size,
                "bits_per_value": self.bits}


def noise_scale(family: str, scenario: Scenario, settings: Any, scheme: str, profile: np.ndarray) -> float:
    """The common noise scale of ``scheme`` at ``scenario``: max over stages of std / profile (a stage noisier than
    the curve's profile counts in full: conservative)."""
    return float(np.max(scheme_noise(family, scheme, scenario, settings) / profile))


def largest_noise(curve: UtilityCurve, target: float, p: float) -> tuple[float, str | None]:
    """The largest noise scale at which a share ``p`` of studies still meets ``target`` (the curve's
    :meth:`~dpcore.planner.curve.UtilityCurve.reach`, linear in log(noise) between points): inf when it does at every
    scale measured; 0 with a reason when at none."""
    band = curve.reach(p)
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


def _interp(curve: UtilityCurve, band: np.ndarray, scale: float) -> float:
    """``band`` (one value per point) at ``scale``, linear in log(scale) between points, held flat beyond them."""
    return float(np.interp(math.log(max(scale, 1e-300)), np.log(curve.scales), band))


def _fmt(value: float, integer: bool) -> str:
    return f"{int(value):,}" if integer else f"{value:.4g}"


def _best_words(curve: UtilityCurve, p: float) -> str:
    """What the studies reach at the smallest noise, in words (never 'mean inf')."""
    reach = float(curve.reach(p)[0])
    mean = float(curve.mean[0])
    if not np.isfinite(mean):
        return f"every study failed even at the smallest noise measured ({curve.scales[0]:.3g})"
    if not np.isfinite(reach):
        return (f"at the smallest noise measured ({curve.scales[0]:.3g}) {curve.failed[0]:.0%} of the studies "
                f"failed; the others averaged {mean:.4g}")
    return f"at the smallest noise measured ({curve.scales[0]:.3g}) a share {p:.0%} of studies reaches {reach:.4g}"


@dataclass(frozen=True, kw_only=True)
class SolveProblem:
    """What one scheme's solve reads: the family, the data, the scenario as given, the question and p."""

    family: str
    data: PlannerData
    scenario: Scenario
    q: Question
    scheme: str
    p: float
    design: str
    records_at: Callable[[Scenario, str], list[dict]]


# long: the answer, its rounds at the answer's N and the design's factor, and every plain reason, in order
def solve_scheme(curve_at: CurveAt, first: UtilityCurve, problem: SolveProblem) -> Answer:
    """The knob value at which a share p of fresh studies of ``problem.scheme`` meets the target (module docstring),
    with its interval and the prediction there, or the reason it cannot."""
    fam, data, scenario, q, scheme, p = (problem.family, problem.data, problem.scenario, problem.q, problem.scheme,
                                         problem.p)
    settings = data.settings
    title = scheme_words(fam, scheme)
    refused = scheme_refusal(fam, scheme, data)
    if refused is not None:
        return Answer(scheme=scheme, answer=None, probability=p, reason=refused)
    lo, hi, why_hi = bounds(q, scenario, data.available, data.unit, data.drawable)
    factor = [1.0]
    limit = data_limit(data.available, data.drawable, data.unit)
    if hi < lo:
        return Answer(scheme=scheme, answer=None, probability=p, reason=f"no room for the knob within {why_hi}")
    if q.knob == "eps" and limit is not None and scenario.total_n > limit[0]:
        return Answer(scheme=scheme, answer=None, probability=p, reason=(
            f"the scenario's sites hold N = {scenario.total_n:,} {data.unit}, more than {limit[1]}; give the sites "
            f"fewer {data.unit}, or solve for the samples per site"))

    def sigma_at(value: float) -> float:
        return noise_scale(fam, at_value(q, scenario, value), settings, scheme, first.profile) * factor[0]

    curve = first
    notes: list[str] = []
    answer, sigma, any_value = None, 0.0, False
    for round_ in range(ROUNDS):
        sigma, why = largest_noise(curve, q.target, p)
        if why == "reach":
            return Answer(scheme=scheme, answer=None, probability=p, size=curve.size, reason=(
                f"the target is beyond what studies of N = {curve.size:,} {data.unit} reach even at the smallest "
                f"noise: {_best_words(curve, p)} (non-private {curve.reference:.4g})"))
        any_value = math.isinf(sigma)
        answer = lo if any_value else _solve_knob(sigma_at, sigma, lo, hi, q.integer)
        for _ in range(FACTOR_ROUNDS if problem.design == "aggregator" and answer is not None else 0):
            at = at_value(q, scenario, answer, checked=True)
            k = aggregator_factor(at, lambda run, s=scheme: problem.records_at(run, s))
            if k is None:
                return Answer(scheme=scheme, answer=None, probability=p, reason=(
                    f"{title} cannot be certified against the aggregator within a noise factor of 1,000"))
            if abs(k - factor[0]) <= 1e-6 * k:
                break
            factor[0] = k
            answer = lo if any_value else _solve_knob(sigma_at, sigma, lo, hi, q.integer)
            if answer is None:
                break
        if answer is None or q.knob == "eps" or round_ == ROUNDS - 1:
            break
        size = at_value(q, scenario, answer).total_n
        if abs(size - curve.size) <= SIZE_TOLERANCE * curve.size:
            break
        curve = curve_at(size, None if any_value else sigma)
    if answer is None:
        reached = sigma_at(hi)
        return Answer(scheme=scheme, answer=None, probability=p, size=curve.size, reason=(
            f"{title} would need its aggregate noise at most {sigma:.3g}, but even at {q.words(scenario)} = "
            f"{_fmt(hi, q.integer)} (the limit: {why_hi}) it is {reached:.3g}"))
    if any_value:
        notes.append(f"the target is met by a share {p:.0%} of studies at every noise measured (up to "
                     f"{curve.scales[-1]:.3g}): any {q.words(scenario)} within the tool's range will do")
    edges = [_edge(curve, q, sigma_at, share, lo, hi) for share in (0.5, (1 + p) / 2)]
    at = at_value(q, scenario, answer, checked=True)
    scale = sigma_at(answer)
    run = noise_scenario(at, factor[0])
    stds = scheme_noise(fam, scheme, run, settings)
    try:
        bits = scheme_bits(fam, scheme, run, settings)
    except InputError as exc:
        return Answer(scheme=scheme, answer=None, probability=p, size=curve.size, reason=(
            f"{title} cannot be carried out at {q.words(scenario)} = {_fmt(answer, q.integer)}: {exc}"))
    spread = (_interp(curve, curve.band(1.96), scale), _interp(curve, curve.band(-1.96), scale))
    if scale < curve.scales[0]:
        notes.append(f"the answer's noise {scale:.3g} is below the smallest measured ({curve.scales[0]:.3g}): the "
                     "prediction there is the curve's first point")
    return Answer(scheme=scheme, answer=answer, probability=p, interval=(edges[0], edges[1]), median=edges[0],
                  predicted=_interp(curve, curve.band(0.0), scale), reach=_interp(curve, curve.reach(p), scale),
                  predicted_range=(min(spread), max(spread)), noise=tuple(float(x) for x in stds), scale=scale,
                  notes=tuple(notes), scenario=at.to_dict(), noise_scenario=run.to_dict(), factor=factor[0],
                  any_value=any_value, size=curve.size, bits=bits)


def _edge(curve: UtilityCurve, q: Question, sigma_at: Callable[[float], float], share: float, lo: float, hi: float
          ) -> float | None:
    """The knob value where a share ``share`` of studies meets the target (None when never within the range)."""
    s, problem = largest_noise(curve, q.target, share)
    if problem == "reach":
        return None
    return lo if math.isinf(s) else _solve_knob(sigma_at, s, lo, hi, q.integer)


@dataclass(frozen=True, kw_only=True)
class Forward:
    """The forward question for one scheme: at the scenario as it stands (noise ``scale``), the curve's ``mean``, what
    a share ``probability`` of fresh studies reaches (``reach``), the 95 % range of studies (``low``, ``high``) and,
    with a target, the share of the curve's studies that met it, interpolated between the two points around that
    noise (``share``; None without a target)."""

    scheme: str
    scale: float
    mean: float
    reach: float
    low: float
    high: float
    probability: float
    share: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"scheme": self.scheme, "noise_scale": self.scale, "mean": self.mean, "reach": self.reach,
                "range": [self.low, self.high], "probability": self.probability, "share_meeting": self.share}


def forward(curve: UtilityCurve, scale: float, scheme: str, p: float, target: float | None = None) -> Forward:
    """What one study gets at noise ``scale`` (the scenario as it stands) on ``curve`` (studies of its N)."""
    lo, hi = _interp(curve, curve.band(1.96), scale), _interp(curve, curve.band(-1.96), scale)
    share = None
    if target is not None:
        share = _interp(curve, np.array([curve.share(j, target) for j in range(len(curve.scales))]), scale)
    return Forward(scheme=scheme, scale=scale, mean=_interp(curve, curve.band(0.0), scale),
                   reach=_interp(curve, curve.reach(p), scale), low=min(lo, hi), high=max(lo, hi), probability=p,
                   share=share)


def current_value(q: Question, scenario: Scenario) -> float:
    """The knob's value in the scenario as given (for the sentences)."""
    return knob_value(q, scenario)
