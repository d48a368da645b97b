"""Attacks on a drop-out round with every party a real process on loopback (issue 30): one federation (a SuperLink,
the helper and three sites, each site's worker under its supervisor) and one run per attack. The aggregator is made
malicious, or a site faulty, by test-only fault injection outside the production code: ``tests/attacks`` is first on
the ``PYTHONPATH`` of these processes only, with ``CAPEFED_ATTACK_FILE`` naming the control file each test writes;
its ``sitecustomize`` patches the ServerApp's transport (or a site's release and set-up) as the control file says
(tests/attacks/capefed_attacks.py) and records everything the aggregator's process sends and receives.

Each test ends with the round released correctly or stopped, and computes from that record (tests/federated_views.py:
which releases can be unmasked, which noise terms are known) every site's exact eps against the aggregator by Gaussian
conditioning, and finds it within the promise. In-process versions of every attack, with more variants, are in
tests/test_federated_dropouts.py."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import pickle
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from capefed.app.rounds import settings_from_run_config
from capefed.ops.demo import another_study, prepare_demo, simulate
from capefed.ops.federation import Federation, tagged_processes
from federated_views import held_from_exchanges, knowledge, ledger_problems, site_ledger, worst

from dpcore.federation import RoundAccount, SiteBudget, plan_round, round_accounts

pytestmark = pytest.mark.federated

ATTACKS = Path(__file__).resolve().parent / "attacks"
RUN_TIMEOUT = 300.0
RECOVERY_LIMIT = 180.0
"""Seconds a site whose worker died is given to be ready again (its worker started anew and every message its
SuperNode took answered or dropped); it needs about 20 s (the dead worker's claim lapsing) plus a worker's start-up."""
SETTLED = ("Sent successfully", "Ignoring reply message", "Failed to send message", "Ignoring message",
           "Failed to receive message")
"""The lines of a SuperNode's log that end its handling of a message it received ("Receiving: ...")."""


@dataclass
class Lab:
    root: Path
    demo: Any
    federation: Federation
    control: Path
    runs: Any

    def run(self, aggregator: dict[str, Any] | None = None, sites: dict[str, Any] | None = None,
            **config: Any) -> dict[str, Any]:
        """One run of the app under the given attack; returns its outcome, the aggregator's record and more."""
        number = next(self.runs)
        dump = self.root / f"dump-{number}.pkl"
        aggregator = dict(aggregator or {"attack": "honest"}, dump=str(dump))
        self.control.write_text(json.dumps({"aggregator": aggregator, "sites": sites or {}}))
        out = self.root / f"outcome-{number}.json"
        # a generous grace: on a loaded machine an honest site may answer seconds after the others, and these tests
        # are about what the aggregator learns, not about how fast it gives up on a site (bench_federated.py is)
        run_config = dict(self.demo.run_config, algorithms="capePCA", run=number, out=str(out), timeout=60.0,
                          grace=8.0) | config
        start = time.monotonic()
        self.federation.run_app(run_config, RUN_TIMEOUT)
        seconds = time.monotonic() - start
        self.control.write_text("{}")
        (outcome,) = json.loads(out.read_text())["rounds"]
        record = pickle.loads(dump.read_bytes())
        plan = None
        if outcome["plan"]:
            settings = settings_from_run_config(run_config, outcome["algorithm"], "check")
            plan = plan_round([SiteBudget.from_dict(b) for b in outcome["plan"]["sites"]], settings.round)
        round_id = next((i["request"]["config"]["round"] for i in record["items"] if i["action"] == "setup"), None)
        return {"outcome": outcome, "record": record, "plan": plan, "round": round_id, "seconds": seconds,
                "config": run_config, "nodes": self.demo.nodes}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("attacks")
    demo = prepare_demo(root / "data", noise="helper-free", dropouts=1, ledger_rounds=1000)
    control = root / "control.json"
    control.write_text("{}")
    federation = Federation(root, demo.nodes)
    base_env = federation.env

    def env(home: Path) -> dict[str, str]:
        out = base_env(home)
        out["PYTHONPATH"] = os.pathsep.join([str(ATTACKS), out["PYTHONPATH"]])
        out["CAPEFED_ATTACK_FILE"] = str(control)
        return out

    federation.env = env
    with contextlib.ExitStack() as stack:
        stack.callback(federation.stop)
        federation.start()
        yield Lab(root, demo, federation, control, itertools.count(100))
    assert tagged_processes(federation.tag) == []


def _within_promise(result: dict[str, Any]) -> list[tuple[str, str, float, float]]:
    """Every site's exact eps against everything the aggregator's process held; each must keep its promise."""
    held = held_from_exchanges(result["record"]["items"], result["plan"])
    know = knowledge(held, result["plan"], result["round"])
    rows = worst(result["plan"], know)
    for stage, site, eps, promise in rows:
        assert eps <= promise * (1 + 1e-9), (stage, site, eps, promise, know[stage])
    ledgers = {n["name"]: site_ledger(n)
               for n in result["nodes"] if n.get("role") == "site"}
    assert ledger_problems(result["plan"], rows, result["round"], ledgers) == []  # the ledgers tell the truth
    return rows


def _eps(rows, site: str, stage: str = "A") -> float:
    return next(eps for s, n, eps, _ in rows if s == stage and n == site)


def _released_without(lab: Lab, result: dict[str, Any], victim: str) -> None:
    """The round released without ``victim``, exactly what the in-process run of the same round computes."""
    outcome = result["outcome"]
    assert outcome["status"] == "released", outcome["reason"]
    assert outcome["dropped"] == [victim] and victim not in outcome["took_part"]
    settings = settings_from_run_config(result["config"], outcome["algorithm"], "simulation")
    simulated = simulate(lab.demo.nodes, settings, dropped=(victim,))
    for stage, aggregate in outcome["aggregates"].items():
        assert np.array_equal(np.asarray(aggregate), simulated.aggregates[stage]), stage


def _replies(result: dict[str, Any], action: str, site: str) -> list[dict[str, Any]]:
    return [i["reply"]["config"] for i in result["record"]["items"]
            if i["action"] == action and i["site"] == site and i["reply"] is not None]


def _account(lab: Lab, site: str, round_id: str) -> RoundAccount:
    """The round as the site's ledger holds it (reserved at set-up, spent stages, settled)."""
    return round_accounts(site_ledger(next(n for n in lab.demo.nodes if n.get("name") == site)))[round_id]


def test_a_false_claim_after_a_release_never_unmasks_it(lab):
    result = lab.run({"attack": "false-claim-after", "victim": "east"})
    _released_without(lab, result, "east")
    held = [i for i in result["record"]["items"] if i["action"] == "release" and i["site"] == "east"]
    assert held and held[0]["reply"]["arrays"]["masked"].dtype == np.uint64  # the aggregator holds it, masked
    rows = _within_promise(result)
    assert _eps(rows, "east") == 0.0  # its self-mask seed never rebuilt: nothing of east's statistic is known
    # east reserved the round, released it masked and never signed a survivor set holding itself: its stage is void
    account = _account(lab, "east", result["round"])
    assert account.settled and account.spent == () and account.void == ("A",)


def test_a_false_claim_after_a_release_with_a_helper(lab):
    # a study fixes every round setting (a run configuration's noise is not read): a helper study the sites approved
    helper = another_study(lab.demo, "helper-study", 10, noise="helper")
    result = lab.run({"attack": "false-claim-after", "victim": "east"}, noise="helper", study=helper["study"])
    assert result["plan"].settings.noise == "helper"
    _released_without(lab, result, "east")
    recovered = _replies(result, "recover", "helper")
    assert recovered and recovered[0]["dropped"] == ["east"]  # the helper revealed e_east: east is excluded
    assert _eps(_within_promise(result), "east") == 0.0


def test_a_false_claim_before_a_release(lab):
    result = lab.run({"attack": "false-claim-before", "victim": "east"})
    _released_without(lab, result, "east")
    assert _eps(_within_promise(result), "east") == 0.0
    account = _account(lab, "east", result["round"])  # never asked, never released: reserved, then void
    assert account.settled and account.spent == () and account.void == ("A",)


def test_a_held_back_request_answered_after_the_recovery_stays_masked(lab):
    result = lab.run({"attack": "held-back", "victim": "east"})
    _released_without(lab, result, "east")
    late = _replies(result, "release", "east")
    assert late and late[0]["status"] == "ok"  # east answered the held-back request, masked
    for site in ("north", "south"):
        confirms = _replies(result, "confirm", site)
        assert confirms[-1]["status"] == "refused" and "already signed another survivor set" in confirms[-1]["reason"]
    assert all(r["status"] == "refused" for r in _replies(result, "reveal", "east"))
    assert _eps(_within_promise(result), "east") == 0.0


def test_one_claim_per_site_in_one_round(lab):
    result = lab.run({"attack": "second-claim", "victim": "east", "second": "north"})
    _released_without(lab, result, "east")
    south = _replies(result, "confirm", "south")
    assert south[-1]["status"] == "refused" and "already signed another survivor set" in south[-1]["reason"]
    rows = _within_promise(result)
    assert _eps(rows, "east") == 0.0 and 0 < _eps(rows, "north") <= 1.0


def test_two_survivor_sets_shown_to_two_halves_of_the_sites(lab):
    result = lab.run({"attack": "two-sets", "group_a": ["east", "north"], "set_a": ["east", "north"],
                      "set_b": ["north", "south"]})
    outcome = result["outcome"]
    assert outcome["status"] == "stopped" and outcome["aggregates"] == {}
    south = _replies(result, "reveal", "south")
    assert south and south[0]["status"] == "refused" and "signature over the survivor set" in south[0]["reason"]
    rows = _within_promise(result)
    assert _eps(rows, "south") == 0.0  # the set east and north signed excludes south: never unmasked


@pytest.mark.parametrize(("changes", "words"), [
    ({"split": 0.9}, "outside the study it signed"),  # a setting the study fixes: the victim's study check
    ({"run": 7}, "another plan"),  # within the study (the run number): the plan bound at set-up
])
def test_capeagn_equivocation_is_refused(lab, changes, words):
    result = lab.run({"attack": "equivocate", "victim": "south", "changes": changes}, algorithms="capeAGN")
    outcome = result["outcome"]
    assert outcome["status"] == "stopped" and outcome["aggregates"] == {} and outcome["outputs"] == {}
    assert words in outcome["reason"], outcome["reason"]
    assert all(eps == 0.0 for _, _, eps, _ in _within_promise(result))  # nothing was unmasked


def test_a_1e300_release_is_refused(lab):
    result = lab.run(sites={"east": {"fault": "range", "value": 1e300}})
    outcome = result["outcome"]
    assert outcome["status"] == "stopped" and outcome["sites"] == ["east"] and outcome["aggregates"] == {}
    assert "site east's release is refused" in outcome["reason"] and "outside" in outcome["reason"]
    _within_promise(result)


def test_an_honest_aggregator_and_a_slow_site(lab):
    """east answers its release request 30 s late; the aggregator drops it after its grace (never waiting for
    Flower), the round completes without it, and the late release, kept by the aggregator, is never unmasked; the
    outcome names only east."""
    result = lab.run({"attack": "honest", "late_wait": 60.0}, sites={"east": {"fault": "slow", "seconds": 30}})
    _released_without(lab, result, "east")
    outcome = result["outcome"]
    assert outcome["sites"] == [] and len(outcome["notes"]) == 1 and "site east did not answer" in outcome["notes"][0]
    late = [(i["site"], i["action"], i["reply"]["config"]["status"]) for i in result["record"]["items"] if i["late"]]
    # east's release came late; besides it at most east's answer to the round's end, which every site is sent and
    # east answers after its slow release (nothing late of a confirm, reveal or recover); the two late replies may
    # reach the aggregator's host in either order
    assert sorted(late) in ([("east", "release", "ok")], [("east", "release", "ok"), ("east", "result", "ok")]), late
    assert _eps(_within_promise(result), "east") == 0.0
    assert _account(lab, "east", result["round"]).spent == ()  # reserved; never signed for: void once settled


def _recovered(lab: Lab, site: str) -> float:
    """Wait until ``site``'s worker, killed once more than it was started anew, is ready again, and its SuperNode has
    answered or dropped every message it took (none left waiting for the dead worker); returns the seconds waited.
    Fails after RECOVERY_LIMIT naming what did not happen."""
    logs = lab.root / "logs"
    start = time.monotonic()
    while True:
        worker = (logs / f"{site}-worker.log").read_text(errors="replace")
        node = (logs / f"{site}.log").read_text(errors="replace")
        deaths, ready = worker.count("starting it again"), worker.count("worker ready")
        taken, settled = node.count("Receiving:"), sum(node.count(line) for line in SETTLED)
        if deaths and ready > deaths and settled >= taken:
            return time.monotonic() - start
        if time.monotonic() - start > RECOVERY_LIMIT:
            raise AssertionError(
                f"{site} did not recover within {RECOVERY_LIMIT:g} s: its worker died {deaths} time(s) and was ready "
                f"{ready} time(s) (one more than it died when recovered); its SuperNode took {taken} message(s) and "
                f"finished with {settled}. The SuperNode's last lines:\n{node[-1500:]}")
        time.sleep(0.5)


def _answers_again(lab: Lab, site: str) -> None:
    seconds = _recovered(lab, site)
    again = lab.run()  # the site answers again: its worker was started anew by its supervisor
    assert again["outcome"]["status"] == "released" and site in again["outcome"]["took_part"], (seconds, again)
    assert not any(f"site {site}" in note for note in again["outcome"]["notes"])


@pytest.mark.parametrize("fault, log_line", [
    ("die", None),
    # killed after it handed its release's reply to its SuperNode and before the reply's contents: Flower 1.41's
    # SuperNode waited for those contents forever and answered nothing else (capefed.ops.supernode drops the reply
    # once no worker holds a task)
    ("die-pushing", "never arrived: its worker ended without them")], ids=["mid_reply", "while_handing_over"])
def test_a_worker_killed_recovers_by_itself(lab, fault, log_line):
    """east's worker is killed (SIGKILL) inside a task: the round goes on without east, within every promise, and
    east answers the next run, its worker started anew by its supervisor."""
    marker = lab.root / f"east-{fault}"
    result = lab.run(sites={"east": {"fault": fault, "marker": str(marker)}})
    assert marker.exists()
    _released_without(lab, result, "east")
    _within_promise(result)
    _answers_again(lab, "east")
    if log_line is not None:
        assert log_line in (lab.root / "logs" / "east.log").read_text()


def test_a_time_limit_of_30_s_ends_the_step_in_about_30_s(lab):
    result = lab.run(sites={"east": {"fault": "slow-setup", "seconds": 45}}, timeout=30.0)
    outcome = result["outcome"]
    assert outcome["status"] == "stopped" and outcome["sites"] == ["east"]
    assert "site east did not answer its set-up request within 30 s" in outcome["reason"]
    setup = [e["seconds"] for e in outcome["exchanges"] if e["action"] == "setup"]
    assert setup and 30.0 <= setup[0] <= 36.0, setup
    print(f"round {outcome['seconds']:.1f} s, set-up step {setup[0]:.1f} s, run {result['seconds']:.1f} s")
