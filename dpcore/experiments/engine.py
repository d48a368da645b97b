"""Running a sweep (docs/experiments.md): every algorithm R times at every grid point with common random numbers.

Common random numbers (CRN): within a run, every grid point and algorithm reuses the same underlying draws
wherever the mathematics allows, so curves are smooth and differences between grid points sharp.

* The noise of one (seed, run, algorithm) comes from its own generator (:func:`dpcore.seeding.run_rng`, keyed by
  the algorithm's name), drawn as standard normals in an order that does not depend on eps, delta or N_s and only
  scaled afterwards: along eps, delta and N_s sweeps every algorithm sees exactly the same standard normals at
  every grid point. Along a c sweep capePCA/capeAGN see the same standard normals too (the design's shapes do not
  depend on c; only its variances do).
* What is **not** shared along a ``sites`` sweep: the noise arrays have S rows, so their layout changes with S.
  The conventional, DPdisPCA and local noise of a site (drawn row by row) is still the same at every S that
  includes it, but capePCA's and capeAGN's helper, aggregator and site draws are laid out by S (e before f
  before g) and are therefore fresh at every S; OTD pooled baselines pool different data at every S.
* Algorithms whose result cannot depend on the swept parameter (:func:`dpcore.experiments.families.
  invariant_algorithms`) are computed once per run and their rows repeated at every grid point: the result is
  identical to recomputing it, only faster.
* For PCA along eps, delta, N_s and c the standard normals of one (run, algorithm) are drawn once and replayed
  at the other grid points (identical numbers, no redraw).

Runs are independent tasks for worker processes (:mod:`dpcore.workers`): by default as many as there are CPUs
(capped), each run on one of them; the table is the same byte for byte with any number of workers, because every
draw comes from a stream keyed by (seed, run, name) and the rows are sorted before they are returned.

Results are cached in process by the spec's JSON (:func:`~dpcore.experiments.cache.cache_info`,
:func:`~dpcore.experiments.cache.clear_cache`). ``progress(done, total, label)`` is called (in the calling
process) after every (algorithm, grid point) of every run; ``should_stop()`` is checked after each of them too,
and a stopped sweep returns the runs it finished (a partial run is dropped, so every point has the same runs),
marked incomplete; with several workers these are the runs that had finished when Stop came, in any order.
numpy's generators are fine for simulation, not a cryptographic source for a deployment
(docs/math/corrections.md, item 9).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from .. import lda, otd, pca, tensor
from ..seeding import data_rng, run_rng
from ..validation import InputError
from ..workers import run_tasks
from .families import algorithm_table
from .plan import SweepPlan, sweep_plan
from .results import SweepResult, cached_result, sweep_result, to_table
from .spec import LdaData, OtdData, SweepSpec

__all__ = ["Progress", "ShouldStop", "run_sweep", "sweep_runs"]

Progress = Callable[[int, int, str], None]
ShouldStop = Callable[[], bool]


class _ReplayMismatch(Exception):
    """A later grid point asked for draws of another shape than the first: draw afresh instead."""


def _shape(size: Any) -> tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, (tuple, list)):
        return tuple(int(n) for n in size)
    return (int(size),)


class _ReplayNormals:
    """Stands in for the generator of one (seed, run, algorithm) across the grid points of a PCA sweep: the first
    pass draws from ``rng`` and records every ``standard_normal`` array, later passes (after :meth:`rewind`)
    return copies of the recorded arrays in the same order. The numbers are exactly those a fresh generator
    would give at every grid point (the PCA algorithms draw only standard normals, in an order that does not
    depend on eps, delta, N_s or c), without drawing them again."""

    def __init__(self, rng: np.random.Generator):
        self._rng = rng
        self._draws: list[np.ndarray] = []
        self._position: int | None = None
        self._final = False

    def rewind(self, final: bool = False) -> None:
        """Replay from the start; ``final``: the last replay, which may hand out the recorded arrays themselves."""
        self._position = 0
        self._final = final

    def standard_normal(self, size: Any = None) -> np.ndarray:
        if self._position is None:
            z = self._rng.standard_normal(size)
            self._draws.append(z.copy())
            return z
        if self._position >= len(self._draws) or self._draws[self._position].shape != _shape(size):
            raise _ReplayMismatch()
        self._position += 1
        recorded = self._draws[self._position - 1]
        return recorded if self._final else recorded.copy()


def _rows(spec: SweepSpec, value: float | int, algorithm: str, run: int, metrics: dict[str, float | None],
          status: str) -> list[tuple]:
    return [(spec.parameter, float(value), algorithm, run, m, np.nan if metrics.get(m) is None else metrics[m],
             status) for m in spec.metrics]


def _pca_run(plan: SweepPlan, spec: SweepSpec, run: int, tick: Callable[[str], bool]) -> list[tuple] | None:
    rank = spec.data.rank
    table = algorithm_table("pca")
    rows: list[tuple] = []
    for algorithm in spec.algorithms:  # names checked by SweepSpec: the entries below are trusted
        entry = table[algorithm]
        points = plan.points[:1] if algorithm in plan.invariant else plan.points
        base_rng = run_rng(spec.seed, run, algorithm, "pca")
        replay = _ReplayNormals(base_rng) if plan.replay and len(points) > 1 else None
        for i, point in enumerate(points):
            if replay is not None and i > 0:
                replay.rewind(final=i == len(points) - 1)
            rng = replay if replay is not None else (base_rng if i == 0 else
                                                     run_rng(spec.seed, run, algorithm, "pca"))
            try:
                result = pca.run_algorithm(entry, point.problem, point.privacy, rng, rank=rank)
            except _ReplayMismatch:  # pragma: no cover - the designs of one sweep share their shapes
                fresh = run_rng(spec.seed, run, algorithm, "pca")
                result = pca.run_algorithm(entry, point.problem, point.privacy, fresh, rank=rank)
            metrics = {m: float(getattr(result, m)) for m in spec.metrics}
            targets = plan.points if algorithm in plan.invariant else (point,)
            for target in targets:
                rows.extend(_rows(spec, target.value, algorithm, run, metrics, "ok"))
            if tick(f"run {run + 1}/{spec.runs}, {spec.label} = {point.value:g}: {entry.title}"):
                return None
    return rows


def _slice_problem(problem: otd.OtdProblem, parameter: str, value: float | int) -> otd.OtdProblem:
    if parameter == "sites":
        return replace(problem, sites=problem.sites[: int(value)])
    if parameter != "ns":
        return problem
    n = int(value)
    sites = []
    for site in problem.sites:
        if isinstance(site, tensor.MogSite):
            sites.append(tensor.MogSite(site.x[:n], site.sigma2))
        else:
            first = None if site.first is None else site.first[:n]
            sites.append(tensor.StmSite(site.counts[:n], first, site.estimator))
    return replace(problem, sites=tuple(sites))


def _otd_run(plan: SweepPlan, spec: SweepSpec, run: int, tick: Callable[[str], bool]) -> list[tuple] | None:
    data: OtdData = spec.data
    table = algorithm_table("otd")
    base = otd.synthetic_problem(plan.model, plan.sizes_max, data_rng(spec.seed, run), data.estimator)
    problems = [_slice_problem(base, spec.parameter, p.value) for p in plan.points]
    truth = plan.model
    rows: list[tuple] = []
    for algorithm in spec.algorithms:  # names checked by SweepSpec: the entries below are trusted
        entry = table[algorithm]
        indices = [0] if algorithm in plan.invariant else range(len(plan.points))
        for i in indices:
            point = plan.points[i]
            rng = run_rng(spec.seed, run, algorithm, "otd")
            try:
                dec = otd.run_algorithm(entry, problems[i], point.scenario, point.settings, rng, path=plan.path)
            except tensor.WhiteningError:
                metrics: dict[str, float | None] = {}
                status = "whitening failed"
            else:
                metrics = otd.evaluate_metrics(dec.components, dec.weights, truth.components, truth.weights)
                status = "ok"
            targets = plan.points if algorithm in plan.invariant else (point,)
            for target in targets:
                rows.extend(_rows(spec, target.value, algorithm, run, metrics, status))
            if tick(f"run {run + 1}/{spec.runs}, {spec.label} = {point.value:g}: {entry.title}"):
                return None
    return rows


def _lda_problems(plan: SweepPlan, spec: SweepSpec, run: int) -> list[lda.LdaProblem]:
    """One run's corpus at the largest sizes, and every grid point's view of it (nested prefixes along N_s, the
    first S sites along S)."""
    data: LdaData = spec.data
    base = lda.synthetic_lda_problem(plan.model, plan.sizes_max, data_rng(spec.seed, run), doc_length=data.doc_length)
    if spec.parameter == "ns":
        return [base.head([int(p.value)] * base.n_sites) for p in plan.points]
    if spec.parameter == "sites":
        return [base.first_sites(int(p.value)) for p in plan.points]
    return [base] * len(plan.points)


def _lda_run(plan: SweepPlan, spec: SweepSpec, run: int, tick: Callable[[str], bool]) -> list[tuple] | None:
    table = algorithm_table("lda")
    problems = _lda_problems(plan, spec, run)
    rows: list[tuple] = []
    for algorithm in spec.algorithms:  # names checked by SweepSpec: the entries below are trusted
        entry = table[algorithm]
        indices = [0] if algorithm in plan.invariant else range(len(plan.points))
        for i in indices:
            point = plan.points[i]
            rng = run_rng(spec.seed, run, algorithm, "lda")
            try:
                res = lda.run_algorithm(entry, problems[i], point.scenario, point.settings, rng, path=plan.path)
            except tensor.WhiteningError:
                metrics: dict[str, float | None] = {}
                status = "whitening failed"
            else:
                if res.usable:
                    metrics, status = {"topic_error": lda.topic_error(res.topics, plan.model.topics)}, "ok"
                else:
                    metrics, status = {}, "unusable"
            targets = plan.points if algorithm in plan.invariant else (point,)
            for target in targets:
                rows.extend(_rows(spec, target.value, algorithm, run, metrics, status))
            if tick(f"run {run + 1}/{spec.runs}, {spec.label} = {point.value:g}: {entry.title}"):
                return None
    return rows


def _steps_per_run(plan: SweepPlan, spec: SweepSpec) -> int:
    g = len(plan.points)
    return sum(1 if a in plan.invariant else g for a in spec.algorithms)


def _sweep_task(shared: tuple[SweepPlan, SweepSpec], run: int, tick: Callable[[str], bool]) -> list[tuple] | None:
    """One run of a sweep (a task of :func:`dpcore.workers.run_tasks`): its rows, or None when stopped."""
    plan, spec = shared
    run_one = {"pca": _pca_run, "otd": _otd_run, "lda": _lda_run}[spec.family]
    return run_one(plan, spec, run, tick)


def sweep_runs(spec: SweepSpec, runs: Sequence[int] | range | None = None, *, progress: Progress | None = None,
               should_stop: ShouldStop | None = None, workers: int | None = None) -> pd.DataFrame:
    """The tidy rows (:data:`TABLE_COLUMNS`) of the given runs (default all), for running a sweep in pieces (the
    dashboard runs a few runs per step so that it can be stopped). Stops early when ``should_stop()`` is true,
    returning only the runs it finished. Runs are independent: the rows of run r are the same whichever
    other runs are computed, and whichever process computes them: ``workers`` processes
    (:func:`dpcore.workers.worker_count`: by default the available CPUs, capped; 1 for a single run) give the
    same table byte for byte."""
    runs = list(range(spec.runs)) if runs is None else [int(r) for r in runs]
    for r in runs:
        if not 0 <= r < spec.runs:
            raise InputError(f"run index {r} is outside 0..{spec.runs - 1}", "runs")
    plan = sweep_plan(spec)
    table = algorithm_table(spec.family)
    for name in spec.algorithms:
        if getattr(table[name], "dense_only", False) and plan.path != "dense":
            raise InputError(f"{name.upper()} needs the dense path, but D = {spec.data.dim} runs on the projected "
                             f"path. Drop {name} or use a smaller D.", "algorithms")
    total = _steps_per_run(plan, spec) * len(runs)
    done = 0

    def tick(label: str) -> bool:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total, label)
        return should_stop is not None and bool(should_stop())

    finished, _ = run_tasks(_sweep_task, (plan, spec), runs, workers=workers, tick=tick)
    rows: list[tuple] = []
    for index in sorted(finished):
        rows.extend(finished[index])
    return to_table(spec, rows)


def run_sweep(spec: SweepSpec, *, progress: Progress | None = None, should_stop: ShouldStop | None = None,
              use_cache: bool = True, workers: int | None = None) -> SweepResult:
    """Run every algorithm of ``spec`` ``spec.runs`` times at every grid point (see the module docstring), the runs
    in ``workers`` processes (:func:`sweep_runs`; the same table for any number).

    ``progress(done, total, label)`` after each (run, algorithm, grid point); ``should_stop()`` checked as often:
    when it returns True the finished runs are returned, ``complete`` False. Complete results are cached by the
    spec's JSON (``use_cache=False`` always recomputes, and does not read the cache)."""
    if not isinstance(spec, SweepSpec):
        raise InputError("run_sweep needs a SweepSpec", "spec")
    if use_cache:
        hit = cached_result(spec)
        if hit is not None:
            if progress is not None:
                progress(1, 1, "cached result")
            return hit
    start = time.perf_counter()
    table = sweep_runs(spec, progress=progress, should_stop=should_stop, workers=workers)
    return sweep_result(spec, [table], seconds=time.perf_counter() - start)
