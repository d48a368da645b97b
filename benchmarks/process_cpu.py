"""CPU seconds by kind of process while something runs (:mod:`benchmarks.suite`): where the suite's CPU goes when
much of it is spent in processes no test reaps (a Flower SuperLink, its SuperNodes and their workers, chromium,
Streamlit), which :mod:`benchmarks.cpu_plugin` cannot see.

Every ``SAMPLE_SECONDS`` the sampler reads ``/proc/<pid>/stat`` (user + system CPU, start time) and the command line of
every process that was not running when it started (a process is its id with its start time); a process's CPU is its
last reading. A process that ends between two readings loses the CPU it spent after the last one (at most
``SAMPLE_SECONDS`` of it), and one that lives less than ``SAMPLE_SECONDS`` may not be seen at all, so the table is a
lower bound: the suite prints its sum beside the exact CPU of everything it waited for. A reading costs the sampler
about 0.05 ms of CPU per process: 2-4 % of a core with the 70-150 processes of a suite run, taken from the suite
it measures. Linux only (``/proc``); elsewhere the table is empty.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PROCESS_KINDS", "SAMPLE_SECONDS", "KindCpu", "ProcessSampler", "cpu_seconds", "kind_of",
           "stat_fields"]

SAMPLE_SECONDS = 0.2
PROCESS_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(pattern)) for kind, pattern in (
    ("pytest-xdist worker", r"exec\(eval\(sys\.stdin\.readline\(\)\)\)"),
    ("capefed runner", r"capefed\.ops\.runner"),  # before the flwr commands: it names its flwr with --flwr
    ("flwr run", r"/flwr run "),
    ("flwr ls", r"/flwr ls "),
    ("flwr (other commands)", r"/flwr "),
    ("Flower SuperLink", r"flower-superlink"),
    ("Flower SuperExec", r"flower-superexec"),
    ("Flower ServerApp", r"flwr-serverapp"),
    ("Flower SuperNode", r"capefed\.ops\.supernode|flower-supernode"),
    ("capefed worker", r"capefed\.ops\.worker"),
    ("capefed (other)", r"capefed"),
    ("chromium", r"chromium"),
    ("Streamlit server", r"streamlit"),
    ("Playwright driver", r"playwright|/node "),
    ("dpcore worker pool", r"multiprocessing\.forkserver|multiprocessing\.spawn|dpcore-worker"),
    ("dpcore command", r"-m dpcore\b"),
    ("pytest", r"pytest"),
    ("python (other)", r"python"),
))
"""Kinds of process, first match of the command line wins; anything else is "other"."""
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PROC = Path("/proc")


def kind_of(command: str) -> str:
    """The first :data:`PROCESS_KINDS` entry whose pattern the command line matches, else "other"."""
    return next((kind for kind, pattern in PROCESS_KINDS if pattern.search(command)), "other")


@dataclass(kw_only=True)
class KindCpu:
    """One kind's CPU seconds (a lower bound, see the module docstring) and how many processes of it were seen."""

    kind: str
    cpu: float
    processes: int


def stat_fields(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (which may hold spaces and parentheses): index 0 is
    the state, 1 the parent pid, 11 and 12 the user and system CPU in clock ticks, 19 the start time; None when the
    process is gone."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()


def cpu_seconds(fields: list[str]) -> float:
    """User + system CPU seconds from :func:`stat_fields`."""
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _stat(pid: str) -> tuple[str, float] | None:
    """(start time in ticks since boot, user + system CPU seconds) of a process, None when it is gone."""
    fields = stat_fields(pid)
    return None if fields is None else (fields[19], cpu_seconds(fields))


def _command(pid: str) -> str:
    try:
        return (_PROC / pid / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class ProcessSampler:
    """Reads every new process's CPU in a background thread between :meth:`start` and :meth:`stop`."""

    def __init__(self, interval: float = SAMPLE_SECONDS) -> None:
        self.interval = interval
        self._seen: dict[tuple[str, str], list] = {}  # (pid, start) -> [cpu, command line]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="process-cpu", daemon=True)
        self._before: set[tuple[str, str]] = set()

    def start(self) -> ProcessSampler:
        if _PROC.is_dir():
            self._before = {(pid, stat[0]) for pid, stat in self._stats()}
            self._thread.start()
        return self

    @staticmethod
    def _stats() -> list[tuple[str, tuple[str, float]]]:
        me = str(os.getpid())
        found = ((pid, _stat(pid)) for pid in os.listdir(_PROC) if pid.isdigit() and pid != me)
        return [(pid, stat) for pid, stat in found if stat is not None]

    def _sample(self) -> None:
        """Every new process's CPU and command line now. The command line is read again each time, and the last one
        that is not empty is kept: a process seen before its exec shows its parent's (or none; under load this is
        common), and one that has ended but is not yet reaped (a zombie) shows none while its CPU is still there."""
        for pid, (started, cpu) in self._stats():
            key = (pid, started)
            if key in self._before:
                continue
            command = _command(pid)
            kept = self._seen.get(key)
            self._seen[key] = [cpu, command or (kept[1] if kept else "")]

    def _loop(self) -> None:
        while True:
            self._sample()
            if self._stop.wait(self.interval):
                return

    def processes(self) -> list[tuple[str, float]]:
        """(command line, CPU seconds) of every new process seen so far."""
        return [(command, cpu) for cpu, command in list(self._seen.values())]

    def stop(self) -> list[KindCpu]:
        """Stop sampling; CPU by kind, largest first."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        totals: dict[str, list[float]] = {}
        for command, cpu in self.processes():
            row = totals.setdefault(kind_of(command), [0.0, 0])
            row[0] += cpu
            row[1] += 1
        return sorted((KindCpu(kind=k, cpu=c, processes=int(n)) for k, (c, n) in totals.items()),
                      key=lambda row: -row.cpu)
