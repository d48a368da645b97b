"""Independent runs in worker processes (dpcore.workers): the same numbers, byte for byte, with one worker and with
two, for sweeps (PCA and OTD) and comparisons; progress and Stop across processes; the worker-count setting; no
main-module import in the workers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from dpcore import agn, experiments, pca
from dpcore.data import load_bundled
from dpcore.experiments import OtdData, PcaData, SweepSpec
from dpcore.limits import MAX_WORKERS
from dpcore.scenario import scenario_from_dict
from dpcore.validation import InputError
from dpcore.workers import LABEL_BATCH_SECONDS, WORKERS_ENV, available_cpus, batched_labels, run_tasks, worker_count

ROOT = Path(__file__).resolve().parents[1]


def _equal(n_sites: int, size: int, eps: float) -> object:
    return scenario_from_dict({"sites": [{"name": f"s{i + 1}", "n": size, "eps": eps, "delta": 1e-3}
                                         for i in range(n_sites)]})


def _pca_spec(runs: int = 4) -> SweepSpec:
    return SweepSpec(family="pca", parameter="eps", grid=(0.3, 1.0, 3.0),
                     algorithms=("cape", "dpdis", "conv", "nonpriv"), scenario=_equal(4, 300, 1.0),
                     data=PcaData(dataset="digits", k=5), runs=runs, seed=3)


def _otd_spec(runs: int = 4) -> SweepSpec:
    return SweepSpec(family="otd", parameter="eps", grid=(1.0, 10.0), algorithms=("cape", "conv", "local", "nonpriv"),
                     scenario=_equal(3, 600, 3.0), data=OtdData(model="mog", dim=6, k=3), runs=runs, seed=5)


# --- tasks for run_tasks (module level: workers import them by name) ----------------------------------------------
def apply_task(shared, task: int, tick) -> int:
    return shared(task)


def square_task(shared: int, task: int, tick) -> int:
    for step in range(3):
        if tick(f"task {task} step {step}") and step < 2:
            return None
    return shared * task * task


def failing_task(shared: int, task: int, tick) -> int:
    if task == 2:
        raise InputError(f"task {task} cannot run", "runs")
    tick(f"task {task}")
    return task


def many_steps_task(shared: int, task: int, tick) -> int:
    for step in range(shared):
        tick(f"{task}:{step}")
    return shared * task


def slow_task(shared: float, task: int, tick) -> int:
    tick(f"task {task}")
    time.sleep(shared)
    return task


# --- byte identity ----------------------------------------------------------------------------------------------
IDENTITY = """
import sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {tests!r})
from dpcore import experiments
from test_workers import _otd_spec, _pca_spec, comparisons_agree
for make in (_pca_spec, _otd_spec):
    one = experiments.run_sweep(make(), use_cache=False, workers=1).to_csv()
    two = experiments.run_sweep(make(), use_cache=False, workers=2).to_csv()
    print(make.__name__, one == two, len(one.splitlines()))
print("comparisons", comparisons_agree(), 99)
"""


def test_a_sweep_gives_the_same_table_bytes_with_one_and_two_workers():
    """The calling process runs the single-worker sweep itself; workers always use one BLAS thread, so the calling
    process does too here (as ``make test`` and ``make run`` set): multi-threaded BLAS may round the float32
    eigensolves differently in the last bits. Run in a fresh process so that this holds whatever the suite's
    environment."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    code = IDENTITY.format(root=str(ROOT), tests=str(ROOT / "tests"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert lines[0::3] == ["_pca_spec", "_otd_spec", "comparisons"] and lines[1::3] == ["True", "True", "True"]
    assert all(int(n) > 40 for n in lines[2::3])


def comparisons_agree() -> bool:
    """compare_pca (every algorithm, scree matrix kept) and compare_algorithms (STM) with one and two workers: the
    same records, subspaces, matrices and examples (asserted; run by the test above in a fresh process)."""
    setup = pca.prepare_pca(load_bundled("digits"), _equal(4, 300, 1.0), 5, seed=2)
    names = tuple(pca.ALGORITHMS)
    one = pca.compare_pca(setup.problem, setup.privacy, names, runs=3, seed=4, workers=1, keep_first_matrix=True)
    two = pca.compare_pca(setup.problem, setup.privacy, names, runs=3, seed=4, workers=2, keep_first_matrix=True)
    assert one.runs_csv() == two.runs_csv() and one.summary_csv() == two.summary_csv()
    for name in names:
        for a, b in zip(one.results[name], two.results[name], strict=True):
            assert np.array_equal(a.subspace, b.subspace)
    assert np.array_equal(one.results["cape"][0].matrix, two.results["cape"][0].matrix)

    spec = agn.SyntheticSpec(kind="stm", dim=8, k=3)
    args = dict(spec=spec, runs=3, seed=6)
    scenario = _equal(3, 800, 2.0)
    first = agn.compare_algorithms(scenario, ("cape", "conv", "nonpriv", "random"), workers=1, **args)
    second = agn.compare_algorithms(scenario, ("cape", "conv", "nonpriv", "random"), workers=2, **args)
    assert first.records == second.records and first.to_dict() == second.to_dict()
    for name, example in first.examples.items():
        assert np.array_equal(example.components, second.examples[name].components)
    assert first.problem.sizes.tolist() == second.problem.sizes.tolist() == [800, 800, 800]
    return True


# --- progress and stop ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("workers", [1, 2])
def test_progress_reaches_every_step_in_the_calling_process(workers):
    spec = _pca_spec(runs=3)
    calls = []
    experiments.run_sweep(spec, use_cache=False, workers=workers,
                          progress=lambda done, total, label: calls.append((done, total, label)))
    per_run = 3 * 3 + 1  # cape, dpdis, conv at 3 eps values; nonpriv once
    assert [c[0] for c in calls] == list(range(1, 3 * per_run + 1))
    assert {c[1] for c in calls} == {3 * per_run}
    labels = sorted(c[2] for c in calls)
    assert labels.count("run 2/3, eps = 1: capePCA") == 1 and len(set(labels)) == 3 * per_run


def test_stop_with_two_workers_keeps_the_finished_runs():
    spec = _pca_spec(runs=6)
    full = experiments.run_sweep(spec, use_cache=False, workers=2)  # runs in workers, as the stopped one
    per_run = 3 * 3 + 1
    calls = {"n": 0}

    def should_stop() -> bool:
        calls["n"] += 1
        # by the 31st label one worker has sent at least 16, so it finished its first run, whose result travels
        # before that worker's next label
        return calls["n"] >= 3 * per_run + 1

    start = time.perf_counter()
    stopped = experiments.run_sweep(spec, use_cache=False, workers=2, should_stop=should_stop)
    assert time.perf_counter() - start < 60
    assert not stopped.complete and 1 <= stopped.runs_done < 6
    kept = sorted(stopped.table["run"].unique())
    expected = full.table[full.table["run"].isin(kept)].reset_index(drop=True)
    assert stopped.table.equals(expected)  # the finished runs, exactly as a full sweep computes them
    assert experiments.cached_result(spec) is not None  # the complete sweep above, not the stopped one
    experiments.clear_cache()


def test_stop_terminates_running_workers_at_once():
    ticks = []

    def tick(label: str) -> bool:
        ticks.append(label)
        return True

    start = time.perf_counter()
    results, stopped = run_tasks(slow_task, 120.0, list(range(4)), workers=2, tick=tick)
    assert stopped and time.perf_counter() - start < 100  # the 120 s tasks in progress were not waited for
    assert len(ticks) == 1 and results == {}


def test_run_tasks_results_by_task_and_labels_in_order_within_a_task():
    labels = []
    results, stopped = run_tasks(square_task, 3, list(range(7)), workers=2,
                                 tick=lambda label: labels.append(label) or False)
    assert not stopped and results == {i: 3 * i * i for i in range(7)}
    assert len(labels) == 21
    for task in range(7):
        mine = [label for label in labels if label.startswith(f"task {task} ")]
        assert mine == [f"task {task} step {s}" for s in range(3)]
    here, stopped_here = run_tasks(square_task, 3, list(range(7)), workers=1)
    assert here == results and not stopped_here


def test_a_workers_labels_travel_in_batches_in_order_and_none_is_lost():
    """batched_labels: a label is sent at once when the last sending was LABEL_BATCH_SECONDS ago or more; labels of
    steps that follow quickly wait for the next due label or the task's end (flush), in order."""
    now = [100.0]
    sent: list[list[str]] = []
    tick, flush = batched_labels(sent.append, clock=lambda: now[0])
    assert tick("a") is False and sent == [["a"]]  # the first label at once
    for label in "bcd":
        now[0] += LABEL_BATCH_SECONDS / 4
        tick(label)
    assert sent == [["a"]]  # quick steps: kept
    now[0] = 100.0 + 1.5 * LABEL_BATCH_SECONDS  # well past LABEL_BATCH_SECONDS after "a" (no round-off at the edge)
    tick("e")  # due, with the kept ones
    assert sent == [["a"], ["b", "c", "d", "e"]]
    now[0] += 0.001
    tick("f")
    flush()
    flush()  # nothing kept: nothing sent
    assert sent == [["a"], ["b", "c", "d", "e"], ["f"]]
    now[0] += 10 * LABEL_BATCH_SECONDS
    tick("g")  # after a long step: at once
    assert sent[-1] == ["g"]


def test_quick_steps_in_a_worker_reach_the_caller_every_one_in_order():
    labels = []
    results, stopped = run_tasks(many_steps_task, 2000, [0, 1, 2], workers=2,
                                 tick=lambda label: labels.append(label) or False)
    assert not stopped and results == {0: 0, 1: 2000, 2: 4000}
    for task in range(3):
        assert [label for label in labels if label.startswith(f"{task}:")] == [f"{task}:{s}" for s in range(2000)]


def test_stop_in_the_calling_process_drops_the_partial_task():
    calls = {"n": 0}

    def tick(label: str) -> bool:
        calls["n"] += 1
        return calls["n"] >= 5  # task 0 finished (3 steps), task 1 stopped at its second step

    results, stopped = run_tasks(square_task, 2, list(range(4)), workers=1, tick=tick)
    assert stopped and results == {0: 0}


def test_an_exception_in_a_worker_is_raised_in_the_caller():
    with pytest.raises(InputError, match="task 2 cannot run") as info:
        run_tasks(failing_task, None, list(range(5)), workers=2)
    assert info.value.field == "runs"


# --- the setting ------------------------------------------------------------------------------------------------
def test_worker_count_setting(monkeypatch):
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert worker_count(100) == min(available_cpus(), MAX_WORKERS)
    assert worker_count(1) == 1 and worker_count(0) == 1
    assert worker_count(10, 3) == 3 and worker_count(2, 3) == 2
    monkeypatch.setenv(WORKERS_ENV, "2")
    assert worker_count(10) == 2 and worker_count(10, 1) == 1
    for bad in ("0", "two", "1.5", str(MAX_WORKERS + 1)):
        monkeypatch.setenv(WORKERS_ENV, bad)
        with pytest.raises(InputError, match=f"{WORKERS_ENV} must be a whole number of worker processes from 1"):
            worker_count(10)
    monkeypatch.delenv(WORKERS_ENV)
    for bad in (0, -1, True, 2.5, MAX_WORKERS + 1):
        with pytest.raises(InputError, match="workers must be a whole number"):
            worker_count(10, bad)


def test_workers_do_not_import_the_main_module(tmp_path):
    """A script without an ``if __name__ == "__main__"`` guard can use worker processes: they never re-run it."""
    script = tmp_path / "unguarded.py"
    marker = tmp_path / "imports.txt"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        with open({str(marker)!r}, "a") as f:
            f.write("imported\\n")
        from dpcore.workers import run_tasks
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from test_workers import square_task
        print(sorted(run_tasks(square_task, 1, list(range(4)), workers=2)[0].items()))
    """))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[(0, 0), (1, 1), (2, 4), (3, 9)]"
    assert marker.read_text() == "imported\n"


def test_workers_run_with_one_blas_thread():
    results, _ = run_tasks(blas_environment_task, None, [0, 1], workers=2)
    for env in results.values():
        assert env == {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def blas_environment_task(shared, task, tick) -> dict:
    return {name: os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def test_comparisons_stop_and_keep_the_finished_runs():
    setup = pca.prepare_pca(load_bundled("digits"), _equal(4, 300, 1.0), 5, seed=2)
    calls = {"n": 0}

    def should_stop() -> bool:
        calls["n"] += 1
        return calls["n"] >= 5  # two algorithms per run: runs 0 and 1 finished, run 2 started

    stopped = pca.compare_pca(setup.problem, setup.privacy, ("cape", "conv"), runs=6, seed=4, workers=1,
                              should_stop=should_stop)
    full = pca.compare_pca(setup.problem, setup.privacy, ("cape", "conv"), runs=6, seed=4, workers=1)
    assert stopped.stopped and len(stopped.results["cape"]) == 2 and not full.stopped
    assert stopped.runs_csv().splitlines()[1:3] == full.runs_csv().splitlines()[1:3]
    assert any("stopped after 2 of 6 runs" in n for n in stopped.notes)
    with pytest.raises(InputError, match="stopped before its first run finished"):
        pca.compare_pca(setup.problem, setup.privacy, ("cape", "conv"), runs=3, workers=1, should_stop=lambda: True)
    labels = []
    result = agn.compare_algorithms(_equal(3, 500, 2.0), ("cape", "nonpriv"), spec=agn.SyntheticSpec(kind="mog", dim=6,
                                    k=2), runs=4, seed=1, workers=2,
                                    progress=lambda done, total, label: labels.append(done),
                                    should_stop=lambda: len(labels) >= 5)
    # by the fifth label one worker has sent three, so its first run (two labels) is in
    assert 1 <= result.runs < 4 and any("stopped after" in n for n in result.notes)


FORKED = """
import os, sys, threading, time
sys.path.insert(0, {root!r})
sys.path.insert(0, {tests!r})
from dpcore import workers
from test_workers import square_task
print(workers._fork_is_safe(), workers._context().get_start_method(), flush=True)
print(sorted(workers.run_tasks(square_task, 1, list(range(4)), workers=2)[0].items()), flush=True)
print(" ".join(str(w.process.pid) for w in workers._IDLE), flush=True)
blocker = threading.Event()
threading.Thread(target=blocker.wait, daemon=True).start()
print(workers._fork_is_safe(), flush=True)  # a second thread: fork no longer safe
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_a_single_threaded_caller_with_one_blas_thread_forks_workers_that_end_with_it():
    """fork only when safe (one thread, every BLAS variable 1): the workers compute the same, and a worker holds no
    copy of the caller's end of any pipe, so when the caller is killed (no clean exit) its warm workers read a
    closed pipe and end instead of waiting for ever."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    code = FORKED.format(root=str(ROOT), tests=str(ROOT / "tests"))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().split() == ["True", "fork"]
        assert proc.stdout.readline().strip() == "[(0, 0), (1, 1), (2, 4), (3, 9)]"
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        assert proc.stdout.readline().strip() == "False"
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 120  # a generous bound on a loaded machine; the loop ends as soon as they exit
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)
    check = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from dpcore import workers; print(workers._fork_is_safe())"
    without_omp = {k: v for k, v in env.items() if k != "OMP_NUM_THREADS"}
    for setting, safe in ((env, "True"), (without_omp, "False"), (dict(env, OPENBLAS_NUM_THREADS="2"), "False"),
                          ({k: v for k, v in env.items() if k != "MKL_NUM_THREADS"}, "True")):
        out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=setting)
        assert out.stdout.strip() == safe


INHERITED = """
import sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {tests!r})
from dpcore import workers
from test_workers import apply_task
print(workers._context().get_start_method(), flush=True)
print(sorted(workers.run_tasks(apply_task, lambda x: x + 100, [0, 1, 2, 3], workers=2)[0].items()), flush=True)
print(sorted(workers.run_tasks(apply_task, abs, [-1, -2, 3], workers=2)[0].items()), flush=True)
try:
    workers.run_tasks(apply_task, lambda x: x, [0, 1], workers=2)
except Exception as exc:
    print("refused", flush=True)
"""


def test_workers_forked_for_a_call_start_with_its_data_and_warm_ones_receive_it_pickled():
    """A worker forked for a call has the call's data in its memory: the data are not pickled (a lambda, which pickle
    refuses, reaches it); the next call's warm workers receive their data pickled through their pipes."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    code = INHERITED.format(root=str(ROOT), tests=str(ROOT / "tests"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.stdout.splitlines() == ["fork", "[(0, 100), (1, 101), (2, 102), (3, 103)]", "[(0, 1), (1, 2), (2, 3)]",
                                       "refused"], out.stderr
