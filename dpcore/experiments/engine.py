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
  at the other grid points (identical numbers, no redraw: :class:`dpcore.pca.sweep.ReplayNormals`).
* One run of a family's grid points is the family's ``sweep.run`` (:class:`dpcore.family.FamilySweep`): the engine
  hands runs to workers, reports progress and stops, whatever the family.

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

import pandas as pd

from ..family import progress_tick
from ..validation import InputError
from ..workers import run_tasks
from .designs import check_designs
from .families import FAMILIES, algorithm_table
from .prepare import SweepPlan, sweep_plan
from .results import SweepResult, cached_result, sweep_result, to_table
from .spec import SweepSpec

__all__ = ["Progress", "ShouldStop", "run_sweep", "sweep_runs"]

Progress = Callable[[int, int, str], None]
ShouldStop = Callable[[], bool]


def _steps_per_run(plan: SweepPlan, spec: SweepSpec) -> int:
    g = len(plan.points)
    return sum(1 if a in plan.invariant else g for a in spec.algorithms)


def _sweep_task(shared: tuple[SweepPlan, SweepSpec], run: int, tick: Callable[[str], bool]) -> list[tuple] | None:
    """One run of a sweep (a task of :func:`dpcore.workers.run_tasks`): its rows, or None when stopped."""
    plan, spec = shared
    return FAMILIES[spec.family].sweep.run(plan, spec, run, tick)


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
    for name in spec.algorithms:  # what an entry cannot do is refused by its table entry, before any run
        if table[name].dense_only and plan.path != "dense":
            forced = getattr(spec.data, "path", "auto") == "projected"
            why = (f"this sweep fixes the projected path (--path projected, or a preset's, which cannot change). Drop "
                   f"{name}, or build the sweep with --path dense or auto" if forced else
                   f"D = {spec.data.dim} runs on the projected path (its dense tensors do not fit the memory budget). "
                   f"Drop {name} or use a smaller D")
            raise InputError(f"{name.upper()} needs the dense path, but {why}.", "algorithms")
    tick = progress_tick(_steps_per_run(plan, spec) * len(runs), progress, should_stop)
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
    guarantees = check_designs(spec)  # a design some algorithm cannot carry is refused before any run
    table = sweep_runs(spec, progress=progress, should_stop=should_stop, workers=workers)
    result = sweep_result(spec, [table], seconds=time.perf_counter() - start)
    result.extra.setdefault("guarantees", guarantees)
    return result
