"""AppTest of the home page: the tour reflects the shared scenario; the one-click lessons' sentences follow the
scenario (also after Undo) and agree with the headline on the same page; a malformed link is reported there."""

from __future__ import annotations

import re

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


def _headline_gain(at) -> float:
    return float(re.search(r"\*\*([\d.]+) times less noise variance\*\*", at.markdown[1].value).group(1))


def _lesson_gain(at) -> float | None:
    """The gain the lesson's explanation box says the scenario has (None: no box)."""
    boxes = [i.value for i in at.info if i.icon == ":material/school:"]
    if not boxes:
        return None
    found = re.search(r"the gain (?:falls to|is S =|is) ([\d.]+)", boxes[0])
    assert found, boxes[0]
    return float(found.group(1))


def test_the_lesson_explanation_follows_the_scenario_through_undo():
    """Issue 29: after "CAPE stops helping: a strict site" then Undo, the headline was back at 5 (2.22 from the
    default) while the box still said "the gain falls to 1.16". The box now reads the scenario shown: the gain it
    names is the headline's, and it goes when the scenario is no lesson's."""
    at = app_test()
    assert _lesson_gain(at) is None  # the default scenario is no lesson's
    at.button(key="home_lesson_stops").click().run()
    assert _lesson_gain(at) == _headline_gain(at) == 1.16
    box = next(i.value for i in at.info if i.icon == ":material/school:")
    assert "site C asks for ε = 0.1, the others for 0.5" in box and "(from 5 when site C asks for 0.5" in box
    share = int(re.search(r"noise is (\d+)% of the noise variance", box).group(1))
    assert share == round(100 / _headline_gain(at))  # the strict site's share of the conventional variance: 1 / G
    at.button(key="change_undo").click().run()  # back to the default: no lesson, no box
    assert at.session_state["scenario"] == default_scenario()
    assert _lesson_gain(at) is None and _headline_gain(at) == 2.22
    at.button(key="home_lesson_wins").click().run()
    at.button(key="home_lesson_stops").click().run()
    at.button(key="change_undo").click().run()  # back to the equal sites: the box is the first lesson's
    assert _lesson_gain(at) == _headline_gain(at) == 5
    assert "1.16" not in " ".join(i.value for i in at.info)
    at.button(key="home_lesson_breaks").click().run()
    box = next(i.value for i in at.info if i.icon == ":material/school:")
    table = next(m.value for m in at.markdown if m.value.startswith("| | before | after |"))
    broken = re.search(r"finds (\d+) of (\d+) site-views", box).groups()
    assert f"{broken[0]} of {broken[1]} site-views break their promise" in table  # the panel's audit row
