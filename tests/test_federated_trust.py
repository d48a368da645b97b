"""A round a consortium can trust, in memory (the real-process versions: tests/test_federated_faults.py): a
dishonest aggregator cannot weaken anyone's noise (forged shares, weakened designs, zeroed f), strangers' nodes are
ignored, every site keeps its own ledger, drop-outs are survived in both noise variants with the audit of what was
released, and every request a node receives is read or refused with a reason (Hypothesis)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from capefed.app.messages import bundle, unbundle
from capefed.app.node import answer
from capefed.app.rounds import run_round, run_rounds, settings_from_run_config
from capefed.app.site import SiteConfigError, read_bounded
from capefed.app.trust import make_identity, sign
from capefed.ops.demo import LEDGER_DELTA, fresh_ledgers, prepare_demo, simulate
from capefed.ops.memory import InMemoryTransport, party_node
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from federated_views import site_ledger
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_federated_rounds import Intercepting

from dpcore.federation import composed_eps, create_ledger, read_ledger_key, round_accounts, update_ledger


@pytest.fixture(scope="module", params=["helper", "helper-free"])
def demo(request, tmp_path_factory):
    return prepare_demo(tmp_path_factory.mktemp(f"trust-{request.param}") / "data", noise=request.param)


def _fresh(demo, tmp_path):
    """The demonstration's nodes with new ledgers of their own, enrolled in its study (each test spends its own
    budget)."""
    return fresh_ledgers(demo, tmp_path / "ledgers")


def _run(demo, nodes, algorithm="capePCA", config=None, transport=None, round_id=None, **hooks):
    transport = transport or Intercepting([party_node(n) for n in nodes], **hooks)
    run_config = demo.run_config | (config or {})
    round_id = round_id or f"trust/{algorithm}"
    return run_round(transport, settings_from_run_config(run_config, algorithm, round_id)), transport


def _nothing_released(outcome):
    assert outcome.status == "stopped", outcome.reason
    assert outcome.aggregates == {} and outcome.outputs == {}
    assert not [e for e in outcome.log if e.receiver == "everyone"]


def test_a_forged_share_is_refused(demo, tmp_path):
    stranger = Ed25519PrivateKey.generate()

    def forge(action, node, payload):
        if action == "release":
            if "sealed_e" in payload.config:  # the aggregator seals zeros itself and signs with its own key
                payload.config["helper_signature"] = sign(stranger, "share", b"x", payload.config["sealed_e"])
            else:
                payload.config["blob_signatures"] = [sign(stranger, "setup", b"x", b) for b in
                                                     payload.config["blobs"]]
        return payload

    outcome, _ = _run(demo, _fresh(demo, tmp_path), request=forge)
    _nothing_released(outcome)
    assert set(outcome.sites) == {"east", "north", "south"}
    assert "forged" in outcome.reason and "not signed by" in outcome.reason


@pytest.mark.parametrize("attack", ["var_g", "f"])
def test_a_weakened_design_is_refused(demo, tmp_path, attack):
    def weaken(action, node, payload):
        if action == "release" and attack == "var_g":
            payload.config["var_g"] = 0.0
        if action == "release" and attack == "f":
            payload.arrays["f"] = payload.arrays["f"] * 1e-6
        return payload

    outcome, _ = _run(demo, _fresh(demo, tmp_path), request=weaken)
    _nothing_released(outcome)
    words = "a weakened design" if attack == "var_g" else "sample variance"
    assert words in outcome.reason, outcome.reason


def test_the_helper_refuses_a_design_it_did_not_compute(demo, tmp_path):
    if demo.run_config["noise"] != "helper":
        pytest.skip("no helper in the helper-free variant")

    def scale(action, node, payload):
        if action == "shares":
            payload.arrays["mixing/A"] = payload.arrays["mixing/A"] * 1e-6
            payload.arrays["var_e/A"] = payload.arrays["var_e/A"] * 1e-12
        return payload

    outcome, transport = _run(demo, _fresh(demo, tmp_path), request=scale)
    _nothing_released(outcome)
    assert "requested mixing differs from the design of the plan the helper computed" in outcome.reason
    assert not [a for a, _, _ in transport.seen if a == "release"]


def test_the_helper_refuses_settings_that_break_a_sites_promise(demo, tmp_path):
    """The aggregator asks for a design against fewer colluders than a site requires: the site refuses."""
    nodes = _fresh(demo, tmp_path)
    next(n for n in nodes if n.get("name") == "south")["collusion"] = 2
    outcome, _ = _run(demo, nodes)
    _nothing_released(outcome)
    assert "site south" in outcome.reason and "requires at least 2" in outcome.reason


def test_a_strangers_node_is_ignored_and_cannot_take_a_sites_place(demo, tmp_path):
    nodes = _fresh(demo, tmp_path)
    north = next(n for n in nodes if n.get("name") == "north")
    impostor = dict(north, identity=str(tmp_path / "stranger.key"))
    make_identity(impostor["identity"])  # its own key, which the roster does not pin
    outcome, _ = _run(demo, [*nodes, impostor])
    assert outcome.status == "released", outcome.reason
    assert outcome.took_part == ("east", "north", "south")
    assert any("ignored" in line and "north" in line for line in outcome.ignored)
    # in place of an offline site it only stops the round, naming the failed check
    outcome, _ = _run(demo, [n for n in nodes if n is not north] + [impostor])
    _nothing_released(outcome)
    assert "not the one the roster pins for site north" in outcome.reason
    assert "expects 3 sites; 2 answered" in outcome.reason


def test_each_site_keeps_its_ledger_and_refuses_beyond_its_budget(demo, tmp_path):
    nodes = _fresh(demo, tmp_path)
    south = next(n for n in nodes if n.get("name") == "south")
    # south's ledger made for one capePCA round of the study (its approval recorded as it is: the study as a whole
    # would not fit, which approving refuses; here the ledger's own refusal is under test)
    (cost,) = [c.mu for c in demo.study.costs("south") if c.algorithm == "capePCA"]
    key, total = read_ledger_key(south["ledger-key"]), composed_eps([cost], LEDGER_DELTA) * (1 + 1e-9)
    south["ledger"] = str(tmp_path / "south-small.json")
    south.update({"budget-eps": total, "budget-delta": LEDGER_DELTA})
    create_ledger(south["ledger"], key, "south", total, LEDGER_DELTA)
    update_ledger(south["ledger"], key, "south", lambda _: [("approve", {
        "study": demo.study.digest, "title": "t", "rounds": demo.study.rounds, "mu": cost})])
    first, _ = _run(demo, nodes)
    assert first.status == "released", first.reason
    ledger = site_ledger(south)
    (account,) = round_accounts(ledger).values()
    assert account.spent == ("A",) and account.settled and [s.mu for s in account.stages] == [cost]
    before = open(south["ledger"], "rb").read()
    again, _ = _run(demo, nodes, config={"run": 1}, round_id="trust/second")
    _nothing_released(again)
    assert "site south" in again.reason and "ledger refuses" in again.reason
    assert open(south["ledger"], "rb").read() == before  # nothing recorded for a refused round
    replayed, _ = _run(demo, nodes)  # the first round's id again: no site answers a round twice
    _nothing_released(replayed)
    assert "round trust/capePCA is closed in its ledger" in replayed.reason


@pytest.mark.parametrize("algorithm", ["capePCA", "capeAGN"])
def test_a_site_that_vanishes_after_the_noise_set_up_is_survived(demo, tmp_path, algorithm):
    class Vanishing(InMemoryTransport):
        def __init__(self, nodes, victim):
            super().__init__(nodes)
            self.victim, self.gone = victim, False

        def exchange(self, action, requests, timeout, until=None):
            # gone from the first request to release on: after the noise was set up, before it released
            self.gone = self.gone or (self.victim in requests and any(
                name == "release" for _, name, _ in unbundle(requests[self.victim])))
            if self.gone:
                requests = {n: p for n, p in requests.items() if n != self.victim}
            return super().exchange(action, requests, timeout, until)

    nodes = _fresh(demo, tmp_path)
    victim = 1 + next(i for i, n in enumerate(nodes) if n.get("name") == "east")
    transport = Vanishing([party_node(n) for n in nodes], victim)
    outcome, _ = _run(demo, nodes, algorithm, transport=transport)
    assert transport.gone and outcome.status == "released", outcome.reason
    assert outcome.dropped == ("east",) and outcome.took_part == ("north", "south")
    settings = settings_from_run_config(demo.run_config, algorithm, "sim")
    simulated = simulate(nodes, settings, dropped=("east",))
    for stage, aggregate in outcome.aggregates.items():
        assert np.array_equal(aggregate, simulated.aggregates[stage]), stage
    for rows in outcome.audit.values():
        assert {r["site"] for r in rows} == {"north", "south"} and all(r["ok"] for r in rows)
        assert all("east" in r["coalition"] for r in rows)
    # a round made to survive no drop-out (a study of such rounds) stops instead, naming the site, and releases nothing
    strict = prepare_demo(tmp_path / "strict", noise=demo.run_config["noise"], dropouts=0)
    nodes = list(strict.nodes)
    outcome, _ = _run(strict, nodes, algorithm, transport=Vanishing([party_node(n) for n in nodes], victim))
    _nothing_released(outcome)
    assert outcome.sites == ("east",) and "more than the 0 the plan survives" in outcome.reason


def test_a_site_reads_only_regular_files_with_a_bound(tmp_path):
    for device in ("/dev/zero", "/dev/urandom"):
        with pytest.raises(SiteConfigError, match="not a regular file"):
            read_bounded(device)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(SiteConfigError, match="not a regular file"):
        read_bounded(fifo)  # opened without blocking, refused before reading
    big = tmp_path / "big.csv"
    big.write_bytes(b"1\n" * 600)
    with pytest.raises(SiteConfigError, match="larger than the limit of 1,000 bytes"):
        read_bounded(big, 1000)


# --- every request a node receives: read or refused with a reason ---------------------------------------------

_VALUE = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=30)
          | st.binary(max_size=40) | st.lists(st.integers(), max_size=3) | st.lists(st.binary(max_size=70), max_size=3)
          | st.lists(st.text(max_size=30), max_size=3))
_FIELDS = ["round", "algorithm", "settings", "statements", "signatures", "stage", "digest", "var_g", "sealed_e",
           "helper_signature", "senders", "blobs", "blob_signatures", "dropped", "stages", "model", "dim", "sigma2",
           "norm_bound"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Real requests of a helper-free and a helper round (every action), to mutate."""
    out = []
    for noise in ("helper", "helper-free"):
        demo = prepare_demo(tmp_path_factory.mktemp(f"fuzz-{noise}") / "data", noise=noise)
        transport = Intercepting([party_node(n) for n in demo.nodes])
        run_rounds(transport, [settings_from_run_config(demo.run_config, a, f"fuzz/{a}")
                               for a in ("capePCA", "capeAGN")])
        out.append((demo, transport.seen))
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_request_is_answered_or_refused_never_crashes(recorded, data):
    """One real request (any action, either variant) with fields replaced, added or removed at random: the node
    answers with status "ok" or "refused" and a reason; nothing raises."""
    demo, seen = recorded[data.draw(st.integers(0, 1))]
    action, node, payload = seen[data.draw(st.integers(0, len(seen) - 1))]
    request = payload.copy()
    for _ in range(data.draw(st.integers(1, 3))):
        key = data.draw(st.sampled_from(_FIELDS + sorted(request.config)))
        if data.draw(st.booleans()):
            request.config[key] = data.draw(_VALUE)
        else:
            request.config.pop(key, None)
    if request.arrays and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(request.arrays)))
        request.arrays[key] = data.draw(st.sampled_from([np.empty(0), np.full(3, np.nan), np.ones((2, 2, 2)),
                                                         np.arange(5), request.arrays[key][:-1]]))
    config = demo.nodes[node - 1]
    state: dict[str, bytes] = {}
    reply = answer(action, config, request, state)
    assert reply.config.get("status") in ("ok", "refused")
    if reply.config["status"] == "refused":
        assert isinstance(reply.config["reason"], str) and reply.config["reason"]
    wrapped = answer("bundle", config, bundle([("0", action, request)]), state)
    assert [k for k, _, _ in unbundle(wrapped)] == ["0"]


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=12), _VALUE, max_size=8))
def test_any_run_configuration_is_read_or_refused(config):
    base = {"pca-k": 5, "agn-k": 3, "sites": 3, "neighbouring": "replace-one", "calibration": "analytic",
            "solver": "collusion-robust", "split": 0.5, "run": 0, "timeout": 10.0, "connect-timeout": 10.0}
    merged = base | config
    try:
        s = settings_from_run_config(merged, "capePCA", "r")
    except (ValueError, KeyError, TypeError) as exc:
        assert str(exc)
        return
    assert 0 < s.timeout <= 86_400 and s.sites <= 100


def test_statements_are_bound_to_the_round(demo, tmp_path):
    """A hello answered for one round cannot be replayed into another."""
    nodes = _fresh(demo, tmp_path)
    captured = {}

    def keep(action, node, payload):
        if action == "hello" and payload.config.get("role") == "site":
            captured.setdefault(node, payload.copy())
        return payload

    _run(demo, nodes, reply=keep)

    def replay(action, node, payload):
        return captured.get(node, payload) if action == "hello" and node in captured else payload

    transport = Intercepting([party_node(n) for n in nodes], reply=replay)
    outcome = run_round(transport, settings_from_run_config(demo.run_config, "capePCA", "trust/other-round"))
    _nothing_released(outcome)
    assert "a replayed hello" in outcome.reason
    assert json.loads(captured[next(iter(captured))].config["statement"])["round"] == "trust/capePCA"


@pytest.mark.parametrize("model", ["stm", "mog"])
def test_helper_free_capeagn_on_the_projected_path_equals_the_in_process_run(tmp_path, model):
    demo = prepare_demo(tmp_path / "data", noise="helper-free", agn_path="projected", agn_model=model)
    outcome, _ = _run(demo, list(demo.nodes), "capeAGN")
    assert outcome.status == "released", outcome.reason
    simulated = simulate(demo.nodes, settings_from_run_config(demo.run_config, "capeAGN", "sim"))
    for stage, aggregate in outcome.aggregates.items():
        assert np.array_equal(aggregate, simulated.aggregates[stage]), stage
    assert not [e for e in outcome.log if "helper" in (e.sender, e.receiver) and e.stage != "hello"]
