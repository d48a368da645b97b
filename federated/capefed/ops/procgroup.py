"""The processes of a federation, as one group (:class:`ProcessGroup`, the base of
:class:`capefed.ops.federation.Federation`): each with its own FLWR_HOME, log file and process group (a Ctrl-C in the
terminal reaches only the launcher), each carrying CAPEFED_RUN_TAG=<random token> in its environment, inherited by
whatever Flower starts below it; ``stop`` ends the process groups, then every process that still carries the token,
and checks that none is left."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from .deployment import LOOPBACK
from .processes import (
    TAG_VARIABLE,
    alive,
    children,
    descendants,
    reap,
    reap_any,
    set_subreaper,
    signal_all,
    tagged_processes,
)

__all__ = ["APP_DIR", "REPO_DIR", "START_TIMEOUT", "STOP_TIMEOUT", "TASK_POLL_SECONDS", "TRANSIENT", "WORKER_SUFFIX",
           "FederationError", "ProcessGroup", "free_port", "port_open", "tail"]

APP_DIR = Path(__file__).resolve().parents[2]
REPO_DIR = APP_DIR.parent
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
TRANSIENT = ("register-", "stranger", "flwr-run")
"""Processes expected to end while the federation runs: key registrations, a stranger's node (refused), the run."""
WORKER_SUFFIX = "-worker"
"""A node's long-running ClientApp process (capefed.ops.worker) runs as ``<node name>-worker``, with its own log."""
TASK_POLL_SECONDS = 0.5
"""Seconds between a SuperExec's requests for a new task (FLWR_SUPEREXEC_TASK_POLL_INTERVAL; Flower's default is 1).
Measured with benchmarks/bench_federated.py on a loaded 2-core machine (load average 13-15): 0.1 s took 81 CPU seconds
per run (all processes) and 116-117 s, 0.5 s took 66 CPU seconds and 96 s, 1 s 66 CPU seconds and 102 s: at 0.1 s the
five SuperExecs' polling alone costs about 0.2 cores."""



class FederationError(RuntimeError):
    """A process of the federation failed to start or the run did not finish; the message names it and its log."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_open(port: int, host: str = LOOPBACK, namespace: str = "") -> bool:
    """Something accepts connections at host:port (inside ``namespace`` when one is named)."""
    if namespace:
        probe = subprocess.run(["ip", "netns", "exec", namespace, "bash", "-c", f"exec 3<>/dev/tcp/{host}/{port}"],
                               capture_output=True, timeout=10)
        return probe.returncode == 0
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class ProcessGroup:
    """Starting, watching and stopping a federation's processes. The class using it holds ``workdir``, ``tag``,
    ``processes`` (name, process, log), ``bin_dir``, ``task_poll``, ``namespaces`` and ``reap_all``."""

    def env(self, home: Path) -> dict[str, str]:
        env = dict(os.environ)
        path = [str(REPO_DIR), str(APP_DIR)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env.update({
            "PATH": f"{self.bin_dir}{os.pathsep}{env.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join(path),
            "FLWR_HOME": str(home),
            TAG_VARIABLE: self.tag,
            # One BLAS thread everywhere, so every party computes exactly what the in-process run computes.
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            # How often each SuperExec asks its SuperNode (or the SuperLink) for a task to start a ClientApp
            # (ServerApp) process for: Flower's default is 1 s (benchmarks/bench_federated.py compares values).
            "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": repr(float(self.task_poll)),
            "FLWR_TELEMETRY_ENABLED": "0", "FLWR_DISABLE_UPDATE_CHECK": "1",
        })
        return env

    def _start(self, name: str, args: list[str]) -> subprocess.Popen:
        namespace = self._namespace(name)
        if namespace:
            args = ["ip", "netns", "exec", namespace, *args]
        home = self.workdir / "homes" / ("flwr-run" if name.startswith("register-") else name)
        home.mkdir(parents=True, exist_ok=True)
        log = self.workdir / "logs" / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "wb") as out:
            process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                       env=self.env(home), cwd=self.workdir, start_new_session=True)
        self.processes.append((name, process, log))
        return process

    def _checkalive(self) -> None:
        for name, process, log in self.processes:
            if process.poll() is not None and not name.startswith(TRANSIENT):
                raise FederationError(f"{name} exited with code {process.returncode}; see {log}:\n"
                                      + tail(log))

    def _namespace(self, name: str) -> str:
        """The network namespace a process runs in ("" for this one): a node's worker with its node, the operator's
        commands with the SuperLink."""
        base = name.removesuffix(WORKER_SUFFIX)
        if base.startswith("register-") or base == "flwr-run":
            base = "superlink"
        return self.namespaces.get(base, "")

    def _wait_port(self, name: str, host: str, port: int) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not port_open(port, host, self._namespace(name)):
            self._checkalive()
            if time.monotonic() > deadline:
                raise FederationError(f"{name} did not open {host}:{port} within {START_TIMEOUT:g} s")
            time.sleep(0.2)

    def stop(self) -> list[int]:
        """Stop every process this federation started and everything below them; returns any pid still alive."""
        pids: set[int] = set()
        for _, process, _ in self.processes:
            pids.add(process.pid)
            pids.update(descendants(process.pid))
        pids.update(tagged_processes(self.tag))
        for _, process, _ in self.processes:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)
        signal_all(sorted(pids), signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        while time.monotonic() < deadline:
            for _, process, _ in self.processes:
                process.poll()
            pids.update(tagged_processes(self.tag))
            self._reap(pids)
            running = [p for p in pids if alive(p)]
            if not running:
                break
            time.sleep(0.2)
        running = [p for p in pids | set(tagged_processes(self.tag)) if alive(p)]
        signal_all(running, signal.SIGKILL)
        for _, process, _ in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=2)
        time.sleep(0.2)
        pids.update(running)
        self._reap(pids)
        left = [p for p in pids | set(tagged_processes(self.tag)) if alive(p)]
        if self.reap_all:
            left += self._reap_every_child()
            set_subreaper(False)
        return sorted(set(left))

    def cpu_seconds(self) -> dict[str, dict[str, float]]:
        """CPU seconds (user + system) used so far by the processes this federation started and everything below
        them that has not been reaped yet (a ClientApp process that has exited stays a zombie until its SuperExec
        ends, with its CPU time), by kind (the kernel's 15-character command name): {kind: {"processes", "cpu"}}."""
        tick = os.sysconf("SC_CLK_TCK")
        pids = {pid for _, process, _ in self.processes for pid in [process.pid, *descendants(process.pid)]}
        out: dict[str, dict[str, float]] = {}
        for pid in sorted(pids):
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(f"/proc/{pid}/stat").read_text()
                kind = stat[stat.index("(") + 1:stat.rindex(")")]
                fields = stat[stat.rindex(")") + 2:].split()
                row = out.setdefault(kind, {"processes": 0, "cpu": 0.0})
                row["processes"] += 1
                row["cpu"] += (int(fields[11]) + int(fields[12])) / tick
        return out

    def _reap(self, pids: set[int]) -> None:
        if self.reap_all:
            reap_any()
        else:
            reap(sorted(pids))

    def _reap_every_child(self) -> list[int]:
        """Wait until this process has no child left (adopted orphans included); returns any still running."""
        deadline = time.monotonic() + STOP_TIMEOUT
        while time.monotonic() < deadline:
            reap_any()
            mine = children().get(os.getpid(), [])
            if not mine:
                return []
            signal_all([c for c in mine if alive(c)], signal.SIGKILL)
            time.sleep(0.1)
        return [c for c in children().get(os.getpid(), []) if alive(c)]

    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        left = self.stop()
        if left:
            print(f"warning: processes {left} did not stop", file=sys.stderr)
