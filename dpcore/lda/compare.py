"""Comparing LDA algorithms over runs (docs/math/lda.md): every run of every chosen algorithm on its own random stream,
evaluated against the true topics (synthetic corpora) or the non-private result (text), summarised with the
standard error of the mean; configurations that are unusable on the corpus are counted and explained, never
averaged in."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..limits import MAX_RUNS
from ..scenario import Scenario
from ..seeding import LDA_MODEL_STREAM, LDA_REFERENCE_STREAM, data_rng, run_rng, stream_rng
from ..summary import MetricSummary, summarise_values
from ..tensor.whitening import WhiteningError
from ..validation import InputError, check_positive_int
from .algorithm import GUARANTEES, LdaAlgorithm
from .corpus import LdaModel
from .problem import LdaProblem, LdaResult, LdaSettings, LdaSpec, check_synthetic_size, synthetic_lda_problem
from .recovery import topic_error
from .table import check_algorithms, run_algorithm

__all__ = ["LdaComparison", "LdaRun", "compare_lda", "reference_topics"]

@dataclass(frozen=True, kw_only=True)
class LdaRun:
    """One algorithm in one run: its topic error, or why it has none (``status``: "ok", "unusable" - a condition
    of the configuration failed on the corpus - or "whitening failed")."""

    run: int
    algorithm: str
    topic_error: float | None
    status: str
    reason: str | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class LdaComparison:
    """Everything the command line and the page show: per algorithm the mean topic error with its standard error,
    the runs, how many were unusable or failed and why, its privacy; one example result per algorithm."""

    algorithms: tuple[str, ...]
    summaries: dict[str, MetricSummary]
    records: tuple[LdaRun, ...]
    reference: str
    reference_topics: np.ndarray
    examples: dict[str, LdaResult]
    guarantees: dict[str, str]
    reasons: dict[str, str]
    problem: LdaProblem
    scenario: Scenario
    settings: LdaSettings
    runs: int
    seed: int
    notes: tuple[str, ...] = field(default=())

    def summary(self, algorithm: str) -> MetricSummary:
        return self.summaries[algorithm]

    def standard_error(self, algorithm: str) -> float | None:
        """std / sqrt(runs) of the finished runs (None with fewer than 2)."""
        s = self.summaries[algorithm]
        return None if s.runs < 2 or s.std is None else s.std / math.sqrt(s.runs)

    def count(self, algorithm: str, status: str) -> int:
        return sum(1 for r in self.records if r.algorithm == algorithm and r.status == status)

    def usable(self, algorithm: str) -> bool:
        """True when at least one run gave topics."""
        return self.summaries[algorithm].runs > 0

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for alg in self.algorithms:
            s = self.summaries[alg]
            rows.append({"algorithm": alg, "metric": "topic_error", "mean": s.mean, "std": s.std,
                         "standard_error": self.standard_error(alg), "runs": s.runs,
                         "unusable": self.count(alg, "unusable"),
                         "whitening_failed": self.count(alg, "whitening failed"), "usable": self.usable(alg),
                         "reason": self.reasons.get(alg), "guarantee": self.guarantees[alg]})
        p = self.problem
        return {"results": rows, "reference": self.reference, "dim": p.dim, "k": p.k, "alpha0": p.alpha0,
                "sites": p.n_sites, "sizes": p.sizes.tolist(), "runs": self.runs, "seed": self.seed,
                "eps": self.scenario.eps.tolist(), "delta": self.scenario.delta.tolist(),
                "calibration": self.scenario.calibration, "eps_split": self.settings.eps_split,
                "notes": list(self.notes)}


class _Runs:
    """Runs every algorithm of one comparison and collects the records, one example, the privacy statement and the
    first reason a run had no topics, per algorithm."""

    def __init__(self, entries: tuple[LdaAlgorithm, ...], scenario: Scenario, settings: LdaSettings, seed: int,
                 reference: np.ndarray, progress: Callable[[float, str], None] | None, total: int):
        self.entries, self.scenario, self.settings, self.seed = entries, scenario, settings, seed
        self.reference, self.progress, self.total = reference, progress, total
        self.done = 0
        self.records: list[LdaRun] = []
        self.examples: dict[str, LdaResult] = {}
        self.guarantees: dict[str, str] = {}
        self.reasons: dict[str, str] = {}

    def run_all(self, problem: LdaProblem, run: int, runs: int) -> None:
        for entry in self.entries:
            if self.progress is not None:
                self.progress(self.done / self.total, f"run {run + 1}/{runs}: {entry.title}")
            self.records.append(self.one(entry, problem, run))
            self.done += 1

    def one(self, entry: LdaAlgorithm, problem: LdaProblem, run: int) -> LdaRun:
        rng = run_rng(self.seed, run, entry.name, "lda")
        try:
            res = run_algorithm(entry, problem, self.scenario, self.settings, rng)
        except WhiteningError as exc:
            self.reasons.setdefault(entry.name, str(exc))
            self.guarantees.setdefault(entry.name, GUARANTEES[entry.guarantee])
            return LdaRun(run=run, algorithm=entry.name, topic_error=None, status="whitening failed", reason=str(exc))
        self.guarantees.setdefault(entry.name, res.guarantee)
        if not res.usable:
            self.reasons.setdefault(entry.name, res.reason)
            return LdaRun(run=run, algorithm=entry.name, topic_error=None, status="unusable", reason=res.reason)
        self.examples.setdefault(entry.name, res)
        return LdaRun(run=run, algorithm=entry.name, topic_error=topic_error(res.topics, self.reference), status="ok")


def _summaries(names: Sequence[str], records: list[LdaRun]) -> dict[str, MetricSummary]:
    out = {}
    for name in names:
        mine = [r for r in records if r.algorithm == name]
        ok = [r.topic_error for r in mine if r.status == "ok"]
        out[name] = summarise_values(name, "topic_error", ok, len(mine) - len(ok))
    return out


def reference_topics(model: LdaModel | None, problem: LdaProblem | None, scenario: Scenario, settings: LdaSettings,
                     seed: int, notes: list[str]) -> tuple[np.ndarray, str]:
    """What topic errors are measured against, and its label: the synthetic model's topics ("truth"), or for text
    the non-private topics of ``problem`` from the stream (seed, LDA_REFERENCE_STREAM) ("nonprivate"; a note says
    so)."""
    if model is not None:
        return model.topics, "truth"
    ref = run_algorithm("nonpriv", problem, scenario, settings, stream_rng(seed, LDA_REFERENCE_STREAM))
    notes.append("no ground truth: the topic error is the distance of each result to the non-private topics")
    return ref.topics, "nonprivate"


def compare_lda(
    scenario: Scenario, algorithms: Sequence[str], *, spec: LdaSpec | None = None, problem: LdaProblem | None = None,
    runs: int = 10, seed: int = 0, settings: LdaSettings | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> LdaComparison:
    """Run ``algorithms`` ``runs`` times and summarise the topic error (mean L1 per topic after optimal matching).

    Synthetic (``spec``): one ground truth drawn from ``seed``, fresh documents per run at the scenario's N_s
    (:func:`dpcore.seeding.data_rng`), the truth is the reference. Text (``problem``): the same documents every run
    (runs differ in the noise), the reference is the non-private result. Every algorithm draws from its own stream
    :func:`dpcore.seeding.run_rng` (seed, run, name, "lda")."""
    if (spec is None) == (problem is None):
        raise InputError("give either a synthetic model or a corpus, not both")
    entries = check_algorithms(algorithms)
    runs = check_positive_int(runs, "runs")
    if runs > MAX_RUNS:
        raise InputError(f"runs must be at most {MAX_RUNS} (got {runs})", "runs")
    seed = check_positive_int(seed, "seed", minimum=0)
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
    runner = _Runs(entries, scenario_run, settings, seed, reference, progress, runs * len(entries))
    current = problem
    for run in range(runs):
        if model is not None:
            current = synthetic_lda_problem(model, scenario.sizes, data_rng(seed, run), doc_length=spec.doc_length)
        runner.run_all(current, run, runs)
    if progress is not None:
        progress(1.0, "done")
    names = tuple(e.name for e in entries)
    return LdaComparison(algorithms=names, summaries=_summaries(names, runner.records), records=tuple(runner.records),
                         reference=label, reference_topics=np.asarray(reference), examples=runner.examples,
                         guarantees=runner.guarantees, reasons=runner.reasons, problem=current, scenario=scenario_run,
                         settings=settings, runs=runs, seed=seed, notes=tuple(dict.fromkeys(notes)))
