"""The collusion-robust calibration and its gain curve (docs/math/audit.md, "Collusion-robust calibration"): the
linear program's shared threshold against the textbook one-threshold-per-site form, the helper-noise grid, and the
curve against the values of the implementation it replaced (dense LP, eigendecomposition audit)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import linprog

from dpcore.cape import design_collusion_robust, view_sigmas
from dpcore.cape.design import SiteBudgets
from dpcore.cape.explain import robust_gain_curve
from dpcore.cape.solvers.general import finish_design, solve_variances
from dpcore.cape.solvers.robust import helper_scales
from dpcore.scenario import scenario_from_dict


def test_one_threshold_serves_every_site(rng):
    """k theta + sum_(j != i) (L_j - theta)_+ >= top_k(L_-i) for every theta, with equality at theta = L_(k+1) for
    every i at once (the proof in dpcore.cape.solvers.general._base_program)."""
    for _ in range(300):
        n = int(rng.integers(2, 12))
        loads = rng.exponential(1.0, n) * (rng.random(n) > 0.2)
        if rng.random() < 0.3:
            loads = np.round(loads, 1)  # ties
        k = int(rng.integers(0, n))
        theta_star = np.sort(loads)[::-1][k] if k < n else 0.0
        for i in range(n):
            others = np.delete(loads, i)
            top = np.sort(others)[::-1][:k].sum()
            for th in np.concatenate([[theta_star], rng.uniform(-1.0, 3.0, 5)]):
                bound = k * th + np.sum(np.clip(others - th, 0.0, None))
                if th == theta_star:
                    assert bound == pytest.approx(top, abs=1e-12)
                assert bound >= top - 1e-12


def _per_site_thresholds_lowest(t2, mu, k, margin):
    """The smallest sum_t L_t with sum_t L_t - top_k(L_-i) >= (1 + margin) mu_i^2 t2_i, written with one threshold
    theta_i and p_ij per site (S^2 + S variables, the textbook form); L_t = 0 where mu_t = 0."""
    n = t2.size
    n_vars = n + n + n * n
    rows, rhs = [], []
    for i in np.flatnonzero(mu > 0):
        row = np.zeros(n_vars)
        row[:n] = -1.0
        row[n + i] = k
        for j in range(n):
            if j != i:
                row[2 * n + i * n + j] = 1.0
                aux = np.zeros(n_vars)
                aux[j], aux[n + i], aux[2 * n + i * n + j] = 1.0, -1.0, -1.0  # L_j - theta_i - p_ij <= 0
                rows.append(aux)
                rhs.append(0.0)
        rows.append(row)
        rhs.append(-(1 + margin) * mu[i] ** 2 * t2[i])
    bounds = [(0.0, 0.0 if mu[t] == 0 else None) for t in range(n)] + [(None, None)] * n + [(0.0, None)] * (n * n)
    cost = np.zeros(n_vars)
    cost[:n] = 1.0
    return linprog(cost, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=bounds, method="highs").fun


def test_shared_threshold_lp_reaches_the_textbook_minimum(rng):
    for _ in range(40):
        n = int(rng.integers(2, 10))
        tau = rng.uniform(0.3, 3.0, n)
        mu = rng.dirichlet(np.ones(n))
        if rng.random() < 0.3 and n > 2:
            mu[0] = 0.0
            mu /= mu.sum()
        k = int(rng.integers(0, n))
        _, tau_c, reason = solve_variances(tau, mu, tuple(map(str, range(n))), None, "balanced", k, 0.01)
        assert reason is None
        ref = float(np.max(tau))
        lowest = _per_site_thresholds_lowest((tau / ref) ** 2, mu, k, 0.01)
        assert (tau_c / ref) ** 2 == pytest.approx(lowest, rel=1e-7)


def test_helper_scales_stop_at_the_first_scale_beyond_the_cap():
    assert helper_scales(1e8) == [16.0 * 4.0**j for j in range(13)]
    assert helper_scales(16.0) == [16.0]
    assert helper_scales(100.0) == [16.0, 64.0, 256.0]
    assert len(helper_scales(1e300)) == 40  # MAX_HELPER_SCALES


def test_robust_design_takes_the_first_passing_scale():
    tau = np.array([0.8, 1.0, 1.3, 2.0, 0.6, 1.1])
    mu = np.array([0.1, 0.3, 0.05, 0.2, 0.15, 0.2])
    budgets = SiteBudgets(tuple("ABCDEF"), tau, mu)
    for c in range(1, 6):
        d = design_collusion_robust(tau, mu, c)
        assert d.feasible and all(v.sigma_eff >= tau[v.site] * (1 - 1e-9) for v in view_sigmas(d, c))
        if d.e_scale > 16.0:
            variances, tau_c, _ = solve_variances(tau, mu, budgets.names, None, "balanced", c, 0.01)
            before = finish_design(budgets, variances, tau_c, method="collusion-robust", reason=None,
                                   objective="balanced", e_scale=d.e_scale / 4.0, collusion=c)
            assert any(v.sigma_eff < tau[v.site] * (1 - 1e-9) for v in view_sigmas(before, c))


CURVE_SCENARIOS = {
    "five_unequal": {"sites": [{"name": n, "n": s, "eps": e, "delta": 1e-5} for n, s, e in
                               [("A", 500, 0.5), ("B", 800, 1.0), ("C", 1000, 0.3), ("D", 1200, 0.8),
                                ("E", 2500, 0.5)]], "calibration": "analytic"},
    "seven_weighted": {"sites": [{"name": f"s{i}", "n": 300 + 250 * i, "eps": 0.2 + 0.1 * i, "delta": 1e-6,
                                  "weight": w} for i, w in enumerate([0.05, 0.1, 0.1, 0.15, 0.2, 0.2, 0.2])],
                       "calibration": "analytic"},
    "nine_classic": {"sites": [{"name": f"s{i}", "n": n, "eps": e, "delta": 1e-5} for i, (n, e) in
                               enumerate(zip([200, 400, 400, 900, 1500, 1500, 3000, 3500, 5000],
                                             [0.9, 0.5, 0.7, 0.3, 0.4, 0.9, 0.2, 0.6, 0.8], strict=True))]},
}
# (c, gain, tau_c, helper scale) of the implementation this one replaced (commit aa2c690: dense linear program with
# S^2 auxiliary variables, worst coalitions by enumerating eigendecompositions). The decisions behind the scales are
# at least 8e-5 (relative) away from their threshold, far beyond rounding.
OLD_CURVES = {
    "five_unequal": [
        (0, 2.0384254496377032, 0.0018823491517345583, 64.0),
        (1, 1.856692065867731, 0.0019723212699805245, 1024.0),
        (2, 1.6164972643965725, 0.0021137815947539496, 1024.0),
        (3, 1.2842245460896413, 0.0023715217702830554, 1024.0),
        (4, 0.99009900990099, 0.0027008986385791585, 16.0),
    ],
    "seven_weighted": [
        (0, 2.022962767878139, 0.0031805846124265754, 64.0),
        (1, 1.8510795257853467, 0.0033249748125504497, 1024.0),
        (2, 1.6542967431482882, 0.0035171767288979332, 1024.0),
        (3, 1.4267813871141177, 0.0037872343602701124, 4096.0),
        (4, 1.2577697824078484, 0.004033669581389485, 1024.0),
        (5, 1.1384177618331983, 0.004239845848179624, 4096.0),
        (6, 0.9900990099009909, 0.004546336585027578, 16.0),
    ],
    "nine_classic": [
        (0, 2.1865877630846984, 0.0014844417773700028, 64.0),
        (1, 2.0715041966065564, 0.0015251189465019669, 1024.0),
        (2, 1.9402116771033247, 0.0015758760965641386, 1024.0),
        (3, 1.7890263516147535, 0.001641112132888194, 1024.0),
        (4, 1.6130565465378932, 0.0017283107411862288, 1024.0),
        (5, 1.451007547853441, 0.0018222660719347079, 1024.0),
        (6, 1.2904452372303141, 0.0019323101517677269, 1024.0),
        (7, 1.1448103471647635, 0.002051539352697554, 1024.0),
        (8, 0.9900990099009904, 0.002206009162694945, 16.0),
    ],
}


@pytest.mark.parametrize("name", sorted(CURVE_SCENARIOS))
def test_robust_gain_curve_equals_the_replaced_implementation(name):
    scenario = scenario_from_dict(CURVE_SCENARIOS[name])
    points = robust_gain_curve(scenario.taus(), scenario.weights(), names=scenario.names)
    assert len(points) == len(OLD_CURVES[name])
    for point, (c, gain, tau_c, e_scale) in zip(points, OLD_CURVES[name], strict=True):
        assert point.collusion == c and point.feasible and point.reason is None
        assert point.gain == pytest.approx(gain, rel=1e-9)
        assert point.tau_c == pytest.approx(tau_c, rel=1e-9)
        assert point.e_scale == e_scale
    # the last point: every other site colludes, so G = 1 / 1.01 whatever the sites (docs/math/audit.md)
    assert math.isclose(points[-1].gain, 1 / 1.01, rel_tol=1e-9)
