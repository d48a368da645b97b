"""Comparing OTD algorithms over runs (docs/math/capeagn.md): every run of every chosen algorithm on its own random
stream (the family contract's comparison loop, :func:`dpcore.family.run_comparison`), evaluated against the truth
(synthetic data) or the non-private result (uploads), summarised."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..family import Algorithm, Progress, ShouldStop, check_runs, each_algorithm, run_comparison, stop_note, widest_ring
from ..scenario import Scenario
from ..seeding import OTD_MODEL_STREAM, OTD_REFERENCE_STREAM, data_rng, run_rng, stream_rng
from ..summary import MetricSummary, summarise_values
from ..tensor.paths import PathChoice, choose_path
from ..tensor.release import check_m3_law
from ..tensor.whitening import WhiteningError
from ..validation import InputError
from .evaluation import METRICS, evaluate_metrics
from .models import MixtureModel
from .problem import Decomposition, OtdProblem, OtdSettings, SyntheticSpec, synthetic_problem
from .table import ALGORITHMS, check_algorithms, run_algorithm

__all__ = ["AlgorithmRun", "OtdComparison", "compare_algorithms"]

@dataclass(frozen=True, kw_only=True)
class AlgorithmRun:
    """One algorithm in one run: every metric of :data:`~dpcore.agn.evaluation.METRICS` by name, or the whitening
    failure that stopped it (``metrics`` empty)."""

    run: int
    algorithm: str
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None

    def metric(self, name: str) -> float | None:
        """The metric ``name`` (None when the run failed)."""
        return self.metrics.get(name)

    @property
    def q_comp(self) -> float | None:
        return self.metric("q_comp")

    @property
    def q_comp_normalised(self) -> float | None:
        return self.metric("q_comp_normalised")

    @property
    def weight_error(self) -> float | None:
        return self.metric("weight_error")


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
    failures: dict[str, str]
    problem: OtdProblem
    scenario: Scenario
    settings: OtdSettings
    runs: int
    seed: int
    notes: tuple[str, ...] = field(default=())
    stopped: bool = False

    def summary(self, algorithm: str, metric: str = "q_comp") -> MetricSummary:
        """The summary of one algorithm and metric."""
        for s in self.summaries:
            if s.algorithm == algorithm and s.metric == metric:
                return s
        raise KeyError((algorithm, metric))

    def bits_per_value(self) -> dict[str, int | None]:
        """The ring every value of an algorithm travelled on, by algorithm that finished a run: its example's
        ``bits_per_value`` (the wider of its two stages' rings; None: float64 values, :mod:`dpcore.family.rings`).
        An algorithm whose every run failed at whitening is left out (nothing to tell)."""
        return {name: widest_ring([self.examples[name].bits_per_value]) for name in self.algorithms
                if name in self.examples}

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
            "failures": dict(self.failures),
            "bits_per_value": self.bits_per_value(),
            "notes": list(self.notes),
        }


def _summaries(algorithms: Sequence[str], records: list[AlgorithmRun]) -> tuple[MetricSummary, ...]:
    out = []
    for alg in algorithms:
        mine = [r for r in records if r.algorithm == alg]
        ok = [r for r in mine if r.error is None]
        for metric in METRICS:
            out.append(summarise_values(alg, metric, [r.metrics[metric] for r in ok], len(mine) - len(ok)))
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
    ref = run_algorithm("nonpriv", problem, scenario, settings, stream_rng(seed, OTD_REFERENCE_STREAM),
                        path=path)
    return _Reference("nonprivate", ref.components, ref.weights, ref)


def _reference_notes(problem: OtdProblem | None, model: MixtureModel | None, scenario: Scenario,
                     reference: _Reference) -> tuple[OtdProblem | None, list[str]]:
    """The notes a comparison starts with, and uploaded MOG data with the random reference's norm set."""
    notes = scenario.caveats() + (list(problem.notes) if problem is not None else [])
    if reference.run is not None:
        if problem.kind == "mog":
            problem = replace(problem, random_norm=float(np.linalg.norm(reference.components, axis=1).mean()))
        notes.append("no ground truth: q_comp is the distance of each result to the non-private result "
                     "(same matching rule), and the weight error is measured against its weights")
    if model is not None:
        notes.extend(model.notes)
    return problem, notes


def _check_path(entries: tuple[Algorithm, ...], choice: PathChoice, dim: int, k: int, settings: OtdSettings) -> None:
    """Refuse, before any run, a path some chosen algorithm or the noise law cannot use."""
    for entry in entries:
        if entry.dense_only and choice.path != "dense":
            raise InputError(f"{entry.name.upper()} needs the dense path, but D = {dim} runs on the projected path "
                             f"({choice.reason}). Drop {entry.name} or use a smaller D.", "algorithms")
    check_m3_law(settings.m3_noise, choice.path, k)


def compare_algorithms(  # long: the checks, the run loop and the result, each a few lines, read top to bottom
    scenario: Scenario,
    algorithms: Sequence[str],
    *,
    spec: SyntheticSpec | None = None,
    problem: OtdProblem | None = None,
    runs: int = 10,
    seed: int = 0,
    settings: OtdSettings | None = None,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    workers: int | None = None,
) -> OtdComparison:
    """Run ``algorithms`` ``runs`` times and summarise q_comp, the paper's normalised q_comp and the weight error.

    Synthetic (``spec``): one ground truth drawn from ``seed``, fresh samples per run at the scenario's
    N_s, the truth is the reference. Uploaded (``problem``): the same data every run (runs differ in the
    noise), the reference is the non-private result (no ground truth): q_comp is then the distance to it.
    A whitening failure is recorded for that run and algorithm (``failed``), not averaged in. ``settings`` defaults
    to ``OtdSettings()``. Every algorithm draws from its own stream :func:`dpcore.seeding.run_rng` (seed, run,
    name); synthetic data from :func:`dpcore.seeding.data_rng` (seed, run). Runs go to ``workers`` processes
    (:func:`dpcore.workers.worker_count`), with the same results for any number; ``progress(done, total, label)``
    after each algorithm of each run (the family contract's one form, :data:`dpcore.family.Progress`);
    ``should_stop()`` as often: a stopped comparison keeps the runs that finished (at least one is needed; the notes
    say so)."""
    if (spec is None) == (problem is None):
        raise InputError("give either a synthetic model or data, not both")
    entries = check_algorithms(algorithms)
    runs, seed = check_runs(runs, seed)
    settings = OtdSettings() if settings is None else settings
    if spec is not None:
        spec.check_load(scenario.sizes)
    model = None if spec is None else spec.model(stream_rng(seed, OTD_MODEL_STREAM))
    scenario_run = scenario if problem is None else scenario.with_sizes(problem.sizes)
    dim, k = (model.dim, model.k) if model is not None else (problem.dim, problem.k)
    choice = choose_path(settings.path, dim, k, scenario_run.n_sites, settings.memory_budget)
    _check_path(entries, choice, dim, k, settings)
    reference = _reference(problem, model, scenario_run, settings, seed, choice.path)
    problem, notes = _reference_notes(problem, model, scenario_run, reference)
    shared = _Shared(names=tuple(e.name for e in entries), scenario=scenario_run, settings=settings,
                     path=choice.path, seed=seed, runs=runs, reference=reference, model=model,
                     estimator=None if spec is None else spec.estimator, sizes=tuple(int(n) for n in scenario.sizes),
                     problem=problem)
    finished, stopped = run_comparison(_compare_run, shared, runs, len(entries), should_stop=should_stop,
                                       workers=workers, progress=progress)
    collected = _collect(finished)
    if model is not None:
        notes.extend(collected.first_notes)
    if reference.run is not None:
        notes.extend(reference.run.notes)
    if stopped:
        notes.append(stop_note(len(finished), runs))
    names = tuple(e.name for e in entries)
    return OtdComparison(
        algorithms=names, summaries=_summaries(names, collected.records), records=tuple(collected.records),
        path=choice, reference=reference.kind, reference_components=np.asarray(reference.components),
        reference_weights=np.asarray(reference.weights), examples=collected.examples,
        failures=collected.failures, problem=collected.problem if problem is None else problem,
        scenario=scenario_run, settings=settings, runs=len(finished), seed=seed,
        notes=tuple(dict.fromkeys(notes)), stopped=stopped,
    )


@dataclass(frozen=True, eq=False, kw_only=True)
class _Shared:
    """What every run of a comparison needs (sent once to each worker process)."""

    names: tuple[str, ...]
    scenario: Scenario
    settings: OtdSettings
    path: str
    seed: int
    runs: int
    reference: _Reference
    model: MixtureModel | None
    estimator: str | None
    sizes: tuple[int, ...]
    problem: OtdProblem | None


@dataclass(frozen=True, eq=False, kw_only=True)
class _RunOutcome:
    """One run of every algorithm: records, decompositions (None where whitening failed), failure messages, and
    the run's problem (synthetic data, kept for run 0 only)."""

    run: int
    records: list[AlgorithmRun]
    decompositions: dict[str, Decomposition]
    failures: dict[str, str]
    problem: OtdProblem | None


def _compare_run(shared: _Shared, run: int, tick: Callable[[str], bool]) -> _RunOutcome | None:
    """Every algorithm in one run (a task of :func:`dpcore.workers.run_tasks`); None when stopped."""
    problem = shared.problem
    if shared.model is not None:
        problem = synthetic_problem(shared.model, shared.sizes, data_rng(shared.seed, run), shared.estimator)
    records, decompositions, failures = [], {}, {}

    def one(entry: Algorithm) -> None:
        name = entry.name
        rng = run_rng(shared.seed, run, name, "otd")
        try:
            dec = run_algorithm(entry, problem, shared.scenario, shared.settings, rng, path=shared.path)
        except WhiteningError as exc:
            records.append(AlgorithmRun(run=run, algorithm=name, error=str(exc)))
            failures[name] = str(exc)
        else:
            m = evaluate_metrics(dec.components, dec.weights, shared.reference.components, shared.reference.weights)
            records.append(AlgorithmRun(run=run, algorithm=name, metrics=m))
            decompositions[name] = dec

    if each_algorithm(ALGORITHMS, shared.names, run, shared.runs, tick, one) is None:
        return None
    kept = problem if run == 0 and shared.model is not None else None
    return _RunOutcome(run=run, records=records, decompositions=decompositions, failures=failures, problem=kept)


@dataclass(frozen=True, eq=False, kw_only=True)
class _Collected:
    records: list[AlgorithmRun]
    examples: dict[str, Decomposition]
    failures: dict[str, str]
    problem: OtdProblem | None
    first_notes: tuple[str, ...]


def _collect(outcomes: list[_RunOutcome]) -> _Collected:
    """Records in run order, the first example and failure of every algorithm (its privacy is the audit's:
    :func:`dpcore.agn.guarantees.comparison_guarantees`)."""
    records: list[AlgorithmRun] = []
    examples: dict[str, Decomposition] = {}
    failures: dict[str, str] = {}
    for outcome in outcomes:
        records.extend(outcome.records)
        for name, dec in outcome.decompositions.items():
            examples.setdefault(name, dec)
        for name, message in outcome.failures.items():
            failures.setdefault(name, message)
    first = next((o.problem for o in outcomes if o.problem is not None), None)
    return _Collected(records=records, examples=examples, failures=failures, problem=first,
                      first_notes=tuple(first.notes) if first is not None else ())
