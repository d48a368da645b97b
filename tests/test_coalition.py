"""The audit's fast paths (dpcore.cape.coalition, docs/math/audit.md) against the direct observation model, brute
force and the general path, on random designs with unequal sizes, budgets and weights: exposed sites, zero weights,
zero helper or site noise, the published closed form (a site with no private helper noise), boundary laws."""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import combinations

import numpy as np
import pytest

from dpcore.cape import (
    audit_design,
    design_closed_form,
    design_collusion_robust,
    design_equal,
    design_general,
    view_sigmas,
)
from dpcore.cape.coalition import (
    _coalition_sigma2,
    _masks_sigma2,
    aggregator_sigma2,
    site_terms,
    worst_coalitions,
)
from dpcore.cape.design import SiteBudgets
from dpcore.cape.explain import closed_form_tau_c_range
from dpcore.cape.solvers.general import finish_design
from dpcore.privacy import weighted_zero_sum_law, weighted_zero_sum_mixing
from dpcore.validation import InputError


def direct_sigma2(design, site, coalition):
    """docs/math/audit.md from the definitions: every observation of the aggregator with ``coalition`` as a row over
    the latent z = (z_e, z_g) (its releases minus the known f; the coalition's e_t and g_t), sigma_eff^2 =
    1 / (b^T (L L^T)^+ b) by an SVD of L (better conditioned than an eigendecomposition of L L^T). Returns
    (sigma^2, clear) with clear False when a singular value lies where rounding could decide the rank."""
    mix, std_g = design.e_mixing, np.sqrt(np.clip(design.var_g, 0, None))
    n, m = design.n_sites, mix.shape[1]
    rows = [np.hstack([mix, np.diag(std_g)])]
    for t in coalition:
        rows.append(np.hstack([mix[t], np.zeros(n)])[None, :])
        g_row = np.zeros((1, m + n))
        g_row[0, m + t] = std_g[t]
        rows.append(g_row)
    lin = np.vstack(rows)
    b = np.zeros(lin.shape[0])
    b[site] = 1.0
    u, sv, _ = np.linalg.svd(lin, full_matrices=True)
    top = max(float(sv.max()), 1e-300)
    keep = sv > 1e-12 * top
    clear = not np.any((sv > 1e-15 * top) & (sv < 1e-9 * top))
    coords = u.T @ b
    outside = float(np.sum(coords[sv.size:] ** 2) + np.sum(coords[: sv.size][~keep] ** 2))
    if outside > 1e-12:
        return 0.0, clear
    info = float(np.sum(coords[: sv.size][keep] ** 2 / sv[keep] ** 2))
    return (math.inf if info == 0 else 1.0 / info), clear


def random_design(rng, kind, n_sites, collusion=1):
    tau = rng.uniform(0.3, 3.0, n_sites)
    mu = rng.dirichlet(np.full(n_sites, rng.choice([0.3, 1.0, 5.0])))
    if kind == "zero-weight":
        mu[int(rng.integers(n_sites))] = 0.0
        mu /= mu.sum()
        kind = "balanced"
    if kind == "balanced":
        return design_general(tau, mu, e_scale=float(rng.choice([1.0, 3.0, 30.0])))
    if kind == "min-noise":  # zero helper or site noise at some sites: exposures
        return design_general(tau, mu, objective="min-noise", e_scale=float(rng.choice([1.0, 3.0])))
    if kind == "closed-form":  # anywhere in the order's feasible range of tau_c (docs/math/cape.md)
        last = int(rng.integers(n_sites))
        span = closed_form_tau_c_range(tau, mu, last) if n_sites > 1 else None
        tau_c = None if span is None else float(np.sqrt(rng.uniform(span[0] ** 2, span[1] ** 2)))
        return design_closed_form(tau, mu, tau_c=tau_c, last=last)
    if kind == "equal":
        return design_equal(float(tau[0]), n_sites)
    return design_collusion_robust(tau, mu, collusion)


KINDS = ("balanced", "min-noise", "zero-weight", "closed-form", "equal", "robust")


def test_the_factored_law_is_the_mixing(rng):
    for _ in range(200):
        n = int(rng.integers(1, 9))
        mu = rng.dirichlet(np.ones(n))
        if n > 2:
            mu[0] = 0.0
            mu /= mu.sum()
        v = rng.uniform(0.0, 2.0, n) * (rng.random(n) > 0.2)
        a = mu * np.sqrt(v)
        if n > 1 and np.all(2 * a <= a.sum() * (1 + 1e-12)) and np.count_nonzero(a) != 1:
            mixing = weighted_zero_sum_mixing(mu, v)
            law = weighted_zero_sum_law(mu, v)
            assert np.allclose(law.covariance(mu), mixing @ mixing.T, rtol=1e-12, atol=1e-14)
    # the boundary (one weighted std equal to the others' sum) has a rank-one law
    mu, v = np.array([0.5, 0.25, 0.25]), np.ones(3)
    mixing = weighted_zero_sum_mixing(mu, v)
    assert np.allclose(weighted_zero_sum_law(mu, v).covariance(mu), mixing @ mixing.T, atol=1e-15)
    for kind in KINDS:
        d = random_design(rng, kind, 5)
        if d.feasible:
            assert site_terms(d) is not None, kind


@pytest.mark.parametrize("kind", KINDS)
def test_aggregator_view_in_closed_form_is_the_direct_model(rng, kind):
    checked = 0
    for _ in range(25):
        d = random_design(rng, kind, int(rng.integers(2, 8)))
        if not d.feasible:
            continue
        fast = aggregator_sigma2(site_terms(d))
        for s in range(d.n_sites):
            ref, clear = direct_sigma2(d, s, ())
            if clear:
                checked += 1
                assert fast[s] == pytest.approx(ref, rel=1e-8, abs=1e-14 * d.tau.max() ** 2)
    assert checked > 20


@pytest.mark.parametrize("kind", KINDS)
def test_worst_coalition_is_the_brute_force_minimum_of_the_direct_model(rng, kind):
    """Every coalition of every size: the fast path's worst equals brute force over the direct model."""
    checked = 0
    for _ in range(12):
        n = int(rng.integers(3, 8))
        d = random_design(rng, kind, n, collusion=int(rng.integers(0, n)))
        if not d.feasible:
            continue
        terms = site_terms(d)
        for size in range(1, n):
            result = worst_coalitions(terms, size)
            for s in range(n):
                refs = [direct_sigma2(d, s, c) for c in combinations([t for t in range(n) if t != s], size)]
                if not all(clear for _, clear in refs):
                    continue
                best = min(r for r, _ in refs)
                w = result[s]
                checked += 1
                assert w.exact and len(w.coalition) == size and s not in w.coalition
                assert w.sigma2 == pytest.approx(best, rel=1e-7, abs=1e-13 * d.tau.max() ** 2)
                assert direct_sigma2(d, s, w.coalition)[0] == pytest.approx(w.sigma2, rel=1e-7,
                                                                             abs=1e-13 * d.tau.max() ** 2)
    assert checked > 30


def test_exposed_sites_are_reported_exactly(rng):
    # the hand example: site 3 has no site noise g, so the aggregator and both other sites recover it
    d = design_closed_form([1.0, 2.0, 2.0], [0.5, 0.25, 0.25])
    assert d.var_g[2] == 0.0
    views = view_sigmas(d, 2)
    row = next(v for v in views if v.site == 2 and v.view == "aggregator+coalition")
    assert row.sigma_eff == 0.0 and row.exact
    assert direct_sigma2(d, 2, row.coalition)[0] == 0.0
    # min-noise designs leave some sites without g: exposed exactly when the direct model says so
    found = 0
    for _ in range(30):
        d = random_design(rng, "min-noise", int(rng.integers(3, 7)))
        for v in view_sigmas(d, d.n_sites - 1, ("aggregator", "aggregator+coalition")):
            ref, clear = direct_sigma2(d, v.site, v.coalition)
            if clear:
                assert (v.sigma_eff == 0.0) == (ref == 0.0)
                found += v.sigma_eff == 0.0
    assert found > 0


def test_general_path_and_fast_path_agree_where_the_general_path_enumerates(rng):
    """The general path (pseudo-inverses of Cov) loses digits when the helper noise dwarfs the rest (robust
    designs scaled by 1e7, weights below 1e-2): compared where it is well conditioned."""
    checked = 0
    for kind in KINDS:
        for _ in range(6):
            n = int(rng.integers(3, 7))
            d = random_design(rng, kind, n, collusion=1)
            if not d.feasible or d.e_scale > 1e3 or np.min(d.weights[d.weights > 0]) < 1e-2:
                continue
            c = int(rng.integers(1, n))
            fast = view_sigmas(d, c)
            slow = view_sigmas(replace(d, e_law=None), c)
            for f, g in zip(fast, slow, strict=True):
                assert (f.site, f.view) == (g.site, g.view) and g.exact and f.exact
                assert f.sigma_eff == pytest.approx(g.sigma_eff, rel=1e-6, abs=1e-6 * d.tau.max())
                checked += 1
    assert checked > 100


def test_a_law_that_does_not_match_the_mixing_is_not_used():
    d = design_general([1.0, 2.0, 1.5, 0.7], [0.1, 0.2, 0.3, 0.4])
    wrong = replace(d, e_law=replace(d.e_law, var_w=d.e_law.var_w * 2.0))
    assert site_terms(wrong) is None
    fast = view_sigmas(d, 2)
    general = view_sigmas(wrong, 2)  # general path from e_mixing
    assert [v.sigma_eff for v in general] == pytest.approx([v.sigma_eff for v in fast], rel=1e-7)


def _local_search(terms, s, members, others, steps=30):
    """Best-improvement swaps (one member out, one non-member in), every swap evaluated at once."""
    value = _coalition_sigma2(terms, s, members)
    for _ in range(steps):
        outside = np.setdiff1d(others, members)
        rows = []
        for i in range(members.size):
            for t in outside:
                trial = members.copy()
                trial[i] = t
                rows.append(trial)
        rows = np.array(rows)
        masks = np.zeros((rows.shape[0], terms.n_sites), dtype=bool)
        masks[np.arange(rows.shape[0])[:, None], rows] = True
        values = _masks_sigma2(terms, np.full(rows.shape[0], s), masks)
        best = int(np.argmin(values))
        if values[best] >= value:
            break
        members, value = rows[best], float(values[best])
    return value


def test_many_sites_bounds_hold_against_random_and_locally_improved_coalitions(rng):
    """S = 60, c = 19: no enumeration. Whatever the status, the reported coalition attains the reported sigma
    (direct model), and neither 300 random coalitions nor local search from the best of them goes below the
    proven bound (nor below the reported worst when it is exact)."""
    n, size = 60, 19
    tau = rng.uniform(0.3, 3.0, n)
    mu = rng.dirichlet(np.ones(n))
    for d in (design_general(tau, mu), design_general(tau, mu, objective="min-noise", e_scale=5.0),
              design_collusion_robust(tau, mu, size)):
        terms = site_terms(d)
        result = worst_coalitions(terms, size)
        for s in rng.choice(n, 3, replace=False):
            w = result[s]
            others = np.array([t for t in range(n) if t != s])
            assert w.lower2 <= w.sigma2 * (1 + 1e-12)
            ref, clear = direct_sigma2(d, s, w.coalition)
            if clear:
                assert ref == pytest.approx(w.sigma2, rel=1e-7, abs=1e-13 * d.tau.max() ** 2)
            draws = np.array([rng.choice(others, size, replace=False) for _ in range(300)])
            masks = np.zeros((draws.shape[0], n), dtype=bool)
            masks[np.arange(draws.shape[0])[:, None], draws] = True
            values = _masks_sigma2(terms, np.full(draws.shape[0], s), masks)
            assert np.all(values >= w.lower2 * (1 - 1e-9))
            for start in draws[np.argsort(values)[:2]]:
                assert _local_search(terms, s, start, others) >= w.lower2 * (1 - 1e-9)


def test_infeasible_designs_are_refused_with_the_reason():
    d = design_closed_form(np.ones(5), np.full(5, 0.2))  # eq. (2) at the floor: tau_g,5^2 < 0 (docs/math/cape.md)
    assert not d.feasible and d.e_law is None
    with pytest.raises(InputError, match="cannot audit an infeasible design"):
        view_sigmas(d, 1)
    robust = design_collusion_robust(np.ones(4), np.full(4, 0.25), 2, tau_c=0.1)
    assert not robust.feasible and "below the smallest achievable" in robust.reason


def test_threshold_mode_settles_the_question_it_is_asked(rng):
    """short_views (the robust calibration's check) may stop refining once the answer is known: the answer is the
    same as the exact one."""
    from dpcore.cape.audit import short_views

    for _ in range(20):
        n = int(rng.integers(3, 9))
        d = random_design(rng, "robust", n, collusion=int(rng.integers(1, n)))
        if not d.feasible:  # extreme weights can leave no robust design (its reason says why)
            continue
        c = d.collusion
        for scale in (1.0, 1e-3, 1e3):
            scaled = replace(d, e_mixing=d.e_mixing * math.sqrt(scale),
                             e_law=replace(d.e_law, var_w=d.e_law.var_w * scale), var_e=d.var_e * scale)
            exact = [v for v in view_sigmas(scaled, c, ("aggregator", "aggregator+coalition"))
                     if v.sigma_eff < d.tau[v.site] * (1 - 1e-9)]
            short = short_views(scaled, c, d.tau)
            assert {(v.site, v.view) for v in short} == {(v.site, v.view) for v in exact}


def test_report_marks_bounds_and_judges_them_conservatively():
    d = replace(design_general(np.ones(40), np.full(40, 1 / 40)), e_law=None)  # general path: heuristic beyond 30
    report = audit_design(d, np.ones(40), np.ones(40), np.full(40, 1e-5), collusion=13)
    inexact = [r for r in report.rows if not r.exact]
    assert inexact and all(r.sigma_bound is not None and not r.ok for r in inexact)
    assert all("proven bound" in w for w in report.warnings)


def test_sites_that_reveal_w_are_handled_exactly():
    """A site with no private helper noise (d_t = 0) shows a multiple of W: the published closed form's last site,
    every site but one on the boundary of the polygon inequality (rank-one law), and, with no site noise either,
    a site that reveals W to every view. Brute force over the direct model for every coalition size."""
    low, high = closed_form_tau_c_range([1.0, 1.5, 2.0, 0.8], [0.3, 0.2, 0.3, 0.2], 1)
    designs = [design_closed_form([1.0, 2.0, 2.0], [0.5, 0.25, 0.25]),  # last site: var_g = 0 as well
               design_closed_form([1.0, 1.5, 2.0, 0.8], [0.3, 0.2, 0.3, 0.2], tau_c=(low + high) / 2, last=1)]
    mu = np.array([0.4, 0.2, 0.2, 0.2])
    tau = np.array([1.0, 1.2, 0.9, 1.1])
    ve = np.array([0.0, 0.5, 1.0, 0.0])
    ve[0] = ((mu[1] * np.sqrt(ve[1]) + mu[2] * np.sqrt(ve[2])) / mu[0]) ** 2  # exactly on the boundary
    vg = np.clip(tau**2 - ve, 0.05, None)
    budgets = SiteBudgets(tuple("ABCD"), tau, mu)
    designs.append(finish_design(budgets, np.vstack([ve, tau**2, vg]), float(np.sqrt(np.sum(mu**2 * vg))),
                                 method="general", reason=None, objective="balanced", e_scale=1.0, collusion=None))
    for d in designs:
        terms = site_terms(d)
        assert terms is not None and np.any(terms.revealing)
        n = d.n_sites
        for size in range(1, n):
            for w in worst_coalitions(terms, size):
                others = [t for t in range(n) if t != w.site]
                refs = [direct_sigma2(d, w.site, c)[0] for c in combinations(others, size)]
                assert w.exact
                assert w.sigma2 == pytest.approx(min(refs), rel=1e-8, abs=1e-14)
