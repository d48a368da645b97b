"""Independent runs in worker processes (comparisons, sweeps, the dashboard's runs), with progress and Stop.

A task is one run: it draws only from generators keyed by (seed, run, name) (:mod:`dpcore.seeding`), so its result
does not depend on which process computes it or in what order: any number of workers gives the same numbers as
one, byte for byte (the tests compare the tables). The caller assembles the results by task, never by arrival.

* Processes come from a ``forkserver`` context (``spawn`` where there is none): safe to start from any thread of a
  multi-threaded program such as Streamlit's server, unlike ``fork``; they do not import the calling program's main
  module (a script needs no ``if __name__ == "__main__"`` guard). A caller that runs a single thread with one BLAS
  thread (a command or script started with ``OMP_NUM_THREADS`` = 1, as ``make`` and the benchmarks start them)
  forks its workers instead (:func:`_fork_is_safe`): they start at once with everything already imported and
  prepared (a fresh forkserver would import numpy, scipy, pandas and dpcore again, seconds before the first task),
  and fork runs nothing of the main module either. The fork server is started with one BLAS
  thread (``OPENBLAS_NUM_THREADS`` = ``OMP_NUM_THREADS`` = ``MKL_NUM_THREADS`` = 1) and preloads dpcore, so every
  worker it forks starts in milliseconds with single-threaded BLAS: W workers use W cores, not W x BLAS threads.
* Warm workers: a worker outlives the call that started it. When a call ends, its workers forget the call's data
  and wait, idle, for the next call of this process (at most the CPUs, capped at MAX_WORKERS, are kept), so a
  dashboard's second Run starts no process; :func:`warm_up` starts them ahead of the first (a page calls it when it
  opens). Concurrent calls (two sessions of the dashboard) each take their own workers.
* What a call shares (``shared``: the problem, the data) is pickled once and sent to each worker once, through its
  own pipe, before its first task of the call; a task then travels as its index, and only its result comes back.
  A worker forked for the call (``fork``) starts with the call's data in its memory (copy-on-write): nothing is
  pickled or sent to it (for Fig. 2(b) 32 MB per worker, and the caller sends to one worker at a time).
* The number of workers (:func:`worker_count`): the ``workers`` argument, else the environment variable
  ``DPCORE_WORKERS``, else the CPUs this process may use, capped at :data:`~dpcore.limits.MAX_WORKERS`; never more
  than the tasks, and one task always runs in the calling process (no start-up cost).
* Progress: a task calls ``tick(label)`` after every step; in a worker the label travels to the calling process
  (labels of quick steps together, at most one message per LABEL_BATCH_SECONDS: :func:`batched_labels`), which hands
  each to the caller's ``tick`` in its own thread (so a Streamlit progress bar can be updated there).
  When the caller's ``tick`` returns True (Stop), the call's workers are terminated at once and the finished tasks
  are returned; a task in progress is dropped. A worker whose task raised is terminated too (the exception is
  raised in the caller); only workers whose call finished cleanly are kept warm.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from .limits import MAX_WORKERS
from .normals import available_cpus, set_draw_threads
from .validation import InputError

__all__ = ["WORKERS_ENV", "Task", "Tick", "run_tasks", "warm_up", "worker_count"]

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
LABEL_BATCH_SECONDS = 0.05
"""A worker sends its task's step labels at most once per this many seconds while steps follow quickly
(:func:`batched_labels`)."""
_START_LOCK = threading.Lock()
_INHERITED: tuple[int, Any] | None = None
"""(call, shared) of the call whose workers are being forked (set under _START_LOCK while they start): a forked worker
starts with it (:func:`_worker_main`) instead of receiving it pickled."""
_IDLE_LOCK = threading.Lock()


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


def _fork_is_safe() -> bool:
    """True when this process may ``fork`` its workers: it runs one thread (nothing can hold a lock that the child
    would inherit locked) and its BLAS was told to use one thread (the children inherit the parent's BLAS, and W
    workers must use W cores, not W x BLAS threads): ``OMP_NUM_THREADS`` is 1 and ``OPENBLAS_NUM_THREADS`` and
    ``MKL_NUM_THREADS`` are 1 or unset (both libraries fall back to ``OMP_NUM_THREADS``)."""
    blas = os.environ.get("OMP_NUM_THREADS") == "1" and all(
        os.environ.get(name, "1") == "1" for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"))
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1 and blas


def _context() -> multiprocessing.context.BaseContext:
    """``fork`` when that is safe (:func:`_fork_is_safe`: a command or a script with one BLAS thread; the workers
    start at once with everything the caller has imported, nothing to import again), else the forkserver context
    (started with one BLAS thread and dpcore preloaded), or spawn."""
    if _fork_is_safe():
        return multiprocessing.get_context("fork")
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
def batched_labels(send: Callable[[list[str]], None], clock: Callable[[], float] = time.monotonic,
                   ) -> tuple[Tick, Callable[[], None]]:
    """A worker's ``tick`` for one task and its ``flush``: a label is sent at once (in a list) when the last sending
    was :data:`LABEL_BATCH_SECONDS` or more ago, else kept and sent with the next label that is due, or by ``flush``
    (called before the task's result or error). Every label reaches the caller, in order, in at most one message per
    LABEL_BATCH_SECONDS while steps follow quickly: Fig. 2(b)'s runs sent 2,700 messages, each waking the caller
    (0.5 CPU s of its 12 s); the caller's ``tick`` still sees every step, a kept label at most one step late."""
    kept: list[str] = []
    last = -math.inf

    def tick(label: str) -> bool:
        nonlocal last
        kept.append(label)
        now = clock()
        if now - last >= LABEL_BATCH_SECONDS:
            flush()
            last = now
        return False

    def flush() -> None:
        if kept:
            send(kept.copy())
            kept.clear()

    return tick, flush


def _worker_main(conn: Connection) -> None:
    """A worker's loop: ("shared", call, pickled) keeps the call's data, ("task", call, function, index, task) runs
    one task and sends its labels, then ("done", index, result) or ("error", index, exception); ("forget",) drops the
    data; ("exit",) or a closed pipe ends it. A forked worker starts with the data of the call that forked it
    (``_INHERITED``). One thread draws the noise (the other workers have the other cores)."""
    global _INHERITED
    shared: tuple[int, Any] | None
    shared, _INHERITED = _INHERITED, None  # this process's only reference: "forget" frees it
    set_draw_threads(1)
    os.environ.update(_BLAS_ENV)  # a forked worker's BLAS already has one thread (_fork_is_safe); its children too
    for fd in _PARENT_FDS:  # a forked worker's copies of the caller's ends of every pipe (its own included): closed,
        try:                # so that a pipe whose caller is gone reads as closed (forkserver workers have none)
            os.close(fd)
        except OSError:
            pass
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        kind = message[0]
        if kind == "shared":
            shared = None  # free the last call's data before unpickling the next
            shared = (message[1], pickle.loads(message[2]))
        elif kind == "task":
            _, call, function, index, task = message

            tick, flush = batched_labels(lambda labels, index=index: conn.send(("tick", index, labels)))
            try:
                if shared is None or shared[0] != call:
                    raise RuntimeError("a worker received a task before the data of its call")
                reply = ("done", index, function(shared[1], task, tick))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
                reply = ("error", index, exc)
            flush()  # the task's last labels before its result or error
            conn.send(reply)
        elif kind == "forget":
            shared = None
        else:
            return


# --- in the calling process ----------------------------------------------------------------------------------
@dataclass(eq=False)
class _Worker:
    """A worker process and the calling side of its pipe."""

    process: Any
    conn: Connection
    busy: int | None = None
    has: int | None = field(default=None)


_IDLE: list[_Worker] = []
_PARENT_FDS: set[int] = set()
"""File descriptors of the calling side of every open worker pipe (closed in a forked worker)."""
_WARMING = False
_CALLS = iter(range(1, 1 << 62))


def _start(ctx: multiprocessing.context.BaseContext, count: int, inherit: tuple[int, Any] | None = None
           ) -> list[_Worker]:
    """``count`` new workers; forked ones start with ``inherit`` = (call, shared), the data of the call they are for."""
    global _INHERITED
    forked = inherit if ctx.get_start_method() == "fork" else None
    out = []
    with _START_LOCK, _without_main():
        _INHERITED = forked
        try:
            for _ in range(count):
                ours, theirs = ctx.Pipe(duplex=True)
                _PARENT_FDS.add(ours.fileno())
                process = ctx.Process(target=_worker_main, args=(theirs,), daemon=True, name="dpcore-worker")
                process.start()
                theirs.close()
                out.append(_Worker(process, ours, has=None if forked is None else forked[0]))
        finally:
            _INHERITED = None
    return out


def _take(count: int, inherit: tuple[int, Any] | None = None) -> list[_Worker]:
    """``count`` workers: warm idle ones first, new ones for the rest (forked ones with ``inherit``)."""
    with _IDLE_LOCK:
        alive = [w for w in _IDLE if w.process.is_alive()]
        taken, _IDLE[:] = alive[:count], alive[count:]
    return taken + (_start(_context(), count - len(taken), inherit) if len(taken) < count else [])


def _keep(workers: Sequence[_Worker]) -> None:
    """Workers of a call that finished cleanly: told to forget its data and kept warm (up to the default count)."""
    keep_at_most = min(available_cpus(), MAX_WORKERS)
    for worker in workers:
        try:
            worker.conn.send(("forget",))
        except OSError:
            _stop([worker])
            continue
        worker.busy = worker.has = None
        with _IDLE_LOCK:
            if len(_IDLE) < keep_at_most:
                _IDLE.append(worker)
                continue
        _stop([worker])


def _stop(workers: Sequence[_Worker]) -> None:
    for worker in workers:
        if worker.process.is_alive():
            worker.process.terminate()
    for worker in workers:
        worker.process.join()
        if not worker.conn.closed:
            _PARENT_FDS.discard(worker.conn.fileno())
            worker.conn.close()


def warm_up(workers: int | None = None) -> None:
    """Start the worker processes a call of :func:`run_tasks` would use (:func:`worker_count`) in a background
    thread, so that the first call finds them warm; nothing when that is one process (runs stay in the caller), when
    enough are idle, or while a warm-up is already starting them."""
    global _WARMING
    count = worker_count(MAX_WORKERS, workers)
    with _IDLE_LOCK:
        missing = count - len(_IDLE) if count > 1 and not _WARMING else 0
        _WARMING = _WARMING or missing > 0
    if missing <= 0:
        return

    def start() -> None:
        global _WARMING
        try:
            started = _start(_context(), missing)
            with _IDLE_LOCK:
                room = max(0, min(available_cpus(), MAX_WORKERS) - len(_IDLE))
                _IDLE.extend(started[:room])
            _stop(started[room:])
        finally:
            _WARMING = False

    threading.Thread(target=start, name="dpcore-warm-up", daemon=True).start()


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


def _run_pooled(workers: Sequence[_Worker], call: int, function: Task, shared: Any, tasks: Sequence[Any],
                tick: Tick) -> tuple[dict[int, Any], bool]:
    """Hand the tasks to idle workers in order (the call's data first, pickled once, to each worker that does not
    have it yet), relay labels to ``tick`` and collect results until all are in or ``tick`` says stop."""
    payload: list[bytes] = []
    pending = list(range(len(tasks)))[::-1]
    results: dict[int, Any] = {}
    by_conn = {w.conn: w for w in workers}

    def assign(worker: _Worker) -> None:
        if not pending:
            return
        index = pending.pop()
        if worker.has != call:
            if not payload:
                payload.append(pickle.dumps(shared, protocol=pickle.HIGHEST_PROTOCOL))
            worker.conn.send(("shared", call, payload[0]))
            worker.has = call
        worker.conn.send(("task", call, function, index, tasks[index]))
        worker.busy = index

    for worker in workers:
        assign(worker)
    while len(results) < len(tasks):
        for conn in wait([w.conn for w in workers if w.busy is not None], timeout=_POLL_SECONDS):
            worker = by_conn[conn]
            try:
                message = conn.recv()
            except (EOFError, OSError):
                raise RuntimeError("a worker process ended unexpectedly (out of memory?)") from None
            if message[0] == "error":
                raise message[2]
            if message[0] == "done":
                results[message[1]] = message[2]
                worker.busy = None
                assign(worker)
            elif any(tick(label) for label in message[2]):  # a batch of the task's labels, in order
                return results, True
    return results, False


def run_tasks(function: Task, shared: Any, tasks: Sequence[Any], *, workers: int | None = None,
              tick: Tick | None = None) -> tuple[dict[int, Any], bool]:
    """Run ``function(shared, task, tick)`` for every task, in :func:`worker_count` processes.

    Returns ({task index: result} of the finished tasks, stopped). ``tick(label)`` is called in this process after
    every step of every task; when it returns True the run stops (module docstring). ``shared`` is pickled once and
    sent to each worker once (a worker forked for this call has it already); a task's exception is raised here after
    the call's workers are terminated."""
    tick = tick if tick is not None else (lambda label: False)
    count = worker_count(len(tasks), workers)
    if count <= 1:
        return _run_here(function, shared, tasks, tick)
    call = next(_CALLS)
    team = _take(count, (call, shared))
    clean = False
    try:
        results, stopped = _run_pooled(team, call, function, shared, tasks, tick)
        clean = not stopped
        return results, stopped
    finally:
        if clean:
            _keep(team)
        else:
            _stop(team)
