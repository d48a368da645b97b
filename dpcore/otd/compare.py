"""Comparing OTD algorithms over runs (docs/math/capeagn.md): every run of every chosen algorithm on its own random
stream, evaluated against the truth (synthetic data) or the non-private result (uploads), summarised."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..limits import MAX_RUNS
from ..scenario import Scenario
from ..seeding import data_rng, run_rng
from ..summary import MetricSummary, summarise_values
from ..validation import InputError, check_positive_int
from .algorithm import OtdAlgorithm
from .evaluation import METRICS, evaluate
from .models import MixtureModel
from .paths import PathChoice, choose_path
from .problem import Decomposition, OtdProblem, OtdSettings, SyntheticSpec, synthetic_problem
from .table import check_algorithms, run_algorithm
from .whitening import WhiteningError

__all__ = ["AlgorithmRun", "OtdComparison", "compare_algorithms"]

MODEL_STREAM = 0x30DE1
"""Second entropy word of the ground truth's generator: default_rng([seed, MODEL_STREAM])."""
REFERENCE_STREAM = 0x4EF
"""Second entropy word of the non-private reference run on uploaded data."""


@dataclass(frozen=True, kw_only=True)
class AlgorithmRun:
    """One algorithm in one run: metrics, or the whitening failure that stopped it."""

    run: int
    algorithm: str
    q_comp: float | None
    weight_error: float | None
    error: str | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class OtdComparison:
    """Everything the CLI and the dashboard show: summaries, per-run records, one example per algorithm."""

    algorithms: tuple[str, ...]
    summaries: tuple[MetricSummary, ...]
    records: tuple[AlgorithmRun, ...]
    path: PathChoice
    reference: str
    reference_components: np.ndarray
    reference_weights: np.ndarray
    examples: dict[str, Decomposition]
    privacy: dict[str, str]
    failures: dict[str, str]
    problem: OtdProblem
    scenario: Scenario
    settings: OtdSettings
    runs: int
    seed: int
    notes: tuple[str, ...] = field(default=())

    def summary(self, algorithm: str, metric: str = "q_comp") -> MetricSummary:
        """The summary of one algorithm and metric."""
        for s in self.summaries:
            if s.algorithm == algorithm and s.metric == metric:
                return s
        raise KeyError((algorithm, metric))

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [s.to_dict() for s in self.summaries],
            "path": self.path.path,
            "path_reason": self.path.reason,
            "reference": self.reference,
            "model": self.problem.kind,
            "dim": self.problem.dim,
            "k": self.problem.k,
            "sites": self.problem.n_sites,
            "sizes": self.problem.sizes.tolist(),
            "runs": self.runs,
            "seed": self.seed,
            "eps_split": self.settings.eps_split,
            "m3_noise": self.settings.m3_noise,
            "neighbouring": self.scenario.neighbouring,
            "calibration": self.scenario.calibration,
            "privacy": dict(self.privacy),
            "failures": dict(self.failures),
            "notes": list(self.notes),
        }


def _summaries(algorithms: Sequence[str], records: list[AlgorithmRun]) -> tuple[MetricSummary, ...]:
    out = []
    for alg in algorithms:
        mine = [r for r in records if r.algorithm == alg]
        ok = [r for r in mine if r.error is None]
        for metric in METRICS:
            out.append(summarise_values(alg, metric, [getattr(r, metric) for r in ok], len(mine) - len(ok)))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class _Reference:
    """What every result is compared with: the ground truth, or the non-private result on uploaded data."""

    kind: str
    components: np.ndarray
    weights: np.ndarray
    run: Decomposition | None = None


def _reference(problem: OtdProblem | None, model: MixtureModel | None, scenario: Scenario, settings: OtdSettings,
               seed: int, path: str) -> _Reference:
    if problem is None:
        return _Reference("truth", model.components, model.weights)
    ref = run_algorithm("nonpriv", problem, scenario, settings, np.random.default_rng([seed, REFERENCE_STREAM]),
                        path=path)
    return _Reference("nonprivate", ref.components, ref.weights, ref)


def _check_path(entries: tuple[OtdAlgorithm, ...], choice: PathChoice, dim: int, settings: OtdSettings) -> None:
    """Refuse, before any run, a path some chosen algorithm or the noise law cannot use."""
    for entry in entries:
        if entry.dense_only and choice.path != "dense":
            raise InputError(f"{entry.name.upper()} needs the dense path, but D = {dim} runs on the projected path "
                             f"({choice.reason}). Drop {entry.name} or use a smaller D.", "algorithms")
    if choice.path == "projected" and settings.m3_noise == "published":
        raise InputError("the 'published' third-moment noise needs the dense path; use 'symmetrized'", "m3_noise")


def compare_algorithms(
    scenario: Scenario,
    algorithms: Sequence[str],
    *,
    spec: SyntheticSpec | None = None,
    problem: OtdProblem | None = None,
    runs: int = 10,
    seed: int = 0,
    settings: OtdSettings | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> OtdComparison:
    """Run ``algorithms`` ``runs`` times and summarise q_comp and the weight error.

    Synthetic (``spec``): one ground truth drawn from ``seed``, fresh samples per run at the scenario's
    N_s, the truth is the reference. Uploaded (``problem``): the same data every run (runs differ in the
    noise), the reference is the non-private result (no ground truth): q_comp is then the distance to it.
    A whitening failure is recorded for that run and algorithm (``failed``), not averaged in. ``settings`` defaults
    to ``OtdSettings()``. Every algorithm
    draws from its own stream :func:`dpcore.seeding.run_rng` (seed, run, name); synthetic data from
    :func:`dpcore.seeding.data_rng` (seed, run)."""
    if (spec is None) == (problem is None):
        raise InputError("give either a synthetic model or data, not both")
    entries = check_algorithms(algorithms)
    runs = check_positive_int(runs, "runs")
    if runs > MAX_RUNS:
        raise InputError(f"runs must be at most {MAX_RUNS} (got {runs})", "runs")
    seed = check_positive_int(seed, "seed", minimum=0)
    settings = OtdSettings() if settings is None else settings
    model = None if spec is None else spec.model(np.random.default_rng([seed, MODEL_STREAM]))
    scenario_run = scenario if problem is None else scenario.with_sizes(problem.sizes)
    dim, k = (model.dim, model.k) if model is not None else (problem.dim, problem.k)
    choice = choose_path(settings.path, dim, k, scenario_run.n_sites, settings.memory_budget)
    _check_path(entries, choice, dim, settings)
    notes = scenario_run.caveats() + (list(problem.notes) if problem is not None else [])
    reference = _reference(problem, model, scenario_run, settings, seed, choice.path)
    if reference.run is not None:
        if problem.kind == "mog":
            problem = replace(problem, random_norm=float(np.linalg.norm(reference.components, axis=1).mean()))
        notes.append("no ground truth: q_comp is the distance of each result to the non-private result "
                     "(same matching rule), and the weight error is measured against its weights")
    runner = _Runs(entries, scenario_run, settings, choice.path, seed, reference, progress, runs * len(entries))
    current = problem
    for run in range(runs):
        if model is not None:
            current = synthetic_problem(model, scenario.sizes, data_rng(seed, run), spec.estimator)
            if run == 0:
                notes.extend(current.notes)
        runner.run_all(current, run, runs)
    if progress is not None:
        progress(1.0, "done")
    if reference.run is not None:
        notes.extend(reference.run.notes)
    names = tuple(e.name for e in entries)
    return OtdComparison(
        algorithms=names, summaries=_summaries(names, runner.records), records=tuple(runner.records), path=choice,
        reference=reference.kind, reference_components=np.asarray(reference.components),
        reference_weights=np.asarray(reference.weights), examples=runner.examples, privacy=runner.privacy,
        failures=runner.failures, problem=current, scenario=scenario_run, settings=settings, runs=runs, seed=seed,
        notes=tuple(dict.fromkeys(notes)),
    )


class _Runs:
    """Runs every algorithm of one comparison and collects records, one example and the privacy statement per
    algorithm, and the first whitening failure of each."""

    def __init__(self, entries: tuple[OtdAlgorithm, ...], scenario: Scenario, settings: OtdSettings, path: str,
                 seed: int, reference: _Reference, progress: Callable[[float, str], None] | None, total: int):
        self.entries, self.scenario, self.settings, self.path = entries, scenario, settings, path
        self.seed, self.reference, self.progress, self.total = seed, reference, progress, total
        self.done = 0
        self.records: list[AlgorithmRun] = []
        self.examples: dict[str, Decomposition] = {}
        self.privacy: dict[str, str] = {}
        self.failures: dict[str, str] = {}

    def run_all(self, problem: OtdProblem, run: int, runs: int) -> None:
        for entry in self.entries:
            if self.progress is not None:
                self.progress(self.done / self.total, f"run {run + 1}/{runs}: {entry.title}")
            rng = run_rng(self.seed, run, entry.name, "otd")
            try:
                dec = run_algorithm(entry, problem, self.scenario, self.settings, rng, path=self.path)
            except WhiteningError as exc:
                self.records.append(AlgorithmRun(run=run, algorithm=entry.name, q_comp=None, weight_error=None,
                                                 error=str(exc)))
                self.failures.setdefault(entry.name, str(exc))
            else:
                qc, we = evaluate(dec.components, dec.weights, self.reference.components, self.reference.weights)
                self.records.append(AlgorithmRun(run=run, algorithm=entry.name, q_comp=qc, weight_error=we))
                self.examples.setdefault(entry.name, dec)
                self.privacy.setdefault(entry.name, dec.privacy)
            self.done += 1
