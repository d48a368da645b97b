"""Faults and attacks with every party a real process on loopback (Flower), capePCA rounds only, few runs:

* one federation (a SuperLink, the helper, three sites and a stranger's node that calls itself "north") and three
  runs: a dishonest aggregator (a ServerApp of this test) that forges the helper's share in the capePCA round and
  weakens the design (tau_g,s^2 = 0) in the capeAGN round: both refused, naming the check, nothing released; an
  honest helper-free round: released with the three genuine sites, the stranger ignored, identical to the
  in-process run; the same round again: refused by site south's ledger;
* the launcher's drop-out demonstration (``--noise helper-free --drop east``): east is killed after the noise was
  set up, the round completes with north and south, the audit of what was released is printed.

The in-memory versions of every check (tests/test_federated_trust.py) cover the cases one by one."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from capefed.demo import prepare_demo, simulate
from capefed.federation import APP_DIR, REPO_DIR, Federation, tagged_processes
from capefed.rounds import settings_from_run_config
from capefed.trust import make_identity

pytestmark = pytest.mark.federated

RUN_TIMEOUT = 420.0

ATTACK_APP = '''
"""A dishonest aggregator: the honest round, with its release requests altered on the way out."""
import json
from pathlib import Path

from capefed.messages import bundle, unbundle
from capefed.rounds import run_rounds, settings_from_run_config
from capefed.server_app import OUTCOME_FORMAT, FlowerTransport
from capefed.trust import sign
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flwr.serverapp import ServerApp

KEY = Ed25519PrivateKey.generate()


class Attacking(FlowerTransport):
    def exchange(self, action, requests, timeout):
        changed = {}
        for node, payload in requests.items():
            items = []
            for key, inner, item in unbundle(payload):
                if inner == "release" and item.config.get("algorithm") == "capePCA":
                    item.config["helper_signature"] = sign(KEY, "share", b"forged", item.config["sealed_e"])
                if inner == "release" and item.config.get("algorithm") == "capeAGN":
                    item.config["var_g"] = 0.0
                items.append((key, inner, item))
            changed[node] = bundle(items)
        return super().exchange(action, changed, timeout)


app = ServerApp()


@app.main()
def main(grid, context):
    config = dict(context.run_config)
    settings = [settings_from_run_config(config, a, f"{context.run_id}/{a}") for a in config["algorithms"].split(",")]
    rounds = [o.to_dict() for o in run_rounds(Attacking(grid, 0.2), settings)]
    Path(config["out"]).write_text(json.dumps({"format": OUTCOME_FORMAT, "rounds": rounds}))
'''


def _attack_app(tmp_path):
    folder = tmp_path / "attack-app"
    folder.mkdir()
    (folder / "attack_app.py").write_text(textwrap.dedent(ATTACK_APP))
    # the honest capefed sources ride along, so the sites' check of the code package (capefed.worker) passes: the
    # aggregator's operator controls the ServerApp it runs whatever package it uploads; the protocol's checks are
    # what this test is about
    shutil.copytree(APP_DIR / "capefed", folder / "capefed", ignore=shutil.ignore_patterns("__pycache__"))
    pyproject = (APP_DIR / "pyproject.toml").read_text().replace('serverapp = "capefed.server_app:app"',
                                                                 'serverapp = "attack_app:app"')
    (folder / "pyproject.toml").write_text(pyproject.replace('name = "capefed"', 'name = "capefedattack"'))
    return folder


def _rounds(path):
    return json.loads(path.read_text())["rounds"]


@pytest.mark.timeout(4 * RUN_TIMEOUT)
def test_attacks_strangers_and_ledgers_with_real_processes(tmp_path):
    demo = prepare_demo(tmp_path / "data", noise="helper-free")
    nodes = [dict(n) for n in demo.nodes]
    south = next(n for n in nodes if n["name"] == "south")
    south["budget-eps"] = south["eps"]  # room for one round of capePCA
    stranger = dict(next(n for n in nodes if n["name"] == "north"), identity=str(tmp_path / "stranger.key"),
                    ledger=str(tmp_path / "stranger-ledger.json"))
    make_identity(stranger["identity"])
    stranger["name"] = "north"
    out = tmp_path / "outcome.json"
    base = dict(demo.run_config, out=str(out), timeout=180.0)
    federation = Federation(tmp_path, [*nodes, stranger])
    with contextlib.ExitStack() as stack:
        stack.callback(federation.stop)
        # the stranger's process needs a log and home of its own; its node configuration says "north"
        _start_with_names(federation, [str(n["name"]) for n in nodes] + ["stranger"])
        federation.run_app(dict(base, noise="helper", algorithms="capePCA,capeAGN"), RUN_TIMEOUT,
                           app_dir=_attack_app(tmp_path))
        pca, agn = _rounds(out)
        assert pca["status"] == agn["status"] == "stopped"
        assert "forged share" in pca["reason"] and agn["aggregates"] == {} and pca["aggregates"] == {}
        assert "weakened design" in agn["reason"]
        assert any("north" in line for line in pca["ignored"])  # the stranger answered and was ignored
        federation.run_app(dict(base, algorithms="capePCA", run=1), RUN_TIMEOUT)
        (honest,) = _rounds(out)
        assert honest["status"] == "released", honest["reason"]
        assert honest["took_part"] == ["east", "north", "south"]
        assert any("north" in line for line in honest["ignored"])
        settings = settings_from_run_config(dict(base, run=1), "capePCA", "simulation")
        simulated = simulate(nodes, settings)
        assert np.array_equal(np.asarray(honest["aggregates"]["A"]), simulated.aggregates["A"])
        federation.run_app(dict(base, algorithms="capePCA", run=2), RUN_TIMEOUT)
        (refused,) = _rounds(out)
        assert refused["status"] == "stopped" and refused["aggregates"] == {}
        assert "site south" in refused["reason"] and "ledger refuses" in refused["reason"]
    assert tagged_processes(federation.tag) == []


def _start_with_names(federation, names):
    """Federation.start with process names of our choosing (two node configurations say "north")."""
    nodes, federation.nodes = list(federation.nodes), []
    federation.start()
    for name, config in zip(names, nodes, strict=True):
        federation.start_node(config, name=name)


@pytest.mark.timeout(RUN_TIMEOUT + 120)
def test_a_site_killed_after_the_noise_set_up_is_survived(tmp_path):
    tag = secrets.token_hex(12)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_DIR), str(APP_DIR)]))
    launcher = subprocess.Popen(
        [sys.executable, "-m", "capefed.launch", "--workdir", str(tmp_path), "--tag", tag, "--noise", "helper-free",
         "--drop", "east", "--algorithms", "capePCA", "--timeout", str(RUN_TIMEOUT)], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = launcher.communicate(timeout=RUN_TIMEOUT + 60)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                launcher.wait(timeout=15)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
        left = tagged_processes(tag)
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    print(output)
    assert left == []
    assert launcher.returncode == 0, output[-3000:]
    (outcome,) = _rounds(tmp_path / "outcome.json")
    assert outcome["status"] == "released" and outcome["dropped"] == ["east"]
    assert outcome["took_part"] == ["north", "south"]
    assert all(r["ok"] and "east" in r["coalition"] for r in outcome["audit"]["A"])
    assert "killed site east" in output and "sites that took part: north, south" in output
    assert "audit of what was released" in output and "identical to the in-process run" in output
