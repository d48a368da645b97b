"""Shared by every page: the page list, the scenario in session state, error display.

Pages stay thin: widgets, calls into dpcore, plots. Anything a test could check belongs in dpcore.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from dpcore.scenario import Scenario, default_scenario
from dpcore.validation import InputError


@dataclass(frozen=True)
class PageInfo:
    path: str
    title: str
    icon: str
    summary: str


# The navigation (app.py), the home page's tour and the browser test all read this list.
PAGES: list[PageInfo] = [
    PageInfo("pages/home.py", "Home", ":material/home:", "what CAPE is and what each page does"),
    PageInfo("pages/capepca.py", "capePCA", ":material/scatter_plot:",
             "distributed private PCA on MNIST, digits, synthetic or uploaded data against every baseline"),
]

SCENARIO_KEY = "scenario"


def current_scenario() -> Scenario:
    """The scenario every page shares (the embedded default until the user changes it)."""
    if SCENARIO_KEY not in st.session_state:
        st.session_state[SCENARIO_KEY] = default_scenario()
    return st.session_state[SCENARIO_KEY]


def set_scenario(scenario: Scenario) -> None:
    st.session_state[SCENARIO_KEY] = scenario


def show_error(exc: Exception, where: str | None = None) -> None:
    """An input problem as a readable message (never a traceback)."""
    prefix = f"{where}: " if where else ""
    if isinstance(exc, InputError):
        st.error(prefix + str(exc), icon=":material/error:")
    else:  # unexpected: still no traceback for the user, but say what kind of failure it was
        st.error(f"{prefix}{type(exc).__name__}: {exc}", icon=":material/error:")


def scenario_sidebar(scenario: Scenario) -> None:
    """A compact summary of the shared scenario in the sidebar."""
    with st.sidebar:
        st.caption(
            f"Scenario: {scenario.n_sites} sites, N = {scenario.total_n:,}, {scenario.calibration} calibration, "
            f"{scenario.neighbouring} neighbours"
        )
