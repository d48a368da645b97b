"""The check of a planner answer (docs/planner.md, "The check"): real runs of the family's own algorithm - capePCA's
message flow, capeAGN, capeLDA, and the conventional scheme - at the answer and at a point just short of it
(:data:`~dpcore.planner.knobs.SHORT_FACTOR` of it), each with its mean and 95 % confidence interval and whether the
target was met. The runs re-deal or redraw the data at the answer's sizes, so the check also sees what the curve
leaves out (sampling error at small N)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import t as student_t

from ..experiments.families import FAMILIES
from ..limits import MAX_RUNS
from ..scenario import scenario_from_dict
from ..validation import check_int_range
from .knobs import SHORT_FACTOR, at_value, short_of
from .plan import PlanResult
from .solve import SCHEMES

__all__ = ["CHECK_RUNS", "CheckPoint", "CheckResult", "check_plan", "confidence_interval"]

CHECK_RUNS = 10
"""Runs at each point of a check."""
CONFIDENCE = 0.95
"""Level of the check's confidence intervals (Student t over the runs)."""


def confidence_interval(values: list[float]) -> tuple[float, float, float]:
    """(mean, lo, hi): the mean of the runs and its 95 % Student-t interval (lo = hi = mean for one run)."""
    x = np.asarray(values, dtype=float)
    mean = float(np.mean(x))
    if x.size < 2:
        return mean, mean, mean
    half = float(student_t.ppf((1 + CONFIDENCE) / 2, x.size - 1) * np.std(x, ddof=1) / math.sqrt(x.size))
    return mean, mean - half, mean + half


@dataclass(frozen=True, kw_only=True)
class CheckPoint:
    """One scheme at one knob value: the runs' values (None for a failed run), their mean and 95 % interval, and
    whether the target was met (the mean on the right side of it; ``clearly`` when the whole interval is)."""

    scheme: str
    where: str
    value: float
    values: tuple[float | None, ...]
    mean: float
    lo: float
    hi: float
    met: bool
    clearly: bool

    def to_dict(self) -> dict[str, Any]:
        return {"scheme": self.scheme, "where": self.where, "value": self.value, "values": list(self.values),
                "mean": self.mean, "ci": [self.lo, self.hi], "met": self.met, "clearly": self.clearly}


@dataclass(frozen=True, kw_only=True)
class CheckResult:
    """The check of a :class:`PlanResult`: a :class:`CheckPoint` per scheme at the answer and just short of it,
    the runs and seed, the time, and a sentence from the numbers."""

    points: tuple[CheckPoint, ...]
    runs: int
    seed: int
    seconds: float
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        return {"points": [p.to_dict() for p in self.points], "runs": self.runs, "seed": self.seed,
                "seconds": self.seconds, "sentence": self.sentence, "short_factor": SHORT_FACTOR}


def _point(result: PlanResult, scheme: str, where: str, value: float, runs: int, seed: int) -> CheckPoint:
    hooks = FAMILIES[result.family].planner
    higher = FAMILIES[result.family].metrics[hooks.metric].higher_is_better
    scenario = at_value(result.question, result.scenario, value, checked=True)
    values = hooks.check(result.data, scenario, scheme, runs, seed)
    finite = [v for v in values if v is not None and np.isfinite(v)]
    worst = -math.inf if higher else math.inf
    if len(finite) < len(values):  # a failed run meets no target
        finite = finite + [worst] * (len(values) - len(finite))
    mean, lo, hi = confidence_interval(finite) if np.all(np.isfinite(finite)) else (worst, worst, worst)
    target = result.question.target
    met = mean >= target if higher else mean <= target
    clearly = (lo >= target if met else hi < target) if higher else (hi <= target if met else lo > target)
    return CheckPoint(scheme=scheme, where=where, value=float(value), values=tuple(values), mean=mean, lo=lo, hi=hi,
                      met=bool(met), clearly=bool(clearly))


def check_plan(result: PlanResult, *, runs: int = CHECK_RUNS, seed: int | None = None) -> CheckResult:
    """Run each reachable answer's scheme ``runs`` times at the answer and at :data:`SHORT_FACTOR` of it (streams
    keyed by ``seed``, default the plan's)."""
    runs = check_int_range(runs, "runs of the check", 2, MAX_RUNS)
    seed = result.seed if seed is None else int(seed)
    start = time.perf_counter()
    points = []
    for scheme, answer in result.answers.items():
        if answer.answer is None:
            continue
        points.append(_point(result, scheme, "answer", float(answer.answer), runs, seed))
        points.append(_point(result, scheme, "short", float(short_of(result.question, answer.answer)), runs, seed))
    return CheckResult(points=tuple(points), runs=runs, seed=seed, seconds=time.perf_counter() - start,
                       sentence=check_sentence(result, points))


def check_sentence(result: PlanResult, points: list[CheckPoint]) -> str:
    """What the check showed, per scheme, from the numbers."""
    if not points:
        return "Nothing to check: no scheme can reach the target."
    integer = result.question.integer
    parts = []
    for scheme in SCHEMES:
        mine = {p.where: p for p in points if p.scheme == scheme}
        if not mine:
            continue
        a, s = mine["answer"], mine["short"]
        name = FAMILIES[result.family].cape if scheme == "cape" else "The conventional scheme"

        def val(x: float) -> str:
            return f"{int(x):,}" if integer else f"{x:.3g}"

        parts.append(f"{name} at {val(a.value)}: mean {a.mean:.3g} (95 % CI {a.lo:.3g} to {a.hi:.3g}), target "
                     f"{'met' if a.met else 'missed'}; at {val(s.value)}: mean {s.mean:.3g} ({s.lo:.3g} to "
                     f"{s.hi:.3g}), target {'met' if s.met else 'missed'}.")
    return " ".join(parts)


def answer_scenario(result: PlanResult, scheme: str):
    """The scenario of ``scheme``'s answer (None when unreachable)."""
    a = result.answers[scheme]
    return None if a.scenario is None else scenario_from_dict(a.scenario)
