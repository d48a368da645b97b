"""Page state: the scenario every page shares (in ``st.session_state``), scenario links, cached computations on it.

A page opened with ``?scenario=<value>`` in its address (see :mod:`dpcore.scenario.io`) starts from that scenario;
a malformed value is kept aside for :func:`pages.shared.widgets.show_link_error` and the current scenario is kept.
Every :func:`set_scenario` writes the new scenario into the address bar, so the address is always a link to it, and
remembers the scenario it replaced: the before-and-after panel (pages.shared.widgets.change_panel) compares the two and
:func:`undo_scenario` goes back, one edit at a time.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dpcore.cape import Plan, plan_scenario
from dpcore.scenario import (
    QUERY_KEY,
    Scenario,
    ScenarioError,
    default_scenario,
    scenario_from_json,
    scenario_from_query,
    scenario_to_query,
)
from pages.shared.catalog import PAGES

__all__ = [
    "CHANGE_HIDDEN_KEY",
    "HISTORY_KEY",
    "LINK_APPLIED_KEY",
    "LINK_ERROR_KEY",
    "LINK_LOADED_KEY",
    "SCENARIO_KEY",
    "SITES_PROBLEMS_KEY",
    "cached_plan",
    "current_scenario",
    "last_change",
    "scenario_link",
    "set_scenario",
    "undo_scenario",
]

SCENARIO_KEY = "scenario"
LINK_APPLIED_KEY = "scenario_link_applied"
LINK_ERROR_KEY = "scenario_link_error"
LINK_LOADED_KEY = "scenario_link_loaded"
SITES_PROBLEMS_KEY = "sites_table_problems"
HISTORY_KEY = "scenario_history"  # the scenarios replaced by edits, oldest first
CHANGE_HIDDEN_KEY = "scenario_change_hidden"  # the user closed the before-and-after panel of the last edit
MAX_HISTORY = 30


def _apply_link() -> None:
    """Load the scenario of the address's ``?scenario=`` value once per distinct value."""
    value = st.query_params.get(QUERY_KEY)
    if not value or value == st.session_state.get(LINK_APPLIED_KEY):
        return
    st.session_state[LINK_APPLIED_KEY] = value
    try:
        scenario = scenario_from_query(value)
    except ScenarioError as exc:
        st.session_state[LINK_ERROR_KEY] = (value, [str(e) for e in exc.errors])
    else:
        _remember(st.session_state.get(SCENARIO_KEY), scenario)
        st.session_state[SCENARIO_KEY] = scenario
        st.session_state[LINK_LOADED_KEY] = True
        st.session_state.pop(LINK_ERROR_KEY, None)


def current_scenario() -> Scenario:
    """The scenario every page shares: from the page's scenario link if it has a new one, else the one in
    session state (the embedded default until the user changes it). The address bar is made to hold it again after
    a navigation, which clears the query."""
    _apply_link()
    if SCENARIO_KEY not in st.session_state:
        st.session_state[SCENARIO_KEY] = default_scenario()
    scenario = st.session_state[SCENARIO_KEY]
    value = st.query_params.get(QUERY_KEY)
    broken = st.session_state.get(LINK_ERROR_KEY)
    if not (broken and value == broken[0]):  # a broken link stays in the address while its error is shown
        wanted = scenario_to_query(scenario)
        if value != wanted:
            st.session_state[LINK_APPLIED_KEY] = wanted
            st.query_params[QUERY_KEY] = wanted
    return scenario


def _remember(previous: Scenario | None, scenario: Scenario) -> None:
    """Push the scenario an edit replaces onto the history (the before-and-after panel shows the edit)."""
    if previous is None or previous == scenario:
        return
    history = st.session_state.setdefault(HISTORY_KEY, [])
    history.append(previous)
    del history[:-MAX_HISTORY]
    st.session_state[CHANGE_HIDDEN_KEY] = False


def _publish(scenario: Scenario) -> None:
    st.session_state[SCENARIO_KEY] = scenario
    value = scenario_to_query(scenario)
    st.session_state[LINK_APPLIED_KEY] = value
    st.query_params[QUERY_KEY] = value


def set_scenario(scenario: Scenario) -> None:
    """Share ``scenario`` with every page, put its link in the address bar and remember the one it replaces."""
    _remember(st.session_state.get(SCENARIO_KEY), scenario)
    _publish(scenario)


def last_change() -> tuple[Scenario, Scenario] | None:
    """(before, after) of the edit that led to the current scenario, or None (no edit yet, or all undone)."""
    history = st.session_state.get(HISTORY_KEY) or []
    if not history or SCENARIO_KEY not in st.session_state:
        return None
    return history[-1], st.session_state[SCENARIO_KEY]


def undo_scenario() -> None:
    """Go back to the scenario before the last edit (the edit before it becomes the last one)."""
    history = st.session_state.get(HISTORY_KEY) or []
    if history:
        _publish(history.pop())


def scenario_link(scenario: Scenario) -> str:
    """A link that opens the dashboard's home page with ``scenario`` (relative when the browser's address is
    unknown). It points at the app's root, not at a page: on a freshly started server a deep link to a page
    starts in Streamlit's legacy page discovery (pages.shared.navigation) before the app's navigation takes over."""
    base = (st.context.url or "").rstrip("/")
    stems = {Path(p.path).stem for p in PAGES}
    head, _, last = base.rpartition("/")
    if last in stems and "://" in head:
        base = head
    query = f"?{QUERY_KEY}={scenario_to_query(scenario)}"
    return f"{base}/{query}" if base else query


@st.cache_data(show_spinner="Designing the noise and auditing it ...", max_entries=64)
def _plan_cached(scenario_json: str, statistic: str, solver: str, objective: str, last: str | None,
                 collusion: int | None, e_scale: float, dim: int | None, sigma2: float | None) -> Plan:
    return plan_scenario(scenario_from_json(scenario_json), statistic, solver=solver, objective=objective, last=last,
                         collusion=collusion, e_scale=e_scale, dim=dim, sigma2=sigma2)


def cached_plan(scenario: Scenario, statistic: str = "mean", *, solver: str = "general", objective: str = "balanced",
                last: str | None = None, collusion: int | None = None, e_scale: float = 1.0,
                dim: int | None = None, sigma2: float | None = None) -> Plan:
    """dpcore.cape.plan_scenario cached on the scenario's JSON and the settings (st.cache_data)."""
    return _plan_cached(scenario.to_json(indent=None), statistic, solver, objective, last, collusion, float(e_scale),
                        dim, sigma2)
