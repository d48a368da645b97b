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
import os
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
from .demo import Demo, identical, prepare_demo, print_report, simulate
from .messages import write_log
from .rounds import settings_from_run_config

__all__ = ["Federation", "FederationError", "LoopbackRun", "main", "node_config_text", "report", "run_loopback",
           "tagged_processes"]

APP_DIR = Path(__file__).resolve().parents[1]
REPO_DIR = APP_DIR.parent
TAG_VARIABLE = "CAPEFED_RUN_TAG"
CONNECTION = "capefed-loopback"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
DEFAULT_RUN_TIMEOUT = 600.0


class FederationError(RuntimeError):
    """A process of the federation failed to start or the run did not finish; the message names it and its log."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))  # a TOML basic string for these values (paths, names)


def node_config_text(config: Mapping[str, Any]) -> str:
    """``--node-config`` / ``--run-config`` text: space-separated key=value pairs with TOML values."""
    for key, value in config.items():
        if isinstance(value, str) and any(c.isspace() for c in value):
            raise FederationError(f"{key} = {value!r}: Flower's key=value lists cannot hold white space")
    return " ".join(f"{key}={_toml_value(value)}" for key, value in config.items())


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _descendants(pid: int) -> list[int]:
    tree, out, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def tagged_processes(tag: str) -> list[int]:
    """Processes whose environment carries ``CAPEFED_RUN_TAG=tag`` (this launcher's, and what they started)."""
    marker = f"{TAG_VARIABLE}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


_PR_SET_CHILD_SUBREAPER = 36


def _set_subreaper(on: bool) -> None:
    """Make this process adopt its orphaned descendants (Linux prctl), so that it can reap the processes Flower
    starts detached once their parents are gone; where pid 1 does not reap they would stay zombies."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes  # noqa: PLC0415

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)


def _reap(pids: Sequence[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def _reap_any() -> None:
    """Reap every child that has exited (only for a process whose children are all the federation's)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _signal_all(pids: Sequence[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


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
            # A ClientApp process is started as soon as a message is there (Flower's default looks every second).
            "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": "0.1",
            "FLWR_TELEMETRY_ENABLED": "0", "FLWR_DISABLE_UPDATE_CHECK": "1",
        })
        return env

    def _start(self, name: str, args: list[str]) -> subprocess.Popen:
        home = self.workdir / "homes" / ("flwr-run" if name.startswith("register-") else name)
        home.mkdir(parents=True, exist_ok=True)
        log = self.workdir / "logs" / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "wb") as out:
            process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                       env=self.env(home), cwd=self.workdir, start_new_session=True)
        self.processes.append((name, process, log))
        return process

    def _check_alive(self) -> None:
        for name, process, log in self.processes:
            if process.poll() is not None and not name.startswith("register-"):
                raise FederationError(f"{name} exited with code {process.returncode}; see {log}:\n"
                                      + _tail(log))

    def start(self) -> None:
        if self.reap_all:
            _set_subreaper(True)
        self.superlink_port = _free_port()
        sec = self.security
        link_security = ["--insecure"] if sec is None else [
            "--ssl-ca-certfile", str(sec.ca_certificate), "--ssl-certfile", str(sec.server_certificate),
            "--ssl-keyfile", str(sec.server_key), "--enable-supernode-auth"]
        self._start("superlink", [str(self.bin_dir / "flower-superlink"), *link_security,
                                  "--disable-runtime-dependency-installation", "--host", "127.0.0.1",
                                  "--port", str(self.superlink_port)])
        deadline = time.monotonic() + START_TIMEOUT
        while not _port_open(self.superlink_port):
            self._check_alive()
            if time.monotonic() > deadline:
                raise FederationError(f"the SuperLink did not open port {self.superlink_port} within "
                                      f"{START_TIMEOUT:g} s")
            time.sleep(0.2)
        cli_home = self.workdir / "homes" / "flwr-run"
        cli_home.mkdir(parents=True, exist_ok=True)
        trust = "insecure = true" if sec is None else f"root-certificates = {json.dumps(str(sec.ca_certificate))}"
        (cli_home / "config.toml").write_text(
            f'[superlink]\ndefault = "{CONNECTION}"\n\n[superlink.{CONNECTION}]\n'
            f'address = "127.0.0.1:{self.superlink_port}"\n{trust}\n')
        for config in self.nodes:
            name = str(config["name"])
            node_security = ["--insecure"]
            if sec is not None:
                private, public = sec.node_keys[name]
                self._register(name, public)
                node_security = ["--root-certificates", str(sec.ca_certificate), "--auth-supernode-private-key",
                                 str(private)]
            self._start(name, [
                str(self.bin_dir / "flower-supernode"), *node_security, "--superlink",
                f"127.0.0.1:{self.superlink_port}", "--host", "127.0.0.1", "--port", str(_free_port()),
                "--node-config", node_config_text(config)])

    def _register(self, name: str, public_key: Path) -> None:
        """``flwr supernode register``: only SuperNodes whose public key the operator registered may connect."""
        process = self._start(f"register-{name}", [str(self.bin_dir / "flwr"), "supernode", "register",
                                                   str(public_key), CONNECTION, "--name", name])
        try:
            process.wait(timeout=START_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            raise FederationError(f"registering the key of {name} took more than {START_TIMEOUT:g} s") from exc
        if process.returncode != 0:
            log = self.workdir / "logs" / f"register-{name}.log"
            raise FederationError(f"registering the key of {name} failed; see {log}:\n" + _tail(log))

    def run_app(self, run_config: Mapping[str, Any], timeout: float = DEFAULT_RUN_TIMEOUT) -> Path:
        """``flwr run`` the app with these run-config overrides and wait for it; returns the CLI's log."""
        log = self.workdir / "logs" / "flwr-run.log"
        process = self._start("flwr-run", [str(self.bin_dir / "flwr"), "run", str(APP_DIR), CONNECTION, "--stream",
                                           "--run-config", node_config_text(run_config)])
        deadline = time.monotonic() + timeout
        while process.poll() is None:
            self._check_nodes()
            if time.monotonic() > deadline:
                raise FederationError(f"the run did not finish within {timeout:g} s; see {log}")
            time.sleep(0.5)
        if process.returncode != 0:
            raise FederationError(f"flwr run exited with code {process.returncode}; see {log}:\n" + _tail(log))
        return log

    def _check_nodes(self) -> None:
        for name, process, log in self.processes:
            if name != "flwr-run" and not name.startswith("register-") and process.poll() is not None:
                raise FederationError(f"{name} exited with code {process.returncode} during the run; see {log}:\n"
                                      + _tail(log))

    def stop(self) -> list[int]:
        """Stop every process this federation started and everything below them; returns any pid still alive."""
        pids: set[int] = set()
        for _, process, _ in self.processes:
            pids.add(process.pid)
            pids.update(_descendants(process.pid))
        pids.update(tagged_processes(self.tag))
        for _, process, _ in self.processes:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)
        _signal_all(sorted(pids), signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        while time.monotonic() < deadline:
            for _, process, _ in self.processes:
                process.poll()
            pids.update(tagged_processes(self.tag))
            self._reap(pids)
            alive = [p for p in pids if _alive(p)]
            if not alive:
                break
            time.sleep(0.2)
        alive = [p for p in pids | set(tagged_processes(self.tag)) if _alive(p)]
        _signal_all(alive, signal.SIGKILL)
        for _, process, _ in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=2)
        time.sleep(0.2)
        pids.update(alive)
        self._reap(pids)
        left = [p for p in pids | set(tagged_processes(self.tag)) if _alive(p)]
        if self.reap_all:
            left += self._reap_every_child()
            _set_subreaper(False)
        return sorted(set(left))

    def _reap(self, pids: set[int]) -> None:
        if self.reap_all:
            _reap_any()
        else:
            _reap(sorted(pids))

    def _reap_every_child(self) -> list[int]:
        """Wait until this process has no child left (adopted orphans included); returns any still running."""
        deadline = time.monotonic() + STOP_TIMEOUT
        while time.monotonic() < deadline:
            _reap_any()
            children = _children().get(os.getpid(), [])
            if not children:
                return []
            _signal_all([c for c in children if _alive(c)], signal.SIGKILL)
            time.sleep(0.1)
        return [c for c in _children().get(os.getpid(), []) if _alive(c)]

    def __enter__(self) -> Federation:
        return self

    def __exit__(self, *exc: object) -> None:
        left = self.stop()
        if left:
            print(f"warning: processes {left} did not stop", file=sys.stderr)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"


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


def run_loopback(workdir: str | Path, *, run_config: Mapping[str, Any] | None = None,
                 timeout: float = DEFAULT_RUN_TIMEOUT, tag: str | None = None, reap_all: bool = False,
                 secure: bool = False) -> LoopbackRun:
    """Prepare the demonstration, start the federation, run the app, stop everything, simulate the same rounds.
    Writes ``outcome.json`` (the aggregator's), ``simulation.json`` (the in-process run's aggregates and outputs),
    ``message-log.json`` and ``summary.json`` (configurations, timings, processes left) into ``workdir``.
    ``reap_all``: this process does nothing else (the command line), so it adopts and reaps every process below it.
    ``secure``: TLS with a throw-away CA and SuperNode authentication with registered keys (``certificates``)."""
    workdir = Path(workdir)
    demo = prepare_demo(workdir / "data")
    config = dict(demo.run_config)
    config.update(run_config or {})
    out = workdir / "outcome.json"
    config["out"] = str(out)
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    security = make_security_files(workdir / "security", [str(n["name"]) for n in demo.nodes]) if secure else None
    federation = Federation(workdir, demo.nodes, reap_all=reap_all, security=security)
    if tag:
        federation.tag = tag
    try:
        federation.start()
        seconds["start"] = time.perf_counter() - start
        federation.run_app(config, timeout)
        seconds["run"] = time.perf_counter() - start - seconds["start"]
    finally:
        stop_start = time.perf_counter()
        leftover = federation.stop()
        seconds["stop"] = time.perf_counter() - stop_start
        (workdir / "summary.json").write_text(json.dumps(
            {"nodes": list(demo.nodes), "run_config": config, "truth": demo.truth, "seconds": seconds,
             "leftover": leftover, "tag": federation.tag}, indent=1))
    if not out.exists():
        raise FederationError(f"the aggregator wrote no outcome to {out}; see {workdir / 'logs'}")
    rounds = json.loads(out.read_text())["rounds"]
    simulated = {}
    for outcome in rounds:
        if outcome["status"] == "released":
            settings = settings_from_run_config(config, outcome["algorithm"], "simulation")
            simulated[outcome["algorithm"]] = simulate(demo.nodes, settings)
    (workdir / "simulation.json").write_text(json.dumps(
        {name: {"aggregates": {k: v.tolist() for k, v in sim.aggregates.items()},
                "outputs": {k: np.asarray(v).tolist() for k, v in sim.outputs.items()}}
         for name, sim in simulated.items()}))
    log_path = workdir / "message-log.json"
    write_log(log_path, [{"algorithm": r["algorithm"], "status": r["status"], "reason": r["reason"],
                          "seconds": r["seconds"], "entries": r["log"], "exchanges": r["exchanges"]} for r in rounds])
    return LoopbackRun(demo=demo, rounds=rounds, simulated=simulated, seconds=seconds, log_path=log_path,
                       leftover=leftover, tag=federation.tag)


def _on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def report(result: LoopbackRun, out=sys.stdout) -> bool:
    """Print timings, every round's message log and result beside the in-process run; True when all released."""
    print(f"federation up in {result.seconds['start']:.1f} s, rounds done in {result.seconds['run']:.1f} s, "
          f"stopped in {result.seconds['stop']:.1f} s" + (f"; STILL RUNNING: {result.leftover}"
                                                         if result.leftover else "; no process left"), file=out)
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
    args = parser.parse_args(argv)
    # Ctrl-C, kill and a closed terminal all end in the same clean-up (SIGINT explicitly: a shell may have started
    # this process with it ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_sigterm)
    workdir = Path(args.workdir).resolve()
    mode = "TLS and SuperNode authentication" if args.secure else "insecure mode"
    print(f"starting a SuperLink, a helper and three sites on 127.0.0.1, {mode} (files in {workdir})", flush=True)
    try:
        result = run_loopback(workdir, timeout=args.timeout, tag=args.tag, reap_all=True, secure=args.secure)
    except FederationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; every process was stopped", file=sys.stderr)
        return 130
    return 0 if report(result) else 1
