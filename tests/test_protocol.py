"""Messages of one round of CAPE, capePCA and capeAGN (dpcore.protocol)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.cape import (
    agn_stage_designs,
    agn_stage_plans,
    agn_stage_taus,
    audit_design,
    design_closed_form,
    design_equal,
    plan_scenario,
    sample_noise,
)
from dpcore.cape.protocol import (
    AGGREGATOR,
    HELPER,
    PUBLIC,
    cape_round,
    capeagn_round,
    capepca_round,
    party_views,
    symmetry_leak,
)
from dpcore.privacy import noise_multiplier, sensitivity
from dpcore.scenario import preset_scenario
from dpcore.validation import InputError


@pytest.fixture(scope="module")
def plan():
    return plan_scenario(preset_scenario("default"), "pca")


def test_cape_round_messages_and_noise(plan):
    design = plan.design
    r = cape_round(design, dim=3)
    s = design.n_sites
    assert [len(step.messages) for step in r.steps] == [s, s, 0, s, 1]
    helper = [m for m in r.messages if m.sender == HELPER]
    assert [m.receiver for m in helper] == [f"site {n}" for n in design.names]
    np.testing.assert_allclose([m.noise_std for m in helper], np.sqrt(design.var_e))
    releases = r.steps[3].messages
    np.testing.assert_allclose([m.noise_std for m in releases],
                               np.sqrt(design.var_e + design.var_f + design.var_g))
    assert all(m.receiver == AGGREGATOR and m.shape == (3,) for m in releases)
    out = r.steps[4].messages[0]
    assert out.receiver == PUBLIC and math.isclose(out.noise_std, design.output_std)
    assert r.total_numbers == 3 * s * 3
    parties = r.per_party()
    assert parties[HELPER] == {"sent": 3 * s, "received": 0}
    assert parties[AGGREGATOR] == {"sent": 3 * s, "received": 3 * s}
    assert parties["site A"] == {"sent": 3, "received": 6}


def test_scalar_cape_has_scalar_shape():
    r = cape_round(design_equal(1.0, 4))
    assert r.messages[0].shape == () and r.messages[0].shape_text == "scalar"
    assert r.total_numbers == 12


def test_capepca_counts(plan):
    d, k, s = 30, 4, plan.design.n_sites
    r = capepca_round(plan.design, d, k)
    assert r.total_numbers == 3 * s * d * d
    assert r.conventional_numbers == s * d * d
    assert r.total_unique == 3 * s * d * (d + 1) // 2
    assert r.steps[-1].messages[0].shape == (d, k)
    assert f"{3 * s * d * d:,}" in r.notes[0] and f"{s * d * k:,}" in r.notes[0]
    with pytest.raises(InputError, match="K"):
        capepca_round(plan.design, 3, 4)


def test_protocol_refuses_infeasible_design():
    infeasible = design_closed_form(np.ones(5), np.full(5, 0.2))
    assert not infeasible.feasible
    with pytest.raises(InputError, match="feasible"):
        cape_round(infeasible)


def test_agn_stage_taus_by_hand():
    scenario = preset_scenario("default")
    tau2, tau3 = agn_stage_taus(scenario, "mog", 0.3, dim=10, sigma2=0.05)
    site = scenario.sites[2]
    c1 = noise_multiplier(0.3 * site.eps, 0.3 * site.delta, scenario.calibration)
    c2 = noise_multiplier(0.7 * site.eps, 0.7 * site.delta, scenario.calibration)
    assert math.isclose(tau2[2], sensitivity("mog-m2", site.n, scenario.neighbouring) * c1)
    assert math.isclose(tau3[2], sensitivity("mog-m3", site.n, scenario.neighbouring, dim=10, sigma2=0.05) * c2)
    with pytest.raises(InputError, match="split"):
        agn_stage_taus(scenario, "stm", 1.0, dim=10)
    with pytest.raises(InputError, match="sigma"):
        agn_stage_taus(scenario, "mog", 0.5, dim=10)


@pytest.mark.parametrize("projected", [False, True])
def test_capeagn_counts(projected):
    scenario = preset_scenario("equal")
    d2, d3 = agn_stage_designs(scenario, "stm", 0.5, dim=12)
    d, k, s = 12, 3, scenario.n_sites
    r = capeagn_round(d2, d3, d, k, projected=projected)
    noise3 = k**3 if projected else d**3
    helper_w = d * k if projected else 0  # the helper projects its E3_s on W
    expected = 3 * s * d * d + s * d * k + helper_w + 2 * s * noise3 + s * k**3
    assert r.total_numbers == expected
    assert r.conventional_numbers == s * d * d + s * d * k + s * k**3
    uniq3 = math.comb(k + 2, 3) if projected else math.comb(d + 2, 3)
    assert r.total_unique == (3 * s * d * (d + 1) // 2 + s * d * k + helper_w + 2 * s * uniq3
                              + s * math.comb(k + 2, 3))
    stage2 = [m for m in r.messages if m.step == 7]
    np.testing.assert_allclose([m.noise_std for m in stage2], np.sqrt(d3.var_e + d3.var_f + d3.var_g))
    assert math.isclose(r.output_std, d3.output_std)


def test_party_views_equal_cape_match_the_worked_facts():
    design = design_equal(1.0, 5)
    report = audit_design(design, 0.1, 0.5, 1e-5, collusion=1)
    views = {v.party: v for v in party_views(design, report)}
    # helper sees f + g = (1 - 1/S + 1/S) tau^2 = tau^2
    assert math.isclose(views[HELPER].sigma_ratio, 1.0)
    assert math.isclose(views["aggregator"].sigma_ratio, math.sqrt(0.6), rel_tol=1e-9)  # (S+1)/(2S)
    assert math.isclose(views["outside observer"].sigma_ratio, 1.0, rel_tol=1e-9)  # tau_c / mu = tau
    assert "aggregator + colluding sites (up to 1)" in views


def test_symmetry_leak_formula(plan):
    d = plan.design
    scenario = plan.scenario
    rows = symmetry_leak(d, plan.sensitivities, scenario.eps, scenario.delta)
    for i, row in enumerate(rows):
        assert math.isclose(row.sigma_symmetric ** 2, d.var_e[i] + d.var_g[i], rel_tol=1e-9)
        assert math.isclose(row.sigma_iid ** 2, d.var_g[i] + d.var_e[i] / 2, rel_tol=1e-9)
        assert row.sigma_iid < row.tau <= row.sigma_symmetric * (1 + 1e-9)
        assert row.eps_iid > row.eps_symmetric


def test_release_std_matches_sampled_noise(plan):
    """The std printed for a release is the std of e + f + g in the protocol's own sampler."""
    design = plan.design
    n = 20_000
    noise = sample_noise(design, np.random.default_rng(5), n)
    release = noise.e + noise.f + noise.g
    stds = [m.noise_std for m in cape_round(design).steps[3].messages]
    # sample variance: relative standard error sqrt(2 / n); allow 5 of them
    rel = np.var(release, axis=1) / np.square(stds) - 1
    assert np.all(np.abs(rel) < 5 * math.sqrt(2 / n))
    weighted = design.weights @ (release - noise.f)
    assert abs(np.var(weighted) / design.output_std**2 - 1) < 5 * math.sqrt(2 / n)


def test_agn_stage_plans_audit_each_stage_at_its_budget():
    scenario = preset_scenario("default")
    stage1, stage2 = agn_stage_plans(scenario, "stm", 0.25, dim=8, collusion=1)
    assert (stage1.statistic, stage2.statistic) == ("stm-m2", "stm-m3")
    np.testing.assert_allclose(stage1.eps, 0.25 * scenario.eps)
    np.testing.assert_allclose(stage2.delta, 0.75 * scenario.delta)
    tau2, tau3 = agn_stage_taus(scenario, "stm", 0.25, dim=8)
    np.testing.assert_allclose(stage1.design.tau, tau2)
    np.testing.assert_allclose(stage2.design.tau, tau3)
    assert stage1.audit.collusion == 1
    assert {r.eps for r in stage1.audit.rows} == set(0.25 * scenario.eps)
    # the outside view at the DP floor gives the floor site exactly its tau: sigma_eff / tau = 1
    outside = [r for r in stage2.audit.rows if r.view == "outside"]
    floor = max(outside, key=lambda r: r.eps_eff / r.eps)
    i = scenario.names.index(floor.site)
    assert math.isclose(floor.sigma_eff, stage2.design.tau[i], rel_tol=1e-9)


@pytest.mark.parametrize("projected", [False, True])
def test_otd_table_communication_counts_the_capeagn_round(projected):
    """The OTD table's communication formulas for capeAGN and conv are the numbers the round's messages move."""
    from dpcore.agn import communication_volume

    scenario = preset_scenario("default")
    d2, d3 = agn_stage_designs(scenario, "stm", 0.5, dim=12)
    round_ = capeagn_round(d2, d3, 12, 4, projected=projected)
    path = "projected" if projected else "dense"
    assert communication_volume("cape", scenario.n_sites, 12, 4, path) == round_.total_numbers
    assert communication_volume("conv", scenario.n_sites, 12, 4, path) == round_.conventional_numbers
    with pytest.raises(InputError, match="algorithm must be one of"):
        communication_volume("magic", scenario.n_sites, 12, 4, path)
