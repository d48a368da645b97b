"""Widget helpers shared by the pages: error display, charts, remembering widget values between visits, and the
scenario's summary and link notices. Pages stay thin: widgets, calls into dpcore, plots."""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from dpcore.scenario import QUERY_KEY, Scenario
from dpcore.validation import InputError
from pages.shared.state import LINK_ERROR_KEY, LINK_LOADED_KEY, SCENARIO_KEY, SITES_PROBLEMS_KEY

__all__ = [
    "CHART_MARGIN",
    "STATISTIC_HELP",
    "link_loaded_notice",
    "remember_widgets",
    "restore_widgets",
    "scenario_sidebar",
    "show_chart",
    "show_error",
    "show_link_error",
]

STATISTIC_HELP = (
    "The released statistic sets the sensitivity Delta_s, hence tau_s = Delta_s c(eps_s, delta_s): "
    "mean of values in [0, 1] (1/N_s), PCA second-moment matrix (sqrt(2)/N_s replace-one), topic-model (stm) or "
    "Gaussian-mixture (mog) moments of capeAGN."
)
CHART_MARGIN = {"l": 10, "r": 10, "t": 10, "b": 10}


def show_error(exc: Exception, where: str | None = None) -> None:
    """An input problem as a readable message (never a traceback)."""
    prefix = f"{where}: " if where else ""
    if isinstance(exc, InputError):
        st.error(prefix + str(exc), icon=":material/error:")
    else:  # unexpected: still no traceback for the user, but say what kind of failure it was
        st.error(f"{prefix}{type(exc).__name__}: {exc}", icon=":material/error:")


def show_chart(fig, title: str, *, key: str, height: int = 360) -> None:
    """A plotly figure with its title above it (not inside, so the legend can sit on top without overlap),
    the shared margins and a horizontal legend that wraps on narrow screens."""
    st.markdown(f"**{title}**")
    fig.update_layout(height=height, margin=CHART_MARGIN,
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0, "xanchor": "left"})
    st.plotly_chart(fig, width="stretch", key=key)


def restore_widgets(defaults: dict[str, object], valid: dict[str, object] | None = None) -> None:
    """Give widgets keyed by ``defaults`` the value they had on this page's last visit (Streamlit drops the
    state of widgets a page run did not draw), else the default. ``valid`` maps a key to a predicate or a
    collection of allowed values; a remembered value that is no longer allowed falls back to the default."""
    valid = valid or {}
    for key, default in defaults.items():
        if key in st.session_state:
            continue
        value = st.session_state.get(f"_remember_{key}", default)
        check = valid.get(key)
        if check is not None and not (check(value) if callable(check) else value in check):
            value = default
        st.session_state[key] = value


def remember_widgets(keys: Iterable[str]) -> None:
    """Store the current values of the widgets ``keys`` for :func:`restore_widgets`."""
    for key in keys:
        if key in st.session_state:
            st.session_state[f"_remember_{key}"] = st.session_state[key]


def link_loaded_notice() -> None:
    """Say that the scenario came from a link, on the run that loaded it."""
    if st.session_state.pop(LINK_LOADED_KEY, False):
        scenario = st.session_state[SCENARIO_KEY]
        st.success(f"Loaded the scenario from the link: {scenario.n_sites} sites, N = {scenario.total_n:,}. "
                   "Every page uses it; edit it on the Sites and budgets page.", icon=":material/link:")


def show_link_error() -> None:
    """The problems of a malformed scenario link, while the address still holds it."""
    stored = st.session_state.get(LINK_ERROR_KEY)
    if stored and st.query_params.get(QUERY_KEY) == stored[0]:
        problems = "\n".join(f"- {p}" for p in stored[1])
        st.error(f"The scenario link in the address could not be loaded, so the current scenario is kept.\n\n"
                 f"{problems}", icon=":material/link_off:")


def scenario_sidebar(scenario: Scenario, *, notices: bool = True) -> None:
    """A compact summary of the shared scenario in the sidebar; with ``notices``, in the main area, the problems
    of a malformed scenario link or the news that one was loaded (call it at the top of a page)."""
    if notices:
        show_link_error()
        link_loaded_notice()
    with st.sidebar:
        st.caption(
            f"Scenario: {scenario.n_sites} sites, N = {scenario.total_n:,}, {scenario.calibration} calibration, "
            f"{scenario.neighbouring} neighbours"
        )
        problems = st.session_state.get(SITES_PROBLEMS_KEY)
        if problems:
            st.caption(f":orange[The Sites table has {problems} problem(s); every page uses the last valid "
                       "scenario.]")
