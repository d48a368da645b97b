"""Issue 31: a site answers only rounds of a study it signed, and only within it (in memory: the aggregator's round
driver and three sites; the real-process version, a study whose digest differs, is in
tests/test_federated_consortium.py). Each refusal names the check; nothing is released and no ledger records
anything for the refused round."""

from __future__ import annotations

import dataclasses
import json

import pytest
from capefed.app import dp
from capefed.app.rounds import run_round, settings_from_run_config
from capefed.app.trust import approval_signature, load_identity
from capefed.ops.demo import fresh_ledgers, prepare_demo
from capefed.ops.memory import InMemoryTransport, party_node

STUDY_ROUNDS = 2


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return prepare_demo(tmp_path_factory.mktemp("study-rounds") / "data", noise="helper-free", dropouts=0,
                        ledger_rounds=STUDY_ROUNDS)


def _run(demo, nodes, round_id, *, config=None, changes=None):
    transport = InMemoryTransport([party_node(n) for n in nodes])
    settings = settings_from_run_config(demo.run_config | (config or {}), "capePCA", round_id)
    if changes:
        settings = dataclasses.replace(settings, round=dataclasses.replace(settings.round, **changes))
    return run_round(transport, settings)


def _ledgers(nodes) -> dict[str, bytes]:
    return {n["name"]: open(n["ledger"], "rb").read() for n in nodes if n.get("role") == "site"}


def _refused(outcome, nodes, before, *words):
    assert outcome.status == "stopped", outcome.reason
    assert outcome.aggregates == {} and outcome.outputs == {}
    assert not [e for e in outcome.log if e.receiver == "everyone" or e.content.startswith("A_")]
    for word in words:
        assert word in outcome.reason, outcome.reason
    assert _ledgers(nodes) == before  # nothing reserved, spent or settled for it


def test_a_study_whose_digest_differs_from_the_signed_one_is_refused(demo, tmp_path):
    """The aggregator changes one field of the approved study (its data description) and keeps the sites'
    approvals."""
    nodes = fresh_ledgers(demo, tmp_path / "ledgers")
    doc = json.loads(open(demo.run_config["study"]).read())
    doc["study"]["algorithms"]["capePCA"]["data"] += " (and the aggregator's own reading of it)"
    altered = tmp_path / "altered.json"
    altered.write_text(json.dumps(doc))
    before = _ledgers(nodes)
    outcome = _run(demo, nodes, "study/altered", config={"study": str(altered)})
    altered_digest = dp.parse_study(json.dumps(doc["study"])).digest
    _refused(outcome, nodes, before, *(f"site {n}: it did not sign study {altered_digest[:16]}... " for n in
                                       ("north", "east", "south")), "any field changed has another digest")


def test_a_round_of_a_study_the_site_did_not_sign_is_refused(demo, tmp_path):
    """A second study, signed by every site's key (so every approval verifies), but north's ledger never recorded
    approving it (its data steward never ran ``capefed.ops.study approve``): north refuses."""
    nodes = fresh_ledgers(demo, tmp_path / "ledgers")
    doc = json.loads(open(demo.run_config["study"]).read())
    doc["study"]["title"] = "another study"
    study = dp.parse_study(json.dumps(doc["study"]))
    approvals = {}
    for node in nodes:
        if node.get("role") == "site":
            approvals[node["name"]] = approval_signature(load_identity(node["identity"]), study.digest, node["name"])
            if node["name"] != "north":
                dp.update_ledger(node["ledger"], dp.read_ledger_key(node["ledger-key"]), node["name"], lambda lg: [
                    dp.approve_event(lg, study.digest, study.title, study.rounds, study.total_mu(lg.site))])
    doc["approvals"] = {n: s.hex() for n, s in sorted(approvals.items())}
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    before = _ledgers(nodes)
    outcome = _run(demo, nodes, "study/unsigned", config={"study": str(other)})
    _refused(outcome, nodes, before, f"site north: it did not sign study {study.digest[:16]}")
    assert "site east" not in outcome.reason and "site south" not in outcome.reason


@pytest.mark.parametrize("changes, words", [
    ({"k": 3}, "k"), ({"neighbouring": "as-published"}, "neighbouring"), ({"calibration": "classic"}, "calibration")])
def test_a_round_outside_the_signed_study_is_refused(demo, tmp_path, changes, words):
    nodes = fresh_ledgers(demo, tmp_path / "ledgers")
    before = _ledgers(nodes)
    outcome = _run(demo, nodes, f"study/outside/{words}", changes=changes)
    _refused(outcome, nodes, before, "outside the study it signed", words)


def test_a_round_beyond_the_studys_rounds_is_refused(demo, tmp_path):
    nodes = fresh_ledgers(demo, tmp_path / "ledgers")
    for run in range(STUDY_ROUNDS):
        outcome = _run(demo, nodes, f"study/round/{run}", config={"run": run})
        assert outcome.status == "released", outcome.reason
    before = _ledgers(nodes)
    outcome = _run(demo, nodes, "study/round/extra", config={"run": STUDY_ROUNDS})
    _refused(outcome, nodes, before, f"round(s) of capePCA of this study, all it allows ({STUDY_ROUNDS})")
