"""A federation's processes (:class:`Federation`): a SuperLink (with security: on 127.0.0.1 behind the Fleet-only
gateway, its state in a database), the operator's connection, every node (its key registered first) with its worker,
each in its network namespace when one is named; running the app with the operator's exit status
(``capefed.ops.runner``); the drop-out demonstration's kill of a site once the aggregator asked it to release (its
failing worker, :mod:`capefed.ops.dropout`, signals it). Starting, watching and stopping the processes is
:class:`capefed.ops.procgroup.ProcessGroup`; the loopback demonstration of ``make federated`` (one run, the in-process
simulation beside it, the printout) is :mod:`capefed.ops.loopback`.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .certificates import SecurityFiles
from .configtext import node_config_text
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
from .dropout import command as dropout_command
from .dropout import fresh_signal, signal_file
from .processes import descendants, set_subreaper, signal_all, tagged_processes
from .procgroup import (
    APP_DIR,
    REPO_DIR,
    START_TIMEOUT,
    STOP_TIMEOUT,
    TASK_POLL_SECONDS,
    TRANSIENT,
    WORKER_SUFFIX,
    FederationError,
    ProcessGroup,
    free_port,
    port_open,
    tail,
)

__all__ = ["APP_DIR", "CONNECTION", "REPO_DIR", "Federation", "FederationError", "main", "node_config_text",
           "run_loopback", "tagged_processes"]

CONNECTION = "capefed-loopback"
DEFAULT_RUN_TIMEOUT = 600.0
_RUN_STATUS = re.compile(r"^capefed\.ops\.runner: run \d+ (\S+)", re.MULTILINE)
_free_port, _port_open = free_port, port_open  # the names the tests use


@dataclass
class Federation(ProcessGroup):
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
    drop: str | None = None  # a site killed once asked to release, after the noise set-up (capefed.ops.dropout)
    killed: list[str] = field(default_factory=list)
    workers: bool = True  # one long-running ClientApp process per node (capefed.ops.worker); False: one per message
    short_waits: bool = True  # SuperNodes as capefed.ops.supernode (0.5 s idle wait, 10 s heartbeat); False: Flower's
    link_host: str = LOOPBACK  # the address the gateway listens on (with security), which the SuperNodes connect to
    namespaces: Mapping[str, str] = field(default_factory=dict)  # process name -> network namespace (three hosts)
    gateway_port: int = 0
    fleet_address: str = ""  # what the SuperNodes connect to: the gateway, or the SuperLink itself (insecure)
    superlink_args: list[str] = field(default_factory=list)
    run_status: str = ""  # the last run's status as the SuperLink reports it (capefed.ops.runner.run_status)

    def start(self) -> None:
        """The SuperLink (on 127.0.0.1; with security behind capefed.ops.gateway on ``link_host``, its state in a
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
        if name == self.drop:  # the drop-out demonstration: this site's worker never answers a release
            self._start(f"{name}{WORKER_SUFFIX}", dropout_command(sys.executable, runtime_port=runtime_port,
                                                                  signal=fresh_signal(self.workdir, name),
                                                                  secret_file=secret))
        elif self.workers:
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
            raise FederationError(f"registering the key of {name} failed; see {log}:\n" + tail(log))

    def run_app(self, run_config: Mapping[str, Any], timeout: float = DEFAULT_RUN_TIMEOUT,
                app_dir: Path = APP_DIR) -> Path:
        """Run the app (``app_dir``) with these run-config overrides (``python -m capefed.ops.runner``: ``flwr run``,
        then the run's final status, kept in ``run_status``) and wait for it; returns the log."""
        log = self.workdir / "logs" / "flwr-run.log"
        self.processes = [p for p in self.processes if p[0] != "flwr-run"]
        process = self._start("flwr-run", [sys.executable, "-m", "capefed.ops.runner", str(app_dir), CONNECTION,
                                           "--run-config", node_config_text(run_config),
                                           "--flwr", str(self.bin_dir / "flwr")])
        deadline = time.monotonic() + timeout
        while process.poll() is None:
            self._drop_when_asked_to_release()
            self._check_nodes()
            if time.monotonic() > deadline:
                raise FederationError(f"the run did not finish within {timeout:g} s; see {log}")
            time.sleep(0.5)
        found = _RUN_STATUS.findall(log.read_text(errors="replace"))
        if not found:
            raise FederationError(f"flwr run exited with code {process.returncode}; see {log}:\n" + tail(log))
        self.run_status = found[-1]
        return log

    def _drop_when_asked_to_release(self) -> None:
        """The drop-out demonstration: once the aggregator asked the chosen site to release (the noise of every stage
        set up; its worker, :mod:`capefed.ops.dropout`, never answers and writes its signal file), kill the site's
        SuperNode and worker and everything below them."""
        if not self.drop or self.killed or not signal_file(self.workdir, self.drop).exists():
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

    def _check_nodes(self) -> None:
        for name, process, log in self.processes:
            if name in self.killed:
                continue
            if name != "flwr-run" and not name.startswith(TRANSIENT) and process.poll() is not None:
                raise FederationError(f"{name} exited with code {process.returncode} during the run; see {log}:\n"
                                      + tail(log))


def run_loopback(*args: Any, **kwargs: Any):
    """:func:`capefed.ops.loopback.run_loopback` (the loopback demonstration lives there)."""
    from .loopback import run_loopback as run  # noqa: PLC0415

    return run(*args, **kwargs)


def main(argv: list[str] | None = None) -> int:
    """``python -m capefed.ops.launch``: :func:`capefed.ops.loopback.main`."""
    from .loopback import main as run  # noqa: PLC0415

    return run(argv)
