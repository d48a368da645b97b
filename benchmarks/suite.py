"""The test suite's own target (issue 34): ``make test`` on a clean clone, at most 6 minutes quiet and 12 with one core
busy, timed as CI runs it, with the time of every test module so that a developer sees where the minutes go.

Run: ``.venv/bin/python benchmarks/suite.py [--conditions quiet busy] [--venv .venv] [--top 25]``. Not one of the
``bench_*.py`` scripts that ``python -m benchmarks`` runs: one condition takes as long as the suite.

For each condition it clones the repository's committed ``HEAD`` into a fresh directory (``git clone --local``:
what CI checks out, without the work tree's uncommitted files or caches), measures the floors
(:mod:`benchmarks.floors`) under that condition's load, runs ``CI=true bash .ci/run`` there (``make test``, with a
``--junitxml`` report added through ``PYTEST_ARGS``) and prints its wall time, the CPU seconds of everything it ran
(user + system of the waited-for descendants: pytest, its workers, the servers and browsers the tests start), the
load average sampled every few seconds, the counts of the outcomes, and the slowest test modules (each test's set-up,
call and tear-down summed by module, over every worker) with their CPU seconds (:mod:`benchmarks.cpu_plugin`: the
pytest worker's own and those of the processes it reaped meanwhile - the servers, federations and browsers a module
starts count where they are stopped), and the CPU by kind of process (:mod:`benchmarks.process_cpu`: every process
started during the run, sampled, so the processes no test reaps - SuperLinks, SuperNodes, browsers - are seen too).
``--venv``: reuse an existing environment (a symlink named
``.venv`` in the clone; ``make`` then only checks the pins) instead of creating one, which takes minutes and is not
the suite's time. ``busy``: one core kept busy by :func:`benchmarks.floors.busy_core` for the whole run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.cpu_plugin import OUT_VARIABLE  # noqa: E402
from benchmarks.floors import busy_core, load_average, measure_floors, stop_busy  # noqa: E402
from benchmarks.process_cpu import SAMPLE_SECONDS, KindCpu, ProcessSampler  # noqa: E402

TARGET_MINUTES = {"quiet": 6.0, "busy": 12.0}
"""Issue 34's targets for ``make test`` on a clean clone (two cores; busy: a load of about 4)."""
CONDITIONS = tuple(TARGET_MINUTES)
LOAD_SAMPLE_SECONDS = 5.0
SUITE_LIMIT_SECONDS = 90 * 60
"""CI's limit for the whole check; a run beyond it is stopped and reported as such."""


@dataclass(kw_only=True)
class SuiteRun:
    """One condition's run: wall and CPU seconds, the sampled load, the outcome counts, seconds per test module."""

    condition: str
    wall: float
    cpu: float
    loads: list[float]
    returncode: int
    outcomes: dict[str, int] = field(default_factory=dict)
    modules: dict[str, tuple[float, int]] = field(default_factory=dict)
    module_cpu: dict[str, float] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    kinds: list[KindCpu] = field(default_factory=list)

    def line(self) -> str:
        target = TARGET_MINUTES[self.condition]
        met = "met" if self.returncode == 0 and self.wall <= 60 * target else "MISSED"
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(self.outcomes.items())) or "no report"
        load = f"{min(self.loads):.1f}-{max(self.loads):.1f}" if self.loads else "-"
        return (f"{self.condition:6} {self.wall / 60:6.1f} min  cpu {self.cpu / 60:5.1f} min  load {load:>9}  "
                f"exit {self.returncode}  {counts}  target <= {target:g} min: {met}")


def failures(report: Path) -> list[str]:
    """Every failed test of a pytest JUnit XML report, with the first line of its message."""
    out = []
    for case in ET.parse(report).getroot().iter("testcase"):
        for child in case:
            if child.tag in ("failure", "error"):
                message = (child.get("message") or child.text or "").strip().splitlines()
                out.append(f"{case.get('classname')}::{case.get('name')}: {child.tag}: "
                           f"{message[0][:300] if message else '(no message)'}")
    return out


def module_times(report: Path) -> tuple[dict[str, int], dict[str, tuple[float, int]]]:
    """Outcome counts and (seconds, tests) per test module from a pytest JUnit XML report."""
    outcomes: dict[str, int] = defaultdict(int)
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for case in ET.parse(report).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        module = "/".join(parts[:2]) + ".py" if len(parts) >= 2 else case.get("classname", "?")
        modules[module][0] += float(case.get("time", 0.0))
        modules[module][1] += 1
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[{"failure": "failed", "error": "errors", "skipped": "skipped"}.get(kinds[0], "?") if kinds
                 else "passed"] += 1
    return dict(outcomes), {m: (t, int(n)) for m, (t, n) in modules.items()}


def module_cpu(prefix: Path) -> dict[str, float]:
    """CPU seconds per test module (the pytest worker's own and its reaped children's) from the records of
    :mod:`benchmarks.cpu_plugin` (files ``prefix-*.jsonl``)."""
    cpu: dict[str, float] = defaultdict(float)
    for path in prefix.parent.glob(f"{prefix.name}-*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            cpu[record["id"].split("::", 1)[0]] += record["self"] + record["children"]
    return dict(cpu)


def _sample_load(stop: threading.Event, loads: list[float]) -> None:
    while not stop.wait(LOAD_SAMPLE_SECONDS):
        loads.append(load_average())


def run_condition(condition: str, venv: Path | None) -> SuiteRun:
    """Clone HEAD, run ``.ci/run`` there under ``condition``; the measurements."""
    with tempfile.TemporaryDirectory(prefix="suite-") as scratch:
        clone = Path(scratch) / "clone"
        subprocess.run(["git", "clone", "--quiet", "--local", str(ROOT), str(clone)], check=True)
        if venv is not None:
            (clone / ".venv").symlink_to(venv.resolve())
        report = Path(scratch) / "junit.xml"
        busy = busy_core() if condition == "busy" else None
        try:
            print(f"{condition}: {measure_floors().describe()}" + ("; one core kept busy" if busy else ""), flush=True)
            loads = [load_average()]
            stop = threading.Event()
            sampler = threading.Thread(target=_sample_load, args=(stop, loads), daemon=True)
            sampler.start()
            cpu_records = Path(scratch) / "cpu"
            env = dict(os.environ, CI="true", PYTEST_ARGS=f"-q --junitxml={report} -p benchmarks.cpu_plugin",
                       PYTHONPATH=os.pathsep.join(filter(None, [str(clone), os.environ.get("PYTHONPATH")])),
                       **{OUT_VARIABLE: str(cpu_records)})
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            processes = ProcessSampler().start()
            start = time.monotonic()
            try:
                code = subprocess.run(["bash", ".ci/run"], cwd=clone, env=env, stdout=subprocess.DEVNULL,
                                      timeout=SUITE_LIMIT_SECONDS).returncode
            except subprocess.TimeoutExpired:
                code = -1
            wall = time.monotonic() - start
            kinds = processes.stop()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            stop.set()
        finally:
            if busy is not None:
                stop_busy(busy)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        outcomes, modules = module_times(report) if report.exists() else ({}, {})
        return SuiteRun(condition=condition, wall=wall, cpu=cpu, loads=loads, returncode=code, outcomes=outcomes,
                        modules=modules, module_cpu=module_cpu(cpu_records),
                        failed=failures(report) if report.exists() else [], kinds=kinds)


def _print_kinds(run: SuiteRun) -> None:
    sampled = sum(row.cpu for row in run.kinds)
    print(f"  cpu by kind of process (sampled every {SAMPLE_SECONDS:g} s, a lower bound: {sampled / 60:.1f} of the "
          f"{run.cpu / 60:.1f} min waited for; other processes of the machine started meanwhile count too):")
    for row in run.kinds:
        print(f"  {row.cpu:8.1f} s {100 * row.cpu / max(sampled, 1e-9):5.1f} %  {row.processes:5d} processes  "
              f"{row.kind}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conditions", nargs="+", choices=CONDITIONS, default=["quiet"])
    parser.add_argument("--venv", type=Path, help="reuse this environment instead of creating one in the clone")
    parser.add_argument("--top", type=int, default=25, help="slowest test modules to list (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.venv is not None and not (args.venv / "bin" / "python").exists():
        parser.error(f"--venv {args.venv}: no bin/python there")
    runs = [run_condition(condition, args.venv) for condition in args.conditions]
    for run in runs:
        print(run.line())
        for failure in run.failed:
            print(f"  FAILED {failure}")
        total = sum(t for t, _ in run.modules.values())
        cpu_total = sum(run.module_cpu.values())
        print(f"  slowest test modules ({total / 60:.1f} min of test time over every worker; cpu: the module's "
              f"tests' CPU with the processes they reaped, {cpu_total / 60:.1f} min in all):")
        for module, (seconds, tests) in sorted(run.modules.items(), key=lambda kv: -kv[1][0])[:args.top]:
            cpu = run.module_cpu.get(module)
            cpu_text = f"cpu {cpu:7.1f} s {100 * cpu / max(cpu_total, 1e-9):5.1f} %" if cpu is not None else "cpu -"
            print(f"  {seconds:8.1f} s {100 * seconds / max(total, 1e-9):5.1f} %  {cpu_text}  {tests:4d} tests  "
                  f"{module}")
        _print_kinds(run)
    return 0 if all(r.returncode == 0 and r.wall <= 60 * TARGET_MINUTES[r.condition] for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
