"""The parties of a CAPE round (dpcore.cape.parties: each party's noise, release and combination; dpcore.seeding:
their streams) and the federated round (dpcore.federation: plan, site statistics, outputs, the in-process round)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.cape.parties import aggregator_noise, combine, helper_noise, site_noise, site_release, unique_count
from dpcore.federation import (
    RoundSettings,
    SiteBudget,
    budget_digest,
    plan_round,
    simulate_round,
    site_statistic_m2,
    site_statistic_pca,
    stm_site,
)
from dpcore.otd import make_model, q_comp, sample_stm
from dpcore.pca import cape_aggregate
from dpcore.privacy import (
    unique_count_matrix,
    unique_count_tensor,
    unique_entries_matrix,
    weighted_zero_sum_mixing,
)
from dpcore.seeding import party_rng
from dpcore.validation import InputError


def _budgets(sizes, eps=(1.0, 0.5, 1.0), dim=64, names=("north", "east", "south")):
    return [SiteBudget(name=n, n=s, eps=e, delta=1e-5, weight=None, dim=dim)
            for n, s, e in zip(names, sizes, eps, strict=True)]


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
    budget = SiteBudget(name="north", n=800, eps=1.0, delta=1e-5, weight=None, dim=64)
    digest = budget_digest(budget)
    assert digest == budget_digest(SiteBudget(name="north", n=800, eps=1.0, delta=1e-5, weight=None, dim=64))
    for change in ({"name": "south"}, {"n": 801}, {"eps": 0.9}, {"delta": 2e-5}, {"weight": 0.5}, {"dim": 63}):
        values = budget.to_dict() | change
        assert budget_digest(SiteBudget(**values)) != digest, change


@pytest.mark.parametrize("kind, dim", [("matrix", 40), ("tensor", 6)])
def test_helper_noise_cancels_in_the_weighted_sum(kind, dim):
    plan = plan_round(_budgets([800, 600, 397], dim=dim), RoundSettings(algorithm="capePCA", k=2))
    design = plan.stage("A").design
    e = helper_noise(design.weights, design.var_e, kind, dim, np.random.default_rng(0))
    assert e.shape == (3, unique_count(kind, dim))
    weighted = (design.weights[:, None] * e).sum(axis=0)
    if kind == "matrix":
        # e = M z: rounding only, a few units in the last place of sum_s sum_j |mu_s M_sj z_j|
        mixing = weighted_zero_sum_mixing(design.weights, design.var_e)
        z = np.random.default_rng(0).standard_normal((mixing.shape[1], e.shape[1]))
        scale = np.abs(design.weights[:, None, None] * mixing[:, :, None] * z[None, :, :]).sum(axis=(0, 1))
        assert np.all(np.abs(weighted) <= 16 * np.finfo(float).eps * scale)
    else:
        # the symmetrisation is linear, so the cancellation survives it (rounding of the larger terms only)
        assert np.max(np.abs(weighted)) <= 1e-12 * np.max(np.abs(e))


def test_helper_noise_has_the_design_variances():
    """U = 20,100 i.i.d. unique entries per site: the sample variance has relative std sqrt(2/U) = 1%; 6 sigma."""
    dim = 200
    plan = plan_round(_budgets([800, 600, 397], dim=dim), RoundSettings(algorithm="capePCA", k=2))
    design = plan.stage("A").design
    e = helper_noise(design.weights, design.var_e, "matrix", dim, np.random.default_rng(1))
    tolerance = 6 * math.sqrt(2 / e.shape[1])
    np.testing.assert_allclose(e.var(axis=1), design.var_e, rtol=tolerance)


def test_tensor_noise_law_by_index_pattern():
    """sqrt(6) Sym(Z) with Z ~ N(0, v): unique-entry variance v (3 distinct indices), 2 v (two equal), 6 v (all
    equal). 400 draws at D = 6: the smallest class (6 entries) has 2,400 samples, relative std sqrt(2/2400) = 2.9%;
    6 sigma = 17%, far below the factor 2 that separates the classes."""
    dim, var = 6, 2.5
    draws = np.stack([site_noise(var, "tensor", dim, np.random.default_rng([9, i])) for i in range(400)])
    assert draws.shape[1] == unique_count_tensor(dim)
    i, j, k = np.array([(a, b, c) for c in range(dim) for b in range(c + 1) for a in range(b + 1)]).T
    distinct = 1 + (i != j).astype(int) + (j != k).astype(int)  # colex order: i <= j <= k
    for count, factor in ((3, 1.0), (2, 2.0), (1, 6.0)):
        sample = draws[:, distinct == count]
        tolerance = 6 * math.sqrt(2 / sample.size)
        assert abs(sample.var() / (factor * var) - 1) < tolerance, (count, sample.var())


def test_release_and_combination_cancel_the_helper_noise(rng):
    dim = 30
    budgets = _budgets([800, 600, 397], dim=dim)
    plan = plan_round(budgets, RoundSettings(algorithm="capePCA", k=2))
    design = plan.stage("A").design
    stats = [site_statistic_pca(_unit_columns(rng, dim, b.n)) for b in budgets]
    e = helper_noise(design.weights, design.var_e, "matrix", dim, rng)
    f = [aggregator_noise(design.var_f[i], "matrix", dim, rng) for i in range(3)]
    g = [site_noise(design.var_g[i], "matrix", dim, rng) for i in range(3)]
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
    data = {b.name: _unit_columns(rng, dim, b.n) for b in budgets}
    result = simulate_round(RoundSettings(algorithm="capePCA", k=3), budgets, data, SEEDS)
    design = result.plan.stage("A").design
    clean = sum(design.weights[i] * site_statistic_pca(data[b.name]) for i, b in enumerate(budgets))
    noise = result.aggregates["A"] - clean
    assert noise.size == unique_count_matrix(dim)
    assert abs(noise.var() / design.output_std**2 - 1) < 6 * math.sqrt(2 / noise.size)
    assert result.outputs["components"].shape == (dim, 3)
    again = simulate_round(RoundSettings(algorithm="capePCA", k=3), budgets, data, SEEDS)
    assert np.array_equal(again.aggregates["A"], result.aggregates["A"])


def test_simulated_agn_recovers_the_topics():
    """STM, D = 10, K = 3, 20,000 documents per site at eps = 1: the recovered topics are close to the true ones
    (q_comp well below the distance between random topics, about 0.3)."""
    rng = np.random.default_rng(5)
    model = make_model("stm", 10, 3, rng)
    budgets = _budgets([20_000] * 3, eps=(1.0, 1.0, 1.0), dim=10)
    sites = {b.name: stm_site(sample_stm(model, b.n, rng), 10) for b in budgets}
    result = simulate_round(RoundSettings(algorithm="capeAGN", k=3), budgets, sites, SEEDS)
    assert set(result.aggregates) == {"M2", "M3"}
    assert result.aggregates["M2"].size == unique_count_matrix(10)
    assert result.aggregates["M3"].size == unique_count_tensor(3)
    assert q_comp(result.outputs["components"], model.components) < 0.08
    np.testing.assert_allclose(result.outputs["weights"].sum(), 1.0)
    m2 = sum(w * site_statistic_m2(sites[b.name]) for w, b in zip(result.plan.stage("M2").design.weights, budgets,
                                                                     strict=True))
    assert np.max(np.abs(result.aggregates["M2"] - m2)) < 8 * result.plan.stage("M2").design.output_std
    assert np.array_equal(unique_entries_matrix(sites["north"].m2()), site_statistic_m2(sites["north"]))


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
    ([*_budgets([800, 600], eps=(1, 1), names=("a", "b")),
      SiteBudget(name="c", n=10, eps=1.0, delta=1e-5, weight=None, dim=63)],
     RoundSettings(algorithm="capePCA", k=2), "disagree on D"),
    (_budgets([800, 600, 397], dim=64), RoundSettings(algorithm="capeAGN", k=2), "outside 2..60"),
    (_budgets([800, 600, 397], dim=4), RoundSettings(algorithm="capePCA", k=5), "K"),
    (_budgets([800, 600, 397], eps=(1.0, -1.0, 1.0)), RoundSettings(algorithm="capePCA", k=2), "eps"),
])
def test_plan_refuses_invalid_rounds_with_a_reason(budgets, settings, words):
    plan = plan_round(budgets, settings)
    assert plan.refusal is not None and words in plan.refusal, plan.refusal
    with pytest.raises(InputError):
        simulate_round(settings, budgets, {}, SEEDS)


def test_agn_stages_split_the_budget():
    budgets = _budgets([20_000, 15_000, 10_000], dim=10)
    plan = plan_round(budgets, RoundSettings(algorithm="capeAGN", k=3, split=0.25))
    assert [p.stage for p in plan.stages] == ["M2", "M3"]
    rows = {p.stage: p.audit.rows for p in plan.stages}
    assert {r.eps for r in rows["M2"] if r.site == "north"} == {0.25}
    assert {r.eps for r in rows["M3"] if r.site == "north"} == {0.75}
