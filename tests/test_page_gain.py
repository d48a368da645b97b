"""AppTest of the Gain G(n) page: scenario gains, imbalance path, Dirichlet draws, bad sizes."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import app_test

from dpcore.cape import gain_bounds, gain_equal_weights
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


def test_default_metrics_are_the_scenario_gains(at):
    gains = scenario_gains(default_scenario())
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["G(n), Prop. 1"] == f"{gains.prop1:.4g}"
    assert metrics["maximum"] == f"{gains.prop1_max:.4g}"
    assert metrics["G at DP floor"] == f"{gains.floor_equal:.4g}"
    assert metrics["G, scenario μ_s"] == f"{gains.generalized:.4g}"
    assert not at.error
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
    at.number_input(key="gain_total").set_value(3).run()
    _clean(at)
    messages = [e.value for e in at.error]
    assert "Sizes: need at least one sample per site: N = 3 < S = 5" in messages
    assert any(m.startswith("Dirichlet: need at least one sample per site") for m in messages)
    at.number_input(key="gain_total").set_value(30).run()
    assert not at.error


def test_dirichlet_draw_follows_the_seed(at):
    at.select_slider(key="gain_alpha").set_value(0.2)
    at.number_input(key="gain_seed").set_value(123).run()
    _clean(at)
    sizes = dirichlet_sizes(5000, 5, 0.2, np.random.default_rng(123))[0]
    expected = f"This draw: G(n) = **{gain_equal_weights(sizes):.4g}**, at the DP floor with equal weights " \
               f"**{gain_equal_weights_at_floor(sizes):.3g}**."
    assert _markdown(at, "This draw") == expected


def test_use_these_sizes_updates_the_shared_scenario(at):
    at.slider(key="gain_imbalance").set_value(0.3).run()
    at.button(key="gain_use_sizes").click().run()
    _clean(at)
    expected = imbalanced_sizes(5000, 5, 0.3, "one-large")
    assert at.session_state["scenario"].sizes.tolist() == expected.tolist()
    assert at.session_state["scenario"].eps.tolist() == default_scenario().eps.tolist()
    assert {m.label: m.value for m in at.metric}["G(n), Prop. 1"] == f"{gain_equal_weights(expected):.4g}"
