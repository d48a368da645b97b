"""The commands of a hardened deployment, one function per party (docs/federated.md, "Deploying it"): what the
loopback launcher (``--secure``), the three-host test and the service units start.

Aggregator's host:
* ``flower-superlink`` on **127.0.0.1 only** (Flower 1.41 serves its Fleet, Control and Runtime APIs on one
  address), with TLS, SuperNode authentication against registered keys, and its state in an SQLite file
  (``--database``: registered nodes and runs survive a restart);
* ``python -m capefed.ops.gateway`` on the public address: the Fleet API alone (:mod:`capefed.ops.gateway`);
* the operator's ``flwr`` command talks to the SuperLink on 127.0.0.1 (:func:`connection_text`).

Every other party's host (a site, the helper):
* ``flower-supernode --isolation process`` (it starts no process of its own to answer a message) connecting to the
  gateway with the CA certificate and its registered key; its Runtime API on 127.0.0.1, its task requests
  (``AcquireTask``) signed with a shared secret only the worker holds;
* ``python -m capefed.ops.worker``: answers with the installed, reviewed capefed (:mod:`capefed.ops.worker`).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from .opsfiles import write_private

__all__ = ["LOOPBACK", "Tls", "connection_text", "gateway_command", "register_command", "superlink_command",
           "supernode_command", "worker_command", "write_secret"]

LOOPBACK = "127.0.0.1"
SECRET_BYTES = 32
"""Length of a SuperNode's task-request secret (``--superexec-auth-secret-file``)."""


@dataclass(frozen=True, kw_only=True)
class Tls:
    """The CA certificate every party trusts, and the SuperLink's certificate (for its public name or address and
    127.0.0.1) and key."""

    ca: Path
    certificate: Path
    key: Path


def superlink_command(bin_dir: Path, *, port: int, tls: Tls | None, database: Path | None) -> list[str]:
    """The SuperLink on 127.0.0.1:``port``: TLS and SuperNode authentication (``tls``; None: insecure, loopback
    demonstrations only), state in ``database`` (None: in memory), no dependency installation at run time."""
    security = ["--insecure"] if tls is None else [
        "--ssl-ca-certfile", str(tls.ca), "--ssl-certfile", str(tls.certificate), "--ssl-keyfile", str(tls.key),
        "--enable-supernode-auth"]
    state = [] if database is None else ["--database", str(database)]
    return [str(bin_dir / "flower-superlink"), *security, *state, "--disable-runtime-dependency-installation",
            "--host", LOOPBACK, "--port", str(port)]


def gateway_command(python: str, *, listen: str, upstream_port: int, tls: Tls) -> list[str]:
    """The gateway on the public ``listen`` address (host:port), forwarding the Fleet API to the SuperLink."""
    return [python, "-m", "capefed.ops.gateway", "--listen", listen, "--upstream", f"{LOOPBACK}:{upstream_port}",
            "--ssl-certfile", str(tls.certificate), "--ssl-keyfile", str(tls.key), "--ssl-ca-certfile", str(tls.ca)]


def supernode_command(bin_dir: Path, *, superlink: str, runtime_port: int, node_config: str,
                      ca: Path | None = None, node_key: Path | None = None, secret_file: Path | None = None,
                      worker: bool = True, python: str | None = None) -> list[str]:
    """A SuperNode connecting to ``superlink`` (the gateway's host:port) with the CA certificate and its registered
    key (both None: insecure, loopback only); with ``worker`` it leaves the answering to :func:`worker_command`;
    with ``python`` it is ``python -m capefed.ops.supernode`` (Flower's SuperNode with a 0.5 s idle wait and a 10 s
    heartbeat: :mod:`capefed.ops.supernode`), else ``flower-supernode``."""
    security = ["--insecure"] if ca is None else ["--root-certificates", str(ca)]
    if node_key is not None:
        security += ["--auth-supernode-private-key", str(node_key)]
    isolation = ["--isolation", "process"] if worker else []
    secret = [] if secret_file is None or not worker else ["--superexec-auth-secret-file", str(secret_file)]
    program = [str(bin_dir / "flower-supernode")] if python is None else [python, "-m", "capefed.ops.supernode"]
    return [*program, *security, *isolation, *secret, "--superlink", superlink,
            "--host", LOOPBACK, "--port", str(runtime_port), "--node-config", node_config]


def worker_command(python: str, *, runtime_port: int, secret_file: Path | None = None) -> list[str]:
    """The node's long-running ClientApp process (:mod:`capefed.ops.worker`)."""
    secret = [] if secret_file is None else ["--secret-file", str(secret_file)]
    return [python, "-m", "capefed.ops.worker", "--runtime", f"{LOOPBACK}:{runtime_port}", *secret]


def register_command(bin_dir: Path, *, public_key: Path, connection: str, name: str) -> list[str]:
    """The operator registers a node's public key (only registered SuperNodes may connect)."""
    return [str(bin_dir / "flwr"), "supernode", "register", str(public_key), connection, "--name", name]


def connection_text(name: str, address: str, ca: Path | None) -> str:
    """The operator's ``$FLWR_HOME/config.toml``: connection ``name`` to the SuperLink at ``address`` (on the
    aggregator's host: 127.0.0.1 and the SuperLink's port)."""
    trust = "insecure = true" if ca is None else f"root-certificates = {json.dumps(str(ca))}"
    return f'[superlink]\ndefault = "{name}"\n\n[superlink.{name}]\naddress = "{address}"\n{trust}\n'


def write_secret(path: Path) -> Path:
    """A fresh random task-request secret, readable by its owner only (from the moment the file exists)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_private(path, secrets.token_bytes(SECRET_BYTES), None, replace=True)
