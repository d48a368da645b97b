"""The loopback federation behind ``make federated`` (entry point: ``python -m capefed.launch``): a SuperLink, a
helper and three sites as separate processes on loopback, one capePCA and one capeAGN round, the message log and
the result beside the in-process simulation; every process is stopped at the end, also on failure or Ctrl-C.

Each process gets its own free port on 127.0.0.1, its own FLWR_HOME and log file, and runs in its own process
group (so a Ctrl-C in the terminal reaches only this launcher, which then stops them). Every process it starts
carries CAPEFED_RUN_TAG=<random token> in its environment, inherited by whatever Flower starts below it; at the
end the launcher stops its process groups, then every process that still carries its token, and checks that
none is left.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .certificates import SecurityFiles, make_security_files
from .demo import DEMO_SITES, Demo, identical, prepare_demo, print_report, simulate
from .deployment import (
    LOOPBACK,
    Tls,
    connection_text,
    gateway_command,
    register_command,
    superlink_command,
    supernode_command,
    worker_command,
    write_secret,
)
from .dp import MAX_JSON_BYTES, InputError, federated_variant, federated_variants, load_json, read_file
from .messages import message_log_round, write_log
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
from .rounds import settings_from_run_config

__all__ = ["Federation", "FederationError", "LoopbackRun", "main", "node_config_text", "report", "run_loopback",
           "tagged_processes"]

APP_DIR = Path(__file__).resolve().parents[1]
REPO_DIR = APP_DIR.parent
CONNECTION = "capefed-loopback"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
DEFAULT_RUN_TIMEOUT = 600.0
_RUN_STATUS = re.compile(r"^capefed\.runner: run \d+ (\S+)", re.MULTILINE)
TRANSIENT = ("register-", "stranger", "flwr-run")
"""Processes expected to end while the federation runs: key registrations, a stranger's node (refused), the run."""
WORKER_SUFFIX = "-worker"
"""A node's long-running ClientApp process (capefed.worker) runs as ``<node name>-worker``, with its own log."""
TASK_POLL_SECONDS = 0.5
"""Seconds between a SuperExec's requests for a new task (FLWR_SUPEREXEC_TASK_POLL_INTERVAL; Flower's default is 1).
Measured with benchmarks/bench_federated.py on a loaded 2-core machine (load average 13-15): 0.1 s took 81 CPU seconds
per run (all processes) and 116-117 s, 0.5 s took 66 CPU seconds and 96 s, 1 s 66 CPU seconds and 102 s: at 0.1 s the
five SuperExecs' polling alone costs about 0.2 cores."""


class FederationError(RuntimeError):
    """A process of the federation failed to start or the run did not finish; the message names it and its log."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port_open(port: int, host: str = LOOPBACK, namespace: str = "") -> bool:
    """Something accepts connections at host:port (inside ``namespace`` when one is named)."""
    if namespace:
        probe = subprocess.run(["ip", "netns", "exec", namespace, "bash", "-c", f"exec 3<>/dev/tcp/{host}/{port}"],
                               capture_output=True, timeout=10)
        return probe.returncode == 0
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


_CONFIG_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
_FORBIDDEN = frozenset('"\'\\')


def _toml_value(key: str, value: Any) -> str:
    """One value as Flower reads it back (a TOML boolean, 64-bit integer, finite float or basic string)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise FederationError(f"{key} = {value}: an integer must fit in 64 bits")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FederationError(f"{key} = {value}: a number must be finite")
        return repr(value)
    if isinstance(value, str):
        if any(c.isspace() or c in _FORBIDDEN or ord(c) < 32 or ord(c) == 127 for c in value):
            raise FederationError(f"{key} = {value!r}: Flower's key=value lists cannot hold white space, quotes, "
                                  "backslashes or control characters")
        return f'"{value}"'
    raise FederationError(f"{key}: a value must be a boolean, an integer, a number or a string "
                          f"(got {type(value).__name__})")


def node_config_text(config: Mapping[str, Any]) -> str:
    """``--node-config`` / ``--run-config`` text: space-separated key=value pairs with TOML values, which Flower's
    parser (``flwr.common.config.parse_config_args``) reads back as the same mapping; raises FederationError for a
    key or value it could not carry."""
    for key in config:
        if not isinstance(key, str) or not _CONFIG_KEY.fullmatch(key):
            raise FederationError(f"{key!r}: a configuration key is a letter followed by up to 63 letters, digits, "
                                  "'-' or '_'")
    return " ".join(f"{key}={_toml_value(key, value)}" for key, value in config.items())


@dataclass
class Federation:
    """A SuperLink and SuperNodes on loopback. Use as a context manager: leaving it stops every process."""

    workdir: Path
    nodes: Sequence[Mapping[str, Any]]
    tag: str = field(default_factory=lambda: secrets.token_hex(12))
    processes: list[tuple[str, subprocess.Popen, Path]] = field(default_factory=list)
    superlink_port: int = 0
    bin_dir: Path = field(default_factory=lambda: Path(sys.executable).parent)
    reap_all: bool = False  # this process exists only to run the federation: adopt and reap every descendant
    security: SecurityFiles | None = None  # TLS and SuperNode authentication; None: insecure (loopback only)
    task_poll: float = TASK_POLL_SECONDS
    drop: str | None = None  # a site whose process is killed after the noise was set up (checkpoint files)
    killed: list[str] = field(default_factory=list)
    workers: bool = True  # one long-running ClientApp process per node (capefed.worker); False: one per message
    short_waits: bool = True  # SuperNodes as capefed.supernode (0.5 s idle wait, 10 s heartbeat); False: as Flower's
    link_host: str = LOOPBACK  # the address the gateway listens on (with security), which the SuperNodes connect to
    namespaces: Mapping[str, str] = field(default_factory=dict)  # process name -> network namespace (three hosts)
    gateway_port: int = 0
    fleet_address: str = ""  # what the SuperNodes connect to: the gateway, or the SuperLink itself (insecure)
    superlink_args: list[str] = field(default_factory=list)
    run_status: str = ""  # the last run's status as the SuperLink reports it (capefed.runner.run_status)

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
                                      + _tail(log))

    def _namespace(self, name: str) -> str:
        """The network namespace a process runs in ("" for this one): a node's worker with its node, the operator's
        commands with the SuperLink."""
        base = name.removesuffix(WORKER_SUFFIX)
        if base.startswith("register-") or base == "flwr-run":
            base = "superlink"
        return self.namespaces.get(base, "")

    def _wait_port(self, name: str, host: str, port: int) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not _port_open(port, host, self._namespace(name)):
            self._checkalive()
            if time.monotonic() > deadline:
                raise FederationError(f"{name} did not open {host}:{port} within {START_TIMEOUT:g} s")
            time.sleep(0.2)

    def start(self) -> None:
        """The SuperLink (on 127.0.0.1; with security behind capefed.gateway on ``link_host``, its state in a
        database), the operator's connection, then every node (registered first, with security) and its worker."""
        if self.reap_all:
            set_subreaper(True)
        self.superlink_port = _free_port()
        sec = self.security
        tls = None if sec is None else Tls(ca=sec.ca_certificate, certificate=sec.server_certificate,
                                           key=sec.server_key)
        database = None
        if tls is not None:
            database = self.workdir / "state" / "superlink.db"
            database.parent.mkdir(parents=True, exist_ok=True)
        self.superlink_args = superlink_command(self.bin_dir, port=self.superlink_port, tls=tls, database=database)
        self._start("superlink", self.superlink_args)
        self._wait_port("superlink", LOOPBACK, self.superlink_port)
        fleet = f"{LOOPBACK}:{self.superlink_port}"
        if tls is not None:
            self.gateway_port = _free_port()
            fleet = f"{self.link_host}:{self.gateway_port}"
            self._start("gateway", gateway_command(sys.executable, listen=fleet, upstream_port=self.superlink_port,
                                                   tls=tls))
            self._wait_port("gateway", self.link_host, self.gateway_port)
        self.fleet_address = fleet
        cli_home = self.workdir / "homes" / "flwr-run"
        cli_home.mkdir(parents=True, exist_ok=True)
        (cli_home / "config.toml").write_text(connection_text(CONNECTION, f"{LOOPBACK}:{self.superlink_port}",
                                                              None if sec is None else sec.ca_certificate))
        for config in self.nodes:
            self.start_node(config)

    def restart_superlink(self) -> None:
        """Stop the SuperLink (SIGTERM, as a service manager does) and start it again with the same command: with a
        database it keeps the registered nodes and the runs."""
        for name, process, _ in list(self.processes):
            if name == "superlink":
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=STOP_TIMEOUT)
                self.processes.remove((name, process, _))
        self._start("superlink", self.superlink_args)
        self._wait_port("superlink", LOOPBACK, self.superlink_port)

    def start_node(self, config: Mapping[str, Any], name: str | None = None, register: bool = True) -> None:
        """One SuperNode (its key registered first when ``register``) and, with workers, its worker; ``name`` names
        its processes, logs and home (default: the node configuration's name)."""
        name, sec = name or str(config["name"]), self.security
        private = None
        if sec is not None:
            private, public = sec.node_keys.get(name) or sec.node_keys[str(config["name"])]
            if register:
                self._register(name, public)
        runtime_port = _free_port()
        secret = write_secret(self.workdir / "homes" / name / "task-secret") if self.workers else None
        self._start(name, supernode_command(
            self.bin_dir, superlink=self.fleet_address, runtime_port=runtime_port, node_config=node_config_text(config),
            ca=None if sec is None else sec.ca_certificate, node_key=private, secret_file=secret,
            worker=self.workers, python=sys.executable if self.short_waits else None))
        if self.workers:
            self._start(f"{name}{WORKER_SUFFIX}", worker_command(sys.executable, runtime_port=runtime_port,
                                                                 secret_file=secret))

    def _register(self, name: str, public_key: Path) -> None:
        """``flwr supernode register``: only SuperNodes whose public key the operator registered may connect."""
        process = self._start(f"register-{name}", register_command(self.bin_dir, public_key=public_key,
                                                                   connection=CONNECTION, name=name))
        try:
            process.wait(timeout=START_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            raise FederationError(f"registering the key of {name} took more than {START_TIMEOUT:g} s") from exc
        if process.returncode != 0:
            log = self.workdir / "logs" / f"register-{name}.log"
            raise FederationError(f"registering the key of {name} failed; see {log}:\n" + _tail(log))

    def run_app(self, run_config: Mapping[str, Any], timeout: float = DEFAULT_RUN_TIMEOUT,
                app_dir: Path = APP_DIR) -> Path:
        """Run the app (``app_dir``) with these run-config overrides (``python -m capefed.runner``: ``flwr run``,
        then the run's final status, kept in ``run_status``) and wait for it; returns the log."""
        log = self.workdir / "logs" / "flwr-run.log"
        self.processes = [p for p in self.processes if p[0] != "flwr-run"]
        process = self._start("flwr-run", [sys.executable, "-m", "capefed.runner", str(app_dir), CONNECTION,
                                           "--run-config", node_config_text(run_config),
                                           "--flwr", str(self.bin_dir / "flwr")])
        deadline = time.monotonic() + timeout
        while process.poll() is None:
            self._drop_at_checkpoint(run_config)
            self._check_nodes()
            if time.monotonic() > deadline:
                raise FederationError(f"the run did not finish within {timeout:g} s; see {log}")
            time.sleep(0.5)
        found = _RUN_STATUS.findall(log.read_text(errors="replace"))
        if not found:
            raise FederationError(f"flwr run exited with code {process.returncode}; see {log}:\n" + _tail(log))
        self.run_status = found[-1]
        return log

    def _drop_at_checkpoint(self, run_config: Mapping[str, Any]) -> None:
        """The drop-out demonstration: once the aggregator reports the noise set up (``noise-ready.ready`` in the
        checkpoint directory), kill the chosen site's SuperNode and everything below it, then let the aggregator go
        on (``noise-ready.go``)."""
        folder = run_config.get("checkpoint")
        if not self.drop or not folder or self.killed or not (Path(folder) / "noise-ready.ready").exists():
            return
        for name, process, _ in self.processes:
            if name in (self.drop, f"{self.drop}{WORKER_SUFFIX}"):
                victims = [process.pid, *descendants(process.pid)]
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                signal_all(victims, signal.SIGKILL)
                process.wait(timeout=STOP_TIMEOUT)
                self.killed.append(name)
                if name == self.drop:
                    print(f"killed site {name} (pid {process.pid}) after the noise was set up, before it released",
                          flush=True)
        (Path(folder) / "noise-ready.go").write_text("go\n")

    def _check_nodes(self) -> None:
        for name, process, log in self.processes:
            if name in self.killed:
                continue
            if name != "flwr-run" and not name.startswith(TRANSIENT) and process.poll() is not None:
                raise FederationError(f"{name} exited with code {process.returncode} during the run; see {log}:\n"
                                      + _tail(log))

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

    def __enter__(self) -> Federation:
        return self

    def __exit__(self, *exc: object) -> None:
        left = self.stop()
        if left:
            print(f"warning: processes {left} did not stop", file=sys.stderr)


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@dataclass(frozen=True, kw_only=True)
class LoopbackRun:
    """What :func:`run_loopback` did: the outcomes of the real run (JSON dicts), the in-process simulations,
    timings and where the logs are."""

    demo: Demo
    rounds: list[dict[str, Any]]
    simulated: dict[str, Any]
    seconds: dict[str, float]
    log_path: Path
    leftover: list[int]
    tag: str
    run_status: str = ""


def run_loopback(workdir: str | Path, *, run_config: Mapping[str, Any] | None = None,
                 timeout: float = DEFAULT_RUN_TIMEOUT, tag: str | None = None, reap_all: bool = False,
                 secure: bool = False, task_poll: float = TASK_POLL_SECONDS, agn_path: str = "dense",
                 noise: str = "helper", drop: str | None = None, extra_nodes: Sequence[Mapping[str, Any]] = (),
                 demo: Demo | None = None, workers: bool = True, short_waits: bool = True) -> LoopbackRun:
    """Prepare the demonstration, start the federation, run the app, stop everything, simulate the same rounds.
    Writes ``outcome.json`` (the aggregator's), ``simulation.json`` (the in-process run's aggregates and outputs),
    ``message-log.json`` and ``summary.json`` (configurations, timings, processes left) into ``workdir``.
    ``reap_all``: this process does nothing else (the command line), so it adopts and reaps every process below it.
    ``secure``: TLS with a throw-away CA and SuperNode authentication with registered keys (``certificates``).
    ``noise``: "helper" or "helper-free"; ``drop``: a site killed after the noise was set up and before it releases;
    ``extra_nodes``: more SuperNodes (e.g. a stranger's); ``demo``: files prepared already (several runs);
    ``workers``: one long-running ClientApp process per node (``capefed.worker``), or Flower's one per message;
    ``short_waits``: SuperNodes as ``capefed.supernode`` (shorter idle wait and heartbeat), or ``flower-supernode``."""
    workdir = Path(workdir)
    demo = demo or prepare_demo(workdir / "data", agn_path=agn_path, noise=noise)
    config = dict(demo.run_config)
    config.update(run_config or {})
    out = workdir / "outcome.json"
    out.unlink(missing_ok=True)
    config["out"] = str(out)
    if drop:
        checkpoints = workdir / "checkpoints"
        checkpoints.mkdir(parents=True, exist_ok=True)
        for old in checkpoints.iterdir():
            old.unlink()
        config["checkpoint"] = str(checkpoints)
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    nodes = [*demo.nodes, *extra_nodes]
    security = make_security_files(workdir / "security", [str(n["name"]) for n in nodes]) if secure else None
    federation = Federation(workdir, nodes, reap_all=reap_all, security=security, task_poll=task_poll, drop=drop,
                            workers=workers, short_waits=short_waits)
    if tag:
        federation.tag = tag
    try:
        federation.start()
        seconds["start"] = time.perf_counter() - start
        run_started = time.time()
        federation.run_app(config, timeout)
        seconds["run"] = time.perf_counter() - start - seconds["start"]
        if out.exists():  # from the start of the run to the aggregator's output file (before the status check)
            seconds["to_output"] = out.stat().st_mtime - run_started
    finally:
        cpu = federation.cpu_seconds()
        stop_start = time.perf_counter()
        leftover = federation.stop()
        seconds["stop"] = time.perf_counter() - stop_start
        (workdir / "summary.json").write_text(json.dumps(
            {"nodes": list(demo.nodes), "run_config": config, "truth": demo.truth, "seconds": seconds,
             "run_status": federation.run_status,
             "cpu_seconds_alive_at_stop": cpu, "leftover": leftover, "tag": federation.tag}, indent=1))
    if not out.exists():
        raise FederationError(f"the aggregator wrote no outcome to {out}; see {workdir / 'logs'}")
    rounds = load_json(read_file(out, MAX_JSON_BYTES, "the aggregator's outcome"), "aggregator's outcome")["rounds"]
    simulated = {}
    simulate_start = time.perf_counter()
    for outcome in rounds:
        if outcome["status"] == "released":
            settings = settings_from_run_config(config, outcome["algorithm"], "simulation")
            simulated[outcome["algorithm"]] = simulate(demo.nodes, settings, outcome.get("dropped", ()))
    seconds["simulate"] = time.perf_counter() - simulate_start
    (workdir / "simulation.json").write_text(json.dumps(
        {name: {"aggregates": {k: v.tolist() for k, v in sim.aggregates.items()},
                "outputs": {k: np.asarray(v).tolist() for k, v in sim.outputs.items()}}
         for name, sim in simulated.items()}))
    log_path = workdir / "message-log.json"
    write_log(log_path, [message_log_round(r) for r in rounds])
    return LoopbackRun(demo=demo, rounds=rounds, simulated=simulated, seconds=seconds, log_path=log_path,
                       leftover=leftover, tag=federation.tag, run_status=federation.run_status)


def _on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def report(result: LoopbackRun, out=sys.stdout) -> bool:
    """Print timings, every round's message log and result beside the in-process run; True when all released."""
    print(f"federation up in {result.seconds['start']:.1f} s, rounds done in {result.seconds['run']:.1f} s, "
          f"stopped in {result.seconds['stop']:.1f} s" + (f"; STILL RUNNING: {result.leftover}"
                                                         if result.leftover else "; no process left")
          + f"; the SuperLink reports the run {result.run_status or 'unknown'}", file=out)
    sites = [n for n in result.demo.nodes if n["role"] == "site"]
    pooled = np.hstack([np.loadtxt(n["pca-data"], delimiter=",", ndmin=2).T for n in sites])
    ok = not result.leftover
    for outcome in result.rounds:
        simulated = result.simulated.get(outcome["algorithm"])
        print_report(outcome, simulated, result.demo.truth, pooled, out=out)
        ok &= outcome["status"] == "released" and identical(outcome, simulated)
    print(f"\nmessage log (JSON): {result.log_path}", file=out)
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.launch", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default="federated-run",
                        help="where the data files, logs and the message log go (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_RUN_TIMEOUT, help="seconds the whole run may take")
    parser.add_argument("--tag", help="the token every started process carries in CAPEFED_RUN_TAG (default: random)")
    parser.add_argument("--secure", action="store_true",
                        help="TLS (a throw-away CA) and SuperNode authentication (registered keys) instead of insecure "
                             "mode")
    parser.add_argument("--noise", default="helper", metavar="{" + ",".join(federated_variants()) + "}",
                        help="who makes the zero-sum noise: a helper node, or the sites by a secure sum; the variants "
                             "of dpcore's noise-variant table that the Flower round runs (default: %(default)s)")
    parser.add_argument("--drop", choices=[s["name"] for s in DEMO_SITES], default=None,
                        help="kill this site's process after the noise was set up and before it releases; the round "
                             "completes with the survivors")
    parser.add_argument("--algorithms", default="capePCA,capeAGN",
                        help="the rounds to run, comma-separated (default: %(default)s)")
    parser.add_argument("--agn-path", choices=("dense", "projected"), default="dense",
                        help="capeAGN's third-moment path: dense (D x D x D noise) or projected (K x K x K noise, W "
                             "sent to the helper; one exchange more) (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        federated_variant(args.noise, "--noise")
    except InputError as exc:  # one line, before any process starts
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # Ctrl-C, kill and a closed terminal all end in the same clean-up (SIGINT explicitly: a shell may have started
    # this process with it ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_sigterm)
    workdir = Path(args.workdir).resolve()
    mode = "TLS and SuperNode authentication" if args.secure else "insecure mode"
    print(f"starting a SuperLink, a helper and three sites on 127.0.0.1, {mode}, {args.noise} noise"
          + (f", site {args.drop} killed after the noise set-up" if args.drop else "") + f" (files in {workdir})",
          flush=True)
    try:
        result = run_loopback(workdir, timeout=args.timeout, tag=args.tag, reap_all=True, secure=args.secure,
                              agn_path=args.agn_path, noise=args.noise, drop=args.drop,
                              run_config={"algorithms": args.algorithms})
    except FederationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; every process was stopped", file=sys.stderr)
        return 130
    return 0 if report(result) else 1
