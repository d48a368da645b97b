"""AppTest of the Planner page: a plan on bundled data, its sentence from dpcore, the check, the exports, bad input."""

from __future__ import annotations

import json

from conftest import app_test

from dpcore.notation import symbolic
from dpcore.pca.sweep import PcaData
from dpcore.planner import plan_target, prepare_data, question
from dpcore.scenario import default_scenario

PAGE = "pages/planner.py"


def _clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_plan_check_and_exports_on_digits():
    at = app_test(PAGE, timeout=180)
    _clean(at)
    at.session_state["scenario"] = default_scenario().with_sizes([300, 300, 300, 300, 300])
    at.selectbox(key="plan_source").set_value("digits").run()
    at.number_input(key="plan_target").set_value(70.0).run()
    at.radio(key="plan_solve").set_value("eps").run()
    _clean(at)
    scenario = default_scenario().with_sizes([300, 300, 300, 300, 300])
    intro = next(m.value for m in at.markdown if m.value.startswith("For capePCA on"))
    assert f"with the {scenario.n_sites} sites of the scenario" in intro and "70% of the non-private" in intro
    assert "ε of every site" in intro
    at.button(key="plan_go").click().run()
    _clean(at)
    data = prepare_data("pca", PcaData(dataset="digits"), None, 0)
    expected = plan_target("pca", data, scenario, question("eps", 0.7, scenario), seed=0)
    assert at.success[0].value == symbolic(expected.sentence)
    at.button(key="plan_check_go").click().run()
    _clean(at)
    assert any("target" in m.value and "mean" in m.value for m in at.markdown)
    buttons = at.get("download_button")
    assert len(buttons) == 4
    assert not at.error


def test_target_outside_the_data_is_answered_plainly():
    at = app_test(PAGE, timeout=180)
    at.selectbox(key="plan_source").set_value("digits").run()
    at.number_input(key="plan_target").set_value(100.0).run()
    at.radio(key="plan_solve").set_value("sites").run()
    at.button(key="plan_go").click().run()
    _clean(at)
    assert "cannot" in at.success[0].value
    assert not at.error


def test_tensor_family_has_its_own_target_and_settings_in_the_link():
    at = app_test(PAGE, timeout=180)
    at.selectbox(key="plan_family").set_value("lda").run()
    _clean(at)
    assert any(n.label.startswith("Target topic error") for n in at.number_input)
    link = json.loads(at.query_params["settings"][0] if isinstance(at.query_params["settings"], list)
                      else at.query_params["settings"])
    assert link["plan_family"] == "lda"
