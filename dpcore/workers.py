"""Independent runs in worker processes (comparisons, sweeps, the dashboard's runs), with progress and Stop.

A task is one run: it draws only from generators keyed by (seed, run, name) (:mod:`dpcore.seeding`), so its result
does not depend on which process computes it or in what order: any number of workers gives the same numbers as
one, byte for byte (the tests compare the tables). The caller assembles the results by task, never by arrival.

* Processes come from a ``forkserver`` context (``spawn`` where there is none): safe to start from any thread of a
  multi-threaded program such as Streamlit's server, unlike ``fork``; they do not import the calling program's main
  module (a script needs no ``if __name__ == "__main__"`` guard). The fork server is started with one BLAS
  thread (``OPENBLAS_NUM_THREADS`` = ``OMP_NUM_THREADS`` = ``MKL_NUM_THREADS`` = 1) and preloads dpcore, so every
  worker it forks starts in milliseconds with single-threaded BLAS: W workers use W cores, not W x BLAS threads.
* The number of workers (:func:`worker_count`): the ``workers`` argument, else the environment variable
  ``DPCORE_WORKERS``, else the CPUs this process may use, capped at :data:`~dpcore.limits.MAX_WORKERS`; never more
  than the tasks, and one task always runs in the calling process (no start-up cost).
* Progress: a task calls ``tick(label)`` after every step; in a worker the label travels to the calling process,
  which hands it to the caller's ``tick`` in its own thread (so a Streamlit progress bar can be updated there).
  When the caller's ``tick`` returns True (Stop), the workers are terminated at once and the finished tasks are
  returned; a task in progress is dropped.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .limits import MAX_WORKERS
from .validation import InputError

__all__ = ["WORKERS_ENV", "Task", "Tick", "run_tasks", "worker_count"]

WORKERS_ENV = "DPCORE_WORKERS"
"""Environment variable with the default number of worker processes (1 runs everything in the calling process)."""

Tick = Callable[[str], bool]
"""Called after every step of a task with a label; returns True when the caller wants to stop."""
Task = Callable[[Any, Any, Tick], Any]
"""``function(shared, task, tick)``: a module-level function (workers import it by name); returns the task's result,
or None when ``tick`` asked it to stop (in the calling process only)."""

_BLAS_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
_PRELOAD = ["numpy", "scipy.linalg", "pandas", "dpcore.experiments"]
_POLL_SECONDS = 0.05
_START_LOCK = threading.Lock()


def available_cpus() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _check_count(value: Any, where: str) -> int:
    """A count of workers 1..MAX_WORKERS: an int, or text of ASCII digits (``str.isdigit`` also takes '²', which
    ``int`` refuses, and Arabic-Indic or full-width digits, which ``int`` reads: neither belongs in a setting)."""
    text = str(value).strip(" \t\r\n")
    if (isinstance(value, bool) or not (text.isascii() and text.isdigit()) or len(text) > 3
            or not 1 <= int(text) <= MAX_WORKERS):
        raise InputError(f"{where} must be a whole number of worker processes from 1 to {MAX_WORKERS}, written in "
                         f"ASCII digits (got {value!r})", "workers")
    return int(text)


def worker_count(tasks: int, workers: int | None = None) -> int:
    """Worker processes for ``tasks`` independent tasks (module docstring): ``workers``, else ``DPCORE_WORKERS``,
    else the available CPUs capped at MAX_WORKERS; at most ``tasks``, at least 1."""
    if workers is not None:
        chosen = _check_count(workers, "workers")
    elif os.environ.get(WORKERS_ENV, "").strip():
        chosen = _check_count(os.environ[WORKERS_ENV], f"the environment variable {WORKERS_ENV}")
    else:
        chosen = min(available_cpus(), MAX_WORKERS)
    return max(1, min(chosen, int(tasks)))


@contextmanager
def _blas_environment() -> Iterator[None]:
    """One BLAS thread in the environment that new processes inherit (restored afterwards)."""
    saved = {name: os.environ.get(name) for name in _BLAS_ENV}
    os.environ.update(_BLAS_ENV)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def _without_main() -> Iterator[None]:
    """Start processes without the calling program's main module: a new process imports the module that
    ``sys.modules["__main__"]`` names (multiprocessing's spawn preparation), which would re-run an unguarded script
    or import Streamlit's command line in every worker. The tasks are dpcore functions and never need it, so an
    empty module stands in while the pool starts its processes (all of them, in ``Pool.__init__``)."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def _context() -> multiprocessing.context.BaseContext:
    """The forkserver context (started with one BLAS thread and dpcore preloaded), or spawn."""
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" not in methods:  # pragma: no cover - not POSIX
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    with _START_LOCK, _blas_environment():
        ctx.set_forkserver_preload(_PRELOAD)
        from multiprocessing import forkserver

        forkserver.ensure_running()
    return ctx


# --- inside a worker -----------------------------------------------------------------------------------------
_SHARED: Any = None
_MESSAGES: Any = None


def _start_worker(shared: Any, messages: Any) -> None:
    global _SHARED, _MESSAGES
    _SHARED, _MESSAGES = shared, messages


def _worker_tick(label: str) -> bool:
    _MESSAGES.put(("tick", label))
    return False


def _run_in_worker(function: Task, index: int, task: Any) -> None:
    """Run one task; its labels and then its result (or exception) travel on the one queue, in order, so a task's
    result is in before any label of the next task this worker runs."""
    try:
        result = function(_SHARED, task, _worker_tick)
    except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
        _MESSAGES.put(("error", index, exc))
    else:
        _MESSAGES.put(("done", index, result))


# --- in the calling process ----------------------------------------------------------------------------------
def _run_here(function: Task, shared: Any, tasks: Sequence[Any], tick: Tick) -> tuple[dict[int, Any], bool]:
    results: dict[int, Any] = {}
    stopped = False

    def step(label: str) -> bool:
        nonlocal stopped
        stopped = stopped or bool(tick(label))
        return stopped

    for index, task in enumerate(tasks):
        result = function(shared, task, step)
        if result is not None:
            results[index] = result
        if result is None or stopped:
            return results, True
    return results, False


def _run_pooled(pool: Any, messages: Any, function: Task, tasks: Sequence[Any], tick: Tick
                ) -> tuple[dict[int, Any], bool]:
    """Hand out the tasks, relay labels to ``tick`` and collect results until all are in or ``tick`` says stop."""
    jobs = [pool.apply_async(_run_in_worker, (function, i, task)) for i, task in enumerate(tasks)]
    results: dict[int, Any] = {}
    while len(results) < len(tasks):
        try:
            message = messages.get(timeout=_POLL_SECONDS)
        except queue.Empty:
            for job in jobs:
                if job.ready():
                    job.get()  # raises what failed outside the task (e.g. a result that cannot be pickled)
            continue
        if message[0] == "error":
            raise message[2]
        if message[0] == "done":
            results[message[1]] = message[2]
        elif tick(message[1]):
            return results, True
    return results, False


def run_tasks(function: Task, shared: Any, tasks: Sequence[Any], *, workers: int | None = None,
              tick: Tick | None = None) -> tuple[dict[int, Any], bool]:
    """Run ``function(shared, task, tick)`` for every task, in :func:`worker_count` processes.

    Returns ({task index: result} of the finished tasks, stopped). ``tick(label)`` is called in this process after
    every step of every task; when it returns True the run stops (module docstring). ``shared`` is sent to each
    worker once; a task's exception is raised here after the workers are terminated."""
    tick = tick if tick is not None else (lambda label: False)
    count = worker_count(len(tasks), workers)
    if count <= 1:
        return _run_here(function, shared, tasks, tick)
    ctx = _context()
    messages = ctx.Queue()
    with _START_LOCK, _without_main():
        pool = ctx.Pool(count, initializer=_start_worker, initargs=(shared, messages))
    try:
        return _run_pooled(pool, messages, function, tasks, tick)
    finally:
        pool.terminate()
        pool.join()
        messages.close()
        messages.join_thread()
