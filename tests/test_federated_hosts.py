"""Three institutions on three hosts, end to end (issue 23): each host is a network namespace of this machine
(``ip netns`` and veth pairs on a bridge, addresses 198.18.0.1-3 of the benchmarking range RFC 2544 sets aside,
never routed), with its own loopback. Where namespaces cannot be made (not root, no CAP_NET_ADMIN) the hosts are
the loopback addresses 127.0.0.2-4 instead, which share one loopback (weaker: there the SuperLink's own port is
reachable from the other "hosts"); the test prints which set-up ran.

Host A (the coordinating institution): the SuperLink on its 127.0.0.1 with TLS, SuperNode authentication and its
state in a database, the Fleet-only gateway on 198.18.0.1, the operator's commands, and site north. Host B: site
east. Host C: site south, and a stranger's SuperNode whose key was never registered. One helper-free capePCA round
(no helper: three parties, three hosts): released, identical to the in-process run, ``finished:completed``; the
stranger's node refused; from host B, ``flwr ls`` with the CA certificate refused and the SuperLink's own port
closed; the aggregator's message log (written by the ServerApp itself) reads back."""

from __future__ import annotations

import contextlib
import json
import secrets
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest
from capefed.app.messages import read_log
from capefed.app.rounds import settings_from_run_config
from capefed.ops.certificates import make_security_files
from capefed.ops.demo import prepare_demo, simulate
from capefed.ops.deployment import connection_text, supernode_command
from capefed.ops.federation import Federation, _free_port, _port_open, tagged_processes
from test_page_protocol_deployment import show_deployment_log

pytestmark = pytest.mark.federated

RUN_TIMEOUT = 300.0
SUBNET = "198.18.0"


@dataclass(frozen=True)
class Hosts:
    kind: str  # "network namespaces" or "loopback addresses"
    addresses: dict[str, str]  # host -> its address
    namespaces: dict[str, str]  # host -> namespace ("" with loopback addresses)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@contextlib.contextmanager
def three_hosts(hosts: str = "abc") -> Iterator[Hosts]:
    """Hosts a, b, c (or one per letter of ``hosts``) on one bridge (namespaces), deleted on exit; loopback addresses
    where that fails."""
    tag = secrets.token_hex(3)
    switch = f"cf{tag}-sw"
    names = {h: f"cf{tag}-{h}" for h in hosts}
    made: list[str] = []
    try:
        try:
            for ns in (switch, *names.values()):
                _ip("netns", "add", ns)
                made.append(ns)
        except (subprocess.CalledProcessError, FileNotFoundError, PermissionError):
            for ns in made:
                subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
            made.clear()
            yield Hosts("loopback addresses", {h: f"127.0.0.{i}" for i, h in enumerate(hosts, start=2)},
                        dict.fromkeys(hosts, ""))
            return
        _ip("-n", switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", switch, "link", "set", "br0", "up")
        addresses = {}
        for i, (host, ns) in enumerate(names.items(), start=1):
            inside, port = f"cf{tag}{host}0", f"cf{tag}{host}1"
            _ip("link", "add", inside, "netns", ns, "type", "veth", "peer", "name", port, "netns", switch)
            _ip("-n", switch, "link", "set", port, "master", "br0")
            _ip("-n", switch, "link", "set", port, "up")
            addresses[host] = f"{SUBNET}.{i}"
            _ip("-n", ns, "addr", "add", f"{addresses[host]}/24", "dev", inside)
            _ip("-n", ns, "link", "set", inside, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield Hosts("network namespaces", addresses, names)
    finally:
        for ns in reversed(made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


def _in(hosts: Hosts, host: str, command: list[str]) -> list[str]:
    namespace = hosts.namespaces[host]
    return ["ip", "netns", "exec", namespace, *command] if namespace else command


@pytest.mark.timeout(2 * RUN_TIMEOUT)
def test_three_hosts_with_tls_and_registered_keys_run_a_round_and_refuse_a_stranger(tmp_path, monkeypatch):
    demo = prepare_demo(tmp_path / "data", noise="helper-free")
    sites = [n for n in demo.nodes if n["role"] == "site"]
    placement = dict(zip([str(n["name"]) for n in sites], "abc", strict=True))
    with three_hosts() as hosts:
        print(f"three hosts as {hosts.kind}: {hosts.addresses}")
        link_host = hosts.addresses["a"]
        security = make_security_files(tmp_path / "security", [*placement, "stranger"], host=link_host)
        # site south makes its key as docs/federated.md tells a site to: ssh-keygen
        south_key = tmp_path / "security" / "south-ssh"
        subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-b", "384", "-N", "", "-C", "south", "-f", str(south_key)],
                       check=True, capture_output=True, timeout=60)
        security.node_keys["south"] = (south_key, south_key.with_suffix(".pub"))
        namespaces = {"superlink": hosts.namespaces["a"], "gateway": hosts.namespaces["a"],
                      "stranger": hosts.namespaces["c"],
                      **{name: hosts.namespaces[host] for name, host in placement.items()}}
        federation = Federation(tmp_path, sites, security=security, link_host=link_host, namespaces=namespaces)
        with contextlib.ExitStack() as stack:
            stack.callback(federation.stop)
            federation.start()
            assert federation.fleet_address.startswith(f"{link_host}:")

            # from host B: the SuperLink's own port is closed, the gateway refuses the Control API
            assert not _port_open(federation.superlink_port, link_host, hosts.namespaces["b"]) or \
                hosts.kind == "loopback addresses"
            home = tmp_path / "homes" / "stranger-cli"
            home.mkdir(parents=True)
            (home / "config.toml").write_text(connection_text("outside", federation.fleet_address,
                                                              security.ca_certificate))
            listed = subprocess.run(_in(hosts, "b", [str(federation.bin_dir / "flwr"), "ls", "outside"]),
                                    env=federation.env(home), capture_output=True, text=True, timeout=120)
            assert listed.returncode != 0 and "404" in listed.stdout + listed.stderr

            # from host C: a SuperNode whose key the operator never registered
            stranger = federation._start("stranger", supernode_command(
                federation.bin_dir, superlink=federation.fleet_address, runtime_port=_free_port(),
                node_config='role="site" name="stranger"', ca=security.ca_certificate,
                node_key=security.node_keys["stranger"][0], worker=False))
            assert stranger.wait(timeout=120) != 0

            out, log = tmp_path / "outcome.json", tmp_path / "aggregator-message-log.json"
            config = dict(demo.run_config, algorithms="capePCA", noise="helper-free", out=str(out), log=str(log))
            federation.run_app(config, RUN_TIMEOUT)
        assert tagged_processes(federation.tag) == []
    (outcome,) = json.loads(out.read_text())["rounds"]
    assert outcome["status"] == "released", outcome["reason"]
    assert federation.run_status == "finished:completed"
    assert outcome["took_part"] == sorted(placement)
    simulated = simulate(sites, settings_from_run_config(config, "capePCA", "simulation"))
    assert np.array_equal(np.asarray(outcome["aggregates"]["A"]), simulated.aggregates["A"])
    (logged,) = read_log(log).rounds  # written by the ServerApp on host A, every field checked
    assert logged.status == "released" and {e.sender for e in logged.entries} >= {f"site {s}" for s in placement}
    page = show_deployment_log(monkeypatch, log)  # the dashboard's Protocol page reads it
    assert any("capePCA: released" in s.value for s in page.success)
    frame = next(d.value for d in page.dataframe if "status" in d.value.columns)
    # the protocol of the helper-free variant: the sites, not a helper, produce each e_s (the secure sum); every
    # message of the run is the protocol's
    assert set(frame["status"]) == {"same"}, frame[frame["status"] != "same"]
    assert {s for s, c in zip(frame["from"], frame["carries"], strict=True) if c.startswith("e_")} == {"sites"}
    east = (tmp_path / "logs" / "east-worker.log").read_text()  # the site's own log, in words
    assert "checked its code package" in east and "site east: received a setup request" in east
    assert "site east: released its stage A statistic with its noise: 2,080 numbers" in east
    gateway_log = (tmp_path / "logs" / "gateway.log").read_text()
    if hosts.kind == "network namespaces":
        assert f"from {hosts.addresses['b']}" in gateway_log  # the refused Control API request came from host B
    assert "refused POST /v1/control/list-runs" in gateway_log
