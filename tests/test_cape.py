"""CAPE noise design: equal variances, the published closed form, the general solver, gains, weights."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpcore.cape import (
    design_closed_form,
    design_collusion_robust,
    design_equal,
    design_general,
    dp_floor,
    equal_cape_variances,
    gain_bounds,
    gain_equal_weights,
    generalized_gain,
    sample_noise,
    suggest_weights,
)
from dpcore.privacy import zero_sum_feasible
from dpcore.validation import InputError


def assert_constraints(design, rtol=1e-7):
    """The generalized problem's constraints (docs/math/cape.md, "Generalized CAPE") hold for a feasible design."""
    t2 = design.tau**2
    scale = t2.max()
    assert np.all(design.var_e >= -1e-12 * scale)
    assert np.all(design.var_f >= -1e-12 * scale)
    assert np.all(design.var_g >= -1e-12 * scale)
    assert np.all(design.var_e + design.var_g >= t2 * (1 - rtol))
    assert np.all(design.var_f + design.var_g >= t2 * (1 - rtol))
    assert np.sum(design.weights**2 * design.var_g) == pytest.approx(design.tau_c**2, rel=1e-6)
    assert zero_sum_feasible(design.weights, design.var_e, rtol=1e-6)
    mixing = design.e_mixing
    assert np.max(np.abs(design.weights @ mixing)) <= 1e-10 * max(np.abs(mixing).max(), 1e-300)
    assert np.allclose(np.sum(mixing**2, axis=1), design.var_e, rtol=1e-8, atol=1e-14 * scale)


def test_equal_variances_formula():
    assert equal_cape_variances(2.0, 4) == pytest.approx((3.0, 3.0, 1.0))


def test_equal_design_reaches_the_pooled_level(rng):
    tau, n_sites = 0.3, 5
    d = design_equal(tau, n_sites)
    assert d.tau_c == pytest.approx(tau / n_sites)
    assert d.output_std == pytest.approx(tau / n_sites)
    assert d.gain == pytest.approx(n_sites)
    assert_constraints(d)
    noise = sample_noise(d, rng, 40000)
    assert np.max(np.abs(noise.e.sum(axis=0))) < 1e-12
    for arr, var in ((noise.e, d.var_e), (noise.f, d.var_f), (noise.g, d.var_g)):
        ratio = arr.var(axis=1, ddof=1) / var
        assert np.all(np.abs(ratio - 1) < 5 * math.sqrt(2 / 39999))
    aggregate = (d.weights[:, None] * (noise.e + noise.g)).sum(axis=0)
    assert abs(aggregate.var(ddof=1) / d.tau_c**2 - 1) < 5 * math.sqrt(2 / 39999)


def test_closed_form_hand_computed_example():
    # mu = (1/2, 1/4, 1/4), tau = (1, 2, 2), tau_c = floor = 1/2, site 3 last:
    # R = 1/4 - (1/4 + 1/4) = -1/4; tau_e3^2 = 2 + 2 = 4, tau_g3^2 = 0;
    # tau_e1^2 = (1/8 + 1/8) / (1/4 * 2) = 1/2, tau_e2^2 = (1/4) / (1/16 * 2) = 2.
    d = design_closed_form([1.0, 2.0, 2.0], [0.5, 0.25, 0.25])
    assert d.feasible and d.reason is None
    assert np.allclose(d.var_e, [0.5, 2.0, 4.0])
    assert np.allclose(d.var_f, [0.5, 2.0, 4.0])
    assert np.allclose(d.var_g, [0.5, 2.0, 0.0])
    assert_constraints(d)
    # published construction: e_3 = -(1/mu_3)(mu_1 e_1 + mu_2 e_2)
    assert d.e_mixing.shape == (3, 2)
    assert np.allclose(d.e_mixing[2], -(np.array([0.5, 0.25]) * np.sqrt([0.5, 2.0])) / 0.25)
    # another site last gives other variances: the closed form depends on the order
    first_last = design_closed_form([1.0, 2.0, 2.0], [0.5, 0.25, 0.25], last=0)
    assert np.allclose(first_last.var_e, [1.0, 2.0, 2.0])
    assert np.allclose(first_last.var_g, [0.0, 2.0, 2.0])


def test_closed_form_is_infeasible_for_five_equal_sites():
    # equal sites: tau_gS^2 = tau^2/2 + R/(2 mu^2) = (3 - S) tau^2 / 2 < 0 for S >= 4
    d = design_closed_form(np.ones(5), np.full(5, 0.2))
    assert not d.feasible
    assert d.var_g[-1] == pytest.approx(-1.0)
    assert "site s5: tau_g^2 = -1 < 0" in d.reason
    assert "depends on which site is last" in d.reason
    assert np.isnan(d.std(d.var_g)[-1])
    with pytest.raises(InputError, match="infeasible design"):
        sample_noise(d, np.random.default_rng(0), 3)
    # three equal sites are fine and match eq. (2) only in tau_c, not in the split
    three = design_closed_form(np.ones(3), np.full(3, 1 / 3))
    assert three.feasible and three.var_g[-1] == pytest.approx(0.0)


def test_closed_form_reports_tau_c_above_conventional():
    d = design_closed_form([1.0, 1.0], [0.5, 0.5], tau_c=1.0)
    assert not d.feasible
    assert "exceeds the conventional variance" in d.reason


def test_general_solver_reproduces_equation_2_for_equal_sites():
    for n_sites in (2, 3, 5, 10):
        d = design_general(np.full(n_sites, 0.7), np.full(n_sites, 1 / n_sites))
        ve, vf, vg = equal_cape_variances(0.7, n_sites)
        assert np.allclose(d.var_g, vg, rtol=1e-7)
        assert np.allclose(d.var_e, ve, rtol=1e-7)
        assert np.allclose(d.var_f, vf, rtol=1e-7)
        assert d.gain == pytest.approx(n_sites, rel=1e-9)


def test_general_solver_is_feasible_on_random_scenarios_in_any_order(rng):
    for _ in range(40):
        n_sites = int(rng.integers(2, 9))
        tau = rng.uniform(0.1, 5.0, n_sites) * 10.0 ** rng.integers(-6, 1)
        mu = rng.dirichlet(np.ones(n_sites))
        for objective in ("balanced", "min-noise"):
            d = design_general(tau, mu, objective=objective)
            assert d.feasible, d.reason
            assert d.tau_c == pytest.approx(dp_floor(mu, tau))
            assert_constraints(d)
        perm = rng.permutation(n_sites)
        shuffled = design_general(tau[perm], mu[perm])
        straight = design_general(tau, mu)
        assert shuffled.tau_c == pytest.approx(straight.tau_c)
        assert np.allclose(shuffled.var_g, straight.var_g[perm], rtol=1e-6, atol=1e-12 * tau.max() ** 2)


def test_balanced_objective_gives_every_site_the_share_one_over_g(rng):
    tau = np.array([1.0, 2.0, 0.5, 1.5])
    mu = np.array([0.1, 0.2, 0.3, 0.4])
    d = design_general(tau, mu)
    assert np.allclose(d.var_g / tau**2, 1 / d.gain, rtol=1e-6)


def test_general_solver_succeeds_where_the_closed_form_fails():
    tau, mu = np.ones(5), np.full(5, 0.2)
    assert not design_closed_form(tau, mu).feasible
    d = design_general(tau, mu)
    assert d.feasible
    assert_constraints(d)


def test_single_site_and_user_tau_c():
    one = design_general([2.0], [1.0])
    assert one.feasible and one.var_g[0] == pytest.approx(4.0) and one.var_e[0] == pytest.approx(0.0)
    fail = design_general([2.0], [1.0], tau_c=1.0)
    assert not fail.feasible
    assert "below the smallest achievable 2" in fail.reason
    assert "e + g noise must cover tau^2" in fail.reason
    # a user tau_c below the DP floor is accepted and flagged
    low = design_general([1.0, 1.0, 1.0], [1 / 3] * 3, tau_c=0.2)
    assert low.feasible and low.below_floor
    assert any("below the DP floor" in note for note in low.notes)
    assert_constraints(low)


def test_e_scale_raises_only_the_helper_noise():
    base = design_general(np.ones(4), np.full(4, 0.25))
    big = design_general(np.ones(4), np.full(4, 0.25), e_scale=100.0)
    assert np.allclose(big.var_e, 100 * base.var_e)
    assert np.allclose(big.var_g, base.var_g) and big.tau_c == base.tau_c
    with pytest.raises(InputError, match="e_scale must be >= 1"):
        design_general(np.ones(4), np.full(4, 0.25), e_scale=0.5)


def test_validation_messages():
    with pytest.raises(InputError, match="weights must sum to 1"):
        design_general([1.0, 1.0], [0.5, 0.6])
    with pytest.raises(InputError, match="tau_s must be positive"):
        design_general([1.0, -1.0], [0.5, 0.5])
    with pytest.raises(InputError, match="got 3 weights for 2 sites"):
        design_general([1.0, 1.0], [0.2, 0.3, 0.5])
    with pytest.raises(InputError, match="objective must be one of"):
        design_general([1.0, 1.0], [0.5, 0.5], objective="cheapest")


def test_collusion_robust_equal_sites_keep_gain_s_minus_c():
    n_sites = 6
    for c in range(n_sites):
        d = design_collusion_robust(np.ones(n_sites), np.full(n_sites, 1 / n_sites), c, margin=0.01)
        assert d.feasible
        assert d.gain == pytest.approx((n_sites - c) / 1.01, rel=1e-6)
        assert np.allclose(d.var_g, 1.01 / (n_sites - c))
        assert_constraints(d)


def test_collusion_robust_with_too_small_tau_c_explains_the_binding_constraint():
    d = design_collusion_robust(np.ones(4), np.full(4, 0.25), 2, tau_c=0.3)
    assert not d.feasible
    assert "below the smallest achievable" in d.reason
    assert "colluding site(s)" in d.reason


def test_gain_prop1_hand_values_and_bounds_by_enumeration():
    # n = (1, 1, 8): (100/9)(1 + 1 + 1/64)
    assert gain_equal_weights([1, 1, 8]) == pytest.approx(100 / 9 * (2 + 1 / 64))
    assert gain_equal_weights([5, 5, 5, 5]) == pytest.approx(4.0)
    total, n_sites = 12, 3
    values = [gain_equal_weights(c) for c in itertools.product(range(1, total), repeat=n_sites) if sum(c) == total]
    low, high = gain_bounds(total, n_sites)
    assert min(values) == pytest.approx(low)
    assert max(values) == pytest.approx(high)
    with pytest.raises(InputError):
        gain_bounds(2, 3)


def test_generalized_gain_is_s_with_sample_share_weights():
    sizes = np.array([100, 400, 1500])
    tau = 1.0 / sizes  # tau_s proportional to Delta_s = 1/N_s
    mu = sizes / sizes.sum()
    assert generalized_gain(mu, tau, dp_floor(mu, tau)) == pytest.approx(3.0)
    # Prop. 1 compares against tau_c = tau_pooled with equal weights, below their DP floor
    equal = np.full(3, 1 / 3)
    assert 1.0 / sizes.sum() < dp_floor(equal, tau)
    assert generalized_gain(equal, tau, 1.0 / sizes.sum()) == pytest.approx(gain_equal_weights(sizes))


def test_suggested_weights_optimise_their_objective(rng):
    tau = np.array([0.5, 1.0, 2.0, 4.0])
    sizes = np.array([800, 400, 200, 100])
    floor_w = suggest_weights(tau, sizes, "min-floor")
    assert np.allclose(floor_w.weights * tau, (floor_w.weights * tau)[0])
    inv = suggest_weights(tau, sizes, "inverse-variance")
    for w in rng.dirichlet(np.ones(4), 2000):
        assert dp_floor(w, tau) >= floor_w.tau_floor * (1 - 1e-12)
        assert np.sum(w**2 * tau**2) >= np.sum(inv.weights**2 * tau**2) * (1 - 1e-12)
    assert np.allclose(suggest_weights(tau, sizes, "sample-size").weights, sizes / sizes.sum())


def test_sampling_uses_common_random_numbers():
    small = design_general(np.ones(3), np.full(3, 1 / 3))
    large = design_general(np.full(3, 10.0), np.full(3, 1 / 3))
    a = sample_noise(small, np.random.default_rng(5), 7)
    b = sample_noise(large, np.random.default_rng(5), 7)
    assert np.allclose(b.g, 10 * a.g) and np.allclose(b.e, 10 * a.e) and np.allclose(b.f, 10 * a.f)
