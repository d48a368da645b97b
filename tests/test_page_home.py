"""AppTest of the home page: the tour reflects the shared scenario; a malformed link is reported there."""

from __future__ import annotations

from conftest import ROOT, app_test
from streamlit.testing.v1 import AppTest

from dpcore.scenario import default_scenario, preset_scenario
from pages.shared.catalog import PAGES


def test_home_lists_every_page_and_describes_the_current_scenario():
    at = app_test()
    assert not at.exception
    assert at.title[0].value == "Private multi-site analysis with correlated noise"
    links = [p.proto.page for p in at.get("page_link")]
    assert [link.split("/")[-1] for link in links] == [p.path.split("/")[-1].removesuffix(".py") for p in PAGES[1:]]
    tour = next(m.value for m in at.markdown if "A short tour" in m.value)
    assert f"**{default_scenario().n_sites} sites** and **N = {default_scenario().total_n:,}**" in tour
    # a scenario set elsewhere shows up here
    at.session_state["scenario"] = preset_scenario("one-large")
    at.run()
    tour = next(m.value for m in at.markdown if "A short tour" in m.value)
    assert "**N = 6,000**" in tour


def test_home_reports_a_malformed_link_and_keeps_the_default():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["scenario"] = '{"sites": [{"name": "A", "n": -3, "eps": 1, "delta": 0.5}]}'
    at.run()
    assert not at.exception
    assert "could not be loaded" in at.error[0].value and "n: must be an integer >= 1" in at.error[0].value
    assert at.session_state["scenario"] == default_scenario()
