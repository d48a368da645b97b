"""Hosts of a consortium on one machine, for tests/test_federated_consortium.py (tests only).

Each host is a network namespace (tests/test_federated_hosts.py's ``three_hosts``) and, for every command run on it,
a mount namespace of its own in which the host's folders are bound over the paths a deployment uses:
``/etc/capefed``, ``/var/lib/capefed``, ``/srv/capefed`` (its data), ``/etc/systemd/system`` (its units) and
``/opt/capefed`` (one installation shared by every host: install.sh keeps an environment that holds the reviewed
release already). Commands run as root with a small environment (``PATH`` with the installed environment, ``HOME``
of the host's root); a unit's ``ExecStart`` runs as systemd runs it (:func:`unit_command`): only the variables of its
``Environment=`` and ``EnvironmentFile=`` lines, as its ``User=``, from ``/``.

:func:`guide_blocks` reads docs/federated.md's deployment guide: every fenced block whose info string names where it
runs (``sh on-aggregator``, ``sh on-each-site``, ``sh on-every-host``, ``text copy``), in order.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from capefed.ops.opsfiles import read_env_file
from capefed.ops.processes import alive, descendants, signal_all

ROOT = Path(__file__).resolve().parents[1]
BOUND = ("/etc/capefed", "/var/lib/capefed", "/srv/capefed", "/etc/systemd/system", "/opt/capefed")
"""The paths every host has its own folder for (the last one shared by all)."""
VENV_PATH = "/opt/capefed/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SERVICE_KEYS = {"Type", "User", "Group", "StateDirectory", "Environment", "EnvironmentFile", "ExecStart", "Restart",
                "NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices", "ReadWritePaths"}
"""The [Service] settings the units use: what starting a unit here emulates (environment, user, working folder) or
what only confines it further under systemd (the Protect* and Private* settings, which this harness does not apply)."""
_VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")


@dataclass
class Host:
    """One host: its name, network namespace ("" for none), folders and the log of each unit it started."""

    name: str
    namespace: str
    root: Path
    shared_opt: Path
    units: dict[str, tuple[subprocess.Popen, Path]] = field(default_factory=dict)

    def folder(self, path: str) -> Path:
        """Where the host's ``path`` (one of BOUND, or below one) lies on this machine."""
        for bound in BOUND:
            if path == bound or path.startswith(bound + "/"):
                base = self.shared_opt if bound == "/opt/capefed" else self.root / bound.strip("/").replace("/", "-")
                return base / path[len(bound):].lstrip("/")
        raise ValueError(f"{path} is not a host path")

    def wrap(self, command: list[str], network: bool = True) -> list[str]:
        """``command`` in this host's mount namespace (and its network namespace unless ``network`` is False)."""
        binds = " && ".join(f"mount --bind {shlex.quote(str(self.folder(p)))} {p}" for p in BOUND)
        inner = ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", f'{binds} && exec "$@"',
                 "sh", *command]
        return ["ip", "netns", "exec", self.namespace, *inner] if network and self.namespace else inner

    def env(self) -> dict[str, str]:
        home = self.root / "root-home"
        home.mkdir(exist_ok=True)
        return {"PATH": VENV_PATH, "HOME": str(home), "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1",
                "PYTHON": "python3.11"}

    def run(self, script: str, *, stdin: str = "", network: bool = True, timeout: float = 900
            ) -> subprocess.CompletedProcess:
        """A shell script as root on this host (from the checkout, as the guide's commands are run)."""
        return subprocess.run(self.wrap(["/bin/sh", "-eu", "-c", script], network), input=stdin, text=True,
                              capture_output=True, env=self.env(), cwd=ROOT, timeout=timeout)

    def start_unit(self, name: str, logs: Path) -> None:
        """Start a unit installed on this host as systemd would start it (:func:`unit_command`)."""
        unit = parse_unit(self.folder(f"/etc/systemd/system/{name}.service"))
        env, command = unit_command(unit, lambda p: read_env_file(self.folder(p)))
        log = logs / f"{self.name}-{name}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(self.wrap(["env", "-i", *(f"{k}={v}" for k, v in env.items()), "setpriv",
                                                  f"--reuid={unit['User'][-1]}", f"--regid={unit['Group'][-1]}",
                                                  "--init-groups", "--", *command]),
                                       stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd="/",
                                       env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, start_new_session=True)
        self.units[name] = (process, log)

    def stop_units(self) -> None:
        for process, _ in self.units.values():
            pids = [process.pid, *descendants(process.pid)]
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)
            signal_all(pids, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and any(alive(p) for p in pids if p != process.pid) | (
                    process.poll() is None):
                time.sleep(0.2)
            signal_all([p for p in pids if alive(p)], signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)


def parse_unit(path: Path) -> dict[str, list[str]]:
    """The [Service] settings of a unit file (every value of a repeated key, in order)."""
    section, out = "", {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]":
            key, _, value = line.partition("=")
            out.setdefault(key.strip(), []).append(value.strip())
    unknown = set(out) - SERVICE_KEYS
    if unknown:
        raise ValueError(f"{path.name} uses {sorted(unknown)}, which this harness does not emulate")
    return out


def unit_command(unit: Mapping[str, list[str]], read_file) -> tuple[dict[str, str], list[str]]:
    """The environment systemd gives a unit's command (only its ``Environment=`` assignments and
    ``EnvironmentFile=`` files, in order) and its ``ExecStart`` with the variables replaced as systemd does:
    ``${NAME}`` is one argument, ``$NAME`` splits at white space."""
    env: dict[str, str] = {}
    for line in unit.get("Environment", []):
        for word in shlex.split(line):
            key, _, value = word.partition("=")
            env[key] = value
    for path in unit.get("EnvironmentFile", []):
        env.update(read_file(path.lstrip("-")))
    (exec_start,) = unit["ExecStart"]
    command = []
    for word in shlex.split(exec_start):
        whole = _VARIABLE.fullmatch(word)
        if whole and whole.group(2):
            command.extend(env.get(whole.group(2), "").split())
        else:
            command.append(_VARIABLE.sub(lambda m: env.get(m.group(1) or m.group(2), ""), word))
    return env, command


@dataclass(frozen=True)
class Block:
    """A block of the guide: where it runs and its text."""

    where: str
    text: str


def guide_blocks(doc: Path) -> list[Block]:
    """The deployment guide's blocks, in order (module docstring)."""
    text = doc.read_text()
    guide = text[text.index("## Deploying it"):text.index("## One round, message by message")]
    return [Block(where, body) for where, body in re.findall(r"```(?:sh|text) (on-aggregator|on-each-site|"
                                                             r"on-every-host|copy)\n(.*?)```", guide, re.DOTALL)]


@contextlib.contextmanager
def mount_points() -> Iterator[None]:
    """The paths of BOUND exist on this machine (empty folders, made where missing and removed after if still
    empty): a bind mount needs its target."""
    made = []
    for path in BOUND:
        if not os.path.exists(path):
            os.makedirs(path)
            made.append(path)
    try:
        yield
    finally:
        for path in reversed(made):
            with contextlib.suppress(OSError):
                os.rmdir(path)
