"""Privacy audit (docs/math/audit.md): the worked facts, brute-force checks of sigma_eff, and the report."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.cape import (
    audit_design,
    default_collusion,
    design_closed_form,
    design_collusion_robust,
    design_equal,
    design_general,
    effective_sigma,
    entry_pair_sigma,
    view_sigmas,
)
from dpcore.privacy import noise_multiplier


def sigma_of(views, site, view):
    return next(v.sigma_eff for v in views if v.site == site and v.view == view)


@pytest.mark.parametrize("n_sites", [2, 3, 5, 8])
def test_equal_cape_aggregator_view_is_weaker_than_promised(n_sites):
    tau = 0.4
    views = view_sigmas(design_equal(tau, n_sites), 0)
    for s in range(n_sites):
        # sigma_eff^2 = tau^2 (S + 1) / (2 S): 0.6 tau^2 at S = 5
        assert sigma_of(views, s, "aggregator") ** 2 == pytest.approx(tau**2 * (n_sites + 1) / (2 * n_sites))
        assert sigma_of(views, s, "outside") == pytest.approx(tau)


def test_s5_aggregator_view_is_point_six():
    views = view_sigmas(design_equal(1.0, 5), 0)
    assert sigma_of(views, 0, "aggregator") ** 2 == pytest.approx(0.6)


def test_scaled_helper_noise_tends_to_s_minus_c_tau_g():
    n_sites, tau, c = 5, 1.0, 2
    tau_g2 = tau**2 / n_sites
    previous = 0.0
    for kappa in (1.0, 10.0, 1e3, 1e6):
        d = design_general(np.full(n_sites, tau), np.full(n_sites, 1 / n_sites), e_scale=kappa)
        assert np.allclose(d.var_g, tau_g2)
        sig2 = sigma_of(view_sigmas(d, c), 0, "aggregator+coalition") ** 2
        assert sig2 >= previous - 1e-12  # more helper noise never helps the adversary
        previous = sig2
    assert previous == pytest.approx((n_sites - c) * tau_g2, rel=1e-4)


def test_non_symmetric_e_leaks_on_an_entry_pair():
    tau_e2, tau_g2 = 0.8, 0.2
    assert entry_pair_sigma(tau_e2, tau_g2, symmetric_e=False) ** 2 == pytest.approx(tau_g2 + tau_e2 / 2)
    assert entry_pair_sigma(tau_e2, tau_g2, symmetric_e=True) ** 2 == pytest.approx(tau_g2 + tau_e2)


def test_effective_sigma_is_the_best_linear_unbiased_estimator(rng):
    """Brute force: no linear unbiased estimator w (w.b = 1) beats sigma_eff, and the GLS one reaches it
    empirically on simulated observations."""
    for _ in range(20):
        k = int(rng.integers(2, 6))
        lin = rng.standard_normal((k, k + 2))
        cov = lin @ lin.T
        b = rng.standard_normal(k)
        sigma = effective_sigma(b, cov)
        gls = np.linalg.solve(cov, b)
        gls /= gls @ b
        assert gls @ cov @ gls == pytest.approx(sigma**2, rel=1e-8)
        for _ in range(200):
            w = rng.standard_normal(k)
            w /= w @ b
            assert w @ cov @ w >= sigma**2 * (1 - 1e-9)
    lin = rng.standard_normal((3, 5))
    cov, b = lin @ lin.T, np.array([1.0, -0.5, 2.0])
    sigma = effective_sigma(b, cov)
    gls = np.linalg.solve(cov, b) / (b @ np.linalg.solve(cov, b))
    a_true, draws = 0.7, 20000
    obs = a_true * b[:, None] + lin @ rng.standard_normal((5, draws))
    est = gls @ obs
    assert abs(est.mean() - a_true) < 5 * sigma / math.sqrt(draws)
    assert abs(est.var(ddof=1) / sigma**2 - 1) < 5 * math.sqrt(2 / (draws - 1))


def test_exposure_is_detected():
    # b outside the range of Cov: a observed without noise in one direction
    assert effective_sigma(np.array([1.0, 0.0]), np.diag([1.0, 0.0])) == pytest.approx(1.0)
    assert effective_sigma(np.array([0.0, 1.0]), np.diag([1.0, 0.0])) == 0.0
    # a design with no site noise g: aggregator + every other site recovers e_s exactly
    d = design_closed_form([1.0, 2.0, 2.0], [0.5, 0.25, 0.25])  # var_g of site 3 is 0
    views = view_sigmas(d, 2)
    assert sigma_of(views, 2, "aggregator+coalition") == pytest.approx(0.0, abs=1e-9)
    report = audit_design(d, [1.0, 1.0, 1.0], [1.0] * 3, [1e-5] * 3, collusion=2)
    row = next(r for r in report.rows if r.site == "s3" and r.view == "aggregator+coalition")
    assert row.eps_eff == math.inf and row.delta_eff == 1.0 and not row.ok


def test_more_colluders_never_help_the_target(rng):
    tau = rng.uniform(0.5, 2.0, 6)
    mu = rng.dirichlet(np.ones(6))
    d = design_general(tau, mu)
    for view in ("aggregator+coalition", "sites"):
        last = [math.inf] * 6
        for c in range(1, 6):
            vs = view_sigmas(d, c)
            for s in range(6):
                sig = sigma_of(vs, s, view)
                assert sig <= last[s] * (1 + 1e-9)
                last[s] = sig


def test_audit_report_matches_promises_for_outside_view_with_analytic_calibration():
    eps, delta, n = 0.5, 1e-5, 1000
    sens = 1.0 / n
    tau = sens * noise_multiplier(eps, delta, "analytic")
    d = design_equal(tau, 5)
    report = audit_design(d, np.full(5, sens), np.full(5, eps), np.full(5, delta))
    assert report.collusion == default_collusion(5) == 1
    outside = [r for r in report.rows if r.view == "outside"]
    assert all(r.ok and r.eps_eff == pytest.approx(eps, rel=1e-6) for r in outside)
    aggregator = [r for r in report.rows if r.view == "aggregator"]
    assert all(not r.ok and r.eps_eff > eps and r.delta_eff > delta for r in aggregator)
    assert {r.view for r in report.rows} == {"outside", "aggregator", "aggregator+coalition", "sites"}
    assert not report.all_ok and len(report.failing()) == 15


def test_collusion_robust_design_passes_every_view():
    eps, delta = 0.5, 1e-5
    sizes = np.array([500, 800, 1000, 1200, 2500])
    sens = 1.0 / sizes
    tau = sens * noise_multiplier(eps, delta, "analytic")
    mu = sizes / sizes.sum()
    for c in (0, 1, 2):
        d = design_collusion_robust(tau, mu, c)
        report = audit_design(d, sens, np.full(5, eps), np.full(5, delta), collusion=c)
        assert report.all_ok, [(r.site, r.view, r.eps_eff) for r in report.failing()]


def test_large_s_uses_a_heuristic_with_a_warning_and_a_proven_bound():
    n_sites = 40
    d = design_general(np.ones(n_sites), np.full(n_sites, 1 / n_sites))
    report = audit_design(d, np.ones(n_sites), np.ones(n_sites), np.full(n_sites, 1e-5), collusion=13)
    heuristic = [r for r in report.rows if not r.exact]
    assert heuristic and report.warnings
    assert all(r.sigma_eff >= r.sigma_bound * (1 - 1e-9) for r in heuristic)
    assert default_collusion(40) == 13


def direct_view_sigma(design, site, coalition, with_aggregator):
    """Reference: write every observation of the view as rows over z = (z_e, z_g) and apply docs/math/audit.md."""
    mix, std_g = design.e_mixing, np.sqrt(np.clip(design.var_g, 0, None))
    n, m = design.n_sites, mix.shape[1]
    if with_aggregator:  # every release minus its known f
        rows = [np.hstack([mix, np.diag(std_g)])]
        b = np.zeros(n)
        b[site] = 1.0
    else:  # the released aggregate only
        rows = [np.hstack([design.weights @ mix, design.weights * std_g])[None, :]]
        b = np.array([design.weights[site]])
    for t in coalition:
        rows.append(np.hstack([mix[t], np.zeros(n)])[None, :])
        g_row = np.zeros((1, m + n))
        g_row[0, m + t] = std_g[t]
        rows.append(g_row)
    lin = np.vstack(rows)
    b = np.concatenate([b, np.zeros(lin.shape[0] - b.size)])
    return effective_sigma(b, lin @ lin.T)


def test_fast_views_match_the_direct_observation_model(rng):
    from itertools import combinations

    for trial in range(12):
        n_sites = int(rng.integers(3, 7))
        tau = rng.uniform(0.5, 2.0, n_sites)
        mu = rng.dirichlet(np.ones(n_sites))
        if trial % 3 == 0:
            d = design_closed_form(tau, mu)
            if not d.feasible:
                continue
        else:
            d = design_general(tau, mu, objective="min-noise" if trial % 3 == 1 else "balanced",
                               e_scale=float(rng.choice([1.0, 30.0])))
        c = int(rng.integers(1, n_sites))
        views = view_sigmas(d, c)
        for s in range(n_sites):
            others = [t for t in range(n_sites) if t != s]
            worst_agg = min(direct_view_sigma(d, s, coal, True) for coal in combinations(others, c))
            worst_sites = min(direct_view_sigma(d, s, coal, False) for coal in combinations(others, c))
            assert sigma_of(views, s, "aggregator") == pytest.approx(direct_view_sigma(d, s, (), True), rel=1e-6)
            assert sigma_of(views, s, "aggregator+coalition") == pytest.approx(worst_agg, rel=1e-6, abs=1e-9)
            assert sigma_of(views, s, "sites") == pytest.approx(worst_sites, rel=1e-6, abs=1e-9)


def test_collusion_robust_keeps_tau_in_every_view_on_random_unequal_scenarios(rng):
    # regression: a site left without helper noise exposed its g to the aggregator
    linear = design_collusion_robust(np.linspace(1, 2, 5), np.full(5, 0.2), 2)
    assert linear.feasible, linear.reason
    for _ in range(25):
        n_sites = int(rng.integers(2, 7))
        tau = rng.uniform(0.2, 3.0, n_sites)
        mu = rng.dirichlet(np.ones(n_sites))
        for c in range(n_sites):
            d = design_collusion_robust(tau, mu, c)
            assert d.feasible, d.reason
            short = [(v.site, v.view) for v in view_sigmas(d, c) if v.sigma_eff < tau[v.site] * (1 - 1e-9)]
            assert not short
