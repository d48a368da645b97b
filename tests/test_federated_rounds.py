"""Every federated round in memory (no Flower, no network): the aggregator's round driver, the helper and the sites
exchange payloads through an in-process transport. Checked: the aggregate equals the in-process simulation
exactly, the messages are the ones dpcore.cape.protocol lists, the shares are sealed, and every failure stops the round
naming the site with nothing released."""

from __future__ import annotations

import copy
import dataclasses
import itertools
from collections.abc import Callable

import numpy as np
import pytest
from capefed.app import dp
from capefed.app.helper import sealed_key
from capefed.app.messages import BUNDLE, Payload, bundle, unbundle
from capefed.app.node import answer
from capefed.app.rounds import run_round, run_rounds, settings_from_run_config
from capefed.app.sealing import OVERHEAD_BYTES, SealError, new_key_pair, open_array, seal_array, seal_context
from capefed.app.site import SiteConfig, SiteConfigError, load_pca_data
from capefed.ops.demo import prepare_demo, simulate
from capefed.ops.memory import InMemoryTransport, party_node

from dpcore.federation import protocol_differences
from dpcore.privacy import unique_entries_matrix

TEST_LEDGER_ROUNDS = 10_000
"""The module's rounds share the sites' ledgers: room for all of them (tests/test_federated_trust.py tests refusals)."""
_ROUNDS = itertools.count()


def _rid(algorithm: str) -> str:
    """A round id of its own for every round (a site never releases a stage of a round id twice)."""
    return f"test/{algorithm}/{next(_ROUNDS)}"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return prepare_demo(tmp_path_factory.mktemp("federated") / "data", ledger_rounds=TEST_LEDGER_ROUNDS)


@pytest.fixture(scope="module")
def strict(tmp_path_factory):
    """A study whose rounds survive no drop-out: one silent site stops the round."""
    return prepare_demo(tmp_path_factory.mktemp("federated-strict") / "data", dropouts=0,
                        ledger_rounds=TEST_LEDGER_ROUNDS)


@pytest.fixture(scope="module")
def projected(tmp_path_factory):
    """capeAGN on the projected path: the helper gets W and sends K x K x K noise."""
    return prepare_demo(tmp_path_factory.mktemp("federated-projected") / "data", agn_path="projected",
                        ledger_rounds=TEST_LEDGER_ROUNDS)


@pytest.fixture(scope="module")
def mixture(tmp_path_factory):
    """capeAGN on a Gaussian mixture (samples divided by the public norm bound), projected path."""
    return prepare_demo(tmp_path_factory.mktemp("federated-mog") / "data", agn_model="mog", agn_path="projected",
                        ledger_rounds=TEST_LEDGER_ROUNDS)


class Intercepting(InMemoryTransport):
    """The in-process transport with hooks on every request and reply inside the bundles, called with
    (action, node, payload); a hook returning None drops that request (never delivered) or reply ("no answer in
    time")."""

    def __init__(self, nodes, *, request: Callable | None = None, reply: Callable | None = None):
        super().__init__(nodes)
        self.request_hook, self.reply_hook = request, reply
        self.seen: list[tuple[str, int, Payload]] = []

    def exchange(self, action, requests, timeout, until=None):
        assert action == BUNDLE
        sent, actions = {}, {}
        for node, payload in requests.items():
            items = []
            for key, inner, item in unbundle(payload):
                if self.request_hook:
                    item = self.request_hook(inner, node, item)
                if item is None:
                    continue
                self.seen.append((inner, node, item.copy()))
                actions[(node, key)] = inner
                items.append((key, inner, item))
            if items:
                sent[node] = bundle(items)
        replies = {}
        for node, payload in super().exchange(action, sent, timeout, until).items():
            items = []
            for key, inner, item in unbundle(payload):
                if self.reply_hook:
                    item = self.reply_hook(actions[(node, key)], node, item)
                if item is not None:
                    items.append((key, inner, item))
            replies[node] = bundle(items)
        return replies


def _round(demo, algorithm, *, nodes=None, transport_cls=InMemoryTransport, config=None, changes=None, sites=None,
           **hooks):
    """One round; ``changes``: round settings the aggregator uses in place of the study's, ``sites``: the sites it
    expects in place of the study's (an aggregator that deviates from the study)."""
    run_config = dict(demo.run_config) | (config or {})
    nodes = nodes if nodes is not None else demo.nodes
    transport = transport_cls([party_node(n) for n in nodes], **hooks)
    settings = settings_from_run_config(run_config, algorithm, _rid(algorithm))
    if changes:
        settings = dataclasses.replace(settings, round=dataclasses.replace(settings.round, **changes))
    if sites is not None:
        settings = dataclasses.replace(settings, sites=sites)
    return run_round(transport, settings), transport, settings


def _name(transport, node):
    """The name a node answers a hello with."""
    return transport.nodes[node]("hello", Payload({"algorithm": "capePCA", "round": f"probe/{next(_ROUNDS)}"})
                                 ).config["name"]


@pytest.mark.parametrize("algorithm, variant", [("capePCA", "demo"), ("capeAGN", "demo"), ("capeAGN", "projected"),
                                              ("capeAGN", "mixture")])
def test_round_equals_the_in_process_run_and_the_protocol(request, algorithm, variant):
    demo = request.getfixturevalue(variant)
    outcome, _, settings = _round(demo, algorithm)
    assert outcome.status == "released", outcome.reason
    simulated = simulate(demo.nodes, settings)
    assert set(outcome.aggregates) == set(simulated.aggregates)
    for stage, aggregate in outcome.aggregates.items():
        assert np.array_equal(aggregate, simulated.aggregates[stage]), stage
    for key, value in simulated.outputs.items():
        assert np.array_equal(outcome.outputs[key], value), key
    assert protocol_differences(outcome.log, outcome.plan) == []
    # what travels: sealed shares are ciphertext of 8 bytes per unique entry plus the HPKE overhead, every
    # other array 8 bytes per unique entry (symmetric objects travel as unique entries only)
    for entry in outcome.log:
        if entry.protocol and entry.sender == dp.HELPER:
            assert entry.route == (dp.HELPER, dp.AGGREGATOR, entry.receiver)
            assert entry.bytes == 8 * entry.unique + OVERHEAD_BYTES
        elif entry.protocol and entry.content.startswith(("f_", "F2_", "F3_", "Ahat", "M2hat", "M3~hat")):
            assert entry.bytes == 8 * entry.unique
    assert outcome.to_dict()["status"] == "released"


def test_rounds_side_by_side_equal_rounds_alone_in_nine_exchanges(demo):
    transport = Intercepting([party_node(n) for n in demo.nodes])
    settings = [settings_from_run_config(demo.run_config, a, _rid(a)) for a in ("capePCA", "capeAGN")]
    together = run_rounds(transport, settings)
    alone = [run_round(InMemoryTransport([party_node(n) for n in demo.nodes]),
                       settings_from_run_config(demo.run_config, s.round.algorithm, _rid(s.round.algorithm)))
             for s in settings]
    for both, one in zip(together, alone, strict=True):
        assert both.status == one.status == "released"
        for stage in one.aggregates:
            assert np.array_equal(both.aggregates[stage], one.aggregates[stage])
        assert [e.content for e in both.log] == [e.content for e in one.log]
    # hello (4 nodes x 2 rounds); the helper's shares and the sites' set-up (one exchange); per stage the masked
    # releases, the survivor set signed, the shares revealed: A and M2 together, then M3; the round's end to the sites
    actions = [a for a, _, _ in transport.seen]
    assert actions.count("hello") == 8 and actions.count("shares") == 2 and actions.count("setup") == 6
    assert actions.count("release") == actions.count("confirm") == actions.count("reveal") == 9
    assert actions.count("result") == 6
    assert len({e["seconds"] for e in together[1].exchanges}) == 9


def test_the_projected_path_asks_the_helper_again_with_w(projected):
    """Projected capeAGN: the M3 shares need W, so the helper is asked a second time, after stage 1 (five
    exchanges for both rounds); the request carries W, the protocol lists that message, and the shares are
    K x K x K."""
    transport = Intercepting([party_node(n) for n in projected.nodes])
    settings = [settings_from_run_config(projected.run_config, a, _rid(a)) for a in ("capePCA", "capeAGN")]
    pca, agn = run_rounds(transport, settings)
    assert pca.status == agn.status == "released"
    shares = [p for a, _, p in transport.seen if a == "shares"]
    assert [p.config["stages"] for p in shares] == [["A"], ["M2"], ["M3"]]
    assert "w" not in shares[1].arrays and shares[2].arrays["w"].shape == (10, 3)
    assert np.array_equal(shares[2].arrays["w"], agn.outputs["whitening"])
    assert len({e["seconds"] for e in agn.exchanges}) == 10
    to_helper = [e for e in agn.log if e.protocol and e.receiver == dp.HELPER]
    assert [(e.content, e.shape, e.step) for e in to_helper] == [("W (whitening)", (10, 3), 4)]
    e3 = [e for e in agn.log if e.content.startswith("E3_")]
    assert {(e.shape, e.unique, e.bytes) for e in e3} == {((3, 3, 3), 10, 8 * 10 + OVERHEAD_BYTES)}
    assert protocol_differences(agn.log, agn.plan) == []


def test_the_helper_refuses_projected_shares_without_w(projected):
    def strip(action, node, payload):
        if action == "shares" and payload.config["stages"] == ["M3"]:
            del payload.arrays["w"]
        return payload

    outcome, _, _ = _round(projected, "capeAGN", transport_cls=Intercepting, request=strip)
    assert outcome.status == "stopped" and "needs W" in outcome.reason
    assert outcome.aggregates == {} and not [e for e in outcome.log if e.receiver == "everyone"]


def test_the_helper_refuses_a_mixing_that_does_not_cancel(demo):
    def skew(action, node, payload):
        if action == "shares":
            payload.arrays["mixing/A"] = payload.arrays["mixing/A"] * np.array([[1.0], [1.0], [1.5]])
        return payload

    outcome, _, _ = _round(demo, "capePCA", transport_cls=Intercepting, request=skew)
    assert outcome.status == "stopped" and "helper refused" in outcome.reason
    assert "requested mixing differs from the design of the plan the helper computed" in outcome.reason


def test_one_round_failing_does_not_stop_the_other(strict):
    def drop(action, node, payload):  # node 2 never answers a capeAGN M3 release request
        return None if action == "release" and node == 2 and payload.arrays["masked"].size == 10 else payload

    transport = Intercepting([party_node(n) for n in strict.nodes], reply=drop)
    settings = [settings_from_run_config(strict.run_config, a, _rid(a)) for a in ("capePCA", "capeAGN")]
    pca, agn = run_rounds(transport, settings)
    assert pca.status == "released"
    _stopped_without_release(agn, _name(transport, 2))


def test_bundles_keep_every_item_apart():
    items = [("0", "hello", Payload({"a": 1, "b#": "x"}, {"w": np.ones(2)})), ("1", "release", Payload({"a": 2}))]
    back = unbundle(bundle(items))
    assert [(k, a, p.config, list(p.arrays)) for k, a, p in back] == [
        ("0", "hello", {"a": 1, "b#": "x"}, ["w"]), ("1", "release", {"a": 2}, [])]
    with pytest.raises(ValueError):
        bundle([("0#", "hello", Payload())])
    with pytest.raises(ValueError):
        unbundle(Payload({"x": 1}))


def test_repeated_runs_are_identical_and_other_seeds_differ(demo):
    first, _, _ = _round(demo, "capePCA")
    again, _, _ = _round(demo, "capePCA")
    assert np.array_equal(first.aggregates["A"], again.aggregates["A"])
    other, _, _ = _round(demo, "capePCA", config={"run": 1})
    assert not np.allclose(first.aggregates["A"], other.aggregates["A"])


def test_the_aggregator_only_forwards_ciphertext(demo):
    outcome, transport, _ = _round(demo, "capePCA", transport_cls=Intercepting)
    assert outcome.status == "released"
    helper_reply_keys = [p for a, _, p in transport.seen if a == "shares"]
    assert len(helper_reply_keys) == 1
    shares = helper_reply_keys[0]
    assert len(shares.config["statements"]) == 3 and set(shares.arrays) == {"mixing/A", "weights/A", "var_e/A"}
    releases = [p for a, _, p in transport.seen if a == "release"]
    assert len(releases) == 3
    for payload in releases:
        # the aggregator's request holds the sealed share as bytes, its own f and nothing of e in the clear, and
        # the other sites' sealed set-up messages (shares of their self-mask seeds)
        assert set(payload.arrays) == {"f"}
        assert isinstance(payload.config["sealed_e"], bytes)
        assert len(payload.config["sealed_e"]) == 8 * 2080 + OVERHEAD_BYTES
        assert [len(b) for b in payload.config["blobs"]] == [33 + OVERHEAD_BYTES] * 2


def test_a_share_opens_only_for_its_site_round_and_stage():
    private, public = new_key_pair()
    other_private, _ = new_key_pair()
    values = np.arange(5.0)
    sealed = seal_array(values, public, seal_context("r1", "A", "north"))
    assert np.array_equal(open_array(sealed, private, seal_context("r1", "A", "north"), 5), values)
    for key, context in ((other_private, seal_context("r1", "A", "north")), (private, seal_context("r2", "A", "north")),
                         (private, seal_context("r1", "M2", "north")), (private, seal_context("r1", "A", "south"))):
        with pytest.raises(SealError):
            open_array(sealed, key, context, 5)
    tampered = bytearray(sealed)
    tampered[-1] ^= 1
    with pytest.raises(SealError):
        open_array(bytes(tampered), private, seal_context("r1", "A", "north"), 5)
    with pytest.raises(SealError, match="holds 5 numbers, expected 6"):
        open_array(sealed, private, seal_context("r1", "A", "north"), 6)


def test_swapped_shares_make_both_sites_refuse(demo):
    def swap_reply(action, node, payload):
        if action == "shares":
            a, b = sealed_key("A", "east"), sealed_key("A", "north")
            payload.config[a], payload.config[b] = payload.config[b], payload.config[a]
        return payload

    outcome, _, _ = _round(demo, "capePCA", transport_cls=Intercepting, reply=swap_reply)
    assert outcome.status == "stopped"
    assert set(outcome.sites) == {"east", "north"}
    assert "not signed by the helper key the roster pins" in outcome.reason
    assert outcome.aggregates == {} and outcome.outputs == {}


def _stopped_without_release(outcome, site):
    assert outcome.status == "stopped", outcome.reason
    assert outcome.sites == (site,)
    assert f"site {site}" in outcome.reason and "Nothing was released" in outcome.reason
    assert outcome.aggregates == {} and outcome.outputs == {}
    assert not [e for e in outcome.log if e.receiver == "everyone"]


@pytest.mark.parametrize("algorithm, stage", [("capePCA", "A"), ("capeAGN", "M2"), ("capeAGN", "M3")])
def test_a_silent_site_stops_the_round(strict, algorithm, stage):
    current = {"stage": None}

    def note(action, node, payload):  # the stage of the release request being answered
        if action == "release":
            current["stage"] = payload.config["stage"]
        return payload

    def drop(action, node, payload):  # node 2 does not answer that stage's request in time
        return None if action == "release" and node == 2 and current["stage"] == stage else payload

    outcome, transport, _ = _round(strict, algorithm, transport_cls=Intercepting, request=note, reply=drop)
    _stopped_without_release(outcome, _name(transport, 2))
    assert f"did not answer its stage {stage} release request within" in outcome.reason
    assert "more than the 0 the plan survives" in outcome.reason
    if stage == "M3":  # W had gone out, the final output has not
        assert any(e.content == "W (whitening)" for e in outcome.log)


@pytest.mark.parametrize("bad, words", [
    (lambda r: r[:-1], "shape"),
    (lambda r: np.full(r.size, np.nan), "type float64"),
    (lambda r: np.full(r.size, 1e300), "type float64"),
    (lambda r: r.astype(np.int64), "type int64"),
])
def test_a_malformed_release_stops_the_round(demo, bad, words):
    def corrupt(action, node, payload):
        if action == "release" and node == 3:
            payload.arrays["masked"] = bad(payload.arrays["masked"])
        return payload

    outcome, transport, _ = _round(demo, "capePCA", transport_cls=Intercepting, reply=corrupt)
    _stopped_without_release(outcome, _name(transport, 3))
    assert words in outcome.reason


def test_a_site_whose_budget_changed_since_the_design_releases_nothing(demo):
    nodes = copy.deepcopy(list(demo.nodes))
    east = next(n for n in nodes if n.get("name") == "east")
    state: dict[str, bytes] = {}

    def east_node(action, request):
        reply = answer(action, east, request, state)
        if "hello" in [inner for _, inner, _ in unbundle(request)]:
            east["eps"] = 0.25  # the site tightens its budget after the design was made
        return reply

    transport = InMemoryTransport([party_node(n) if n is not east else east_node for n in nodes])
    outcome = run_round(transport, settings_from_run_config(demo.run_config, "capePCA", _rid("changed")))
    _stopped_without_release(outcome, "east")
    assert "changed since the design" in outcome.reason and "eps = 0.25" in outcome.reason


def test_a_site_answering_for_other_values_is_caught_by_the_aggregator(demo):
    def forge(action, node, payload):
        if action == "release" and node == 2:
            payload.config["digest"] = "0" * 64
        return payload

    outcome, transport, _ = _round(demo, "capePCA", transport_cls=Intercepting, reply=forge)
    _stopped_without_release(outcome, _name(transport, 2))
    assert "digest changed" in outcome.reason


def test_a_design_failing_the_audit_is_refused_before_any_noise(demo):
    outcome, transport, _ = _round(demo, "capePCA", transport_cls=Intercepting, changes={"solver": "general"})
    assert outcome.status == "refused"
    assert "audit fails" in outcome.reason and "aggregator view" in outcome.reason
    assert [a for a, _, _ in transport.seen] == ["hello"] * 4  # the helper was never asked for noise
    assert outcome.aggregates == {}


def test_an_infeasible_budget_is_refused_with_the_reason(demo):
    nodes = copy.deepcopy(list(demo.nodes))
    next(n for n in nodes if n.get("name") == "south")["weight"] = 0.5  # weights given by one site only
    outcome, _, _ = _round(demo, "capePCA", nodes=nodes)
    assert outcome.status == "refused"
    assert "weight" in outcome.reason


def test_a_site_with_unusable_data_refuses_the_hello(demo, tmp_path):
    nodes = copy.deepcopy(list(demo.nodes))
    north = next(n for n in nodes if n.get("name") == "north")
    x = load_pca_data(north["pca-data"], north["pca-n"])
    bad = tmp_path / "north.csv"
    np.savetxt(bad, 2 * x.T, delimiter=",")
    north["pca-data"] = str(bad)
    outcome, _, _ = _round(demo, "capePCA", nodes=nodes)
    assert outcome.status == "stopped" and outcome.sites == ("north",)
    assert "norm" in outcome.reason and "> 1" in outcome.reason
    north["pca-data"], north["pca-n"] = demo.nodes[1]["pca-data"], 799
    outcome, _, _ = _round(demo, "capePCA", nodes=nodes)
    assert outcome.status == "stopped" and "N_s = 799" in outcome.reason


def _as_fourth_site(nodes):
    nodes[0] = dict(nodes[1]) | {"name": "west"}


@pytest.mark.parametrize("change, sites, words", [
    (lambda nodes: nodes.pop(), 3, "only 3 node(s) connected"),
    (_as_fourth_site, 3, "exactly one helper node; 0 answered"),
    (lambda nodes: nodes.append(dict(nodes[0])), 3, "exactly one helper node; 2 answered"),
    (lambda nodes: None, 2, "expects 2 sites; 3 answered"),
])
def test_the_round_needs_one_helper_and_the_expected_sites(demo, change, sites, words):
    nodes = copy.deepcopy(list(demo.nodes))
    change(nodes)
    outcome, _, _ = _round(demo, "capePCA", nodes=nodes, sites=sites)
    assert outcome.status == "stopped" and words in outcome.reason, outcome.reason


def test_a_node_level_failure_answers_every_round(demo):
    class Failing(InMemoryTransport):
        def exchange(self, action, requests, timeout, until=None):
            replies = super().exchange(action, requests, timeout, until)
            if any(inner == "release" for _, inner, _ in unbundle(requests.get(3, bundle([])))):
                replies[3] = Payload({"status": "refused", "reason": "node 3 failed: ClientApp raised"})
            return replies

    outcome, transport, _ = _round(demo, "capePCA", transport_cls=Failing)
    _stopped_without_release(outcome, _name(transport, 3))
    assert "ClientApp raised" in outcome.reason


def test_a_silent_helper_stops_the_round(demo):
    def drop(action, node, payload):
        return None if action == "shares" else payload

    outcome, _, _ = _round(demo, "capePCA", transport_cls=Intercepting, reply=drop)
    assert outcome.status == "stopped" and "helper did not answer" in outcome.reason
    assert outcome.aggregates == {}


@pytest.mark.parametrize("config, words", [
    ({"name": ""}, "name"),
    ({"eps": 0}, "eps must be > 0"),
    ({"eps": "1"}, "eps must be a finite number"),
    ({"delta": 1.5}, "delta must be in (0, 1)"),
    ({"weight": -0.1}, "weight must be >= 0"),
    ({"seed": -3}, "seed"),
    ({"pca-n": 0}, "pca-n must be the number of samples"),
    ({"eps": float("nan")}, "finite"),
])
def test_site_configuration_errors_say_what_is_wrong(demo, config, words):
    base = dict(demo.nodes[1])
    with pytest.raises(SiteConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        SiteConfig.from_mapping(base | config)


def test_loopback_security_files(tmp_path):
    """The --secure run's material: the SuperLink certificate is signed by the CA and names 127.0.0.1; node keys are
    ECDSA keys in OpenSSH format (what flower-supernode --auth-supernode-private-key reads)."""
    import ipaddress

    from capefed.ops.certificates import make_security_files
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_ssh_private_key, load_ssh_public_key

    files = make_security_files(tmp_path, ["helper", "north"])
    ca = x509.load_pem_x509_certificate(files.ca_certificate.read_bytes())
    server = x509.load_pem_x509_certificate(files.server_certificate.read_bytes())
    server.verify_directly_issued_by(ca)
    names = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("127.0.0.1") in names.get_values_for_type(x509.IPAddress)
    assert (files.server_key.stat().st_mode & 0o777) == 0o600
    for private, public in files.node_keys.values():
        key = load_ssh_private_key(private.read_bytes(), password=None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        assert load_ssh_public_key(public.read_bytes()).public_numbers() == key.public_key().public_numbers()


def test_a_failed_whitening_stops_the_round_after_stage_one(demo, monkeypatch):
    """Every site's M2 statistic replaced by minus the identity (inside the accepted range, released masked, digest
    kept): the aggregate has no positive eigenvalue, W does not exist, and the round stops with the explanation
    before W or any output leaves."""
    release = dp.site_stage_release

    def negative(stage, path, data, e, f, g, w=None):
        out = release(stage, path, data, e, f, g, w)
        return -unique_entries_matrix(np.eye(10)) if stage == "M2" else out

    monkeypatch.setattr(dp, "site_stage_release", negative)
    outcome, _, _ = _round(demo, "capeAGN", transport_cls=Intercepting)
    assert outcome.status == "stopped" and outcome.reason.startswith("stage M2: whitening failed")
    assert "Nothing was released" in outcome.reason
    assert outcome.aggregates == {} and outcome.outputs == {}
    assert not [e for e in outcome.log if e.content == "W (whitening)" or e.receiver == "everyone"]
