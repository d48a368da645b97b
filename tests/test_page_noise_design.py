"""AppTest of the Noise design page: solvers, infeasible closed form, audit, collusion, bad inputs."""

from __future__ import annotations

import math

import pytest
from conftest import app_test

from dpcore.cape import headline_of, plan_scenario
from dpcore.cape.explain import closed_form_tau_c_range
from dpcore.scenario import default_scenario, preset_scenario, scenario_from_dict

PAGE = "pages/noise_design.py"


def _clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _with(scenario):
    at = app_test()
    at.session_state["scenario"] = scenario
    at.switch_page(PAGE).run()
    _clean(at)
    return at


@pytest.fixture
def at():
    at = app_test(PAGE)
    _clean(at)
    return at


def test_default_design_metrics_match_dpcore(at):
    plan = plan_scenario(default_scenario(), "mean")
    assert not at.error
    assert at.success[0].value.startswith("Feasible")
    metrics = _metrics(at)
    assert "Gain G" not in metrics  # the gain is the headline, shown once, in the headline's words
    assert at.markdown[1].value == headline_of(plan.design).sentence
    assert metrics["τ_c (aggregate noise std)"] == f"{plan.design.tau_c:.4g}"
    assert metrics["Conventional τ_conv"] == f"{plan.design.tau_conv:.4g}"
    audit = at.dataframe[-1].value
    assert len(audit) == len(plan.audit.rows) == 5 * 4
    assert set(audit["view"]) == {"outside", "aggregator", "aggregator+coalition", "sites"}


def test_closed_form_on_equal_preset_is_infeasible_and_explained():
    at = _with(preset_scenario("equal"))
    at.radio(key="nd_solver").set_value("closed-form").run()
    _clean(at)
    text = at.error[0].value
    assert text.startswith("**Infeasible design.**")
    assert "τ_g²" in text and "No choice of last site works" in text
    tau = preset_scenario("equal").taus("mean")
    low = closed_form_tau_c_range(tau, [0.2] * 5, 4)[0]
    assert f"τ_c ≥ {low:.4g}" in text
    orders = at.dataframe[0].value
    assert orders["last site"].tolist() == ["A", "B", "C", "D", "E"]
    assert set(orders.iloc[:, -1]) == {"no"}
    assert any("No audit" in i.value for i in at.info)
    assert "τ_c asked for" in _metrics(at)
    # the headline is the scenario's (general solver): the closed form's failure does not change it
    assert at.markdown[1].value == headline_of(plan_scenario(preset_scenario("equal")).design).sentence


def test_closed_form_with_the_strict_site_last_is_feasible():
    at = _with(preset_scenario("one-strict"))
    at.radio(key="nd_solver").set_value("closed-form").run()
    assert "works with last site: C" in at.error[0].value
    at.selectbox(key="nd_last").set_value("C").run()
    _clean(at)
    assert not at.error and at.success[0].value.startswith("Feasible")


def test_bad_helper_scale_is_reported(at):
    at.number_input(key="nd_e_scale").set_value(0.5).run()
    _clean(at)
    assert at.error[0].value == ("e_scale (helper-noise scale) must be in [1, 1e+06] (got 0.5); below 1 the "
                                 "helper's noise no longer covers each release")
    assert at.number_input(key="nd_e_scale").value == 0.5  # kept as typed
    at.number_input(key="nd_e_scale").set_value(64.0).run()
    assert not at.error


def test_tau_c_below_the_floor_is_flagged_and_audited(at):
    floor = plan_scenario(default_scenario()).design.tau_floor
    at.toggle(key="nd_at_floor").set_value(False).run()
    at.number_input(key="nd_tau_c").set_value(floor / 2).run()
    _clean(at)
    assert at.session_state["scenario"].tau_c == pytest.approx(floor / 2)  # shared with every page
    assert any("below the DP floor" in w.value for w in at.warning)
    audit = at.dataframe[-1].value
    outside = audit[(audit["view"] == "outside") & (audit["site"] == "C")]
    assert outside["kept"].tolist() == ["NO"]
    assert outside["σ_eff / τ_s"].iloc[0] == pytest.approx(0.5)
    at.number_input(key="nd_tau_c").set_value(0.0).run()
    assert "τ_c: must be a number from 1e-20 to 1e+20" in at.error[0].value
    assert at.session_state["scenario"].tau_c == pytest.approx(floor / 2)


def test_collusion_slider_changes_the_audit_and_robust_calibration(at):
    at.slider(key="nd_collusion").set_value(0).run()
    _clean(at)
    assert set(at.dataframe[-1].value["view"]) == {"outside", "aggregator"}
    at.slider(key="nd_collusion").set_value(2).run()
    _clean(at)
    audit = at.dataframe[-1].value
    coalition = audit[audit["view"] == "aggregator+coalition"]["coalition"]
    assert all(len(c.split(", ")) == 2 for c in coalition)
    robust = plan_scenario(default_scenario(), collusion=2).robust
    assert any(f"collusion-robust gain **G_c = {robust.gain:.3g}**" in m.value for m in at.markdown)


def test_collusion_robust_solver_keeps_less_gain_on_equal_sites():
    at = _with(preset_scenario("equal"))
    at.radio(key="nd_solver").set_value("collusion-robust").run()
    _clean(at)
    line = next(m.value for m in at.markdown if m.value.startswith("**collusion-robust gain G_c = "))
    gain = float(line.removeprefix("**collusion-robust gain G_c = ").split("**")[0])
    assert math.isclose(gain, 4 / 1.01, rel_tol=1e-2)  # S - c = 4 with c = 1, 1 % margin
    assert at.success[-1].value.startswith("Every site keeps its promised")


def test_statistic_changes_tau_and_mog_m3_asks_for_d_and_sigma2(at):
    at.selectbox(key="nd_statistic").set_value("pca").run()
    _clean(at)
    plan = plan_scenario(default_scenario(), "pca")
    assert _metrics(at)["DP floor"] == f"{plan.design.tau_floor:.4g}"
    at.selectbox(key="nd_statistic").set_value("mog-m3").run()
    at.number_input(key="nd_dim").set_value(20).run()
    _clean(at)
    plan = plan_scenario(default_scenario(), "mog-m3", dim=20, sigma2=0.05)
    assert _metrics(at)["DP floor"] == f"{plan.design.tau_floor:.4g}"


def test_the_robust_gain_curve_is_drawn_on_request_and_then_remembered():
    sites = [{"name": f"h{i}", "n": 500, "eps": 0.5, "delta": 1e-6} for i in range(4)]
    at = _with(scenario_from_dict({"sites": sites}))
    assert any("computed on request" in c.value for c in at.caption)
    charts = len(at.get("plotly_chart"))
    at.button(key="nd_curve_button").click().run()
    _clean(at)
    assert len(at.get("plotly_chart")) == charts + 1
    assert not any("computed on request" in c.value for c in at.caption)
    at.switch_page("pages/home.py").run()
    at.switch_page(PAGE).run()  # back on the page: the curve of this scenario is shown at once (cached)
    assert len(at.get("plotly_chart")) == charts + 1


def test_the_strict_site_chart_says_why_one_site_carries_the_helper_noise():
    """Issue 21: with site C strict (ε = 0.1) the chart put most helper noise on site E without a word; the page now
    says why, from the design (dpcore.cape.helper_note), and says nothing on the default scenario."""
    from conftest import app_test

    from dpcore.scenario import default_scenario, scenario_from_dict

    at = app_test("pages/noise_design.py")
    assert not any("gets so much helper noise" in m.value for m in at.markdown)
    data = default_scenario().to_dict()
    data["sites"][2]["eps"] = 0.1
    at.session_state["scenario"] = scenario_from_dict(data)
    at.run()
    text = " ".join(m.value for m in at.markdown)
    assert "Why site E gets so much helper noise" in text and "Site C needs a large e" in text
    assert "the site with the largest weight 0.3" in text


def test_the_noise_variants_are_compared_on_request(at):
    """The noise-variant table feeds the comparison: every variant and the conventional scheme, the discrete one's
    ring width and noise from dpcore (docs/math/discrete.md)."""
    from dpcore.cape.noise_compare import compare_noise
    from dpcore.cape.noise_variants import NOISE_VARIANTS

    tables = len(at.dataframe)
    at.toggle(key="nd_compare_noise").set_value(True).run()
    assert not at.exception and len(at.dataframe) == tables + 1
    shown = at.dataframe[-1].value
    want = compare_noise(plan_scenario(default_scenario(), "mean"), dim=10)
    assert list(shown["scheme"]) == [entry.title for entry in NOISE_VARIANTS.values()] + [want[-1].title]
    assert list(shown["bits per value"]) == [row.bits for row in want]
    assert shown["noise std in the aggregate"].tolist() == pytest.approx([row.aggregate_std for row in want])
