"""Faults and attacks with every party a real process on loopback (Flower), capePCA rounds only, few runs:

* one federation (a SuperLink, the helper, three sites and a stranger's node that calls itself "north") and three
  runs: a dishonest aggregator (test-only fault injection, tests/attacks) that forges the helper's share in the
  capePCA round and weakens the design (tau_g,s^2 = 0) in the capeAGN round: both refused, naming the check, nothing
  released; an
  honest helper-free round: released with the three genuine sites, the stranger ignored, identical to the
  in-process run; the same round again: refused by site south's ledger;
* the launcher's drop-out demonstration (``--noise helper-free --drop east``): east is killed after the noise was
  set up, the round completes with north and south, the audit of what was released is printed.

The in-memory versions of every check (tests/test_federated_trust.py) cover the cases one by one."""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from capefed.app.rounds import settings_from_run_config
from capefed.app.studyfile import read_signed_study
from capefed.app.trust import make_identity
from capefed.ops.demo import LEDGER_DELTA, another_study, prepare_demo, simulate
from capefed.ops.federation import APP_DIR, REPO_DIR, Federation, tagged_processes
from federated_views import site_ledger

from dpcore.federation import composed_eps, create_ledger, read_ledger_key, round_accounts, update_ledger

pytestmark = pytest.mark.federated

RUN_TIMEOUT = 420.0

ATTACKS = Path(__file__).resolve().parent / "attacks"


def _with_attacks(federation: Federation, control: Path) -> None:
    """The aggregator of these processes made dishonest by the test-only fault injection of tests/attacks (the
    sites' code package is the reviewed one: their workers would refuse any other)."""
    base = federation.env

    def env(home: Path) -> dict[str, str]:
        out = base(home)
        out["PYTHONPATH"] = os.pathsep.join([str(ATTACKS), out["PYTHONPATH"]])
        out["CAPEFED_ATTACK_FILE"] = str(control)
        return out

    federation.env = env


def _rounds(path):
    return json.loads(path.read_text())["rounds"]


@pytest.mark.timeout(4 * RUN_TIMEOUT)
def test_attacks_strangers_and_ledgers_with_real_processes(tmp_path):
    demo = prepare_demo(tmp_path / "data", noise="helper-free")
    # a study fixes every round setting: the forged rounds run under a helper study every site approved as well
    helper = another_study(demo, "helper-study", 1, noise="helper")
    nodes = [dict(n) for n in demo.nodes]
    south = next(n for n in nodes if n["name"] == "south")
    _small_ledger(demo, south, tmp_path / "south-small.json", [helper["study"], demo.run_config["study"]])
    stranger = dict(next(n for n in nodes if n["name"] == "north"), identity=str(tmp_path / "stranger.key"),
                    ledger=str(tmp_path / "stranger-ledger.json"))
    make_identity(stranger["identity"])
    stranger["name"] = "north"
    out = tmp_path / "outcome.json"
    base = dict(demo.run_config, out=str(out), timeout=180.0)
    federation = Federation(tmp_path, [*nodes, stranger])
    control = tmp_path / "control.json"
    control.write_text(json.dumps({"aggregator": {"attack": "forge", "dump": str(tmp_path / "dump.pkl")}}))
    _with_attacks(federation, control)
    with contextlib.ExitStack() as stack:
        stack.callback(federation.stop)
        # the stranger's process needs a log and home of its own; its node configuration says "north"
        _start_with_names(federation, [str(n["name"]) for n in nodes] + ["stranger"])
        federation.run_app(dict(helper, out=str(out), timeout=180.0, algorithms="capePCA,capeAGN"), RUN_TIMEOUT)
        control.write_text("{}")
        pca, agn = _rounds(out)
        assert pca["plan"]["settings"]["noise"] == agn["plan"]["settings"]["noise"] == "helper"
        assert pca["status"] == agn["status"] == "stopped"
        assert "forged share" in pca["reason"] and agn["aggregates"] == {} and pca["aggregates"] == {}
        assert "weakened design" in agn["reason"]
        assert any("north" in line for line in pca["ignored"])  # the stranger answered and was ignored
        # both rounds reserved south's budget at set-up and were settled void (nothing signed, nothing revealed)
        forged = list(round_accounts(site_ledger(south)).values())
        assert [(a.algorithm, a.settled, a.spent) for a in forged] == [("capePCA", True, ()), ("capeAGN", True, ())]
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


def _small_ledger(demo, south, path, studies) -> None:
    """South's ledger made for the forged run's reservations held at once (capePCA's and capeAGN's worst-case costs,
    then void) and so for one honest capePCA round but not two (sqrt(2) mu_A exceeds it); its approvals of the
    studies recorded as they are (neither study as a whole fits, which approving refuses: the ledger's own refusal is
    under test)."""
    forged, honest = (read_signed_study(s).study for s in studies)
    costs = [c.mu for c in forged.costs("south")]
    (pca,) = [c.mu for c in honest.costs("south") if c.algorithm == "capePCA"]
    assert pca <= math.hypot(*costs) < math.sqrt(2) * pca
    key, total = read_ledger_key(south["ledger-key"]), composed_eps(costs, LEDGER_DELTA) * (1 + 1e-9)
    south.update({"ledger": str(path), "budget-eps": total, "budget-delta": LEDGER_DELTA})
    create_ledger(path, key, "south", total, LEDGER_DELTA)
    for signed in studies:
        study = read_signed_study(signed).study
        update_ledger(path, key, "south", lambda _, study=study: [("approve", {
            "study": study.digest, "title": study.title, "rounds": study.rounds, "mu": study.total_mu("south")})])


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
        [sys.executable, "-m", "capefed.ops.launch", "--workdir", str(tmp_path), "--tag", tag, "--noise", "helper-free",
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
    # killed once the aggregator asked it to release (capefed.ops.dropout's signal): after the noise was set up
    assert (tmp_path / "dropout" / "east.asked-to-release").read_text() == "asked to release\n"
    assert "audit of what was released" in output and "identical to the in-process run" in output
