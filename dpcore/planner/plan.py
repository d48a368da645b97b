"""The planner's one entry point: :func:`plan_target` answers "what do we need?" for CAPE and the conventional scheme
side by side, with the uncertainty, the limits of the method for this question and a sentence derived from the
numbers (docs/planner.md)."""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..experiments.families import FAMILIES
from ..family import DataLoader, PlannerData
from ..scenario import Scenario, scenario_from_dict
from ..validation import InputError, check_choice
from .curve import CURVE_RUNS, UtilityCurve, measure_curve
from .knobs import Question, knob_value
from .solve import SCHEMES, Answer, noise_scale, solve_scheme

__all__ = ["SAMPLING_FACTOR", "PlanResult", "plan_target", "prepare_data", "premise_limits", "version"]

SAMPLING_FACTOR = 4
"""An answer whose sites hold fewer than 1/SAMPLING_FACTOR of the samples the curve was measured on is flagged:
sampling error at small N is not in the curve."""


def version() -> str:
    """dpcore's version (``dpcore.__version__``; the package is imported whenever this module is)."""
    return str(sys.modules[__name__.split(".")[0]].__version__)


@dataclass(frozen=True, eq=False, kw_only=True)
class PlanResult:
    """A planner answer: the family, the question, the scenario as given, the data, the curve, one :class:`Answer`
    per scheme, the limits that apply, the headline sentence, the seed and the time."""

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

    def guarantees(self) -> dict[str, list[dict]]:
        """The guarantee records of both schemes at each reachable answer's scenario (every view)."""
        out: dict[str, list[dict]] = {}
        hooks = FAMILIES[self.family].planner
        for scheme, a in self.answers.items():
            if a.scenario is not None:
                records = hooks.guarantees(self.data, scenario_from_dict(a.scenario))
                out[scheme] = [r for r in records if r["algorithm"] == scheme]
        return out

    def to_dict(self) -> dict[str, Any]:
        """Everything: the answers (``cape``, ``conv``: answer, interval, predicted, ... or answer None with a
        reason), the question, settings, seed, version, the curve and the guarantees."""
        fam = FAMILIES[self.family]
        metric = fam.metrics[self.curve.metric]
        out: dict[str, Any] = {scheme: a.to_dict() for scheme, a in self.answers.items()}
        out.update({
            "sentence": self.sentence, "family": self.family, "algorithm": fam.cape,
            "question": {"solve": self.question.knob, "site": None if self.question.site is None else
                         self.scenario.names[self.question.site], "target": self.question.target,
                         "metric": metric.name, "metric_label": metric.label,
                         "higher_is_better": metric.higher_is_better,
                         "knob": self.question.words(self.scenario),
                         "current": knob_value(self.question, self.scenario)},
            "scenario": self.scenario.to_dict(), "data": self.data.description, "settings": self.settings,
            "non_private": self.curve.reference, "limits": list(self.limits), "seed": self.seed,
            "version": version(), "curve": self.curve.records(),
            "curve_profile": dict(zip(self.curve.stage_names, self.curve.profile.tolist(), strict=True)),
            "curve_seconds": self.curve.seconds, "seconds": self.seconds, "guarantees": self.guarantees(),
        })
        return out


def prepare_data(family: str, settings: Any, dataset: Any = None, seed: int = 0,
                 loader: DataLoader | None = None) -> PlannerData:
    """The family's data prepared for the planner (``dataset``: an uploaded data set, or None for the settings'
    own; ``loader``: how the exported script reads it again, :func:`dpcore.planner.sources.read_upload`)."""
    family = check_choice(family, "algorithm family", tuple(FAMILIES))
    data = FAMILIES[family].planner.prepare(settings, dataset, seed)
    return data if loader is None else dataclasses.replace(data, loader=loader)


def premise_limits(family: str, answers: dict[str, Answer], data: PlannerData, curve_n: int | None) -> tuple[str, ...]:
    """Where the method may be wrong for this answer (docs/planner.md, "Limits"), in words from the numbers."""
    out = ["the curve is for CAPE and the conventional scheme, whose noise is one Gaussian term on the aggregate; "
           "it does not answer for baselines whose noise is not (DPdisPCA, local, the LDA configurations)"]
    out.extend(data.premise)
    if curve_n:
        for scheme, a in answers.items():
            if a.scenario is not None:
                total = sum(int(s["n"]) for s in a.scenario["sites"])
                if total * SAMPLING_FACTOR < curve_n:
                    out.append(f"{SCHEMES[scheme]}'s answer has N = {total:,} {data.unit} in all, under a quarter of "
                               f"the {curve_n:,} the curve was measured on: sampling error is not in the curve (run "
                               "the check)")
    return tuple(out)


def _format(value: float | int | None, integer: bool) -> str:
    if value is None:
        return "unreachable"
    return f"{int(value):,}" if integer else f"{value:.3g}"


def _target_text(family: str, target: float) -> str:
    hooks = FAMILIES[family].planner
    metric = FAMILIES[family].metrics[hooks.metric]
    if hooks.percent:
        return f"{target:.0%} of the non-private result"
    return f"a {metric.words} of {target:.3g}" if not metric.higher_is_better else f"{metric.words} {target:.3g}"


def headline(family: str, q: Question, scenario: Scenario, answers: dict[str, Answer]) -> str:
    """'capePCA reaches 80% of the non-private result with 1,200 samples per site; the conventional scheme needs
    2,700.' or the reason either cannot, from the numbers."""
    title = FAMILIES[family].cape
    words = q.words(scenario)
    target = _target_text(family, q.target)
    cape, conv = answers["cape"], answers["conv"]
    if cape.answer is None:
        first = f"{title} cannot reach {target}: {cape.reason}."
    else:
        first = f"{title} reaches {target} with {words} = {_format(cape.answer, q.integer)}"
        if cape.interval is not None and None not in cape.interval:
            first += f" (uncertainty {_format(cape.interval[0], q.integer)} to {_format(cape.interval[1], q.integer)})"
        first += "."
    if conv.answer is None:
        second = f" The conventional scheme cannot: {conv.reason}."
    else:
        second = f" The conventional scheme needs {_format(conv.answer, q.integer)}"
        if cape.answer:
            ratio = float(conv.answer) / float(cape.answer)
            second += f", {ratio:.2g} times as many" if q.knob != "eps" else f", {ratio:.2g} times the eps"
        second += "."
    return first + second


def plan_target(family: str, data: PlannerData, scenario: Scenario, q: Question, *, seed: int = 0,
                runs: int = CURVE_RUNS, workers: int | None = None, tick: Callable[[str], bool] | None = None,
                settings: dict[str, Any] | None = None) -> PlanResult:
    """Answer ``q`` for ``scenario`` on ``data``: measure (or reuse) the utility curve at the scenario's stage
    profile, then invert it for CAPE and the conventional scheme (:func:`dpcore.planner.solve.solve_scheme`)."""
    family = check_choice(family, "algorithm family", tuple(FAMILIES))
    start = time.perf_counter()
    hooks = FAMILIES[family].planner
    metric = FAMILIES[family].metrics[hooks.metric]
    if not q.target > 0:
        raise InputError(f"the target ({hooks.target_words}) must be > 0 (got {q.target:g})"
                         + ("; e.g. 0.8 for 80 %" if hooks.percent else ""), "target")
    noise = hooks.noise(scenario, data.settings)["cape"]
    profile = np.asarray(noise, dtype=float) / float(noise[0]) if noise[0] > 0 else np.ones(len(noise))
    curve = measure_curve(family, data, profile, runs=runs, seed=seed, workers=workers, tick=tick)
    answers = {}
    for scheme in SCHEMES:
        if _beyond_reference(metric.higher_is_better, q.target, curve.reference):
            answers[scheme] = Answer(scheme=scheme, answer=None, reason=(
                f"the target is {'above' if metric.higher_is_better else 'below'} the non-private result "
                f"({curve.reference:.4g}) on these data: no private run is expected to do better than the data "
                "without noise"))
        else:
            answers[scheme] = solve_scheme(curve, scenario, data, q, scheme)
    curve_n = _curve_samples(data)
    return PlanResult(family=family, question=q, scenario=scenario, data=data, curve=curve, answers=answers,
                      limits=premise_limits(family, answers, data, curve_n),
                      sentence=headline(family, q, scenario, answers), seed=seed,
                      seconds=time.perf_counter() - start, settings=dict(settings or {}))


def _beyond_reference(higher: bool, target: float, reference: float) -> bool:
    if not np.isfinite(reference):
        return False
    return target > reference + 1e-12 if higher else target < reference - 1e-12


def _curve_samples(data: PlannerData) -> int | None:
    payload = data.payload
    sizes = getattr(payload, "sizes", None)
    if sizes is None and isinstance(payload, tuple):
        sizes = getattr(payload[1], "sizes", None)
    return None if sizes is None else int(np.sum(sizes))


def scheme_noise(result: PlanResult) -> dict[str, float]:
    """The common noise scale of each scheme at the scenario as given."""
    return {s: noise_scale(result.family, result.scenario, result.data.settings, s, result.curve.profile)
            for s in SCHEMES}


def question_sentence(family: str, scenario: Scenario, q: Question, data_description: str) -> str:
    """What the planner will answer, from the inputs it will run: 'For capePCA on <data>, with the 5 sites of the
    scenario (N_s = 1,000; eps = 1, delta = 1e-05): the samples per site at which it reaches 80% of ...'."""
    sizes, eps, delta = scenario.sizes, scenario.eps, scenario.delta

    def same(values, fmt: str) -> str:
        return format(values[0], fmt) if np.all(values == values[0]) else "from " + format(values.min(), fmt) + \
            " to " + format(values.max(), fmt)

    fam = FAMILIES[family]
    return (f"For {fam.cape} on {data_description}, with the {scenario.n_sites} sites of the scenario (N_s "
            f"{same(sizes, ',')}; eps {same(eps, 'g')}, delta {same(delta, 'g')}; {scenario.calibration} "
            f"calibration): the {q.words(scenario)} at which {fam.cape} and the conventional scheme reach "
            f"{_target_text(family, q.target)}, everything else held as the scenario has it.")
