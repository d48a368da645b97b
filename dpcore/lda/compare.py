"""Comparing LDA algorithms over runs (docs/math/lda.md): every run of every chosen algorithm on its own random stream,
evaluated against the true topics (synthetic corpora) or the non-private result (text), summarised with the
standard error of the mean, every metric of :data:`dpcore.lda.METRICS`; configurations that are unusable on the
corpus are counted and explained, never averaged in."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..family import Algorithm, Progress, ShouldStop, check_runs, each_algorithm, run_comparison, stop_note
from ..scenario import Scenario
from ..seeding import LDA_MODEL_STREAM, LDA_REFERENCE_STREAM, data_rng, run_rng, stream_rng
from ..summary import MetricSummary, summarise_values
from ..tensor.whitening import WhiteningError
from ..validation import InputError
from .corpus import LdaModel
from .problem import LdaProblem, LdaResult, LdaSettings, LdaSpec, check_synthetic_size, synthetic_lda_problem
from .recovery import METRICS, evaluate_topics
from .table import ALGORITHMS, check_algorithms, run_algorithm

__all__ = ["LdaComparison", "LdaRun", "compare_lda", "reference_topics", "run_problem"]

@dataclass(frozen=True, kw_only=True)
class LdaRun:
    """One algorithm in one run: every metric of :data:`~dpcore.lda.METRICS` by name (empty without topics), or why
    it has none (``status``: "ok", "unusable" - a condition of the configuration failed on the corpus - or
    "whitening failed")."""

    run: int
    algorithm: str
    status: str
    metrics: dict[str, float] = field(default_factory=dict)
    reason: str | None = None

    def metric(self, name: str) -> float | None:
        """The metric ``name`` of this run, or None without topics."""
        return self.metrics.get(name)


@dataclass(frozen=True, eq=False, kw_only=True)
class LdaComparison:
    """Everything the command line and the page show: per algorithm and metric (``summaries``, one per algorithm and
    metric of :data:`~dpcore.lda.METRICS`) the mean with its standard error, the runs, how many were unusable or
    failed and why; one example result per algorithm
    (their guarantees: :func:`dpcore.lda.guarantees.lda_guarantees`)."""

    algorithms: tuple[str, ...]
    summaries: tuple[MetricSummary, ...]
    records: tuple[LdaRun, ...]
    reference: str
    reference_topics: np.ndarray
    examples: dict[str, LdaResult]
    reasons: dict[str, str]
    problem: LdaProblem
    scenario: Scenario
    settings: LdaSettings
    runs: int
    seed: int
    notes: tuple[str, ...] = field(default=())
    stopped: bool = False

    def summary(self, algorithm: str, metric: str | None = None) -> MetricSummary:
        """The summary of ``algorithm``'s ``metric`` (default: the table's first)."""
        metric = next(iter(METRICS)) if metric is None else metric
        return next(s for s in self.summaries if s.algorithm == algorithm and s.metric == metric)

    def standard_error(self, algorithm: str, metric: str | None = None) -> float | None:
        """std / sqrt(runs) of the finished runs (None with fewer than 2)."""
        s = self.summary(algorithm, metric)
        return None if s.runs < 2 or s.std is None else s.std / math.sqrt(s.runs)

    def count(self, algorithm: str, status: str) -> int:
        return sum(1 for r in self.records if r.algorithm == algorithm and r.status == status)

    def usable(self, algorithm: str) -> bool:
        """True when at least one run gave topics."""
        return self.summary(algorithm).runs > 0

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for alg in self.algorithms:
            for metric in METRICS:
                s = self.summary(alg, metric)
                rows.append({"algorithm": alg, "metric": metric, "mean": s.mean, "std": s.std,
                             "standard_error": self.standard_error(alg, metric), "runs": s.runs,
                             "unusable": self.count(alg, "unusable"),
                             "whitening_failed": self.count(alg, "whitening failed"), "usable": self.usable(alg),
                             "reason": self.reasons.get(alg)})
        p = self.problem
        return {"results": rows, "reference": self.reference, "dim": p.dim, "k": p.k, "alpha0": p.alpha0,
                "sites": p.n_sites, "sizes": p.sizes.tolist(), "runs": self.runs, "seed": self.seed,
                "eps": self.scenario.eps.tolist(), "delta": self.scenario.delta.tolist(),
                "calibration": self.scenario.calibration, "eps_split": self.settings.eps_split,
                "notes": list(self.notes)}


@dataclass(frozen=True, eq=False, kw_only=True)
class Shared:
    """What every run of a comparison needs (sent once to each worker process): the algorithms, budgets, settings,
    seed, the reference topics, and the documents (``problem``) or the model to draw them from at ``sizes``."""

    names: tuple[str, ...]
    scenario: Scenario
    settings: LdaSettings
    seed: int
    runs: int
    reference: np.ndarray
    model: LdaModel | None
    sizes: tuple[int, ...]
    doc_length: int | None
    problem: LdaProblem | None


@dataclass(frozen=True, eq=False, kw_only=True)
class _RunOutcome:
    """One run of every algorithm: its records, the first example and reason of each algorithm,
    and the run's documents (synthetic corpora, kept for run 0 only)."""

    records: list[LdaRun]
    examples: dict[str, LdaResult]
    reasons: dict[str, str]
    problem: LdaProblem | None


def run_problem(shared: Shared, run: int) -> LdaProblem:
    """The documents of run ``run``: the given corpus, or a fresh synthetic one from
    :func:`dpcore.seeding.data_rng` (seed, run)."""
    if shared.model is None:
        return shared.problem
    return synthetic_lda_problem(shared.model, shared.sizes, data_rng(shared.seed, run), doc_length=shared.doc_length)


def _compare_run(shared: Shared, run: int, tick: Callable[[str], bool]) -> _RunOutcome | None:
    """Every algorithm in one run (a task of :func:`dpcore.family.run_comparison`); None when stopped."""
    problem = run_problem(shared, run)
    out = _RunOutcome(records=[], examples={}, reasons={},
                      problem=problem if run == 0 and shared.model is not None else None)

    def one(entry: Algorithm) -> None:
        rng = run_rng(shared.seed, run, entry.name, "lda")
        try:
            res = run_algorithm(entry, problem, shared.scenario, shared.settings, rng)
        except WhiteningError as exc:
            out.reasons.setdefault(entry.name, str(exc))
            out.records.append(LdaRun(run=run, algorithm=entry.name, status="whitening failed", reason=str(exc)))
            return
        if not res.usable:
            out.reasons.setdefault(entry.name, res.reason)
            out.records.append(LdaRun(run=run, algorithm=entry.name, status="unusable", reason=res.reason))
            return
        out.examples.setdefault(entry.name, res)
        out.records.append(LdaRun(run=run, algorithm=entry.name, status="ok",
                                  metrics=evaluate_topics(res.topics, shared.reference)))

    return out if each_algorithm(ALGORITHMS, shared.names, run, shared.runs, tick, one) is not None else None


def _summaries(names: Sequence[str], records: list[LdaRun]) -> tuple[MetricSummary, ...]:
    out = []
    for name in names:
        mine = [r for r in records if r.algorithm == name]
        ok = [r for r in mine if r.status == "ok"]
        out.extend(summarise_values(name, metric, [r.metrics[metric] for r in ok], len(mine) - len(ok))
                   for metric in METRICS)
    return tuple(out)


def reference_topics(model: LdaModel | None, problem: LdaProblem | None, scenario: Scenario, settings: LdaSettings,
                     seed: int, notes: list[str]) -> tuple[np.ndarray, str]:
    """What topic errors are measured against, and its label: the synthetic model's topics ("truth"), or for text
    the non-private topics of ``problem`` from the stream (seed, LDA_REFERENCE_STREAM) ("nonprivate"; a note says
    so)."""
    if model is not None:
        return model.topics, "truth"
    ref = run_algorithm("nonpriv", problem, scenario, settings, stream_rng(seed, LDA_REFERENCE_STREAM))
    words = " and the ".join(m.words for m in METRICS.values())
    verb = "is the distance" if len(METRICS) == 1 else "are the distances"
    notes.append(f"no ground truth: the {words} {verb} of each result to the non-private topics")
    return ref.topics, "nonprivate"


def compare_lda(  # long: the checks, the run loop and the result, each a few lines, read top to bottom
    scenario: Scenario, algorithms: Sequence[str], *, spec: LdaSpec | None = None, problem: LdaProblem | None = None,
    runs: int = 10, seed: int = 0, settings: LdaSettings | None = None,
    progress: Progress | None = None, should_stop: ShouldStop | None = None,
    workers: int | None = None,
) -> LdaComparison:
    """Run ``algorithms`` ``runs`` times and summarise every metric of :data:`~dpcore.lda.METRICS` (the topic error:
    mean L1 per topic after optimal matching).

    Synthetic (``spec``): one ground truth drawn from ``seed``, fresh documents per run at the scenario's N_s
    (:func:`dpcore.seeding.data_rng`), the truth is the reference. Text (``problem``): the same documents every run
    (runs differ in the noise), the reference is the non-private result. Every algorithm draws from its own stream
    :func:`dpcore.seeding.run_rng` (seed, run, name, "lda"). Runs go to ``workers`` processes
    (:func:`dpcore.workers.worker_count`), with the same results for any number; ``progress(done, total, label)``
    after each algorithm of each run (:data:`dpcore.family.Progress`); ``should_stop()`` as often: a stopped
    comparison keeps the runs that finished."""
    if (spec is None) == (problem is None):
        raise InputError("give either a synthetic model or a corpus, not both")
    entries = check_algorithms(algorithms)
    runs, seed = check_runs(runs, seed)
    settings = LdaSettings() if settings is None else settings
    if np.any(scenario.sizes < 3):
        raise InputError(f"every site needs at least 3 documents for the LDA moments (N_s = "
                         f"{scenario.sizes.tolist()})", "scenario")
    if spec is not None:
        check_synthetic_size(spec, scenario.sizes)
    model = None if spec is None else spec.model(stream_rng(seed, LDA_MODEL_STREAM))
    scenario_run = scenario if problem is None else scenario.with_sizes(problem.sizes)
    notes = scenario_run.caveats() + (list(problem.notes) if problem is not None else [])
    reference, label = reference_topics(model, problem, scenario_run, settings, seed, notes)
    shared = Shared(names=tuple(e.name for e in entries), scenario=scenario_run, settings=settings, seed=seed,
                    runs=runs, reference=reference, model=model, sizes=tuple(int(n) for n in scenario.sizes),
                    doc_length=None if spec is None else spec.doc_length, problem=problem)
    finished, stopped = run_comparison(_compare_run, shared, runs, len(entries), should_stop=should_stop,
                                       workers=workers, progress=progress)
    records = [r for outcome in finished for r in outcome.records]
    collected = {what: first_of(finished, what) for what in ("examples", "reasons")}
    if stopped:
        notes.append(stop_note(len(finished), runs))
    first = next((o.problem for o in finished if o.problem is not None), None)
    names = tuple(e.name for e in entries)
    return LdaComparison(algorithms=names, summaries=_summaries(names, records), records=tuple(records),
                         reference=label, reference_topics=np.asarray(reference), examples=collected["examples"],
                         reasons=collected["reasons"],
                         problem=first if first is not None else run_problem(shared, records[0].run),
                         scenario=scenario_run, settings=settings, runs=len(finished), seed=seed,
                         notes=tuple(dict.fromkeys(notes)), stopped=stopped)


def first_of(outcomes: Sequence[Any], what: str) -> dict:
    """Per algorithm, the first value of ``what`` in run order (examples, reasons)."""
    out: dict = {}
    for outcome in outcomes:
        for key, value in getattr(outcome, what).items():
            out.setdefault(key, value)
    return out
