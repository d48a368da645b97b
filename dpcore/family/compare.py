"""The comparison loop of every family (docs/architecture.md, "The family contract"): R independent runs of the
chosen algorithms, each run a task for worker processes (:func:`dpcore.workers.run_tasks`), with progress after every
step (one algorithm of one run) and Stop, which keeps the runs that finished.

A family's comparison (``compare_pca``, ``compare_algorithms``, ``compare_lda``, ``eps_curve``) checks its inputs,
prepares what every run shares, and hands a module-level task ``task(shared, run, tick)`` to :func:`run_comparison`;
the task runs every algorithm on its own stream (:func:`dpcore.seeding.run_rng`) with :func:`each_algorithm` and
returns that run's results, so any number of workers gives the same results, assembled by run. What a task shares
names the algorithms (a worker looks their entries up in its own copy of the table: runners are not sent between
processes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ..limits import MAX_RUNS
from ..validation import InputError, check_int_range, check_seed
from ..workers import Task, Tick, run_tasks
from .entry import Algorithm

__all__ = ["Progress", "ShouldStop", "check_runs", "each_algorithm", "progress_tick", "run_comparison", "stop_note"]

Progress = Callable[[int, int, str], None]
"""``progress(done, total, label)``: called in the calling process after every step."""
ShouldStop = Callable[[], bool]
"""Checked after every step; True stops the comparison (the runs that finished are kept)."""
Result = TypeVar("Result")


def check_runs(runs: int, seed: int) -> tuple[int, int]:
    """``runs`` (1 to MAX_RUNS) and ``seed`` (0 to MAX_SEED), checked once where a comparison starts."""
    return check_int_range(runs, "runs", 1, MAX_RUNS), check_seed(seed)


def each_algorithm(table: Mapping[str, Algorithm], names: Sequence[str], run: int, runs: int, tick: Tick,
                   one: Callable[[Algorithm], Result]) -> list[Result] | None:
    """``one(entry)`` for the entry of every name, in order, with ``tick("run r/R: title")`` after each; None when
    ``tick`` asks to stop before the last entry (the run is then dropped)."""
    out = []
    for i, name in enumerate(names):
        entry = table[name]
        out.append(one(entry))
        if tick(f"run {run + 1}/{runs}: {entry.title}") and i < len(names) - 1:
            return None
    return out


def progress_tick(total: int, progress: Progress | None, should_stop: ShouldStop | None) -> Tick:
    """The ``tick`` of :func:`dpcore.workers.run_tasks` for ``total`` steps: counts them, calls
    ``progress(done, total, label)`` after each and returns ``should_stop()`` (comparisons and sweeps)."""
    done = 0

    def tick(label: str) -> bool:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total, label)
        return should_stop is not None and bool(should_stop())

    return tick


def run_comparison(task: Task, shared: Any, runs: int, steps_per_run: int, *, progress: Progress | None = None,
                   should_stop: ShouldStop | None = None, workers: int | None = None) -> tuple[list[Any], bool]:
    """Run ``task(shared, run, tick)`` for runs 0..R-1 in :func:`dpcore.workers.worker_count` processes.

    Returns (the finished runs' results in run order, stopped). ``progress(done, total, label)`` is called after each
    of the ``runs * steps_per_run`` steps and ``should_stop()`` as often; a comparison stopped before its first run
    finished is an InputError."""
    tick = progress_tick(runs * steps_per_run, progress, should_stop)
    finished, stopped = run_tasks(task, shared, list(range(runs)), workers=workers, tick=tick)
    if not finished:
        raise InputError("the comparison was stopped before its first run finished", "runs")
    return [finished[r] for r in sorted(finished)], stopped and len(finished) < runs


def stop_note(finished: int, runs: int) -> str:
    """The note of a stopped comparison."""
    return f"stopped after {finished} of {runs} runs: the summary uses the runs that finished"
