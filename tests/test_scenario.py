"""Scenario: validation with site- and field-named messages, JSON round trip, derived quantities."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from dpcore.privacy import noise_multiplier
from dpcore.scenario import (
    PRESETS,
    ScenarioError,
    load_scenario,
    preset_scenario,
    scenario_errors,
    scenario_from_dict,
    scenario_from_json,
)
from dpcore.validation import InputError

EXAMPLE = {
    "sites": [
        {"name": "A", "n": 1000, "eps": 0.5, "delta": 1e-5, "weight": 0.25},
        {"name": "B", "n": 3000, "eps": 0.2, "delta": 1e-6, "weight": 0.75},
    ],
    "neighbouring": "replace-one",
    "calibration": "analytic",
    "tau_c": None,
    "seed": 7,
}


def test_json_round_trip(tmp_path):
    scenario = scenario_from_dict(EXAMPLE)
    path = tmp_path / "s.json"
    path.write_text(scenario.to_json())
    again = load_scenario(path)
    assert again == scenario
    assert json.loads(again.to_json()) == EXAMPLE


def test_weights_default_to_sample_shares():
    data = json.loads(json.dumps(EXAMPLE))
    for site in data["sites"]:
        del site["weight"]
    scenario = scenario_from_dict(data)
    assert np.allclose(scenario.weights(), [0.25, 0.75])
    assert not scenario.weights_given
    assert "weight" not in scenario.to_dict()["sites"][0]


def test_taus_are_sensitivity_times_multiplier():
    scenario = scenario_from_dict(EXAMPLE)
    expected = [math.sqrt(2) / 1000 * noise_multiplier(0.5, 1e-5, "analytic"),
                math.sqrt(2) / 3000 * noise_multiplier(0.2, 1e-6, "analytic")]
    assert np.allclose(scenario.taus("pca"), expected, rtol=1e-12)
    published = scenario.replace(neighbouring="as-published")
    assert np.allclose(published.taus("pca"), np.array(expected) / math.sqrt(2), rtol=1e-12)
    half = scenario.multipliers(eps_scale=0.5, delta_scale=0.5)
    assert half[0] == pytest.approx(noise_multiplier(0.25, 5e-6, "analytic"))


def test_every_invalid_field_is_reported_with_site_and_field():
    bad = {
        "sites": [
            {"name": "A", "n": 0, "eps": -1, "delta": 1.5, "colour": "red"},
            {"name": "", "n": 10.5, "eps": "x", "delta": 0},
            {"name": "C", "n": 5, "eps": 0.5, "delta": 1e-3, "weight": -0.2},
        ],
        "neighbouring": "add-remove",
        "calibration": "renyi",
        "tau_c": -1,
        "seed": -3,
        "extra": 1,
    }
    errors, scenario = scenario_errors(bad)
    assert scenario is None
    found = {(e.site, e.field) for e in errors}
    assert {(0, "n"), (0, "eps"), (0, "delta"), (0, "colour"), (1, "name"), (1, "n"), (1, "eps"), (1, "delta"),
            (2, "weight"), (None, "neighbouring"), (None, "calibration"), (None, "tau_c"), (None, "seed"),
            (None, "extra")} <= found
    messages = {(e.site, e.field): str(e) for e in errors}
    assert messages[(0, "eps")] == "site 1 (A), eps: must be a number > 0 (got -1)"
    assert messages[(0, "delta")] == "site 1 (A), delta: must be in the open interval (0, 1) (got 1.5)"
    assert "integer >= 1" in messages[(1, "n")]
    with pytest.raises(ScenarioError) as info:
        scenario_from_dict(bad)
    assert len(info.value.errors) == len(errors)
    assert isinstance(info.value, InputError)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["sites"][1].pop("weight"), "site 2 (B), weight: is missing while other sites have weights"),
        (lambda d: d["sites"][1].update(weight=0.5), "weights: must sum to 1 (they sum to 0.75)"),
        (lambda d: d["sites"][1].update(name="A"), "site 2 (A), name: duplicates the name of site 1"),
        (lambda d: d.update(sites=[]), "sites: must be a non-empty list"),
        (lambda d: d["sites"][0].pop("eps"), "site 1 (A), eps: is missing"),
    ],
)
def test_cross_field_rules(change, message):
    data = json.loads(json.dumps(EXAMPLE))
    change(data)
    with pytest.raises(ScenarioError, match=re.escape(message)):
        scenario_from_dict(data)


def test_bad_json_and_missing_file(tmp_path):
    with pytest.raises(ScenarioError, match="json: is not valid JSON"):
        scenario_from_json("{sites: [")
    with pytest.raises(InputError, match="cannot read scenario file"):
        load_scenario(tmp_path / "nope.json")


def test_caveats_name_classic_eps_above_one_and_large_delta():
    data = json.loads(json.dumps(EXAMPLE))
    data["calibration"] = "classic"
    data["sites"][0]["eps"] = 2.0
    data["sites"][1]["delta"] = 1e-3  # 1/N_s = 3.3e-4
    notes = scenario_from_dict(data).caveats()
    assert any("site A" in n and "not a valid" in n for n in notes)
    assert any("site B" in n and "not well below 1/N_s" in n for n in notes)
    assert scenario_from_dict(EXAMPLE).caveats() == []


def test_with_sites_and_replace_validate():
    scenario = scenario_from_dict(EXAMPLE)
    assert np.allclose(scenario.with_sites(eps=0.1).eps, 0.1)
    assert scenario.with_sites(n=10).total_n == 20
    with pytest.raises(ScenarioError, match="eps: must be a number > 0"):
        scenario.with_sites(eps=0)
    with pytest.raises(ScenarioError, match="calibration"):
        scenario.replace(calibration="exact")


def test_presets_are_valid_and_distinct():
    scenarios = {name: preset_scenario(name) for name in PRESETS}
    assert len({s.to_json() for s in scenarios.values()}) == len(PRESETS)
    assert scenarios["one-strict"].eps.min() == 0.1
    assert scenarios["one-large"].sizes.max() == 5000
    with pytest.raises(InputError, match="unknown preset"):
        preset_scenario("nope")
