"""Helper-free CAPE, drop-outs, the secure generator and the privacy ledger (dpcore.cape.helper_free,
dpcore.federation.noise / ledger / guard, dpcore.seeding).

The helper-free joint noise law is checked against the helper's by exact computation, and every view of the audit
(both variants, with and without a dropped site) against exact Gaussian conditioning of the full observation model
over every coalition."""

from __future__ import annotations

import itertools
import json
import math
import os

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from scipy.stats import norm

from dpcore.cape import plan_scenario
from dpcore.cape.audit import effective_sigma
from dpcore.cape.helper_free import (
    decode_sum,
    dropout_whatif,
    encode_fixed,
    fixed_point,
    joint_covariance,
    mask_share,
    scaled_for_variant,
    variant_audit,
    variant_view_sigmas,
)
from dpcore.federation import (
    LedgerEntry,
    RoundSettings,
    SiteBudget,
    approve_event,
    budget,
    composed_eps,
    create_ledger,
    dropout_audit,
    plan_round,
    read_ledger,
    release_entry,
    reserve_event,
    settle_event,
    site_plan_problem,
    spend_event,
    update_ledger,
)
from dpcore.privacy.calibration import exact_eps, privacy_profile
from dpcore.scenario import Site, scenario_from_dict
from dpcore.seeding import party_key, secret_bytes, secure_party_rng, secure_rng
from dpcore.validation import InputError

EQUAL = [{"name": f"s{i}", "n": 1000, "eps": 1.0, "delta": 1e-5} for i in range(5)]
UNEQUAL = [{"name": "a", "n": 800, "eps": 1.0, "delta": 1e-5}, {"name": "b", "n": 600, "eps": 0.5, "delta": 1e-5},
           {"name": "c", "n": 397, "eps": 1.0, "delta": 1e-5}, {"name": "d", "n": 2000, "eps": 0.3, "delta": 1e-5}]


def _design(sites, collusion=1):
    scenario = scenario_from_dict({"sites": sites, "calibration": "analytic"})
    return plan_scenario(scenario, "mean", solver="collusion-robust", collusion=collusion).design


def _conditioned_sigma(design, s, known, w_known):
    """sigma_eff of site s by exact Gaussian conditioning of the whole observation model: latent (e_1..e_S, W,
    g_1..g_S); the adversary observes y_t = [t = s] a + e_t + g_t for t not in ``known`` and e_t for t in it, plus W
    when ``w_known``."""
    n = design.n_sites
    m = 2 * n + 1
    cov = np.zeros((m, m))
    cov[: n + 1, : n + 1] = joint_covariance(design)
    cov[n + 1:, n + 1:] = np.diag(np.clip(design.var_g, 0, None))
    rows, b = [], []
    for t in range(n):
        r = np.zeros(m)
        r[t] = 1
        if t not in known:
            r[n + 1 + t] = 1
        rows.append(r)
        b.append(1.0 if t == s and t not in known else 0.0)
    if w_known:
        r = np.zeros(m)
        r[n] = 1
        rows.append(r)
        b.append(0.0)
    lin = np.array(rows)
    return effective_sigma(np.array(b), lin @ cov @ lin.T)


@pytest.mark.parametrize("sites", [EQUAL, UNEQUAL], ids=["equal", "unequal"])
def test_the_helper_free_joint_law_is_the_helpers(sites):
    design = _design(sites)
    joint = joint_covariance(design)
    helper = design.e_mixing @ design.e_mixing.T
    scale = float(np.max(np.abs(helper)))
    assert np.allclose(joint[:-1, :-1], helper, rtol=1e-10, atol=1e-12 * scale)
    assert abs(design.weights @ joint[:-1, :-1] @ design.weights) <= 1e-10 * scale  # sum mu e = 0 exactly
    # corr(e_s, W): zero (to rounding) exactly when W is independent of the helper terms
    corr = joint[:-1, -1] / np.sqrt(np.diag(joint)[:-1] * joint[-1, -1])
    if sites is EQUAL:
        assert np.max(np.abs(corr)) <= 1e-9
    else:
        assert np.max(np.abs(corr)) > 0.05


@pytest.mark.parametrize("sites", [EQUAL, UNEQUAL], ids=["equal", "unequal"])
@pytest.mark.parametrize("variant", ["helper", "helper-free"])
@pytest.mark.parametrize("dropped", [(), (0,)])
def test_every_view_equals_exact_gaussian_conditioning(sites, variant, dropped):
    design = _design(sites)
    n = design.n_sites
    views = variant_view_sigmas(design, 1, variant=variant, dropped=dropped)
    seen = {v.site for v in views}
    assert seen == set(range(n)) - set(dropped)
    for v in views:
        if v.view not in ("aggregator", "aggregator+coalition"):
            continue
        w_known = variant == "helper-free" and len(v.coalition) > 0
        assert math.isclose(_conditioned_sigma(design, v.site, set(v.coalition), w_known), v.sigma_eff,
                            rel_tol=1e-7)
        others = [t for t in range(n) if t != v.site and t not in dropped]
        extra = len(v.coalition) - len(dropped)
        worst = min(_conditioned_sigma(design, v.site, set(dropped) | set(c),
                                       variant == "helper-free" and len(dropped) + len(c) > 0)
                    for c in itertools.combinations(others, extra))
        assert math.isclose(worst, v.sigma_eff, rel_tol=1e-7), (v.view, v.site)


def test_equal_weights_lose_nothing_unequal_weights_pay_in_the_coalition_views():
    equal = _design(EQUAL)
    assert [v.sigma_eff for v in variant_view_sigmas(equal, 1, variant="helper")] == pytest.approx(
        [v.sigma_eff for v in variant_view_sigmas(equal, 1, variant="helper-free")], rel=1e-9)
    unequal = _design(UNEQUAL)
    helper = {(v.site, v.view): v.sigma_eff for v in variant_view_sigmas(unequal, 1, variant="helper")}
    free = {(v.site, v.view): v.sigma_eff for v in variant_view_sigmas(unequal, 1, variant="helper-free")}
    assert all(free[k] <= helper[k] * (1 + 1e-9) for k in helper)
    assert all(free[k] == pytest.approx(helper[k], rel=1e-9) for k in helper if k[1] != "aggregator+coalition")
    assert any(free[k] < helper[k] * (1 - 1e-3) for k in helper if k[1] == "aggregator+coalition")
    # the helper's design fails the helper-free audit; more helper noise restores it (same limit in both variants)
    sens, eps, delta = np.full(4, 1e-3), np.array([1.0, 0.5, 1.0, 0.3]), np.full(4, 1e-5)
    scenario = scenario_from_dict({"sites": UNEQUAL, "calibration": "analytic"})
    plan = plan_scenario(scenario, "mean", solver="collusion-robust", collusion=1)
    sens = plan.sensitivities
    assert not variant_audit(plan.design, sens, eps, delta, 1, variant="helper-free").all_ok
    scaled = scaled_for_variant(plan.design, sens, eps, delta, 1, "helper-free")
    assert scaled.e_scale > plan.design.e_scale and scaled.tau_c == plan.design.tau_c
    assert variant_audit(scaled, sens, eps, delta, 1, variant="helper-free").all_ok


def test_the_secure_sum_is_exact_and_its_masks_cancel():
    rng = np.random.default_rng(3)
    var_w = np.array([0.5, 2.0, 1e-3])
    encoding = fixed_point(var_w, 3)
    draws = [rng.standard_normal(200) * math.sqrt(v) for v in var_w]
    encoded = [encode_fixed(d, encoding) for d in draws]
    masks = {(s, t): rng.integers(0, 2**64, 200, dtype=np.uint64, endpoint=False) for s in range(3)
             for t in range(s + 1, 3)}
    shares = [mask_share(encoded[s], [masks[(s, t)] for t in range(s + 1, 3)],
                         [masks[(t, s)] for t in range(s)]) for s in range(3)]
    total = np.zeros(200, dtype=np.uint64)
    for share in shares:
        total += share
    assert np.array_equal(total, encoded[0] + encoded[1] + encoded[2])  # the masks cancel exactly, mod 2^64
    assert np.max(np.abs(decode_sum(total, encoding) - sum(draws))) <= 1e-12  # quantisation 2^-bits each
    assert encoding.step <= 2.0**-24
    # a single masked share says nothing: it is uniform whatever the draw
    assert not np.array_equal(shares[0], encoded[0])
    with pytest.raises(InputError, match="quantisation step"):
        fixed_point(np.array([1.0, 1e-30]), 3)
    with pytest.raises(InputError, match="exceeds the secure sum's range"):
        encode_fixed(np.array([encoding.bound * 2]), encoding)


def test_the_secure_generator_is_chacha20_of_rfc_8439():
    key = bytes(range(32))
    raw = secure_rng(key).bit_generator.random_raw(16).astype("<u8").tobytes()
    keystream = Cipher(algorithms.ChaCha20(key, bytes(16)), mode=None).encryptor().update(bytes(128))
    assert raw == keystream
    base = ("0" * 64, 0, "capePCA", "A", "site", "north")
    assert party_key(*base) != party_key("0" * 63 + "1", *base[1:])
    for i in range(1, 6):
        changed = list(base)
        changed[i] = changed[i] + 1 if isinstance(changed[i], int) else changed[i] + "x"
        assert party_key(*changed) != party_key(*base)
    assert np.array_equal(secure_party_rng(*base).standard_normal(5), secure_party_rng(*base).standard_normal(5))
    assert len(secret_bytes(7)) == 32
    for bad in ("abc", "z" * 40, -1, True, b"short"):
        with pytest.raises(ValueError):
            secret_bytes(bad)


def test_dropout_whatif_shows_accuracy_and_audit():
    scenario = scenario_from_dict({"sites": UNEQUAL, "calibration": "analytic"})
    plan = plan_scenario(scenario, "mean", solver="collusion-robust", collusion=1)
    d, sens = plan.design, plan.sensitivities
    none = dropout_whatif(d, sens, scenario.eps, scenario.delta, 0, 0)
    assert none.dropped == () and none.output_std == pytest.approx(d.output_std / float(d.weights.sum()))
    assert none.failing == () and none.worst_ratio >= 1 - 1e-9
    one = dropout_whatif(d, sens, scenario.eps, scenario.delta, 0, 1, "helper")
    assert len(one.dropped) == 1 and one.sets == 4 and one.exhaustive
    assert one.failing == ()  # a design for c + 1 = 1 colluder survives one drop-out with c = 0
    two = dropout_whatif(d, sens, scenario.eps, scenario.delta, 0, 2)
    assert two.worst_ratio < one.worst_ratio and two.failing  # beyond what it was made for
    with pytest.raises(InputError):
        dropout_whatif(d, sens, scenario.eps, scenario.delta, 0, 3)


def _budgets():
    return [SiteBudget(site=Site(name=n, n=size, eps=e, delta=1e-5, weight=None), dim=8)
            for n, size, e in (("east", 600, 0.5), ("north", 800, 1.0), ("south", 397, 1.0))]


@pytest.mark.parametrize("noise", ["helper", "helper-free"])
def test_a_site_checks_its_own_promise_and_the_audit_after_a_dropout(noise):
    budgets = _budgets()
    plan = plan_round(budgets, RoundSettings(algorithm="capePCA", k=2, noise=noise, dropouts=1))
    assert plan.refusal is None and plan.design_collusion == 1 and plan.threshold == 2
    assert all(site_plan_problem(plan, b) is None for b in budgets)
    assert "requires at least 1" in site_plan_problem(plan, budgets[0], min_collusion=1)
    other = SiteBudget(site=Site(name="east", n=600, eps=0.4, delta=1e-5, weight=None), dim=8)
    assert "other values" in site_plan_problem(plan, other)
    report = dropout_audit(plan, plan.stage("A"), ["east"])
    assert report.all_ok and {r.site for r in report.rows} == {"north", "south"}
    assert all("east" in r.coalition for r in report.rows)
    assert "at most S - 2" in plan_round(budgets, RoundSettings(algorithm="capePCA", k=2, dropouts=2)).refusal


def test_the_ledger_composes_exactly_refuses_and_writes_atomically(tmp_path):
    """The two-phase ledger (dpcore.federation.ledger / accounts): a reserved round counts in full until it is
    settled, then only its spent stages; a round is answered once; a round beyond the total is refused; every write
    is atomic; a missing, edited or damaged ledger is refused."""
    delta = 1e-5
    for mus in ([0.3], [0.3, 0.4], [0.2] * 9):
        total = math.sqrt(sum(m * m for m in mus))
        eps = composed_eps(mus, delta)
        assert eps == pytest.approx(exact_eps(1.0, total, delta), rel=1e-9)
        # the composed privacy-loss variable of Gaussian mechanisms is N(mu^2/2, mu^2): delta(eps) by hand
        by_hand = norm.cdf(-eps / total + total / 2) - math.exp(eps) * norm.cdf(-eps / total - total / 2)
        assert by_hand == pytest.approx(delta, rel=1e-6) and privacy_profile(total, eps) <= delta * (1 + 1e-9)
    path, key, study = tmp_path / "north.json", bytes(range(32)), "ab" * 32
    with pytest.raises(InputError, match="does not exist"):  # never a fresh budget
        read_ledger(path, key, "north")
    created = create_ledger(path, key, "north", 1.0, delta)
    assert read_ledger(path, key, "north") == created and budget(created).counted_eps == 0.0
    update_ledger(path, key, "north", lambda led: [approve_event(led, study, "t", 100, 0.0)])

    def reserve(round_id, mu=0.15):
        entry = LedgerEntry(round=round_id, algorithm="capePCA", stage="A", eps=0.5, delta=1e-6, view="aggregator",
                            mu=mu)
        return lambda led: [reserve_event(led, round_id, study, "capePCA", [entry], {}, 100)]

    reserved = update_ledger(path, key, "north", reserve("r1"))
    assert budget(reserved).counted_mu == pytest.approx(0.15) and budget(reserved).spent_eps == 0.0
    after = update_ledger(path, key, "north", lambda led: [spend_event(led, "r1", "A", {})])
    after = update_ledger(path, key, "north", lambda led: [settle_event(led, "r1", "the round's end")])
    assert sorted(os.listdir(tmp_path)) == ["north.json", "north.json.lock"]  # no temporary file left
    again = read_ledger(path, key, "north")
    assert again == after
    spent = budget(again)  # the spend is recorded: the stage counts for good once the round is settled
    assert spent.spent_eps == pytest.approx(composed_eps([0.15], delta), rel=1e-12) and spent.void_stages == 0
    with pytest.raises(InputError, match="reserved round r1 before"):  # a round is answered once
        update_ledger(path, key, "north", reserve("r1"))
    with pytest.raises(InputError, match="closed"):  # a settled round is spent no more
        update_ledger(path, key, "north", lambda led: [spend_event(led, "r1", "A", {})])
    update_ledger(path, key, "north", reserve("r2"))
    update_ledger(path, key, "north", lambda led: [spend_event(led, "r2", "A", {})])
    with pytest.raises(InputError, match="spent stage A of round r2 already"):
        update_ledger(path, key, "north", lambda led: [spend_event(led, "r2", "A", {})])
    with pytest.raises(InputError, match="ledger refuses") as refused:  # beyond the total with r2 counted in full
        update_ledger(path, key, "north", reserve("r3", mu=10.0))
    assert "more than the total eps = 1" in str(refused.value)
    assert read_ledger(path, key, "north").events[-1].kind == "spend"  # nothing of a refused change written
    doc = json.loads(path.read_text())
    doc["events"][0]["eps_total"] = 2.0  # a budget is not reset by editing the file
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="fails its check at event 1"):
        read_ledger(path, key, "north")
    doc["events"][0]["eps_total"] = 1.0
    assert doc["events"][2]["kind"] == "reserve"
    doc["events"][2]["stages"][0]["mu"] = "x"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="must be"):
        read_ledger(path, key, "north")
    with pytest.raises(InputError, match="not a regular file"):
        read_ledger("/dev/zero", key, "north")


def test_a_release_entry_is_the_worst_audited_view():
    budgets = _budgets()
    plan = plan_round(budgets, RoundSettings(algorithm="capePCA", k=2, noise="helper-free", dropouts=1))
    stage = plan.stage("A")
    entry = release_entry(plan, stage, "north", "r")
    i = plan.names.index("north")
    report = variant_audit(stage.design, stage.sensitivities, stage.eps, stage.delta, 1, variant="helper-free")
    worst = min(r.sigma_eff for r in report.rows if r.site == "north")
    assert entry.mu == pytest.approx(stage.sensitivities[i] / worst, rel=1e-12)
    assert composed_eps([entry.mu], stage.delta[i]) <= stage.eps[i] * (1 + 1e-9)


@pytest.mark.parametrize(("field", "value", "words"), [
    ("split", 1e-300, "split"), ("split", 0.999999, "split"),
    ("norm_bound", 1e200, "norm bound"), ("norm_bound", 1e-300, "norm bound"),
])
def test_round_settings_refuse_what_a_message_log_refuses(field, value, words):
    """A run configuration is held to the message log's ranges (SPLIT_RANGE, NORM_BOUND_RANGE): a split of 1e-300
    once looped in the analytic calibration, a norm bound of 1e200 overflowed."""
    settings = {"algorithm": "capeAGN", "k": 2, "model": "mog", "sigma2": 0.1, "norm_bound": 1.0, field: value}
    with pytest.raises(InputError, match=words):
        RoundSettings(**settings).validated()


def test_the_noise_variants_are_a_table_like_the_solvers():
    from dpcore.cape.noise_variants import NOISE_VARIANTS, noise_variant
    from dpcore.validation import InputError

    assert list(NOISE_VARIANTS) == ["helper", "helper-free", "discrete"]
    assert NOISE_VARIANTS["helper"].helper and not NOISE_VARIANTS["helper-free"].helper
    assert NOISE_VARIANTS["helper"].audit_without_dropouts and not NOISE_VARIANTS["helper-free"].audit_without_dropouts
    with pytest.raises(InputError, match="noise variant must be one of 'helper', 'helper-free', 'discrete'"):
        noise_variant("oracle")


def test_a_round_accepts_only_the_variants_the_flower_round_runs(monkeypatch):
    """Every variant of the table runs in the Flower round (the discrete one since issue 35); a variant whose entry
    says otherwise is refused there, naming the ones it runs."""
    import dataclasses

    from dpcore.cape.noise_variants import NOISE_VARIANTS, federated_variants

    assert federated_variants() == ("helper", "helper-free", "discrete")
    assert RoundSettings(algorithm="capePCA", k=2, noise="discrete").validated().noise == "discrete"
    monkeypatch.setitem(NOISE_VARIANTS, "discrete", dataclasses.replace(NOISE_VARIANTS["discrete"], federated=False))
    with pytest.raises(InputError, match="noise must be one of 'helper', 'helper-free'"):
        RoundSettings(algorithm="capePCA", k=2, noise="discrete").validated()
