"""Gain explorer (dpcore.gain): size paths, Proposition 1 along them, the DP-floor and N_s/N gains."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.cape import dp_floor, gain_bounds, gain_equal_weights, generalized_gain
from dpcore.cape.gain import (
    SIZE_PATHS,
    dirichlet_gain_quantiles,
    dirichlet_sizes,
    gain_curves,
    gain_equal_weights_at_floor,
    imbalanced_sizes,
    scenario_gains,
)
from dpcore.data import apportion
from dpcore.scenario import preset_scenario, scenario_from_dict
from dpcore.validation import InputError


def test_apportion_exact_shares_and_minimum():
    assert apportion(10, [1, 1]).tolist() == [5, 5]
    assert apportion(10, [0, 0, 1]).tolist() == [1, 1, 8]
    assert apportion(12, [1, 2, 3], minimum=0).tolist() == [2, 4, 6]
    # largest remainder: 7 extra samples in shares 1:1:1 -> 3, 2, 2 (ties to the lower index)
    assert apportion(10, [1, 1, 1]).tolist() == [4, 3, 3]


def test_apportion_rows_sum_and_stay_close_to_shares(rng):
    shares = rng.dirichlet(np.ones(6), size=200)
    sizes = apportion(1003, shares)
    assert sizes.shape == (200, 6)
    assert np.all(sizes.sum(axis=1) == 1003) and sizes.min() >= 1
    exact = 1 + (1003 - 6) * shares  # one sample per site, the rest by shares
    assert np.max(np.abs(sizes - exact)) < 1.0 + 1e-9


def test_apportion_rejects_bad_input():
    with pytest.raises(InputError, match="too small"):
        apportion(3, [1, 1, 1, 1])
    with pytest.raises(InputError, match="shares"):
        apportion(10, [0, 0])
    with pytest.raises(InputError, match="shares"):
        apportion(10, [1, -1])


@pytest.mark.parametrize("family", list(SIZE_PATHS))
def test_imbalance_zero_is_equal_sizes_with_gain_s(family):
    sizes = imbalanced_sizes(5000, 5, 0.0, family)
    assert sizes.tolist() == [1000] * 5
    assert math.isclose(gain_equal_weights(sizes), 5.0)


def test_one_large_at_one_is_the_maximiser_of_proposition_1():
    total, n_sites = 2000, 4
    sizes = imbalanced_sizes(total, n_sites, 1.0, "one-large")
    assert sizes.tolist() == [1, 1, 1, total - n_sites + 1]
    assert math.isclose(gain_equal_weights(sizes), gain_bounds(total, n_sites)[1], rel_tol=1e-12)


def test_gain_grows_along_the_one_large_path():
    curves = gain_curves(3000, 6, np.linspace(0, 1, 41), "one-large")
    assert np.all(np.diff(curves.prop1) >= -1e-9)
    assert math.isclose(curves.prop1[0], 6.0) and curves.prop1[-1] > 1e5
    assert np.all(curves.sizes.sum(axis=1) == 3000)
    assert np.all(curves.size_weights == 6.0)
    lo, hi = gain_bounds(3000, 6)
    assert np.all((curves.prop1 >= lo - 1e-9) & (curves.prop1 <= hi * (1 + 1e-12)))


def test_geometric_family_is_increasing_and_sums():
    sizes = imbalanced_sizes(10_000, 5, 0.6, "geometric")
    assert sizes.sum() == 10_000 and np.all(np.diff(sizes) > 0)


def test_imbalanced_sizes_validates():
    with pytest.raises(InputError, match="imbalance"):
        imbalanced_sizes(100, 5, 1.5)
    with pytest.raises(InputError, match="N = 3 < S = 5"):
        imbalanced_sizes(3, 5, 0.5)
    with pytest.raises(InputError, match="size path"):
        imbalanced_sizes(100, 5, 0.5, "spiral")


def test_gain_equal_weights_by_rows_matches_one_row_at_a_time(rng):
    sizes = rng.integers(1, 5000, size=(50, 7))
    expected = [gain_equal_weights(row) for row in sizes]
    np.testing.assert_allclose(gain_equal_weights(sizes), expected, rtol=1e-12)


def test_floor_gain_is_the_generalized_gain_of_equal_weights_at_the_floor(rng):
    for _ in range(20):
        sizes = rng.integers(10, 3000, size=5)
        c = float(rng.uniform(0.5, 20))  # noise multiplier, common to every site
        tau = c / sizes
        mu = np.full(5, 0.2)
        expected = generalized_gain(mu, tau, dp_floor(mu, tau))
        assert math.isclose(gain_equal_weights_at_floor(sizes), expected, rel_tol=1e-12)
        assert gain_equal_weights_at_floor(sizes) <= 5 + 1e-12
        # with weights N_s / N the floor is c / N and the gain is exactly S
        size_mu = sizes / sizes.sum()
        assert math.isclose(dp_floor(size_mu, tau), c / sizes.sum(), rel_tol=1e-12)
        assert math.isclose(generalized_gain(size_mu, tau, dp_floor(size_mu, tau)), 5.0, rel_tol=1e-12)


def test_dirichlet_sizes_are_seeded_and_unbiased():
    a = dirichlet_sizes(10_000, 4, 2.0, np.random.default_rng(3), draws=2000)
    b = dirichlet_sizes(10_000, 4, 2.0, np.random.default_rng(3), draws=2000)
    assert np.array_equal(a, b)
    assert np.all(a.sum(axis=1) == 10_000) and a.min() >= 1
    # each extra-sample share is Beta(alpha, (S-1) alpha): mean 1/S, var (1/S)(1-1/S)/(S alpha + 1)
    share = (a - 1) / (10_000 - 4)
    se = math.sqrt(0.25 * 0.75 / (4 * 2.0 + 1) / 2000)
    assert np.all(np.abs(share.mean(axis=0) - 0.25) < 5 * se + 1e-4)


def test_dirichlet_concentration_controls_inequality():
    q = dirichlet_gain_quantiles(5000, 5, np.array([0.2, 2.0, 200.0]), draws=300, seed=11)
    medians = q[:, 1]
    assert medians[0] > medians[1] > medians[2] >= 5.0
    assert medians[2] < 5.5  # alpha = 200: sizes nearly equal
    assert np.all(q[:, 0] <= q[:, 1]) and np.all(q[:, 1] <= q[:, 2])
    again = dirichlet_gain_quantiles(5000, 5, np.array([0.2, 2.0, 200.0]), draws=300, seed=11)
    assert np.array_equal(q, again)


def test_dirichlet_validates():
    with pytest.raises(InputError, match="concentration"):
        dirichlet_sizes(100, 3, 0.0, np.random.default_rng(0))
    with pytest.raises(InputError, match="draws"):
        dirichlet_sizes(100, 3, 1.0, np.random.default_rng(0), draws=10**6)


def test_scenario_gains_equal_and_one_large_presets():
    equal = scenario_gains(preset_scenario("equal"))
    assert (equal.prop1, equal.floor_equal, equal.prop1_min) == (5.0, 5.0, 5.0)
    assert math.isclose(equal.generalized, 5.0) and math.isclose(equal.size_weights, 5.0)
    large = scenario_gains(preset_scenario("one-large"))  # 5000, 250 x 4, N = 6000
    assert math.isclose(large.prop1, 6000**2 / 25 * (1 / 5000**2 + 4 / 250**2))
    assert math.isclose(large.floor_equal, 4 + (250 / 5000) ** 2)
    assert math.isclose(large.generalized, 5.0)  # the preset has no weights: N_s / N
    assert not large.below_floor


def test_scenario_gains_with_weights_and_tau_c_below_floor():
    scenario = scenario_from_dict({
        "sites": [{"name": "A", "n": 100, "eps": 1.0, "delta": 1e-5, "weight": 0.5},
                  {"name": "B", "n": 400, "eps": 1.0, "delta": 1e-5, "weight": 0.5}],
        "tau_c": 1e-4,
    })
    gains = scenario_gains(scenario)
    tau = scenario.taus("mean")
    assert gains.below_floor and math.isclose(gains.tau_floor, 0.5 * tau[0])
    assert math.isclose(gains.generalized, 0.25 * (tau[0] ** 2 + tau[1] ** 2) / 1e-8)


def test_with_sizes_keeps_budgets_and_weights():
    base = preset_scenario("one-strict")
    changed = base.with_sizes(np.array([10, 20, 30, 40, 50]))
    assert changed.sizes.tolist() == [10, 20, 30, 40, 50]
    assert changed.eps.tolist() == base.eps.tolist() and changed.names == base.names
    with pytest.raises(InputError, match="one size per site"):
        base.with_sizes(np.array([1, 2]))
    with pytest.raises(InputError, match="n"):
        base.with_sizes(np.array([0, 20, 30, 40, 50]))
