"""Page state: the scenario every page shares (in ``st.session_state``), scenario links, cached computations on it.

A page opened with ``?scenario=<value>`` in its address (see :mod:`dpcore.scenario.io`) starts from that scenario;
a malformed value is kept aside for :func:`pages.shared.widgets.show_link_error` and the current scenario is kept.
Every :func:`set_scenario` writes the new scenario into the address bar, so the address is always a link to it.
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
    "LINK_APPLIED_KEY",
    "LINK_ERROR_KEY",
    "LINK_LOADED_KEY",
    "SCENARIO_KEY",
    "SITES_PROBLEMS_KEY",
    "cached_plan",
    "current_scenario",
    "scenario_link",
    "set_scenario",
]

SCENARIO_KEY = "scenario"
LINK_APPLIED_KEY = "scenario_link_applied"
LINK_ERROR_KEY = "scenario_link_error"
LINK_LOADED_KEY = "scenario_link_loaded"
SITES_PROBLEMS_KEY = "sites_table_problems"


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
        st.session_state[SCENARIO_KEY] = scenario
        st.session_state[LINK_LOADED_KEY] = True
        st.session_state.pop(LINK_ERROR_KEY, None)


def current_scenario() -> Scenario:
    """The scenario every page shares: from the page's scenario link if it has a new one, else the one in
    session state (the embedded default until the user changes it)."""
    _apply_link()
    if SCENARIO_KEY not in st.session_state:
        st.session_state[SCENARIO_KEY] = default_scenario()
    return st.session_state[SCENARIO_KEY]


def set_scenario(scenario: Scenario) -> None:
    """Share ``scenario`` with every page and put its link in the address bar."""
    st.session_state[SCENARIO_KEY] = scenario
    value = scenario_to_query(scenario)
    st.session_state[LINK_APPLIED_KEY] = value
    st.query_params[QUERY_KEY] = value


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
