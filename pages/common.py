"""Shared by every page: the page list, the scenario in session state, error display.

Pages stay thin: widgets, calls into dpcore, plots. Anything a test could check belongs in dpcore.

The shared scenario lives in ``st.session_state`` (:func:`current_scenario`, :func:`set_scenario`). A page
opened with ``?scenario=<value>`` in its address (see :mod:`dpcore.scenario_io`) starts from that scenario;
a malformed value is reported by :func:`scenario_sidebar` and the current scenario is kept. Every
:func:`set_scenario` writes the new scenario into the address bar, so the address is always a link to it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from dpcore.plan import Plan, plan_scenario
from dpcore.scenario import Scenario, ScenarioError, default_scenario, scenario_from_json
from dpcore.scenario_io import QUERY_KEY, scenario_from_query, scenario_to_query
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
    PageInfo("pages/sites.py", "Sites and budgets", ":material/table_edit:",
             "edit the sites, their sizes and privacy budgets; presets, load, save and share a scenario"),
    PageInfo("pages/noise_design.py", "Noise design", ":material/tune:",
             "how much noise helper, aggregator and sites add, why a design is (in)feasible, and the privacy audit"),
    PageInfo("pages/gain.py", "Gain G(n)", ":material/trending_up:",
             "how much CAPE gains over independent noise, and how unequal site sizes change it"),
    PageInfo("pages/protocol.py", "Protocol walk-through", ":material/route:",
             "one round of CAPE, capePCA and capeAGN message by message, and what each party can learn"),
    PageInfo("pages/capepca.py", "capePCA", ":material/scatter_plot:",
             "distributed private PCA on MNIST, digits, synthetic or uploaded data against every baseline"),
    PageInfo("pages/capeagn.py", "capeAGN", ":material/deployed_code:",
             "private tensor decomposition of topic models and Gaussian mixtures across sites, large vocabularies"),
    PageInfo("pages/privacy_utility.py", "Privacy-utility", ":material/show_chart:",
             "utility against eps, delta, N_s, S or c: the paper's Figs. 2-5 as presets, or sweeps of your scenario"),
]

_ROUTING = threading.local()


def run_app() -> None:
    """Page configuration and the navigation over :data:`PAGES`, then the chosen page: what app.py runs."""
    st.set_page_config(page_title="CAPE: private multi-site analysis", page_icon=":material/hub:", layout="wide")
    navigation = st.navigation(
        [st.Page(p.path, title=p.title, icon=p.icon, default=(i == 0)) for i, p in enumerate(PAGES)]
    )
    _ROUTING.active = True
    try:
        navigation.run()
    finally:
        _ROUTING.active = False


def ensure_routed() -> None:
    """Call first on every page. When a deep link (``/capepca``) is the first request a fresh server sees,
    Streamlit runs the page file directly in its legacy ``pages/`` folder mode, without app.py, so the
    sidebar would list every file in ``pages/``. Then run the app's navigation instead and stop this run."""
    if not getattr(_ROUTING, "active", False):
        run_app()
        st.stop()

SCENARIO_KEY = "scenario"
LINK_APPLIED_KEY = "scenario_link_applied"
LINK_ERROR_KEY = "scenario_link_error"
SITES_PROBLEMS_KEY = "sites_table_problems"
STATISTIC_HELP = (
    "The released statistic sets the sensitivity Delta_s, hence tau_s = Delta_s c(eps_s, delta_s): "
    "mean of values in [0, 1] (1/N_s), PCA second-moment matrix (sqrt(2)/N_s replace-one), topic-model (stm) or "
    "Gaussian-mixture (mog) moments of capeAGN."
)


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
        st.session_state["scenario_link_loaded"] = True
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
    would run that page before app.py has set up the navigation."""
    base = (st.context.url or "").rstrip("/")
    stems = {Path(p.path).stem for p in PAGES}
    head, _, last = base.rpartition("/")
    if last in stems and "://" in head:
        base = head
    query = f"?{QUERY_KEY}={scenario_to_query(scenario)}"
    return f"{base}/{query}" if base else query


def link_loaded_notice() -> None:
    """Say that the scenario came from a link, on the run that loaded it."""
    if st.session_state.pop("scenario_link_loaded", False):
        scenario = st.session_state[SCENARIO_KEY]
        st.success(f"Loaded the scenario from the link: {scenario.n_sites} sites, N = {scenario.total_n:,}. "
                   "Every page uses it; edit it on the Sites and budgets page.", icon=":material/link:")


@st.cache_data(show_spinner="Designing the noise and auditing it ...", max_entries=64)
def _plan_cached(scenario_json: str, statistic: str, solver: str, objective: str, last: str | None,
                 collusion: int | None, e_scale: float, dim: int | None, sigma2: float | None) -> Plan:
    return plan_scenario(scenario_from_json(scenario_json), statistic, solver=solver, objective=objective, last=last,
                         collusion=collusion, e_scale=e_scale, dim=dim, sigma2=sigma2)


def cached_plan(scenario: Scenario, statistic: str = "mean", *, solver: str = "general", objective: str = "balanced",
                last: str | None = None, collusion: int | None = None, e_scale: float = 1.0,
                dim: int | None = None, sigma2: float | None = None) -> Plan:
    """dpcore.plan.plan_scenario cached on the scenario's JSON and the settings (st.cache_data)."""
    return _plan_cached(scenario.to_json(indent=None), statistic, solver, objective, last, collusion, float(e_scale),
                        dim, sigma2)


def show_error(exc: Exception, where: str | None = None) -> None:
    """An input problem as a readable message (never a traceback)."""
    prefix = f"{where}: " if where else ""
    if isinstance(exc, InputError):
        st.error(prefix + str(exc), icon=":material/error:")
    else:  # unexpected: still no traceback for the user, but say what kind of failure it was
        st.error(f"{prefix}{type(exc).__name__}: {exc}", icon=":material/error:")


CHART_MARGIN = {"l": 10, "r": 10, "t": 10, "b": 10}


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
