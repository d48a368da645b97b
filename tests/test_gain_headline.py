"""The named gains (dpcore.cape.GAINS) and the one headline every page shows, against hand-computed values."""

from __future__ import annotations

import pytest

from dpcore.cape import GAINS, HEADLINE_GAIN, headline_gain, headline_of, plan_scenario
from dpcore.scenario import equal_sites_scenario, preset_scenario


def test_every_gain_has_a_distinct_name_symbol_title_and_a_one_line_definition():
    assert HEADLINE_GAIN in GAINS
    for attribute in ("name", "symbol", "title"):
        values = [getattr(g, attribute) for g in GAINS.values()]
        assert len(set(values)) == len(values), attribute
    for key, gain in GAINS.items():
        assert gain.name == key
        assert "\n" not in gain.definition and 40 < len(gain.definition) < 300, key
    assert not GAINS["prop1"].private and all(g.private for k, g in GAINS.items() if k != "prop1")


def test_headline_of_the_default_scenario_by_hand():
    """mu_s = N_s/N and tau_s = c(eps_s)/N_s make mu_s tau_s = c(eps_s)/N; with one delta, c is proportional to
    1/eps, so G = sum_s (1/eps_s^2) / max_s (1/eps_s^2) = 0.3^2 (4 + 4 + 1/0.09 + 1/0.64 + 4) = 2.220625."""
    headline = headline_gain(preset_scenario("default"))
    assert headline.gain == pytest.approx(0.09 * (4 + 4 + 1 / 0.09 + 1 / 0.64 + 4), rel=1e-12)
    assert headline.floor_site == "C" and not headline.below_floor
    assert headline.sentence == ("The aggregate carries **2.22 times less noise variance** than if each site added "
                                 "its own.")
    assert headline.value_text == "2.22×"


def test_headline_equal_sites_and_one_strict_site():
    assert headline_gain(preset_scenario("equal")).gain == pytest.approx(5.0, rel=1e-12)
    # one of five equal sites asks for eps = 0.1: G = 0.1^2 (4 / 0.25 + 1 / 0.01) = 1.16
    assert headline_gain(preset_scenario("one-strict")).gain == pytest.approx(1.16, rel=1e-12)


def test_headline_equals_the_plan_design_gain():
    for name in ("default", "equal", "one-large", "one-strict"):
        plan = plan_scenario(preset_scenario(name))
        assert headline_of(plan.design) == headline_gain(preset_scenario(name))
        assert headline_of(plan.design).gain == pytest.approx(plan.design.gain, rel=1e-12)


def test_headline_below_the_floor_and_without_a_design():
    scenario = preset_scenario("equal")
    floor = headline_gain(scenario).tau_floor
    below = headline_gain(scenario.replace(tau_c=floor / 2))
    assert below.gain == pytest.approx(20.0, rel=1e-9) and below.below_floor  # (tau_conv / (floor / 2))^2 = 4 x 5
    assert "below the DP floor" in below.sentence and "site A's budget" in below.sentence
    one = equal_sites_scenario(1, 1000, 0.5, 1e-5)
    tau = one.taus("mean")[0]
    assert headline_gain(one).gain == pytest.approx(1.0)
    lone = headline_gain(one.replace(tau_c=tau / 2))
    assert lone.gain is None and lone.value_text == "none" and lone.sentence.startswith("No CAPE design exists")


def test_the_named_gains_of_the_default_scenario_by_hand():
    scenario = preset_scenario("default")  # sizes 1000, 800, 1200, 500, 1500; N = 5000
    sizes = [1000, 800, 1200, 500, 1500]
    values = {k: g.of(scenario) for k, g in GAINS.items()}
    assert values["prop1"] == pytest.approx(5000**2 / 25 * sum(1 / n**2 for n in sizes), rel=1e-12)  # 7.7014
    assert values["floor_equal"] == pytest.approx(sum((500 / n) ** 2 for n in sizes), rel=1e-12)  # 1.9253
    assert values["pooled_weights"] == pytest.approx(values["cape"], rel=1e-12)  # weights are N_s / N already
    assert values["robust"] < values["cape"]
    # equal sites: the robust gain against c = 1 is S - c with the calibration's 1 % margin, 4 / 1.01
    assert GAINS["robust"].of(preset_scenario("equal"), collusion=1) == pytest.approx(4 / 1.01, rel=1e-6)
