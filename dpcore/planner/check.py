"""The check of a planner answer (docs/planner.md, "The check"): fresh studies of the family's own algorithms - each
scheme the planner answered for (:mod:`.schemes`: capePCA's message flow, discrete capePCA on its ring, capeAGN,
capeLDA, the conventional scheme) - at the answer and at a point just short of it
(:data:`~dpcore.planner.knobs.SHORT_FACTOR` of it). Study r draws its data (a fresh synthetic ground truth and
samples, or a fresh deal of a fixed set) and its noise from :func:`dpcore.seeding.study_seed` (seed,
PLANNER_CHECK_STREAM, r): streams the answer was not built from. Each point reports the share of studies that met
the target with its 95 % Clopper-Pearson interval, and says whether that is consistent with the answer's p
(the interval reaches p) or below it (the whole interval under p)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import binomtest

from ..experiments.families import FAMILIES
from ..limits import MAX_RUNS
from ..scenario import Scenario, scenario_from_dict
from ..seeding import PLANNER_CHECK_STREAM, study_seed
from ..validation import check_int_range
from ..workers import run_tasks
from .answer import PlanResult
from .design import aggregator_factor, noise_scenario
from .knobs import SHORT_FACTOR, at_value, short_of
from .schemes import scheme_words, sentence_start

__all__ = ["CHECK_RUNS", "CONFIDENCE", "CheckPoint", "CheckResult", "check_plan", "check_points", "share_interval"]

CHECK_RUNS = 20
"""Fresh studies at each point of a check."""
CONFIDENCE = 0.95
"""Level of the check's confidence intervals (Clopper-Pearson, over the studies)."""


def share_interval(met: int, runs: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) 95 % interval of a share from ``met`` of ``runs`` studies."""
    ci = binomtest(int(met), int(runs)).proportion_ci(confidence_level=CONFIDENCE, method="exact")
    return float(ci.low), float(ci.high)


@dataclass(frozen=True, kw_only=True)
class CheckPoint:
    """One scheme at one knob value: each study's value (None for a failed run), how many met the target, their share
    with its 95 % interval (``lo``, ``hi``), the mean of the values, and the verdict against p: ``met`` when the
    interval reaches p (consistent with the answer), else missed (``clearly``: the whole interval on one side of
    p)."""

    scheme: str
    where: str
    value: float
    values: tuple[float | None, ...]
    met_count: int
    share: float
    lo: float
    hi: float
    mean: float
    probability: float
    met: bool
    clearly: bool

    def to_dict(self) -> dict[str, Any]:
        return {"scheme": self.scheme, "where": self.where, "value": self.value, "values": list(self.values),
                "met_count": self.met_count, "studies": len(self.values), "share": self.share,
                "ci": [self.lo, self.hi], "mean": self.mean, "probability": self.probability, "met": self.met,
                "clearly": self.clearly}


@dataclass(frozen=True, kw_only=True)
class CheckResult:
    """The check of a :class:`PlanResult`: a :class:`CheckPoint` per scheme at the answer and just short of it,
    the studies and seed, the time, and a sentence from the numbers."""

    points: tuple[CheckPoint, ...]
    runs: int
    seed: int
    seconds: float
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        return {"points": [p.to_dict() for p in self.points], "runs": self.runs, "seed": self.seed,
                "seconds": self.seconds, "sentence": self.sentence, "short_factor": SHORT_FACTOR,
                "stream": "study_seed(seed, PLANNER_CHECK_STREAM, r)"}


def check_points(result: PlanResult) -> dict[str, tuple[str, str, float, Scenario, Scenario]]:
    """'scheme@where' -> (scheme, where, knob value, the promised scenario, the scenario whose budgets the runs
    calibrate their noise to) of every reachable answer and the point just short of it (not of an answer met at any
    value: nothing is short of it)."""
    out = {}
    records = FAMILIES[result.family].planner.guarantees
    for scheme, answer in result.answers.items():
        if answer.answer is None:
            continue
        points = (("answer", answer.answer),) if answer.any_value else (
            ("answer", answer.answer), ("short", short_of(result.question, answer.answer)))
        for where, value in points:
            promised = at_value(result.question, result.scenario, value, checked=True)
            factor = answer.factor
            if result.design == "aggregator" and where == "short":
                factor = aggregator_factor(promised, lambda run, s=scheme: [
                    r for r in records(result.data, run, (s,)) if r["algorithm"] == s]) or answer.factor
            out[f"{scheme}@{where}"] = (scheme, where, float(value), promised, noise_scenario(promised, factor))
    return out


@dataclass(frozen=True, eq=False, kw_only=True)
class _Shared:
    family: str
    data: Any
    points: list[tuple[str, Scenario]]
    seed: int


def _study(shared: _Shared, task: tuple[int, int], tick: Callable[[str], bool]) -> float | None:
    """Study r of point i (a task of :func:`dpcore.workers.run_tasks`)."""
    i, r = task
    scheme, scenario = shared.points[i]
    value = FAMILIES[shared.family].planner.check(shared.data, scenario, scheme,
                                                  study_seed(shared.seed, PLANNER_CHECK_STREAM, r))
    tick(f"check: {scheme} point {i + 1}, study {r + 1}")
    return None if value is None or not np.isfinite(value) else float(value)


def check_plan(result: PlanResult, *, runs: int = CHECK_RUNS, seed: int | None = None, workers: int | None = None,
               tick: Callable[[str], bool] | None = None) -> CheckResult:
    """``runs`` fresh studies of each reachable answer's scheme at the answer and at :data:`SHORT_FACTOR` of it (seeds
    :func:`~dpcore.seeding.study_seed` (``seed``, PLANNER_CHECK_STREAM, r), default seed the plan's), in ``workers``
    processes (the same numbers for any number)."""
    runs = check_int_range(runs, "runs of the check", 2, MAX_RUNS)
    seed = result.seed if seed is None else int(seed)
    start = time.perf_counter()
    where = check_points(result)
    shared = _Shared(family=result.family, data=result.data, seed=seed,
                     points=[(scheme, run) for scheme, _, _, _, run in where.values()])
    tasks = [(i, r) for i in range(len(where)) for r in range(runs)]
    finished, _ = run_tasks(_study, shared, tasks, workers=workers, tick=tick)
    higher = FAMILIES[result.family].metrics[FAMILIES[result.family].planner.metric].higher_is_better
    target, p = result.question.target, result.probability
    points = []
    for i, (scheme, name, value, _, _) in enumerate(where.values()):
        values = tuple(finished.get(tasks.index((i, r))) for r in range(runs))
        ok = [v for v in values if v is not None]
        met = sum(1 for v in ok if (v >= target if higher else v <= target))
        lo, hi = share_interval(met, runs)
        points.append(CheckPoint(scheme=scheme, where=name, value=value, values=values, met_count=met,
                                 share=met / runs, lo=lo, hi=hi, mean=float(np.mean(ok)) if ok else math.nan,
                                 probability=p, met=hi >= p, clearly=lo >= p if hi >= p else True))
    return CheckResult(points=tuple(points), runs=runs, seed=seed, seconds=time.perf_counter() - start,
                       sentence=check_sentence(result, points))


def check_sentence(result: PlanResult, points: list[CheckPoint]) -> str:
    """What the check showed, per scheme, from the numbers."""
    if not points:
        return "Nothing to check: no scheme can reach the target."
    integer = result.question.integer
    p = result.probability
    parts = []
    for scheme in result.answers:
        mine = {pt.where: pt for pt in points if pt.scheme == scheme}
        if not mine:
            continue
        name = sentence_start(scheme_words(result.family, scheme))

        def val(x: float) -> str:
            return f"{int(x):,}" if integer else f"{x:.3g}"

        def verdict(pt: CheckPoint) -> str:
            return (f"{pt.met_count} of {len(pt.values)} fresh studies reached the target ({pt.share:.0%}, 95 % CI "
                    f"{pt.lo:.0%} to {pt.hi:.0%}): " + (f"met (the interval reaches p = {p:.0%})" if pt.met else
                                                         f"missed (the whole interval is below p = {p:.0%})"))

        text = f"{name} at {val(mine['answer'].value)}: {verdict(mine['answer'])}"
        if "short" in mine:
            text += f"; at {val(mine['short'].value)}: {verdict(mine['short'])}"
        parts.append(text + ".")
    return " ".join(parts)


def answer_scenario(result: PlanResult, scheme: str):
    """The scenario of ``scheme``'s answer (None when unreachable)."""
    a = result.answers[scheme]
    return None if a.scenario is None else scenario_from_dict(a.scenario)
