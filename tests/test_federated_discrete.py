"""The discrete design in the federated round (issue 35, docs/federated.md "The integer variant"): every term an
integer from the exact discrete Gaussian sampler, helper-free, summed exactly on the stage's ring and decoded once.

Checked here without processes: the in-process run (``dpcore.federation.simulate_round``) is the exact integer sum
computed independently (the survivors' encoded statistics plus their own G~, drawn again from the same streams: the
E~ and F~ cancel exactly, a dropped site's E~ recovered exactly); the round with every party's own code (the
in-memory transport) equals it integer for integer, with and without a site dropped after the set-up, and its
message log is the protocol's; a release that is not a ring element, or a ring sum beyond the design's no-wrap
bound, is refused naming the check. With real processes (Flower, loopback): ``test_a_flower_round_with_the_discrete
design_equals_the_in_process_run`` below."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
from capefed.demo import prepare_demo, simulate
from capefed.federation import Federation, tagged_processes
from capefed.memory import party_node
from capefed.rounds import run_round, settings_from_run_config
from test_federated_dropouts import attack_round
from test_federated_rounds import Intercepting

from dpcore.cape.discrete_flow import blocks, encode, ring_decode, ring_sum, term_draw
from dpcore.cape.noise_variants import NOISE_VARIANTS, integer_variant
from dpcore.federation import (
    RING_ROLES,
    RoundSettings,
    SiteBudget,
    dense_statistic,
    party_generator,
    plan_round,
    protocol_differences,
    ring_aggregate,
    simulate_round,
)
from dpcore.scenario import Site
from dpcore.validation import InputError

DISCRETE = integer_variant().name
SITES = (("east", 600, 0.5), ("north", 800, 1.0), ("south", 397, 1.0))
SEEDS = {"aggregator": 11, "helper": 12, "east": 13, "north": 14, "south": 15}
_ROUNDS = itertools.count()


def _budgets(dim: int) -> list[SiteBudget]:
    return [SiteBudget(site=Site(name=n, n=k, eps=e, delta=1e-5, weight=None), dim=dim) for n, k, e in SITES]


def _samples(dim: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for name, n, _ in SITES:
        x = rng.standard_normal((dim, n))
        out[name] = x / np.maximum(np.linalg.norm(x, axis=0), 1.0) * rng.uniform(0.2, 1.0, n)
    return out


def _independent_sum(plan, stage, data, dropped, generator="fast"):
    """sum over the survivors of round(gamma mu_s a_s) + G~_s, each G~_s drawn again from the site's own stream, on
    Python integers (no ring): what the exact ring sum must be when every E~ and F~ cancels."""
    dd = stage.discrete
    s = plan.settings
    total = [0] * dd.entries
    for i, name in enumerate(plan.names):
        if name in dropped:
            continue
        rng = party_generator(generator, SEEDS[name], s.run, s.algorithm, stage.stage, RING_ROLES["g"], name)
        g = np.concatenate([term_draw(dd.laws.g[i], rng, c1 - c0) for c0, c1 in blocks(dd.n_sites, dd.entries)])
        a = encode(dense_statistic(stage.stage, data[name]), dd, i)
        total = [t + int(x) + int(y) for t, x, y in zip(total, a, g, strict=True)]
    return np.array(total, dtype=object)


@pytest.mark.parametrize("dropped", [(), ("east",), ("south",)])
def test_the_in_process_run_is_the_exact_integer_sum_with_and_without_a_drop_out(dropped):
    dim = 12
    settings = RoundSettings(algorithm="capePCA", k=3, noise=DISCRETE, dropouts=1, collusion=0)
    data = _samples(dim, 5)
    run = simulate_round(settings, _budgets(dim), data, SEEDS, dropped=dropped)
    plan = run.plan
    stage = plan.stage("A")
    dd = stage.discrete
    assert dd is not None and stage.bits_per_value == dd.ring_bits <= 64 and stage.size == stage.unique == dd.entries
    exact = run.exact["A"]
    assert exact.dtype == np.int64
    assert [int(x) for x in exact] == list(_independent_sum(plan, stage, data, dropped))
    survivors = [i for i, n in enumerate(plan.names) if n not in dropped]
    weight = sum(float(dd.design.weights[i]) for i in survivors) if dropped else 1.0
    assert np.array_equal(run.aggregates["A"], exact.astype(float) / dd.scale / weight)
    # the noise is integer noise of the design's size: the decoded aggregate is the survivors' pooled statistic
    pooled = sum(float(dd.design.weights[i]) * dense_statistic("A", data[plan.names[i]]) for i in survivors) / weight
    noise_std = np.sqrt(sum(float(dd.laws.g[i].sigma2) for i in survivors)) / dd.scale / weight
    assert np.max(np.abs(run.aggregates["A"] - pooled)) < 6.5 * noise_std + len(survivors) / dd.scale / weight


def test_every_party_of_the_discrete_round_recomputes_the_same_integer_design():
    settings = RoundSettings(algorithm="capeAGN", k=3, noise=DISCRETE, dropouts=1, collusion=0)
    budgets = [SiteBudget(site=Site(name=n, n=20 * k, eps=e, delta=1e-5, weight=None), dim=10) for n, k, e in SITES]
    one, two = plan_round(budgets, settings), plan_round(budgets, settings)
    assert one.refusal is None
    for a, b in zip(one.stages, two.stages, strict=True):
        assert a.discrete.laws == b.discrete.laws and a.discrete.ring_bits == b.discrete.ring_bits
        assert a.unique == a.size == a.discrete.entries  # the dense statistic's unique entries: C(D+2, 3) on M3
    assert one.stage("M3").unique == 220
    projected = plan_round(budgets, RoundSettings(algorithm="capeAGN", k=3, noise=DISCRETE, dropouts=1, collusion=0,
                                                  path="projected"))
    assert "dense path only" in projected.refusal and "stage M3" in projected.refusal


def test_the_ring_sum_is_refused_beyond_its_no_wrap_bound():
    dim = 6
    run = simulate_round(RoundSettings(algorithm="capePCA", k=2, noise=DISCRETE, collusion=0), _budgets(dim),
                         _samples(dim, 7), SEEDS)
    dd = run.plan.stage("A").discrete
    exact = run.exact["A"].copy()
    assert ring_aggregate([exact.view(np.uint64)], [], [], dd, [0, 1, 2]).exact.tolist() == exact.tolist()
    shifted = ring_sum([exact, np.full(exact.size, 1 << (dd.ring_bits - 1), dtype=np.int64)], dd.ring_bits)
    with pytest.raises(InputError, match="exceeds its bound"):
        ring_decode(shifted, dd.ring_bits, dd.ring_bound)
    with pytest.raises(InputError, match="exceeds its bound"):
        ring_aggregate([shifted], [], [], dd, [0, 1, 2])


# ----------------------------------------------------------------------------------------------
# The round with every party's own code, in memory
# ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return prepare_demo(tmp_path_factory.mktemp("discrete") / "data", noise=DISCRETE, dropouts=1,
                        ledger_rounds=1000)


def _round(demo, algorithm, **hooks):
    settings = settings_from_run_config(demo.run_config, algorithm, f"discrete/{algorithm}/{next(_ROUNDS)}")
    transport = Intercepting([party_node(n) for n in demo.nodes], **hooks)
    return run_round(transport, settings), settings


def _node_of(demo, name: str) -> int:
    """The in-memory transport's id of a node (its place in the node list, from 1)."""
    return next(i + 1 for i, n in enumerate(demo.nodes) if n.get("name") == name)


def _silent(victim_node):
    """The victim's release never arrives: it dropped out after the set-up."""
    return lambda action, node, payload: None if (action == "release" and node == victim_node) else payload


@pytest.mark.parametrize("algorithm", ["capePCA", "capeAGN"])
@pytest.mark.parametrize("drop", [False, True])
def test_the_round_equals_the_in_process_run_integer_for_integer(demo, algorithm, drop):
    victim = _node_of(demo, "east")
    outcome, settings = _round(demo, algorithm, reply=_silent(victim) if drop else None)
    assert outcome.status == "released", outcome.reason
    assert outcome.plan.settings.noise == DISCRETE and not NOISE_VARIANTS[DISCRETE].helper
    assert outcome.dropped == (("east",) if drop else ())
    simulated = simulate(demo.nodes, settings, outcome.dropped)
    assert set(outcome.exact) == set(simulated.exact) == set(outcome.aggregates)
    for stage, exact in outcome.exact.items():
        assert exact.dtype == np.int64 and np.array_equal(exact, simulated.exact[stage]), stage
        assert np.array_equal(outcome.aggregates[stage], simulated.aggregates[stage]), stage
    for key, value in simulated.outputs.items():
        assert np.array_equal(outcome.outputs[key], value), key
    record = outcome.to_dict()
    assert [s["bits_per_value"] for s in record["plan"]["stages"]] == [p.discrete.ring_bits
                                                                       for p in outcome.plan.stages]
    assert record["exact"] == {k: [int(x) for x in v] for k, v in simulated.exact.items()}
    if not drop:
        assert protocol_differences(outcome.log, outcome.plan) == []


def test_a_release_that_is_not_an_element_of_the_ring_is_refused_naming_the_site(demo):
    victim = _node_of(demo, "north")

    def outside(action, node, payload):
        if action == "release" and node == victim:  # 2^62 added: above every ring of the plan once unmasked
            payload = payload.copy()
            payload.arrays["masked"] = payload.arrays["masked"] + np.uint64(1 << 62)
        return payload

    outcome, _ = _round(demo, "capePCA", reply=outside)
    assert outcome.plan.stage("A").discrete.ring_bits < 62
    assert outcome.status == "stopped" and outcome.sites == ("north",) and outcome.aggregates == {}
    assert "site north's release is refused" in outcome.reason and "not an element of the ring" in outcome.reason


def test_a_sum_beyond_the_no_wrap_bound_stops_the_round(demo, monkeypatch):
    """A site whose release is a ring element but shifted by B + 1 (a value that wrapped, or a site sending something
    else): the aggregator's exact sum leaves the design's no-wrap bound B and the round stops naming the check,
    nothing published."""
    from capefed import dp

    honest = dp.ring_release

    def shifted(statistic, e, f, g, dd, index):
        y = honest(statistic, e, f, g, dd, index)
        if index != 0:
            return y
        return (y + np.uint64(dd.ring_bound + 1)) & np.uint64((1 << dd.ring_bits) - 1)

    monkeypatch.setattr(dp, "ring_release", shifted)
    outcome, _ = _round(demo, "capePCA")
    assert outcome.status == "stopped" and outcome.aggregates == {} and outcome.outputs == {}
    assert "refused by the ring's no-wrap check" in outcome.reason and "exceeds its bound" in outcome.reason


@pytest.mark.parametrize("attack", ["false-claim-after", "false-claim-before", "held-back", "second-claim"])
@pytest.mark.parametrize("algorithm", ["capePCA", "capeAGN"])
def test_a_false_drop_out_never_unmasks_the_victims_integer_release(demo, attack, algorithm):
    """The drop-out attacks of tests/attacks on the discrete round: the round releases without east, exactly what
    the in-process run without east computes, and east's release is never unmasked (no self-mask seed of it is
    rebuilt from what the aggregator held), while its E~ was rebuilt from its noise seed."""
    outcome, transport, rows = attack_round(demo, {"attack": attack, "victim": "east", "second": "north"}, algorithm)
    assert outcome.status == "released", outcome.reason
    assert outcome.dropped == ("east",) and outcome.took_part == ("north", "south")
    settings = settings_from_run_config(demo.run_config, algorithm, "simulation")
    simulated = simulate(demo.nodes, settings, ("east",))
    for stage, exact in outcome.exact.items():
        assert np.array_equal(exact, simulated.exact[stage]), stage
    assert all(eps == 0.0 for stage, site, eps, _ in rows if site == "east")


def test_a_site_refuses_an_aggregator_noise_that_is_not_the_plans(demo):
    """F~_s of the plan's law, as integers on the ring: zeros (a weakened term) or floats are refused by the site."""
    victim = _node_of(demo, "south")

    def weakened(action, node, payload):
        if action == "release" and node == victim:
            payload = payload.copy()
            payload.arrays["f"] = np.zeros_like(payload.arrays["f"])
        return payload

    outcome, _ = _round(demo, "capePCA", request=weakened)
    assert outcome.status == "stopped" and outcome.sites == ("south",) and outcome.aggregates == {}
    assert "the aggregator's noise F~_s" in outcome.reason and "sample variance" in outcome.reason

    def floats(action, node, payload):
        if action == "release" and node == victim:
            payload = payload.copy()
            payload.arrays["f"] = payload.arrays["f"].view(np.int64).astype(float)
        return payload

    outcome, _ = _round(demo, "capePCA", request=floats)
    assert outcome.status == "stopped" and outcome.sites == ("south",)
    assert "integers as ring elements (uint64" in outcome.reason


# ----------------------------------------------------------------------------------------------
# Real processes: a SuperLink, a helper and three sites on loopback
# ----------------------------------------------------------------------------------------------

ATTACKS = Path(__file__).resolve().parent / "attacks"
RUN_TIMEOUT = 400.0


@pytest.mark.federated
@pytest.mark.timeout(3 * RUN_TIMEOUT)
def test_a_flower_round_with_the_discrete_design_equals_the_in_process_run(tmp_path):
    """Helper-free, every term an integer: one run of capePCA and capeAGN with every site, then one with east's
    worker killed when its release is asked for (after the set-up: east's seeds are shared, its process dies; the
    aggregator drops it, the survivors rebuild its w~ from its noise seed and the aggregator adds its E~ back). Each
    equals the in-process run of the same round with the same secrets, integer for integer (the exact ring sums,
    then the aggregates and outputs decoded from them)."""
    demo = prepare_demo(tmp_path / "data", noise=DISCRETE, dropouts=1, ledger_rounds=100)
    control = tmp_path / "control.json"
    control.write_text("{}")
    federation = Federation(tmp_path, demo.nodes)
    base_env = federation.env

    def env(home: Path) -> dict[str, str]:  # the test-only fault injection of tests/attacks (a site's death)
        out = base_env(home)
        out["PYTHONPATH"] = os.pathsep.join([str(ATTACKS), out["PYTHONPATH"]])
        out["CAPEFED_ATTACK_FILE"] = str(control)
        return out

    federation.env = env
    marker = tmp_path / "east-died"
    runs = []
    with contextlib.ExitStack() as stack:
        stack.callback(federation.stop)
        federation.start()
        for number, sites in ((1, {}), (2, {"east": {"fault": "die", "marker": str(marker)}})):
            control.write_text(json.dumps({"sites": sites}))
            out = tmp_path / f"outcome-{number}.json"
            config = dict(demo.run_config, run=number, out=str(out), timeout=120.0, grace=8.0)
            start = time.monotonic()
            federation.run_app(config, RUN_TIMEOUT)
            print(f"run {number}: {time.monotonic() - start:.1f} s")
            runs.append((config, json.loads(out.read_text())["rounds"]))
    assert tagged_processes(federation.tag) == []
    assert marker.exists()  # east's worker was killed at its release
    for (config, rounds), dropped in zip(runs, ((), ("east",)), strict=True):
        assert [r["algorithm"] for r in rounds] == ["capePCA", "capeAGN"]
        for outcome in rounds:
            assert outcome["status"] == "released", outcome["reason"]
            assert tuple(outcome["dropped"]) == dropped
            settings = settings_from_run_config(config, outcome["algorithm"], "simulation")
            simulated = simulate(demo.nodes, settings, dropped)
            assert outcome["plan"]["settings"]["noise"] == DISCRETE
            bits = [s["bits_per_value"] for s in outcome["plan"]["stages"]]
            assert all(isinstance(b, int) and 8 <= b <= 64 for b in bits), bits
            assert set(outcome["exact"]) == set(simulated.exact)
            for stage, exact in outcome["exact"].items():
                assert exact == [int(x) for x in simulated.exact[stage]], stage  # integers, exactly
                assert np.array_equal(np.asarray(outcome["aggregates"][stage]), simulated.aggregates[stage]), stage
            for key, value in simulated.outputs.items():
                assert np.array_equal(np.asarray(outcome["outputs"][key]), np.asarray(value)), key
