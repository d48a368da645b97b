"""The attacker's trade-off of a Gaussian release (dpcore.privacy.tradeoff), against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.privacy import noise_multiplier
from dpcore.privacy.tradeoff import (
    best_advantage,
    dp_tradeoff_bound,
    gaussian_tradeoff,
    neighbour_densities,
    separation,
    threshold,
)
from dpcore.validation import InputError

PHI_MINUS_1 = 0.15865525393145707  # Phi(-1)
PHI_1 = 0.8413447460685429  # Phi(1)
Z_95 = 1.6448536269514722  # Phi^-1(0.95)


def test_tradeoff_at_hand_computed_points():
    # TPR = Phi(Phi^-1(alpha) + m)
    assert gaussian_tradeoff(PHI_MINUS_1, 1.0) == pytest.approx(0.5, abs=1e-15)
    assert gaussian_tradeoff(0.5, 1.0) == pytest.approx(PHI_1, abs=1e-15)
    assert gaussian_tradeoff(0.05, Z_95) == pytest.approx(0.5, abs=1e-15)
    assert gaussian_tradeoff(0.05, 2 * Z_95) == pytest.approx(0.95, abs=1e-15)
    # no information: the attacker does no better than its false-positive rate
    np.testing.assert_allclose(gaussian_tradeoff([0.0, 0.1, 0.7, 1.0], 0.0), [0.0, 0.1, 0.7, 1.0], atol=1e-15)
    # exposed record (sigma = 0): every alpha > 0 catches everyone
    np.testing.assert_array_equal(gaussian_tradeoff([0.0, 1e-9, 0.5], math.inf), [0.0, 1.0, 1.0])
    assert gaussian_tradeoff(0.0, 3.0) == 0.0 and gaussian_tradeoff(1.0, 3.0) == 1.0


def test_best_advantage_and_threshold():
    assert best_advantage(2.0) == pytest.approx(2 * PHI_1 - 1, abs=1e-15)
    assert best_advantage(0.0) == 0.0 and best_advantage(math.inf) == 1.0
    # the advantage is the largest TPR - alpha, reached at alpha = Phi(-m/2)
    alphas = np.linspace(0, 1, 200_001)
    for m in (0.1, 0.7, 2.0, 5.0):
        assert np.max(gaussian_tradeoff(alphas, m) - alphas) == pytest.approx(best_advantage(m), abs=1e-9)
    assert threshold(0.05, 2.0) == pytest.approx(Z_95 / 2, abs=1e-15)
    assert threshold(0.5, 1.0) == 0.0 and threshold(0.3, 0.0) == math.inf


def test_dp_bound_at_hand_computed_points():
    ln2 = math.log(2.0)
    np.testing.assert_allclose(dp_tradeoff_bound([0.1, 0.6, 0.0, 1.0], ln2, 0.0), [0.2, 0.8, 0.0, 1.0], atol=1e-15)
    assert dp_tradeoff_bound(0.1, ln2, 0.1) == pytest.approx(0.3, abs=1e-15)  # min(0.3, 1 - 0.5 * 0.8 = 0.6)


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-5), (0.5, 1e-5), (1.0, 1e-6), (4.0, 1e-3)])
def test_analytic_calibration_curve_stays_under_the_dp_bound_and_touches_it(eps, delta):
    """sigma from the analytic calibration is the smallest (eps, delta)-DP sigma: its curve lies under the bound
    everywhere, and the curve of a sigma 5 % smaller crosses it somewhere."""
    m = 1.0 / noise_multiplier(eps, delta, "analytic")
    alphas = np.concatenate([np.logspace(-12, -1, 4000), np.linspace(0.1, 1.0, 4000)])
    gap = dp_tradeoff_bound(alphas, eps, delta) - gaussian_tradeoff(alphas, m)
    assert gap.min() >= -1e-9
    # a smaller sigma (larger m) breaks the bound somewhere
    assert (dp_tradeoff_bound(alphas, eps, delta) - gaussian_tradeoff(alphas, 1.05 * m)).min() < 0


def test_densities_are_the_two_neighbouring_normals():
    x, absent, present = neighbour_densities(2.0)
    assert x[0] == pytest.approx(-2.0) and x[-1] == pytest.approx(3.0)  # -4 sigma .. 1 + 4 sigma, sigma = 1/2
    i = int(np.argmin(np.abs(x)))
    assert absent[i] == pytest.approx(2.0 / math.sqrt(2 * math.pi) * math.exp(-0.5 * (2 * x[i]) ** 2), rel=1e-12)
    np.testing.assert_allclose(present, absent[::-1], rtol=1e-12)  # mirror images around x = 1/2
    assert np.trapezoid(absent, x) == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(InputError):
        neighbour_densities(0.0)


def test_bad_inputs_are_refused():
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(InputError, match="false-positive rates"):
            gaussian_tradeoff(bad, 1.0)
    with pytest.raises(InputError, match="m = Delta / sigma"):
        gaussian_tradeoff(0.5, -1.0)
    assert separation(0.5, 0.25) == 2.0 and separation(0.5, 0.0) == math.inf
    with pytest.raises(InputError):
        separation(0.0, 1.0)
