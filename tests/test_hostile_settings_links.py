"""Issue 29, cause 7: ``?settings=`` values were checked for type only: out-of-range slider values, a 10^30 integer or
a lone surrogate gave "internal error" boxes, and out-of-range numbers were silently clamped. The class: every page
describes its widgets in one table (dpcore.scenario.settings_link.Setting), draws each widget with that table's range
and choices, and checks a link against the same table. Generated from the tables (read off each page as it runs), so
a new widget or page is covered as soon as it exists:

* every widget a page draws from its table has exactly the table's range or number of choices;
* any JSON value for any key is taken only when its widget allows it, else refused with a message naming the
  setting, never raised (Hypothesis);
* in each page, links holding a bad value for every key at once (wrong type, out of range, 10^30, NaN, a lone
  surrogate, a list for a number, ...) give one warning per key, no exception or error box, keep each widget at an
  allowed value, and still apply the link's valid value.
"""

from __future__ import annotations

import json
import math

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.limits import MAX_SETTINGS_QUERY_CHARS
from dpcore.scenario.settings_link import Setting, settings_from_query
from pages.shared.catalog import PAGES
from pages.shared.widgets import SETTINGS_TABLE_KEY

NUMBER_WIDGETS = ("number_input", "slider")
CHOICE_WIDGETS = ("selectbox", "radio", "multiselect", "select_slider")


def _open(page: str, link: dict | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    if link is not None:
        at.query_params["settings"] = json.dumps(link, separators=(",", ":"))
    at.run()
    at.switch_page(page)
    at.run()
    return at


@pytest.fixture(scope="module")
def opened():
    """Every page opened once without a link: (AppTest, its table of widgets) by page path."""
    out = {}
    for info in PAGES:
        at = _open(info.path)
        assert not at.exception, (info.path, [e.value for e in at.exception])
        table = dict(at.session_state[SETTINGS_TABLE_KEY]) if SETTINGS_TABLE_KEY in at.session_state else {}
        out[info.path] = (at, table)
    return out


def test_the_pages_with_widget_settings_have_tables(opened):
    with_tables = {path for path, (_, table) in opened.items() if table}
    assert {"pages/topic_models.py", "pages/privacy_utility.py", "pages/capepca.py", "pages/capeagn.py",
            "pages/gain.py", "pages/noise_design.py", "pages/protocol.py", "pages/epsilon.py",
            "pages/planner.py"} <= with_tables
    for path, (_, table) in opened.items():
        for key, setting in table.items():
            assert isinstance(setting, Setting), (path, key)
            assert setting.problem(setting.default) is None, (path, key, setting.default)  # a default is allowed


def _widgets(at):
    for kind in NUMBER_WIDGETS + CHOICE_WIDGETS:
        for widget in getattr(at, kind, []):
            yield kind, widget


def test_every_widget_is_drawn_with_its_tables_range_and_choices(opened):
    checked = 0
    for path, (at, table) in opened.items():
        for kind, widget in _widgets(at):
            setting = table.get(widget.key)
            if setting is None:
                continue
            checked += 1
            if kind in NUMBER_WIDGETS:
                assert widget.min == setting.low and widget.max == setting.high, (path, widget.key)
            else:
                # the options the widget offers now: the table's, or a part of them (the planner's data sources of
                # the chosen algorithm, the sites that may move)
                assert setting.choices is not None and 1 <= len(widget.options) <= len(setting.choices), (
                    path, widget.key)
    assert checked >= 30


def _bad_values(setting: Setting) -> list:
    """Values the widget of ``setting`` does not allow, from what the table says it allows."""
    common = [None, {"a": 1}, [[1]], "\ud800", math.nan]
    kind = setting.kind
    if kind == "bool":
        return ["true", 1, 0.5, *common]
    if kind == "text":
        out = [5, 1.5, True, "x" * (setting.max_chars + 1), *common]
        return out + (["not one of the choices"] if setting.choices else [])
    if kind == "list":
        out = ["x", 3, [None], [[1]]]
        return out + ([["not one of the choices"], [setting.choices[0]] * 2] if setting.choices else [])
    out = ["7", True, math.inf, -math.inf, *common]
    out += [1.5] if kind == "int" else []
    if setting.high is not None:
        out += [10**30, setting.high + max(1, abs(setting.high))]
    if setting.low is not None:
        out += [-10**30, setting.low - max(1, abs(setting.low))]
    if setting.choices:
        out += [max(setting.choices) + 1]
    return [v for v in out if setting.problem(v) is not None]


def _valid_change(table: dict[str, Setting]) -> tuple[str, object] | None:
    """One key and an allowed value other than its default (a number one step inside its range): a seed or a number
    of runs where the page has one (a change that changes nothing else on the page)."""
    keys = sorted(table, key=lambda k: not k.endswith(("_seed", "_runs")))
    for key in keys:
        setting = table[key]
        if setting.kind == "int" and setting.choices is None and setting.high is not None and (
                setting.default + 1 <= setting.high):
            return key, setting.default + 1
    return None


@pytest.mark.parametrize("page", [p.path for p in PAGES])
def test_bad_values_for_every_setting_of_a_page_are_refused_with_messages(opened, page):
    table = opened[page][1]
    if not table:  # a page without settings of its own: a link's settings are harmless there
        at = _open(page, {"unknown": 10**30, "\ud800": "\ud800"})
        assert not at.exception and not at.error, (page, [e.value for e in at.exception])
        return
    change = _valid_change(table)
    bad = {key: _bad_values(setting) for key, setting in table.items() if not change or key != change[0]}
    rounds = 3  # every key gets a different bad value in each round; the unit test below tries them all
    for r in range(rounds):
        link: dict = {}
        for key, values in bad.items():
            if values:
                link[key] = values[(r * 5 + len(key)) % len(values)]
        chunks, current = [], {}
        for key, value in link.items():  # links stay below the length limit (a longer one is refused whole)
            if len(json.dumps({**current, key: value})) > MAX_SETTINGS_QUERY_CHARS - 200:
                chunks.append(current)
                current = {}
            current[key] = value
        chunks.append(current)
        for chunk in chunks:
            sent = {**chunk, **(dict([change]) if change else {})}
            at = _open(page, sent)
            assert not at.exception, (page, chunk, [e.value for e in at.exception])
            assert not at.error, (page, chunk, [e.value for e in at.error])
            warnings = " ".join(w.value for w in at.warning)
            for key in chunk:
                assert f"({key})" in warnings and table[key].label in warnings, (page, key, chunk[key], warnings)
                if key in at.session_state:
                    assert table[key].problem(at.session_state[key]) is None, (page, key, at.session_state[key])
            if change:
                assert at.session_state[change[0]] == change[1], (page, change)  # the rest of the link applied


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10**40, max_value=10**40) | st.floats()
    | st.text(max_size=30) | st.sampled_from(["\ud800", "\udfff"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8)


@settings(max_examples=300)
@given(data=st.data(), value=json_values)
def test_any_value_for_any_setting_is_taken_only_when_its_widget_allows_it(opened, data, value):
    tables = {key: setting for _, table in opened.values() for key, setting in table.items()}
    key = data.draw(st.sampled_from(sorted(tables)))
    setting = tables[key]
    values, problems = settings_from_query(json.dumps({key: value}), {key: setting})
    if key in values:
        assert problems == [] and setting.problem(values[key]) is None
        if setting.kind in ("int", "float") and setting.low is not None:
            assert setting.low <= values[key] <= setting.high
    else:
        assert len(problems) == 1 and f"{setting.label} ({key})" in problems[0]
        assert "the default" in problems[0] and problems[0].endswith("is kept")
        problems[0].encode("utf-8")  # a message any page can show
