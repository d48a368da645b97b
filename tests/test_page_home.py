"""AppTest of the home page: the tour reflects the shared scenario; a malformed link is reported there."""

from __future__ import annotations

from conftest import ROOT, app_test
from streamlit.testing.v1 import AppTest

from dpcore.cape import compare_plans, headline_gain, plan_scenario
from dpcore.scenario import default_scenario, preset_scenario
from pages.shared.catalog import PAGES


def test_home_lists_every_page_and_describes_the_current_scenario():
    at = app_test()
    assert not at.exception
    assert at.title[0].value == "Private multi-site analysis with correlated noise"
    links = [p.proto.page for p in at.get("page_link")]
    assert [link.split("/")[-1] for link in links] == [p.path.split("/")[-1].removesuffix(".py") for p in PAGES[1:]]
    tour = next(m.value for m in at.markdown if "Press the buttons above" in m.value)
    assert f"**{default_scenario().n_sites} sites** and **N = {default_scenario().total_n:,}**" in tour
    assert at.markdown[1].value == headline_gain(default_scenario()).sentence  # the live headline
    # a scenario set elsewhere shows up here
    at.session_state["scenario"] = preset_scenario("one-large")
    at.run()
    tour = next(m.value for m in at.markdown if "Press the buttons above" in m.value)
    assert "**N = 6,000**" in tour


def test_one_click_to_where_cape_stops_helping_with_the_change_and_undo():
    at = app_test()
    at.button(key="home_lesson_wins").click().run()
    assert not at.exception
    assert at.session_state["scenario"] == preset_scenario("equal")
    assert at.markdown[1].value == headline_gain(preset_scenario("equal")).sentence  # 5 times: G = S
    at.button(key="home_lesson_stops").click().run()
    assert at.session_state["scenario"] == preset_scenario("one-strict")
    assert "gain falls to 1.16" in at.info[0].value
    change = compare_plans(plan_scenario(preset_scenario("equal")), plan_scenario(preset_scenario("one-strict")))
    panel = next(m.value for m in at.markdown if m.value.startswith("**Your last edit**"))
    assert "site C: ε 0.5 → 0.1" in panel and "The gain fell from 5× to 1.16×." in panel
    table = next(m.value for m in at.markdown if m.value.startswith("| | before | after |"))
    assert "| CAPE gain G | 5× | :red[**1.16×**] |" in table and len(change.rows) == table.count("\n") - 1
    at.button(key="change_undo").click().run()  # back to the equal sites; the panel shows that earlier edit
    assert at.session_state["scenario"] == preset_scenario("equal")
    assert "The gain rose from 2.22× to 5×." in next(m.value for m in at.markdown
                                                       if m.value.startswith("**Your last edit**"))
    at.button(key="change_hide").click().run()
    assert not any(m.value.startswith("**Your last edit**") for m in at.markdown)
    at.button(key="home_lesson_breaks").click().run()  # the default sites, exact calibration: promises break
    assert at.session_state["scenario"].calibration == "analytic"
    table = next(m.value for m in at.markdown if m.value.startswith("| | before | after |"))
    assert "site-views break their promise" in table


def test_home_reports_a_malformed_link_and_keeps_the_default():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["scenario"] = '{"sites": [{"name": "A", "n": -3, "eps": 1, "delta": 0.5}]}'
    at.run()
    assert not at.exception
    assert "could not be loaded" in at.error[0].value
    assert "n: must be an integer from 1 to 1,000,000,000 (got -3)" in at.error[0].value
    assert at.session_state["scenario"] == default_scenario()
