"""AppTest of the Gain G(n) page: scenario gains, imbalance path, Dirichlet draws, bad sizes."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import app_test

from dpcore.cape import GAINS, gain_bounds, gain_equal_weights, headline_gain
from dpcore.cape.gain import dirichlet_sizes, gain_equal_weights_at_floor, imbalanced_sizes, scenario_gains
from dpcore.scenario import default_scenario

PAGE = "pages/gain.py"


def _clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _markdown(at, start: str) -> str:
    return next(m.value for m in at.markdown if m.value.startswith(start))


@pytest.fixture
def at():
    at = app_test(PAGE)
    _clean(at)
    return at


def test_the_headline_then_every_gain_beside_its_definition(at):
    scenario = default_scenario()
    gains = scenario_gains(scenario)
    assert at.markdown[1].value == headline_gain(scenario).sentence
    for name, gain in GAINS.items():
        if name == "robust":
            continue
        value = _markdown(at, f"**{gain.symbol} = ")
        assert value.startswith(f"**{gain.symbol} = {gain.of(scenario):.3g}**  \n{gain.title}")
        assert gain.definition in [c.value for c in at.caption]
    assert _markdown(at, "**G(n) = ").endswith("(not private)")
    assert f"{gains.prop1_max:.4g}" in next(c.value for c in at.caption if c.value.startswith("For these N"))
    assert not at.metric and not at.error
    assert "Read G(n) with care" in at.info[0].value
    assert len(at.latex) >= 3


def test_imbalance_slider_reaches_the_maximum(at):
    at.slider(key="gain_imbalance").set_value(1.0).run()
    _clean(at)
    high = gain_bounds(5000, 5)[1]
    assert _markdown(at, "Here G(n)").startswith(f"Here G(n) = **{high:.4g}**")
    at.radio(key="gain_family").set_value("geometric").run()
    sizes = imbalanced_sizes(5000, 5, 1.0, "geometric")
    assert f"**{gain_equal_weights(sizes):.4g}**" in _markdown(at, "Here G(n)")


def test_more_sites_than_samples_is_an_error(at):
    at.toggle(key="gain_show_dirichlet").set_value(True).run()
    at.number_input(key="gain_total").set_value(3).run()
    _clean(at)
    messages = [e.value for e in at.error]
    assert "Sizes: need at least one sample per site: N = 3 < S = 5" in messages
    assert any(m.startswith("Dirichlet: need at least one sample per site") for m in messages)
    at.number_input(key="gain_total").set_value(30).run()
    assert not at.error


def test_dirichlet_draws_on_request_and_follow_the_seed(at):
    charts = len(at.get("plotly_chart"))
    assert not any(m.value.startswith("This draw") for m in at.markdown)  # not drawn on arrival
    at.toggle(key="gain_show_dirichlet").set_value(True).run()
    assert len(at.get("plotly_chart")) == charts + 2
    at.select_slider(key="gain_alpha").set_value(0.2)
    at.number_input(key="gain_seed").set_value(123).run()
    _clean(at)
    sizes = dirichlet_sizes(5000, 5, 0.2, np.random.default_rng(123))[0]
    expected = f"This draw: G(n) = **{gain_equal_weights(sizes):.4g}**, G_floor (equal weights at the DP floor) = " \
               f"**{gain_equal_weights_at_floor(sizes):.3g}**."
    assert _markdown(at, "This draw") == expected


def test_use_these_sizes_updates_the_shared_scenario(at):
    at.slider(key="gain_imbalance").set_value(0.3).run()
    at.button(key="gain_use_sizes").click().run()
    _clean(at)
    expected = imbalanced_sizes(5000, 5, 0.3, "one-large")
    assert at.session_state["scenario"].sizes.tolist() == expected.tolist()
    assert at.session_state["scenario"].eps.tolist() == default_scenario().eps.tolist()
    assert _markdown(at, "**G(n) = ").startswith(f"**G(n) = {gain_equal_weights(expected):.3g}**")
    assert at.markdown[1].value == headline_gain(at.session_state["scenario"]).sentence
    assert "Your last edit" in _markdown(at, "**Your last edit")  # the before-and-after panel of this edit
