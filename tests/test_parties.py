"""The parties of a CAPE round (dpcore.cape.parties: each party's noise, release and combination; dpcore.seeding:
their streams) and the federated round (dpcore.federation: plan, site statistics, noise objects, outputs, the
in-process round)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.agn import make_model, mog_norm_bound, q_comp, sample_mog, sample_stm
from dpcore.cape import agn_stage_plans, design_closed_form, plan_scenario
from dpcore.cape.parties import (
    NOISE_BLOCK,
    aggregator_noise,
    combine,
    helper_noise,
    mixing_problem,
    site_noise,
    site_release,
)
from dpcore.federation import (
    RoundSettings,
    SiteBudget,
    budget_digest,
    mog_site,
    noise_entries,
    plan_round,
    simulate_round,
    site_statistic,
    stm_site,
)
from dpcore.pca import cape_aggregate
from dpcore.privacy import unique_count_matrix, unique_count_tensor, unique_entries_matrix, weighted_zero_sum_mixing
from dpcore.privacy.symmetric import symmetric_tensor, unique_entries_tensor
from dpcore.scenario import Site, scenario_from_dict
from dpcore.seeding import party_rng
from dpcore.tensor.multilinear import multilinear
from dpcore.validation import InputError


def _budget(name, n, eps=1.0, dim=64, weight=None):
    return SiteBudget(site=Site(name=name, n=n, eps=eps, delta=1e-5, weight=weight), dim=dim)


def _budgets(sizes, eps=(1.0, 0.5, 1.0), dim=64, names=("north", "east", "south")):
    return [_budget(n, s, e, dim) for n, s, e in zip(names, sizes, eps, strict=True)]


def _unit_columns(rng, dim, n):
    x = rng.standard_normal((dim, n))
    return x / np.linalg.norm(x, axis=0).max()


SEEDS = {"helper": 1, "aggregator": 2, "north": 3, "east": 4, "south": 5}


def test_streams_are_keyed_by_every_name():
    base = (7, 0, "capePCA", "A", "site", "north")
    draw = party_rng(*base).standard_normal(4)
    assert np.array_equal(draw, party_rng(*base).standard_normal(4))
    for i, other in enumerate((8, 1, "capeAGN", "M2", "aggregator", "south")):
        key = list(base)
        key[i] = other
        assert not np.allclose(draw, party_rng(*key).standard_normal(4)), f"component {i} does not change the stream"
    assert not np.allclose(draw, party_rng(*base[:5]).standard_normal(4))


def test_budget_digest_changes_with_every_value():
    budget = _budget("north", 800)
    digest = budget_digest(budget)
    assert digest == budget_digest(_budget("north", 800))
    assert SiteBudget.from_dict(budget.to_dict()) == budget
    for change in ({"name": "south"}, {"n": 801}, {"eps": 0.9}, {"delta": 2e-5}, {"weight": 0.5}, {"dim": 63}):
        values = budget.to_dict() | change
        assert budget_digest(SiteBudget.from_dict(values)) != digest, change


def test_helper_noise_is_the_design_mixing_and_cancels():
    """e = M z block by block: every block of standard normals is mixed by the design's M, so the weighted sum
    cancels to rounding (a few units in the last place of sum_s sum_j |mu_s M_sj z_j|) across a block boundary."""
    plan = plan_round(_budgets([800, 600, 397], dim=40), RoundSettings(algorithm="capePCA", k=2))
    design = plan.stage("A").design
    size = NOISE_BLOCK + 37
    e = helper_noise(design.e_mixing, size, np.random.default_rng(0))
    assert e.shape == (3, size)
    rng = np.random.default_rng(0)
    z = np.hstack([rng.standard_normal((design.e_mixing.shape[1], NOISE_BLOCK)),
                   rng.standard_normal((design.e_mixing.shape[1], 37))])
    np.testing.assert_allclose(e, design.e_mixing @ z, rtol=1e-12, atol=1e-12 * np.abs(e).max())
    weighted = (design.weights[:, None] * e).sum(axis=0)
    scale = np.abs(design.weights[:, None, None] * design.e_mixing[:, :, None] * z[None, :, :]).sum(axis=(0, 1))
    assert np.all(np.abs(weighted) <= 16 * np.finfo(float).eps * scale)


def test_helper_noise_has_the_audited_joint_law():
    """Several joint laws cancel with the same weights and variances; the audit checks the design's own M M^T, so
    the helper must draw exactly that one. Four equal sites, unit variances: a law of two cancelling pairs
    (e_1 = -e_2, e_3 = -e_4) is a valid design mixing, and the weighted zero-sum construction is another."""
    pairs = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    weights, var_e = np.full(4, 0.25), np.ones(4)
    assert mixing_problem(pairs, weights, var_e) is None
    other = weighted_zero_sum_mixing(weights, var_e)
    assert mixing_problem(other, weights, var_e) is None
    assert abs((other @ other.T)[0, 1] - (pairs @ pairs.T)[0, 1]) > 0.5  # two different joint laws
    e = helper_noise(pairs, 50_000, np.random.default_rng(3))
    np.testing.assert_array_equal(e[0], -e[1])
    np.testing.assert_array_equal(e[2], -e[3])
    assert abs(np.corrcoef(e[0], e[2])[0, 1]) < 6 / math.sqrt(50_000)  # independent pairs


def test_mixing_problem_names_what_is_wrong():
    design = design_closed_form([1.0, 1.2, 0.8], [0.3, 0.3, 0.4])
    m, mu, var = design.e_mixing, design.weights, design.var_e
    assert mixing_problem(m, mu, var) is None
    assert "cancel" in mixing_problem(m + 0.01, mu, var)
    assert "variance" in mixing_problem(m * 1.1, mu, var * 1.0)
    assert "S x m" in mixing_problem(m[:2], mu, var)
    assert "finite" in mixing_problem(np.where(m == m[0, 0], np.nan, m), mu, var)


def test_symmetrized_tensor_noise_law_by_index_pattern():
    """sqrt(6) Sym(Z) with Z ~ N(0, v): unique-entry variance v (3 distinct indices), 2 v (two equal), 6 v (all
    equal). 400 draws at D = 6: the smallest class (6 entries) has 2,400 samples, relative std sqrt(2/2400) = 2.9%;
    6 sigma = 17%, far below the factor 2 that separates the classes."""
    dim, var = 6, 2.5
    rows = np.stack([site_noise(var, dim**3, np.random.default_rng([9, i])) for i in range(400)])
    draws = noise_entries(rows, "M3", "symmetrized", "dense", dim)
    assert draws.shape == (400, unique_count_tensor(dim))
    i, j, k = np.array([(a, b, c) for c in range(dim) for b in range(c + 1) for a in range(b + 1)]).T
    distinct = 1 + (i != j).astype(int) + (j != k).astype(int)  # colex order: i <= j <= k
    for count, factor in ((3, 1.0), (2, 2.0), (1, 6.0)):
        sample = draws[:, distinct == count]
        tolerance = 6 * math.sqrt(2 / sample.size)
        assert abs(sample.var() / (factor * var) - 1) < tolerance, (count, sample.var())


def test_projected_noise_has_the_law_of_projected_dense_noise():
    """Equal in distribution, not in draws: the noise a party draws already projected (K x K x K, K^3 normals) and
    dense noise projected by W (D^3 normals) are zero-mean Gaussians, so their laws agree when their covariances
    do. 4,000 draws of each at D = 5, K = 2 (4 unique entries); every covariance entry's sample std is at most
    sqrt(2/n) times the geometric mean of the two variances: 6 sigma on the difference of two samples."""
    dim, k, n = 5, 2, 4000
    w = np.random.default_rng(11).standard_normal((dim, k)) / 2
    rng = np.random.default_rng(12)
    projected = noise_entries(np.stack([site_noise(1.0, k**3, rng) for _ in range(n)]), "M3", "symmetrized",
                              "projected", dim, w)
    dense = noise_entries(np.stack([site_noise(1.0, dim**3, rng) for _ in range(n)]), "M3", "symmetrized",
                          "dense", dim)
    via_dense = np.stack([unique_entries_tensor(multilinear(symmetric_tensor(row, dim), w)) for row in dense])
    assert projected.shape == via_dense.shape == (n, unique_count_tensor(k))
    cov_p, cov_d = np.cov(projected.T), np.cov(via_dense.T)
    scale = np.sqrt(np.outer(np.diag(cov_d), np.diag(cov_d)))
    assert np.all(np.abs(cov_p - cov_d) <= 6 * math.sqrt(2 * 2 / n) * scale)
    # and the test can fail: projecting on 2 W gives 64 times the variance
    double = noise_entries(np.stack([site_noise(1.0, k**3, rng) for _ in range(200)]), "M3", "symmetrized",
                           "projected", dim, 2 * w)
    assert np.var(double) > 10 * np.diag(cov_d).mean()


def test_release_and_combination_cancel_the_helper_noise(rng):
    dim = 30
    budgets = _budgets([800, 600, 397], dim=dim)
    plan = plan_round(budgets, RoundSettings(algorithm="capePCA", k=2))
    design, size = plan.stage("A").design, unique_count_matrix(dim)
    stats = [site_statistic("A", _unit_columns(rng, dim, b.site.n)) for b in budgets]
    e = helper_noise(design.e_mixing, size, rng)
    f = [aggregator_noise(design.var_f[i], size, rng) for i in range(3)]
    g = [site_noise(design.var_g[i], size, rng) for i in range(3)]
    releases = [site_release(stats[i], e[i], f[i], g[i]) for i in range(3)]
    np.testing.assert_array_equal(releases[0], ((stats[0] + e[0]) + f[0]) + g[0])
    aggregate = combine(releases, f, design.weights)
    clean = sum(design.weights[i] * (stats[i] + g[i]) for i in range(3))
    scale = np.abs(design.weights[:, None] * e).sum(axis=0)  # size of the cancelled terms
    assert np.all(np.abs(aggregate - clean) <= 64 * np.finfo(float).eps * (scale + np.abs(clean)))
    np.testing.assert_allclose(aggregate, cape_aggregate(np.array(releases), np.array(f), design.weights),
                               rtol=0, atol=64 * np.finfo(float).eps * scale.max())


def test_simulated_pca_aggregate_carries_tau_c(rng):
    """The aggregate minus sum_s mu_s A_s is sum_s mu_s g_s: i.i.d. N(0, tau_c^2) over the U = 5,050 unique
    entries (relative std of the sample variance sqrt(2/U) = 2%; 6 sigma), as pooled Analyze Gauss at tau_c."""
    dim = 100
    budgets = _budgets([800, 600, 397], dim=dim)
    data = {b.name: _unit_columns(rng, dim, b.site.n) for b in budgets}
    result = simulate_round(RoundSettings(algorithm="capePCA", k=3), budgets, data, SEEDS)
    design = result.plan.stage("A").design
    clean = sum(design.weights[i] * site_statistic("A", data[b.name]) for i, b in enumerate(budgets))
    noise = result.aggregates["A"] - clean
    assert noise.size == unique_count_matrix(dim)
    assert abs(noise.var() / design.output_std**2 - 1) < 6 * math.sqrt(2 / noise.size)
    assert result.outputs["components"].shape == (dim, 3)
    again = simulate_round(RoundSettings(algorithm="capePCA", k=3), budgets, data, SEEDS)
    assert np.array_equal(again.aggregates["A"], result.aggregates["A"])


@pytest.mark.parametrize("path", ["dense", "projected"])
def test_simulated_agn_recovers_the_topics(path):
    """STM, D = 10, K = 3, 20,000 documents per site at eps = 1: the recovered topics are close to the true ones
    (q_comp well below the distance between random topics, about 0.3), on both third-moment paths."""
    rng = np.random.default_rng(5)
    model = make_model("stm", 10, 3, rng)
    budgets = _budgets([20_000] * 3, eps=(1.0, 1.0, 1.0), dim=10)
    sites = {b.name: stm_site(sample_stm(model, b.site.n, rng), 10) for b in budgets}
    result = simulate_round(RoundSettings(algorithm="capeAGN", k=3, path=path), budgets, sites, SEEDS)
    assert set(result.aggregates) == {"M2", "M3"}
    assert result.aggregates["M2"].size == unique_count_matrix(10)
    assert result.aggregates["M3"].size == unique_count_tensor(3)
    assert q_comp(result.outputs["components"], model.components) < 0.08
    np.testing.assert_allclose(result.outputs["weights"].sum(), 1.0)
    m2 = sum(w * site_statistic("M2", sites[b.name]) for w, b in zip(result.plan.stage("M2").design.weights, budgets,
                                                                    strict=True))
    assert np.max(np.abs(result.aggregates["M2"] - m2)) < 8 * result.plan.stage("M2").design.output_std
    assert np.array_equal(unique_entries_matrix(sites["north"].m2()), site_statistic("M2", sites["north"]))


def test_simulated_agn_recovers_a_gaussian_mixture_on_the_projected_path():
    """MOG, D = 8, K = 2, sigma^2 = 0.05, 40,000 samples per site at eps = 2, divided by the public bound zeta: the
    recovered components (back in original units) are close to the true ones."""
    rng = np.random.default_rng(21)
    sigma2 = 0.05
    model = make_model("mog", 8, 2, rng, sigma2=sigma2)
    zeta = mog_norm_bound(8, sigma2)
    budgets = _budgets([40_000] * 3, eps=(2.0, 2.0, 2.0), dim=8)
    sites = {b.name: mog_site(sample_mog(model, b.site.n, rng), sigma2, zeta) for b in budgets}
    settings = RoundSettings(algorithm="capeAGN", k=2, model="mog", sigma2=sigma2, norm_bound=zeta, path="projected")
    result = simulate_round(settings, budgets, sites, SEEDS)
    assert q_comp(result.outputs["components"], model.components) < 0.15
    plan = result.plan
    scenario = scenario_from_dict({"sites": [b.site.__dict__ for b in budgets], "calibration": "analytic"})
    m3 = plan.stage("M3")
    np.testing.assert_allclose(m3.design.tau, agn_stage_plans(scenario, "mog", 0.5, dim=8, sigma2=sigma2 / zeta**2,
                                                              solver="collusion-robust")[1].design.tau)


def test_plan_refuses_a_design_that_fails_the_audit():
    budgets = _budgets([800, 600, 397], eps=(1.0, 1.0, 1.0))
    plan = plan_round(budgets, RoundSettings(algorithm="capePCA", k=5, solver="general"))
    assert plan.refusal is not None
    assert "audit fails" in plan.refusal and "aggregator view" in plan.refusal
    for name in ("north", "east", "south"):
        assert f"site {name}" in plan.refusal
    ok = plan_round(_budgets([800, 600, 397]), RoundSettings(algorithm="capePCA", k=5))
    assert ok.refusal is None and ok.stages[0].audit.all_ok


@pytest.mark.parametrize("budgets, settings, words", [
    (_budgets([800, 600, 397])[:1], RoundSettings(algorithm="capePCA", k=2), "at least two sites"),
    (_budgets([800, 600, 397], names=("a", "a", "b")), RoundSettings(algorithm="capePCA", k=2), "same name"),
    ([*_budgets([800, 600], eps=(1, 1), names=("a", "b")), _budget("c", 10, dim=63)],
     RoundSettings(algorithm="capePCA", k=2), "disagree on D"),
    (_budgets([800, 600, 397], dim=64), RoundSettings(algorithm="capeAGN", k=2), "outside 2..60"),
    (_budgets([800, 600, 397], dim=4), RoundSettings(algorithm="capePCA", k=5), "K"),
    (_budgets([800, 600, 397], eps=(1.0, -1.0, 1.0)), RoundSettings(algorithm="capePCA", k=2), "eps"),
    (_budgets([8000, 6000, 3970], dim=30), RoundSettings(algorithm="capeAGN", k=21, path="projected",
                                                         m3_noise="published"), "needs K <= 20"),
])
def test_plan_refuses_invalid_rounds_with_a_reason(budgets, settings, words):
    plan = plan_round(budgets, settings)
    assert plan.refusal is not None and words in plan.refusal, plan.refusal
    with pytest.raises(InputError):
        simulate_round(settings, budgets, {}, SEEDS)


def test_the_projected_path_allows_a_large_vocabulary():
    plan = plan_round(_budgets([20_000] * 3, dim=64), RoundSettings(algorithm="capeAGN", k=3, path="projected"))
    assert plan.refusal is None
    m3 = plan.stage("M3")
    # the default published law draws one normal per unique entry of the projected tensor (C(K+2, 3) = 10)
    assert (m3.shape, m3.unique, m3.size, m3.needs_w) == ((3, 3, 3), unique_count_tensor(3), 10, True)


@pytest.mark.parametrize("solver", ["general", "collusion-robust", "closed-form"])
def test_agn_stages_are_designed_by_the_one_route(solver):
    """plan_round's capeAGN designs are agn_stage_plans's for the same solver (and the capePCA design
    plan_scenario's): one route for every solver."""
    budgets = _budgets([20_000, 15_000, 10_000], dim=10)
    plan = plan_round(budgets, RoundSettings(algorithm="capeAGN", k=3, split=0.25, solver=solver))
    scenario = scenario_from_dict({"sites": [b.site.__dict__ for b in budgets], "calibration": "analytic"})
    stages = agn_stage_plans(scenario, "stm", 0.25, dim=10, solver=solver)
    # a refused plan stops at the first stage that fails (the plain general design fails the aggregator's audit)
    assert [p.stage for p in plan.stages] == (["M2", "M3"] if plan.refusal is None else ["M2"])
    for mine, theirs in zip(plan.stages, stages[:len(plan.stages)], strict=True):
        np.testing.assert_array_equal(mine.design.var_e, theirs.design.var_e)
        np.testing.assert_array_equal(mine.design.e_mixing, theirs.design.e_mixing)
    if plan.refusal is None:
        rows = {p.stage: p.audit.rows for p in plan.stages}
        assert {r.eps for r in rows["M2"] if r.site == "north"} == {0.25}
        assert {r.eps for r in rows["M3"] if r.site == "north"} == {0.75}
    pca = plan_round(budgets, RoundSettings(algorithm="capePCA", k=3, solver=solver))
    reference = plan_scenario(scenario, "pca", solver=solver, dim=10).design
    np.testing.assert_array_equal(pca.stage("A").design.var_g, reference.var_g)
