"""AppTest of the Sites and budgets page: editing, problems per cell, presets, files, settings, links."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import ROOT, app_test
from streamlit.testing.v1 import AppTest

from dpcore.cape import dp_floor
from dpcore.scenario import default_scenario, preset_scenario, scenario_from_query, scenario_to_query

PAGE = "pages/sites.py"


def _clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _edit(at, edited=None, added=None, deleted=None):
    key = at.data_editor[0].key
    at.session_state[key] = {"edited_rows": edited or {}, "added_rows": added or [], "deleted_rows": deleted or []}
    return at.run()


@pytest.fixture
def at():
    at = app_test(PAGE)
    _clean(at)
    return at


def test_default_state_shows_the_shared_scenario_and_its_link(at):
    assert at.title[0].value == "Sites and budgets"
    assert not at.error
    table = at.data_editor[0].value
    assert table["name"].tolist() == default_scenario().names
    assert table["n"].tolist() == [str(n) for n in default_scenario().sizes]  # N_s is edited as text
    shared = next(m.value for m in at.markdown if m.value.startswith("**Shareable link**"))
    link = shared.split("](", 1)[1].split(")", 1)[0]
    assert link.startswith("?scenario=1.")
    assert scenario_from_query(link.split("=", 1)[1]) == default_scenario()
    assert "Valid: 5 sites" in at.success[0].value


def test_valid_edit_changes_the_shared_scenario_and_the_address(at):
    _edit(at, edited={1: {"eps": 0.9}, 2: {"n": 77}}, added=[{"name": "F", "n": 10, "eps": 0.2, "delta": 1e-6}],
          deleted=[0])
    _clean(at)
    assert not at.error
    scenario = at.session_state["scenario"]
    assert scenario.names == ["B", "C", "D", "E", "F"]
    assert scenario.sizes.tolist() == [800, 77, 500, 1500, 10]
    assert scenario.eps.tolist() == [0.9, 0.3, 0.8, 0.5, 0.2]
    assert scenario_from_query(at.query_params["scenario"]) == scenario
    # the noise design page uses the edited scenario
    at.switch_page("pages/noise_design.py").run()
    _clean(at)
    floor = dp_floor(scenario.weights(), scenario.taus("mean"))
    assert dict((m.label, m.value) for m in at.metric)["DP floor"] == f"{floor:.4g}"


def test_invalid_cells_are_listed_and_nothing_typed_is_lost(at):
    _edit(at, edited={1: {"eps": "-1"}, 3: {"delta": "2"}}, added=[{"name": "F", "n": "10"}])
    _clean(at)
    message = at.error[0].value
    assert "4 problem(s)" in message
    assert "site 2 (B), ε: must be a number from 1e-06 to 10000 (got '-1')" in message
    assert "site 4 (D), δ: must be a number from 1e-100 to below 1 (got '2')" in message
    assert "site 6 (F), ε: is missing" in message and "site 6 (F), δ: is missing" in message
    assert at.session_state["scenario"] == default_scenario()  # other pages keep the last valid scenario
    assert at.session_state["sites_table_problems"] == 4
    # the marked copy of the table shows every value as typed
    marked = at.dataframe[1].value
    assert marked["ε_s"].tolist()[:2] == ["0.5", "-1"] and marked["site"].tolist()[-1] == "F"
    # the user's edits survive a visit to another page
    at.switch_page("pages/home.py").run()
    assert any("The Sites table has 4 problem(s)" in c.value for c in at.sidebar.caption)
    at.switch_page(PAGE).run()
    _clean(at)
    assert "4 problem(s)" in at.error[0].value
    assert at.data_editor[0].value["eps"].tolist()[1] == "-1"
    # fixing the cells (in the editor created on return) makes the scenario valid again
    _edit(at, edited={1: {"eps": 0.25}, 3: {"delta": 1e-6}, 5: {"eps": 1.0, "delta": 1e-6}})
    assert not at.error
    assert at.session_state["scenario"].eps.tolist() == [0.5, 0.25, 0.3, 0.8, 0.5, 1.0]


def test_presets_load_and_reset_the_editor(at):
    at.selectbox(key="sites_preset_1").set_value("equal")
    at.button(key="sites_preset_load_1").click().run()
    _clean(at)
    assert at.session_state["scenario"] == preset_scenario("equal")
    assert scenario_from_query(at.query_params["scenario"]) == preset_scenario("equal")  # set in a callback
    assert at.data_editor[0].key == "sites_editor_2"
    assert at.data_editor[0].value["n"].tolist() == ["1000"] * 5
    assert "Loaded the preset 'equal'" in at.info[0].value


def test_upload_valid_and_invalid_files(at):
    good = preset_scenario("one-strict").replace(calibration="analytic", tau_c=0.01)
    at.file_uploader(key="sites_upload_1").set_value(("mine.json", good.to_json().encode(), "application/json"))
    at.run()
    _clean(at)
    assert at.session_state["scenario"] == good
    assert "Loaded mine.json: 5 sites." in at.info[0].value
    assert at.radio(key="sites_calibration_2").value == "analytic"
    assert at.toggle(key="sites_floor_2").value is False
    bad = json.dumps({"sites": [{"name": "A", "n": 0, "eps": 1, "delta": 0.1}], "calibration": "fancy"})
    at.file_uploader(key="sites_upload_2").set_value(("bad.json", bad.encode(), "application/json"))
    at.run()
    _clean(at)
    text = at.error[0].value
    assert "bad.json was not loaded" in text and "calibration" in text
    assert "n: must be an integer from 1 to 1,000,000,000 (got 0)" in text
    assert at.session_state["scenario"] == good


def test_settings_and_a_bad_tau_c(at):
    at.radio(key="sites_calibration_1").set_value("analytic").run()
    assert at.session_state["scenario"].calibration == "analytic"
    at.toggle(key="sites_floor_1").set_value(False).run()
    floor = dp_floor(default_scenario().weights(), default_scenario().replace(calibration="analytic").taus("mean"))
    assert at.session_state["scenario"].tau_c == pytest.approx(floor)
    at.number_input(key="sites_tau_c_1").set_value(0.0).run()
    _clean(at)
    assert "τ_c: must be a number from 1e-20 to 1e+20" in at.error[0].value
    assert at.session_state["scenario"].tau_c == pytest.approx(floor)
    at.number_input(key="sites_tau_c_1").set_value(0.02).run()
    assert not at.error and at.session_state["scenario"].tau_c == 0.02


def test_bulk_edit_sets_every_site_and_shows_caveats(at):
    at.selectbox(key="sites_bulk_field_1").set_value("eps")
    at.number_input(key="sites_bulk_value_1").set_value(1.5)
    at.button(key="sites_bulk_apply_1").click().run()
    _clean(at)
    assert at.session_state["scenario"].eps.tolist() == [1.5] * 5
    assert any("classic Gaussian calibration at ε = 1.5" in w.value for w in at.warning)


def test_suggested_weights_and_clearing_them(at):
    at.selectbox(key="sites_weight_objective_1").set_value("min-floor")
    at.button(key="sites_weights_apply_1").click().run()
    _clean(at)
    scenario = at.session_state["scenario"]
    assert scenario.weights_given
    products = scenario.weights() * scenario.taus("mean")
    np.testing.assert_allclose(products, products[0], rtol=1e-9)  # min-floor equalises mu_s tau_s
    at.button(key="sites_weights_clear_2").click().run()
    assert not at.session_state["scenario"].weights_given


def test_opening_a_shared_link_restores_the_scenario():
    target = preset_scenario("one-large").replace(seed=99)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["scenario"] = scenario_to_query(target)
    at.run()
    _clean(at)
    assert at.session_state["scenario"] == target
    assert "Loaded the scenario from the link: 5 sites, N = 6,000" in at.success[0].value
    at.switch_page(PAGE).run()
    assert not at.success or "Loaded the scenario" not in at.success[0].value  # said once
    assert at.data_editor[0].value["n"].tolist() == [str(n) for n in target.sizes]


def test_a_malformed_link_shows_an_error_and_keeps_the_scenario():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["scenario"] = "1.definitely-not-a-scenario"
    at.run()
    _clean(at)
    assert "could not be loaded" in at.error[0].value and "damaged" in at.error[0].value
    assert at.session_state["scenario"] == default_scenario()
