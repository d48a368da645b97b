"""Comparing PCA algorithms over runs (docs/math/capepca.md): every run of every chosen algorithm on its own
random stream (the family contract's comparison loop, :func:`dpcore.family.run_comparison`), and the summary (mean
and standard deviation of every metric)."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..family import Progress, ShouldStop, check_runs, each_algorithm, run_comparison, stop_note, widest_ring
from ..seeding import run_rng
from ..summary import MetricSummary, summarise_values
from ..validation import InputError
from .algorithms.local import default_local_site
from .metrics import METRICS
from .problem import PcaPrivacy, PcaProblem, check_pair
from .result import PcaResult
from .table import ALGORITHMS, check_algorithms, default_algorithms, run_algorithm

__all__ = ["PcaComparison", "compare_pca", "summarise"]


@dataclass(frozen=True, kw_only=True)
class PcaComparison:
    """Every run of every algorithm, the summary table, the communication volumes and notes."""

    results: dict[str, list[PcaResult]]
    summary: list[MetricSummary]
    communication: dict[str, int]
    notes: tuple[str, ...]
    seconds: float
    stopped: bool = False

    def records(self) -> list[dict[str, Any]]:
        return [m.to_dict() for m in self.summary]

    def bits_per_value(self) -> dict[str, int | None]:
        """The ring every value of an algorithm travelled on, by algorithm: its results' ``bits_per_value`` (the
        widest over runs; None: float64 values, :mod:`dpcore.family.rings`)."""
        return {name: widest_ring(r.bits_per_value for r in runs) for name, runs in self.results.items()}

    def summary_csv(self) -> str:
        """The summary (algorithm, metric, mean, std, runs) as CSV text."""
        return _csv(["algorithm", "metric", "mean", "std", "runs"], [m.to_dict() for m in self.summary])

    def runs_csv(self) -> str:
        """One row per (algorithm, run) as CSV text."""
        return _csv(["algorithm", "run", *METRICS, "numbers_sent"], self.runs_table())

    def runs_table(self) -> list[dict[str, Any]]:
        """One row per (algorithm, run) with every metric: the CSV the dashboard offers."""
        rows = []
        for algorithm, results in self.results.items():
            for run, r in enumerate(results):
                rows.append({"algorithm": algorithm, "run": run, **{m: float(r.metric(m)) for m in METRICS},
                             "numbers_sent": r.communication})
        return rows


def _csv(headers: list[str], rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=headers, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})
    return buffer.getvalue()


def summarise(results: dict[str, list[PcaResult]]) -> list[MetricSummary]:
    """Mean and std over runs of every metric (:data:`~dpcore.pca.metrics.METRICS`) for every algorithm."""
    return [summarise_values(algorithm, metric, [r.metrics[metric] for r in runs])
            for algorithm, runs in results.items() for metric in METRICS]


@dataclass(frozen=True, eq=False, kw_only=True)
class _Shared:
    """What every run of a comparison needs (sent once to each worker process)."""

    problem: PcaProblem
    privacy: PcaPrivacy
    names: tuple[str, ...]
    seed: int
    runs: int
    rank: int | None
    local_site: int | None
    keep_first_matrix: bool


def _compare_run(shared: _Shared, run: int, tick: Callable[[str], bool]) -> list[PcaResult] | None:
    """Every chosen algorithm in one run (a task of :func:`dpcore.family.run_comparison`), each on its own stream."""
    return each_algorithm(ALGORITHMS, shared.names, run, shared.runs, tick, lambda entry: run_algorithm(
        entry, shared.problem, shared.privacy, run_rng(shared.seed, run, entry.name, "pca"), rank=shared.rank,
        local_site=shared.local_site, keep_matrix=shared.keep_first_matrix and run == 0))


def compare_pca(problem: PcaProblem, privacy: PcaPrivacy, algorithms: Sequence[str] | None = None,
                runs: int = 10, seed: int = 0, *, rank: int | None = None, local_site: int | None = None,
                keep_first_matrix: bool = False, progress: Progress | None = None,
                should_stop: ShouldStop | None = None, workers: int | None = None) -> PcaComparison:
    """Run every algorithm (default: the table's default ones) ``runs`` times, each on its own stream
    :func:`dpcore.seeding.run_rng` (seed, run, name). ``progress(done, total, label)`` is called after each run of
    each algorithm; ``keep_first_matrix`` keeps the decomposed matrix of run 0 (for the scree plot).

    Runs go to ``workers`` processes (:func:`dpcore.workers.worker_count`: by default the available CPUs, capped):
    the results are the same for any number. ``should_stop()`` is checked after each step; when it returns True
    the comparison keeps the runs that finished (``stopped`` in the result) - at least one is needed."""
    entries = check_algorithms(default_algorithms() if algorithms is None else algorithms)
    runs, seed = check_runs(runs, seed)
    check_pair(problem, privacy)
    names = [e.name for e in entries]
    if "dpdis" in names and rank is not None and not problem.k <= rank <= problem.dim:
        raise InputError(f"DPdisPCA rank R must satisfy K = {problem.k} <= R <= D = {problem.dim} (got {rank})", "R")
    start = time.perf_counter()
    shared = _Shared(problem=problem, privacy=privacy, names=tuple(names), seed=seed, runs=runs, rank=rank,
                     local_site=local_site, keep_first_matrix=keep_first_matrix)
    finished, stopped = run_comparison(_compare_run, shared, runs, len(entries), progress=progress,
                                       should_stop=should_stop, workers=workers)
    results: dict[str, list[PcaResult]] = {name: [run[i] for run in finished] for i, name in enumerate(names)}
    communication = {name: results[name][0].communication for name in names}
    notes = list(privacy.notes)
    if "local" in names:
        site = default_local_site(privacy) if local_site is None else local_site
        notes.append(f"local uses site {privacy.scenario.names[site]} (N_s = {problem.sizes[site]:,})")
    if stopped:
        notes.append(stop_note(len(finished), runs))
    return PcaComparison(results=results, summary=summarise(results), communication=communication,
                         notes=tuple(notes), seconds=time.perf_counter() - start, stopped=stopped)
