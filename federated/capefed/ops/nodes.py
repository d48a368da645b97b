"""The aggregator's operator and the SuperLink's nodes (docs/federated.md, "Deploying it", step 4):

    python -m capefed.ops.nodes connect consortium --ca /etc/capefed/ca.crt       # $FLWR_HOME/config.toml
    python -m capefed.ops.nodes register consortium north /etc/capefed/nodes/north.pub
    python -m capefed.ops.nodes list consortium

``connect`` writes the operator's Flower configuration: the connection ``consortium`` to the SuperLink on
127.0.0.1:9092 with the CA certificate (the Control API is reachable only there). ``register`` is ``flwr supernode
register KEY consortium --name north``: only registered SuperNodes may connect; it waits (at most
SUPERLINK_WAIT_SECONDS) for the SuperLink to accept connections, since ``systemctl enable --now`` returns before the
SuperLink listens. Flower 1.41's ``flwr supernode list``
shows node ids and the owner, not the names given at registration: ``list`` asks the SuperLink's Control API the same
question (``ListNodes``) and prints every node's name, status, id and since when, so which site is online is visible
by name.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from .deployment import connection_text
from .opsfiles import CommandError, run_command
from .procgroup import port_open

__all__ = ["SUPERLINK_WAIT_SECONDS", "list_nodes", "main", "wait_for_superlink"]

SUPERLINK_WAIT_SECONDS = 60.0
"""How long ``register`` waits for the connection's SuperLink to accept connections before it gives up."""


def wait_for_superlink(connection: str, seconds: float = SUPERLINK_WAIT_SECONDS) -> None:
    """Return once the SuperLink of ``connection`` (its Control API address) accepts TCP connections; CommandError,
    naming the address, after ``seconds``."""
    from flwr.cli.flower_config import read_superlink_connection  # noqa: PLC0415

    address = read_superlink_connection(connection).address or ""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise CommandError(f"the connection {connection!r} has no host:port address ({address!r})")
    deadline = time.monotonic() + seconds
    while not port_open(int(port), host.strip("[]")):
        if time.monotonic() > deadline:
            raise CommandError(f"the SuperLink at {address} did not accept connections within {seconds:.0f} s; "
                               "is capefed-superlink running? (journalctl -u capefed-superlink)")
        time.sleep(0.5)


def list_nodes(connection: str) -> list[tuple[int, str, str, str]]:
    """(node id, name, status, since) of every node the SuperLink knows (pinned Flower's Control API)."""
    from flwr.cli.flower_config import read_superlink_connection  # noqa: PLC0415
    from flwr.cli.utils import init_http_client_from_connection  # noqa: PLC0415
    from flwr.proto.control_pb2 import ListNodesRequest  # noqa: PLC0415

    client = init_http_client_from_connection(read_superlink_connection(connection))
    try:
        nodes = client.ListNodes(ListNodesRequest()).nodes_info
    finally:
        client.close()
    return [(n.node_id, n.name or "(no name)", n.status,
             n.last_activated_at if n.status == "online" else n.last_deactivated_at or n.registered_at)
            for n in nodes]


def _config_file() -> Path:
    home = os.environ.get("FLWR_HOME") or str(Path.home() / ".flwr")
    return Path(home) / "config.toml"


def connect(name: str, address: str, ca: str | None) -> Path:
    """The operator's connection ``name`` in ``$FLWR_HOME/config.toml`` (made when missing; an existing file is
    left only if it says the same)."""
    path, text = _config_file(), connection_text(name, address, None if ca is None else Path(ca))
    if path.exists():
        if path.read_text() != text:
            raise CommandError(f"{path} exists with another configuration; move it away first")
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.ops.nodes", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    link = commands.add_parser("connect", help="the operator's connection to the SuperLink")
    link.add_argument("connection")
    link.add_argument("--address", default="127.0.0.1:9092", help="the SuperLink (default: %(default)s)")
    link.add_argument("--ca", help="the CA certificate (without: insecure, a loopback demonstration only)")
    register = commands.add_parser("register", help="register a node's public key under its name")
    register.add_argument("connection")
    register.add_argument("name")
    register.add_argument("public_key")
    listing = commands.add_parser("list", help="every node by name, with its status")
    listing.add_argument("connection")
    args = parser.parse_args(argv)

    def run() -> int:
        if args.command == "connect":
            print(f"wrote {connect(args.connection, args.address, args.ca)}")
            return 0
        if args.command == "register":
            wait_for_superlink(args.connection)
            flwr = str(Path(sys.executable).parent / "flwr")
            done = subprocess.run([flwr, "supernode", "register", args.public_key, args.connection, "--name",
                                   args.name], capture_output=True, text=True, timeout=120)
            if done.returncode != 0:
                raise CommandError(f"flwr supernode register failed: {(done.stdout + done.stderr).strip()[-500:]}")
            print(f"registered {args.name} ({args.public_key})")
            return 0
        rows = list_nodes(args.connection)
        for node_id, name, status, since in sorted(rows, key=lambda r: r[1]):
            print(f"{name:<16} {status:<12} node {node_id} (since {since or 'registration'})")
        return 0

    return run_command("capefed.ops.nodes", run)


if __name__ == "__main__":
    raise SystemExit(main())
