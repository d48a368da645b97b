"""Gaussian calibration (classic and analytic), the exact privacy profile, symmetric and zero-sum noise."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.privacy import (
    ClassicCalibrationWarning,
    avn_noise,
    delta_for_sigma,
    eps_for_sigma,
    gaussian_sigma,
    noise_multiplier,
    plain_zero_sum_noise,
    privacy_profile,
    symmetric_gaussian_matrix,
    symmetric_gaussian_tensor,
    symmetric_matrix,
    symmetric_tensor,
    unique_count_matrix,
    unique_count_tensor,
    unique_entries_matrix,
    unique_entries_tensor,
    weighted_zero_sum_mixing,
    zero_sum_feasible,
)
from dpcore.validation import InputError


def brute_force_delta(sigma: float, sensitivity: float, eps: float) -> float:
    """delta(eps) = integral of max(0, p(x) - e^eps q(x)) for p = N(0, s^2), q = N(Delta, s^2)."""

    def excess(x: float) -> float:
        return max(0.0, stats.norm.pdf(x, 0, sigma) - math.exp(eps) * stats.norm.pdf(x, sensitivity, sigma))

    # p > e^eps q exactly for x < Delta/2 - eps sigma^2 / Delta; integrate up to there.
    cut = sensitivity / 2 - eps * sigma**2 / sensitivity
    value, _ = integrate.quad(excess, cut - 40 * sigma, cut, epsabs=1e-14, epsrel=1e-10, limit=200)
    return value


def test_classic_multiplier_matches_hand_formula():
    # sqrt(2 ln(1.25 / 1e-5)) / 0.5 = sqrt(2 * 11.736069016284437) / 0.5
    assert noise_multiplier(0.5, 1e-5, "classic") == pytest.approx(9.689610525210778, rel=1e-12)
    assert gaussian_sigma(0.002, 0.5, 1e-5, "classic") == pytest.approx(0.002 * 9.689610525210778, rel=1e-12)


def test_classic_warns_only_from_eps_one():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        noise_multiplier(0.99, 1e-5, "classic")
        noise_multiplier(5.0, 1e-5, "analytic")
    with pytest.warns(ClassicCalibrationWarning, match="not a valid"):
        noise_multiplier(1.0, 1e-5, "classic")


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.5, 0.9, 2.0, 10.0])
@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-9])
def test_analytic_sigma_is_the_smallest_sigma_meeting_delta(eps, delta):
    c = noise_multiplier(eps, delta, "analytic")
    # exactly at delta (from below), and 0.1% less noise already breaks it
    assert privacy_profile(1 / c, eps) <= delta
    assert privacy_profile(1 / c, eps) == pytest.approx(delta, rel=1e-7)
    assert privacy_profile(1 / (0.999 * c), eps) > delta
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicCalibrationWarning)
        classic = noise_multiplier(eps, delta, "classic")
    if eps < 1:
        assert c <= classic
    elif classic < c:
        # the classic formula under-noises here: its sigma does not meet delta (why it is no guarantee)
        assert privacy_profile(1 / classic, eps) > delta


@pytest.mark.parametrize(("sigma", "eps"), [(1.0, 0.5), (3.0, 0.2), (0.5, 2.0), (2.0, 0.0)])
def test_privacy_profile_matches_numerical_integration(sigma, eps):
    assert privacy_profile(1 / sigma, eps) == pytest.approx(brute_force_delta(sigma, 1.0, eps), rel=1e-6, abs=1e-13)


def test_classic_is_valid_below_one_by_brute_force():
    for eps in (0.1, 0.5, 0.9):
        sigma = noise_multiplier(eps, 1e-3, "classic")
        assert brute_force_delta(sigma, 1.0, eps) <= 1e-3


def test_eps_for_sigma_inverts_the_analytic_calibration():
    for eps in (0.05, 0.5, 3.0):
        for sens in (1e-3, 1.0):
            sigma = gaussian_sigma(sens, eps, 1e-6, "analytic")
            assert eps_for_sigma(sigma, sens, 1e-6) == pytest.approx(eps, rel=1e-8)
            assert delta_for_sigma(sigma, sens, eps) == pytest.approx(1e-6, rel=1e-6)
    # the classic formula inverted gives back its eps exactly
    assert eps_for_sigma(gaussian_sigma(0.01, 0.3, 1e-5, "classic"), 0.01, 1e-5, "classic") == pytest.approx(0.3)
    # more noise, smaller eps; the classic sigma (eps < 1) is conservative
    assert eps_for_sigma(2.0, 1.0, 1e-5) < eps_for_sigma(1.0, 1.0, 1e-5)
    assert eps_for_sigma(noise_multiplier(0.5, 1e-5, "classic"), 1.0, 1e-5) < 0.5


def test_profile_and_inverse_edge_cases():
    assert eps_for_sigma(0.0, 1.0, 1e-5) == math.inf
    assert eps_for_sigma(math.inf, 1.0, 1e-5) == 0.0
    assert delta_for_sigma(0.0, 1.0, 0.5) == 1.0
    assert privacy_profile(0.0, 1.0) == 0.0
    # huge eps must not overflow
    assert 0.0 <= privacy_profile(0.5, 800.0) < 1e-300 or privacy_profile(0.5, 800.0) == 0.0
    # delta large enough that even eps = 0 is met
    assert eps_for_sigma(100.0, 1.0, 0.5) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"eps": 0.0, "delta": 1e-5}, "eps must be > 0"),
        ({"eps": -1.0, "delta": 1e-5}, "eps must be > 0"),
        ({"eps": 0.5, "delta": 0.0}, r"delta must be in the open interval \(0, 1\)"),
        ({"eps": 0.5, "delta": 1.0}, r"delta must be in the open interval \(0, 1\)"),
        ({"eps": float("nan"), "delta": 1e-5}, "eps must be finite"),
        ({"eps": "a lot", "delta": 1e-5}, "eps must be a number"),
    ],
)
def test_calibration_rejects_bad_budgets(kwargs, message):
    with pytest.raises(InputError, match=message):
        noise_multiplier(calibration="analytic", **kwargs)


def test_unknown_calibration_is_named():
    with pytest.raises(InputError, match="calibration must be one of 'classic', 'analytic'"):
        noise_multiplier(0.5, 1e-5, "laplace")


@pytest.mark.parametrize("dim", [1, 2, 3, 6])
def test_symmetric_tensor_round_trip_and_symmetry(rng, dim):
    unique = rng.standard_normal(unique_count_tensor(dim))
    t = symmetric_tensor(unique, dim)
    for perm in [(0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]:
        assert np.array_equal(t, t.transpose(perm))
    assert np.array_equal(unique_entries_tensor(t), unique)
    # every unique value appears exactly (number of distinct permutations) times
    assert t.size == dim**3
    assert np.sort(np.unique(t)).size == unique.size
    m = symmetric_matrix(unique[: unique_count_matrix(dim)], dim)
    assert np.array_equal(m, m.T)
    assert np.array_equal(unique_entries_matrix(m), unique[: unique_count_matrix(dim)])


def test_unique_counts():
    assert [unique_count_matrix(d) for d in (1, 2, 10)] == [1, 3, 55]
    assert [unique_count_tensor(d) for d in (1, 2, 10)] == [1, 4, 220]


def test_symmetric_noise_entries_have_the_stated_variance(rng):
    dim, std, draws = 6, 0.3, 4000
    mats = np.array([symmetric_gaussian_matrix(rng, dim, std) for _ in range(draws)])
    assert np.array_equal(mats, mats.transpose(0, 2, 1))
    tens = np.array([symmetric_gaussian_tensor(rng, 3, std) for _ in range(draws)])
    for sample, n_unique in ((unique_entries_matrix(mats), 21), (unique_entries_tensor(tens), 10)):
        assert sample.shape == (draws, n_unique)
        # sample variance of n = draws normals: relative sd sqrt(2/(n-1)); allow 5 sd per entry
        ratio = sample.var(axis=0, ddof=1) / std**2
        assert np.all(np.abs(ratio - 1) < 5 * math.sqrt(2 / (draws - 1)))
        # distinct unique entries are uncorrelated
        corr = np.corrcoef(sample.T)[np.triu_indices(n_unique, 1)]
        assert np.max(np.abs(corr)) < 5 / math.sqrt(draws)


def test_dense_tensor_refuses_huge_dimension():
    with pytest.raises(InputError, match="projected path"):
        symmetric_tensor(np.zeros(1), 5000)


def test_plain_zero_sum_noise_cancels_and_has_the_cape_variance(rng):
    n_sites, tau, size = 5, 2.0, 20000
    e = plain_zero_sum_noise(rng, np.full(n_sites, tau), size)
    assert np.max(np.abs(e.sum(axis=0))) < 1e-12
    ratio = e.var(axis=1, ddof=1) / ((1 - 1 / n_sites) * tau**2)
    assert np.all(np.abs(ratio - 1) < 5 * math.sqrt(2 / (size - 1)))


def _random_polygon_instance(rng, n_sites):
    """Weights and variances whose weighted stds a_s = mu_s sqrt(v_s) satisfy the polygon inequality."""
    mu = rng.dirichlet(np.ones(n_sites))
    a = rng.uniform(0.05, 3.0, n_sites)
    if n_sites == 2:
        a[1] = a[0]  # two sites: mu_1 e_1 = -mu_2 e_2 forces equal weighted stds
    while 2 * a.max() > a.sum():
        a = rng.uniform(0.05, 3.0, n_sites)
    v = (a / mu) ** 2
    assert zero_sum_feasible(mu, v)
    return mu, v


def test_weighted_zero_sum_mixing_is_exact_on_random_instances(rng):
    for _ in range(200):
        n_sites = int(rng.integers(2, 9))
        mu, v = _random_polygon_instance(rng, n_sites)
        m = weighted_zero_sum_mixing(mu, v)
        assert np.max(np.abs(mu @ m)) < 1e-12 * max(1.0, np.abs(m).max())
        assert np.allclose(np.sum(m**2, axis=1), v, rtol=1e-10)


def test_weighted_zero_sum_mixing_beyond_the_variance_triangle(rng):
    # a = mu sqrt(v) = (1, 1, 1.9): polygon holds, sum of the other variances does not
    mu = np.array([0.25, 0.25, 0.5])
    v = np.array([16.0, 16.0, 14.44])
    m = weighted_zero_sum_mixing(mu, v)
    z = rng.standard_normal((m.shape[1], 50000))
    e = m @ z
    assert np.max(np.abs(mu @ e)) < 1e-12
    ratio = e.var(axis=1, ddof=1) / v
    assert np.all(np.abs(ratio - 1) < 5 * math.sqrt(2 / 49999))
    assert np.linalg.matrix_rank(m @ m.T) == 2


def test_weighted_zero_sum_boundary_and_violation():
    mu = np.array([0.5, 0.25, 0.25])
    m = weighted_zero_sum_mixing(mu, np.array([1.0, 1.0, 1.0]))  # a = (0.5, 0.25, 0.25): boundary
    assert np.allclose(mu @ m, 0.0) and np.allclose(np.sum(m**2, axis=1), 1.0)
    with pytest.raises(InputError, match="polygon inequality"):
        weighted_zero_sum_mixing(mu, np.array([1.1, 1.0, 1.0]))
    with pytest.raises(InputError, match="polygon inequality"):
        weighted_zero_sum_mixing(np.array([1.0]), np.array([1.0]))


def test_zero_weight_sites_get_independent_noise():
    mu = np.array([0.5, 0.5, 0.0])
    m = weighted_zero_sum_mixing(mu, np.array([1.0, 1.0, 4.0]))
    assert np.allclose(mu @ m, 0.0)
    assert np.allclose(np.sum(m**2, axis=1), [1.0, 1.0, 4.0])
    assert np.allclose((m @ m.T)[2, :2], 0.0)


def test_avn_noise_radius_and_direction(rng):
    dim, beta, draws = 20, 4.0, 4000
    b = np.array([avn_noise(rng, dim, beta) for _ in range(draws)])
    radius = np.linalg.norm(b, axis=1)
    # Gamma(shape=dim, scale=1/beta): mean dim/beta, sd sqrt(dim)/beta
    assert abs(radius.mean() - dim / beta) < 5 * math.sqrt(dim) / beta / math.sqrt(draws)
    assert abs(radius.std(ddof=1) / (math.sqrt(dim) / beta) - 1) < 0.1
    # uniform direction: each coordinate of the unit vector has mean 0 and variance 1/dim
    unit = b / radius[:, None]
    assert np.max(np.abs(unit.mean(axis=0))) < 5 / math.sqrt(dim * draws)


def test_round_trip_at_larger_dimensions(rng):
    # the index tables are built arithmetically; check them where floating-point rounding could bite
    for dim in (300, 1000):
        unique = rng.standard_normal(unique_count_matrix(dim))
        m = symmetric_matrix(unique, dim)
        assert np.array_equal(m, m.T) and np.array_equal(unique_entries_matrix(m), unique)
    dim = 60
    unique = rng.standard_normal(unique_count_tensor(dim))
    t = symmetric_tensor(unique, dim)
    assert np.array_equal(t, t.transpose(2, 0, 1)) and np.array_equal(unique_entries_tensor(t), unique)
