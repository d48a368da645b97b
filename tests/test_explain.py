"""Noise designs in words (dpcore.explain): closed-form feasibility ranges, binding constraints, curves."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.cape import audit_design, design_closed_form, design_equal, design_general, plan_scenario
from dpcore.cape.explain import (
    audit_summary,
    closed_form_orders,
    closed_form_tau_c_range,
    explain_design,
    floor_site,
    robust_gain_curve,
    tight_constraints,
)
from dpcore.scenario import preset_scenario
from dpcore.validation import InputError


def test_closed_form_range_equal_sites_by_hand():
    # m_s = tau^2 / 25, M = 5 m: tau_c^2 in [M - 2 m, M] = [3 m, 5 m]
    low, high = closed_form_tau_c_range(np.ones(5), np.full(5, 0.2), last=4)
    assert math.isclose(low, math.sqrt(3) / 5) and math.isclose(high, math.sqrt(5) / 5)


def test_closed_form_range_matches_the_closed_form(rng):
    for _ in range(30):
        n = int(rng.integers(2, 7))
        tau = rng.uniform(0.5, 3.0, n)
        mu = rng.dirichlet(np.ones(n))
        last = int(rng.integers(n))
        rng_c = closed_form_tau_c_range(tau, mu, last)
        if rng_c is None:
            for tc in np.linspace(0.01, 3, 25) * math.sqrt(np.sum(mu**2 * tau**2)):
                assert not design_closed_form(tau, mu, tc, last=last).feasible
            continue
        low, high = rng_c
        assert design_closed_form(tau, mu, 0.5 * (low + high), last=last).feasible
        assert not design_closed_form(tau, mu, high * 1.01, last=last).feasible
        if low > 0:
            assert not design_closed_form(tau, mu, low * 0.99, last=last).feasible


def test_closed_form_range_validates():
    with pytest.raises(InputError, match="last"):
        closed_form_tau_c_range([1.0, 1.0], [0.5, 0.5], last=2)
    assert closed_form_tau_c_range([1.0, 1.0], [1.0, 0.0], last=0) is None


def test_equal_preset_closed_form_is_infeasible_for_every_order():
    plan = plan_scenario(preset_scenario("equal"), solver="closed-form")
    design = plan.design
    assert not design.feasible
    lines = explain_design(design)
    assert lines[0] == design.reason and "tau_g^2" in lines[0]
    assert "No choice of last site works" in lines[1]
    low = math.sqrt(3) * design.tau[0] / 5
    assert f"{low:.4g}" in lines[1]
    assert "gain at most 1.67" in lines[1]
    assert not any(o.feasible_at for o in closed_form_orders(design.tau, design.weights, design.tau_c))


def test_one_strict_preset_closed_form_works_only_with_the_strict_site_last():
    scenario = preset_scenario("one-strict")
    design = plan_scenario(scenario, solver="closed-form").design
    lines = explain_design(design)
    assert "works with last site: C" in lines[1]
    assert plan_scenario(scenario, solver="closed-form", last="C").design.feasible


def test_tight_constraints_of_equal_cape():
    design = design_equal(2.0, 4)
    tight = tight_constraints(design)
    assert len(tight) == 8  # e + g = f + g = tau^2 at every site
    slack = design_general([1.0, 1.0, 1.0], [1 / 3] * 3, 1.0)  # tau_c far above the floor
    assert len(tight_constraints(slack)) < 6


def test_explain_feasible_design_names_floor_site_and_gain():
    design = plan_scenario(preset_scenario("default")).design
    lines = explain_design(design)
    assert lines[0].startswith("Feasible")
    assert f"set by site {floor_site(design)}" in lines[1] and floor_site(design) == "C"
    assert f"{design.gain:.3g}" in lines[-1]
    tight = tight_constraints(design)
    binding = next(line for line in lines if line.startswith("Binding"))
    for name in design.names:
        if any(t.startswith(f"site {name}: e + g") for t in tight):
            assert name in binding.split("(the aggregator's view) at ")[1].split(";")[0]


def test_explain_flags_tau_c_below_the_floor():
    tau, mu = np.array([1.0, 2.0, 1.0]), np.array([0.3, 0.3, 0.4])  # mu_s tau_s = 0.3, 0.6, 0.4
    design = design_general(tau, mu, 0.5 * float(np.max(mu * tau)), names=["A", "B", "C"])
    assert design.feasible
    assert any("below the DP floor" in line and "site B" in line for line in explain_design(design))
    above = design_general(tau, mu, 2.0 * float(np.max(mu * tau)), names=["A", "B", "C"])
    assert any("2 times the DP floor" in line for line in explain_design(above))


def test_robust_gain_curve_equal_sites_keeps_s_minus_c():
    points = robust_gain_curve(np.ones(5), np.full(5, 0.2))
    assert [p.collusion for p in points] == [0, 1, 2, 3, 4]
    for p in points:
        assert p.feasible
        # the calibration keeps a relative margin of 1% on tau_g (design_collusion_robust default)
        assert math.isclose(p.gain * 1.01, 5 - p.collusion, rel_tol=1e-6)
    assert len(robust_gain_curve(np.ones(5), np.full(5, 0.2), max_collusion=1)) == 2


def test_audit_summary_picks_the_worst_site_per_view():
    design = design_equal(1.0, 5)
    report = audit_design(design, 0.1, 0.5, 1e-5, collusion=1)
    summary = {s.view: s for s in audit_summary(report, design.tau, design.names)}
    assert list(summary) == ["outside", "aggregator", "aggregator+coalition", "sites"]
    # docs/math/audit.md worked fact: aggregator view of equal CAPE has sigma_eff^2 = tau^2 (S+1)/(2S)
    assert math.isclose(summary["aggregator"].sigma_ratio, math.sqrt(0.6), rel_tol=1e-9)
    rows = [r for r in report.rows if r.view == "aggregator"]
    assert summary["aggregator"].eps_eff == max(r.eps_eff for r in rows)
    assert summary["aggregator"].failing == sum(not r.ok for r in rows)
