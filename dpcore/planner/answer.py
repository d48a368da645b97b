"""The planner's one entry point: :func:`plan_target` answers "what do we need?" for CAPE and the conventional scheme
side by side, with the uncertainty, the limits of the method for this question and a sentence derived from the
numbers (docs/planner.md)."""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..experiments.families import FAMILIES
from ..family import DataLoader, PlannerData
from ..scenario import Scenario, scenario_from_dict
from ..textio import printable
from ..validation import InputError, check_choice
from .curve import CURVE_RUNS, UtilityCurve, measure_curve
from .design import aggregator_factor, check_design, promised_records
from .knobs import Question, knob_value
from .schemes import lead_scheme, planner_schemes, scheme_noise, scheme_refusal, scheme_words
from .sentences import CURVE_RUNS_WORDS, forward_sentence, headline, premise_limits, question_sentence
from .solve import (
    PROBABILITY,
    SIZE_TOLERANCE,
    Answer,
    Forward,
    SolveProblem,
    check_probability,
    forward,
    largest_noise,
    noise_scale,
    solve_scheme,
)

__all__ = ["CURVE_RUNS_WORDS", "NARROW_DECADES", "NARROW_POINTS", "OWN_DATA", "PlanResult", "forward_sentence",
           "headline", "plan_target", "premise_limits", "prepare_data", "question_sentence", "version"]


def version() -> str:
    """dpcore's version (``dpcore.__version__``; the package is imported whenever this module is)."""
    return str(sys.modules[__name__.split(".")[0]].__version__)


@dataclass(frozen=True, eq=False, kw_only=True)
class PlanResult:
    """A planner answer: the family, the question, the scenario as given, the data, the curve (studies of the
    scenario's N), one :class:`Answer` per scheme, the forward answer per scheme (the scenario as it stands; None
    when its N is beyond the data), the probability p and the design, the limits that apply, the headline sentence,
    the seed and the time."""

    family: str
    question: Question
    scenario: Scenario
    data: PlannerData
    curve: UtilityCurve
    answers: dict[str, Answer]
    limits: tuple[str, ...]
    sentence: str
    seed: int
    seconds: float
    settings: dict[str, Any] = field(default_factory=dict)
    probability: float = PROBABILITY
    design: str = "papers"
    forward: dict[str, Forward] | None = None
    forward_sentence: str = ""
    curves: tuple[UtilityCurve, ...] = ()

    def guarantees(self) -> dict[str, list[dict]]:
        """The guarantee records of every view of every scheme at its reachable answer: computed by the audit at the
        noise the runs use (the design's) and measured against the promised budgets (:mod:`.design`)."""
        out: dict[str, list[dict]] = {}
        hooks = FAMILIES[self.family].planner
        for scheme, a in self.answers.items():
            if a.scenario is not None:
                promised = scenario_from_dict(a.scenario)
                run = scenario_from_dict(a.noise_scenario) if a.factor > 1.0 else promised
                records = [r for r in hooks.guarantees(self.data, run, (scheme,)) if r["algorithm"] == scheme]
                out[scheme] = promised_records(records, run, promised, a.factor)
        return out

    def caveats(self) -> list[str]:
        """The calibration's caveats at the answers' budgets (e.g. classic calibration at eps >= 1)."""
        out: list[str] = []
        for a in self.answers.values():
            if a.scenario is not None:
                out += [c for c in scenario_from_dict(a.scenario).caveats() if c not in out]
        return out

    def to_dict(self) -> dict[str, Any]:
        """Everything: the answers by scheme (the algorithm names of :mod:`.schemes`, e.g. ``cape``, ``cape-discrete``,
        ``conv``: answer, probability, interval, predicted, bits_per_value, ... or answer None with a reason), how
        each scheme is named (``schemes``), the forward answers, the question, settings, seed, version, the curve and
        the guarantees."""
        fam = FAMILIES[self.family]
        metric = fam.metrics[self.curve.metric]
        out: dict[str, Any] = {scheme: a.to_dict() for scheme, a in self.answers.items()}
        out.update({
            "sentence": self.sentence, "forward_sentence": self.forward_sentence, "family": self.family,
            "algorithm": fam.cape, "schemes": {s: scheme_words(self.family, s) for s in self.answers},
            "question": {"solve": self.question.knob, "site": None if self.question.site is None else
                         self.scenario.names[self.question.site], "target": self.question.target,
                         "probability": self.probability, "design": self.design,
                         "metric": metric.name, "metric_label": metric.label,
                         "higher_is_better": metric.higher_is_better,
                         "knob": self.question.words(self.scenario),
                         "current": knob_value(self.question, self.scenario)},
            "forward": None if self.forward is None else {s: f.to_dict() for s, f in self.forward.items()},
            "scenario": self.scenario.to_dict(), "data": self.data.description, "settings": self.settings,
            "non_private": self.curve.reference, "limits": list(self.limits), "caveats": self.caveats(),
            "seed": self.seed, "version": version(), "curve": self.curve.records(), "curve_studies": self.curve.size,
            "curve_profile": dict(zip(self.curve.stage_names, self.curve.profile.tolist(), strict=True)),
            "curve_seconds": self.curve.seconds, "seconds": self.seconds, "guarantees": self.guarantees(),
        })
        return out


OWN_DATA = ("planned on the values of {file} (their norms and their curve), not a public proxy of its shape: reading "
            "them is not differentially private, so the answer itself tells something about the data")
"""The limit of every answer planned on a file's own values (the page's 'my data', ``plan --use-my-data``)."""


def prepare_data(family: str, settings: Any, dataset: Any = None, seed: int = 0,
                 loader: DataLoader | None = None) -> PlannerData:
    """The family's data prepared for the planner (``dataset``: an uploaded data set, or None for the settings'
    own; ``loader``: how the exported script reads it again, :func:`dpcore.planner.sources.read_upload`)."""
    family = check_choice(family, "algorithm family", tuple(FAMILIES))
    data = FAMILIES[family].planner.prepare(settings, dataset, seed)
    if loader is None:
        return data
    read = () if loader.file is None else (OWN_DATA.format(file=printable(loader.file)),)
    return dataclasses.replace(data, loader=loader, premise=(*data.premise, *read))


def plan_target(family: str, data: PlannerData, scenario: Scenario, q: Question, *, seed: int = 0,
                runs: int = CURVE_RUNS, workers: int | None = None, tick: Callable[[str], bool] | None = None,
                settings: dict[str, Any] | None = None, probability: float = PROBABILITY,
                design: str = "papers", progress: Callable[[float, str], None] | None = None) -> PlanResult:
    """Answer ``q`` for ``scenario`` on ``data``: measure (or reuse) the curve of simulated studies of the scenario's N
    at its stage profile (the forward answer), then invert it for CAPE and the conventional scheme, measuring it
    again at the answer's N (:func:`dpcore.planner.solve.solve_scheme`), for ``design`` (:mod:`.design`)."""
    family = check_choice(family, "algorithm family", tuple(FAMILIES))
    p = check_probability(probability)
    design = check_design(design)
    start = time.perf_counter()
    hooks = FAMILIES[family].planner
    metric = FAMILIES[family].metrics[hooks.metric]
    if not q.target > 0:
        raise InputError(f"the target ({hooks.target_words}) must be > 0 (got {q.target:g})"
                         + ("; e.g. 0.8 for 80 %" if hooks.percent else ""), "target")
    noise = scheme_noise(family, lead_scheme(family), scenario, data.settings)
    profile = np.asarray(noise, dtype=float) / float(noise[0]) if noise[0] > 0 else np.ones(len(noise))
    limit = data.available if data.available is not None else data.drawable
    # the scenario's own N, or (beyond what a study may hold: no forward answer) the data's own size, no more
    size = scenario.total_n if limit is None or scenario.total_n <= limit else min(limit, max(data.size, 2))
    curves: list[UtilityCurve] = []

    def curve_at(n: int, around: float | None) -> UtilityCurve:
        near = [c for c in curves if abs(n - c.size) <= SIZE_TOLERANCE * c.size and not _outside(c, q.target, p)]
        if near:  # measured for another scheme within the rounds' tolerance (discrete CAPE's N is CAPE's to 0.2 %)
            return min(near, key=lambda c: abs(n - c.size))
        grid = None if around is None else around * np.logspace(*NARROW_DECADES, NARROW_POINTS)
        curve = measure_curve(family, data, profile, size=n, runs=runs, seed=seed, workers=workers, tick=tick,
                              scales=grid, progress=progress)
        if grid is not None and _outside(curve, q.target, p):
            curve = measure_curve(family, data, profile, size=n, runs=runs, seed=seed, workers=workers, tick=tick,
                                  progress=progress)
        curves.append(curve)
        return curve

    first = curve_at(size, None)
    records_at = _records_at(family, data)
    answers = {}
    for scheme in planner_schemes(family):
        if _beyond_reference(metric.higher_is_better, q.target, first.reference):
            answers[scheme] = Answer(scheme=scheme, answer=None, probability=p, reason=(
                f"the target is {'above' if metric.higher_is_better else 'below'} the non-private result "
                f"({first.reference:.4g}) on these data: no private run is expected to do better than the data "
                "without noise"))
        else:
            answers[scheme] = solve_scheme(curve_at, first, SolveProblem(
                family=family, data=data, scenario=scenario, q=q, scheme=scheme, p=p, design=design,
                records_at=records_at))
    fwd, why = _forward(family, data, scenario, first, q.target, p, design, records_at)
    return PlanResult(family=family, question=q, scenario=scenario, data=data, curve=first, answers=answers,
                      limits=premise_limits(family, answers, data, p, scenario),
                      sentence=headline(family, q, scenario, answers, p), seed=seed,
                      seconds=time.perf_counter() - start, settings=dict(settings or {}), probability=p, design=design,
                      forward=fwd, forward_sentence=forward_sentence(family, fwd, why, p, q.target),
                      curves=tuple(curves))


NARROW_DECADES = (-0.6, 0.6)
"""The narrow grid of a curve at the answer's N: the previous answer's noise times 10^a .. 10^b."""
NARROW_POINTS = 10
"""Noise levels of the narrow grid."""


def _outside(curve: UtilityCurve, target: float, p: float) -> bool:
    """The target's crossing is not inside the narrow grid (measure the family's whole grid instead)."""
    sigma, why = largest_noise(curve, target, p)
    return why is not None or math.isinf(sigma)


def _records_at(family: str, data: PlannerData) -> Callable[[Scenario, str], list[dict]]:
    hooks = FAMILIES[family].planner

    def records(run: Scenario, scheme: str) -> list[dict]:
        return [r for r in hooks.guarantees(data, run, (scheme,)) if r["algorithm"] == scheme]
    return records


def _forward(family: str, data: PlannerData, scenario: Scenario, curve: UtilityCurve, target: float, p: float,
             design: str, records_at: Callable[[Scenario, str], list[dict]]) -> tuple[dict[str, Forward] | None, str]:
    """The forward answer at the scenario as it stands (None with the reason when its N is not what the curve's
    studies hold)."""
    if curve.size != scenario.total_n:
        return None, (f"its sites hold N = {scenario.total_n:,} {data.unit}, more than "
                      f"{'the data have' if data.available is not None else 'one simulated study may hold'} "
                      f"({curve.size:,})")
    out = {}
    for scheme in planner_schemes(family):
        if scheme_refusal(family, scheme, data) is not None:
            continue
        factor = 1.0
        if design == "aggregator":
            factor = aggregator_factor(scenario, lambda run, s=scheme: records_at(run, s)) or math.inf
        scale = noise_scale(family, scenario, data.settings, scheme, curve.profile) * factor
        out[scheme] = forward(curve, scale, scheme, p, target)
    return out, ""


def _beyond_reference(higher: bool, target: float, reference: float) -> bool:
    if not np.isfinite(reference):
        return False
    return target > reference + 1e-12 if higher else target < reference - 1e-12
