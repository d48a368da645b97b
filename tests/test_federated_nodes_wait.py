"""``capefed.ops.nodes register`` waits for the SuperLink (``systemctl enable --now`` returns before it listens) and
gives up, naming the address, after its bound (federated/capefed/ops/nodes.py)."""

from __future__ import annotations

import socket
import threading

import pytest

pytest.importorskip("flwr")

from capefed.ops.nodes import connect, wait_for_superlink  # noqa: E402
from capefed.ops.opsfiles import CommandError  # noqa: E402
from capefed.ops.procgroup import free_port  # noqa: E402


@pytest.fixture
def connection(tmp_path, monkeypatch):
    monkeypatch.setenv("FLWR_HOME", str(tmp_path / "flwr"))
    port = free_port()
    connect("consortium", f"127.0.0.1:{port}", None)
    return port


def test_register_waits_until_the_superlink_listens(connection, monkeypatch):
    """The listener starts only after the wait's first probe found the port closed (an event, not a time); the wait
    then returns once it accepts."""
    import capefed.ops.nodes as nodes

    started, done = threading.Event(), threading.Event()
    probes: list[bool] = []
    real_probe = nodes.port_open

    def probe(port, host):
        probes.append(real_probe(port, host))
        started.set()
        return probes[-1]

    monkeypatch.setattr(nodes, "port_open", probe)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)

    def listen_later():
        started.wait()
        server.bind(("127.0.0.1", connection))
        server.listen()
        done.wait(120)

    thread = threading.Thread(target=listen_later, daemon=True)
    thread.start()
    try:
        wait_for_superlink("consortium", seconds=120)
        assert probes[0] is False and probes[-1] is True
    finally:
        done.set()
        thread.join(10)
        server.close()


def test_register_gives_up_naming_the_address(connection):
    with pytest.raises(CommandError, match=rf"127\.0\.0\.1:{connection} did not accept connections within 1 s"):
        wait_for_superlink("consortium", seconds=1)


def test_a_connection_without_a_port_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("FLWR_HOME", str(tmp_path / "flwr"))
    connect("consortium", "nowhere", None)
    with pytest.raises(CommandError, match="no host:port address"):
        wait_for_superlink("consortium")
