"""Widget helpers shared by the pages: error display, charts, remembering widget values between visits, the
scenario's summary and link notices, the headline gain and the before-and-after panel of the last edit. Pages stay
thin: widgets, calls into dpcore, plots. Every text that dpcore wrote passes through
:func:`dpcore.notation.symbolic`, so the app shows one notation (τ_c, ε, σ_eff) whichever layer wrote a message."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

import streamlit as st

from dpcore.cape import compare_plans, headline_of
from dpcore.limits import MAX_SETTINGS_QUERY_CHARS
from dpcore.notation import symbolic
from dpcore.scenario import QUERY_KEY, Scenario
from dpcore.scenario.settings_link import (
    SETTINGS_KEY,
    Setting,
    encode_settings,
    legacy_settings,
    settings_from_query,
)
from dpcore.textio import load_json
from dpcore.validation import InputError
from pages.shared.state import (
    CHANGE_HIDDEN_KEY,
    LINK_ERROR_KEY,
    LINK_LOADED_KEY,
    SCENARIO_KEY,
    SITES_PROBLEMS_KEY,
    cached_plan,
    last_change,
    undo_scenario,
)

__all__ = [
    "CHART_CONFIG",
    "CHART_MARGIN",
    "STATISTIC_HELP",
    "change_panel",
    "headline",
    "link_loaded_notice",
    "remember_widgets",
    "restore_widgets",
    "scenario_sidebar",
    "show_chart",
    "show_error",
    "show_link_error",
    "widget_options",
    "widget_range",
    "wrap_chips",
]

STATISTIC_HELP = (
    "The released statistic sets the sensitivity Δ_s, hence τ_s = Δ_s c(ε_s, δ_s): "
    "mean of values in [0, 1] (1/N_s), PCA second-moment matrix (√2/N_s replace-one), topic-model (stm) or "
    "Gaussian-mixture (mog) moments of capeAGN."
)
CHART_MARGIN = {"l": 10, "r": 10, "t": 10, "b": 10}
# No plotly logo; the mode bar only on hover. The legend sits under the plot (show_chart), where neither the mode bar
# nor Streamlit's element toolbar, both at the top right, can cover it on a phone.
CHART_CONFIG = {"displaylogo": False, "displayModeBar": "hover"}

REMEMBERED_KEY = "_remembered_widget_keys"
SETTINGS_TABLE_KEY = "_settings_table"
"""Every widget a page restored, key -> its Setting (what the page's table says it allows), for the tests."""
log = logging.getLogger("dpcore.dashboard")


def show_error(exc: Exception, where: str | None = None) -> None:
    """A failure as a readable message, never a traceback: an input problem (:class:`InputError`) as its message,
    running out of memory as advice, anything else as "internal error: ... (please report)", logged with its
    traceback (Python logging, the server's console)."""
    prefix = f"{where}: " if where else ""
    if isinstance(exc, InputError):
        st.error(symbolic(prefix + str(exc)), icon=":material/error:")
    elif isinstance(exc, MemoryError):
        st.error(prefix + "not enough memory for this computation; use fewer sites, samples, features or runs",
                 icon=":material/memory:")
    else:
        log.error("internal error%s", f" ({where})" if where else "", exc_info=exc)
        st.error(f"{prefix}internal error: {_short(exc)} (please report)", icon=":material/bug_report:")


def _short(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    first = lines[0] if lines else ""
    first = first if len(first) <= 200 else first[:197] + "..."
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def show_chart(fig, title: str, *, key: str, height: int = 360, top: int = CHART_MARGIN["t"]) -> None:
    """A plotly figure with its title above it, the shared margins (``top``: more room for subplot titles) and a
    horizontal legend under the plot that wraps on narrow screens (the plot's margins grow to make room for it)."""
    st.markdown(f"**{title}**")
    fig.update_layout(height=height, margin={**CHART_MARGIN, "t": top},
                      legend={"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0, "xanchor": "left"})
    st.plotly_chart(fig, width="stretch", key=key, config=CHART_CONFIG)


def wrap_chips(key: str) -> None:
    """Let the chosen values of the multiselect ``key`` wrap onto as many lines as they need. Streamlit 1.67 keeps them
    on one line that scrolls sideways, so in a narrow column the last ones are cut off or out of sight (capePCA's
    Algorithms at 1,400 px hid "non-dp pool"); tests/test_browser.py checks that every chosen value is in view."""
    st.html(f"<style>.st-key-{key} [data-testid='stMultiSelectTagsContainer'] {{flex-wrap: wrap; overflow: visible; "
            f"height: auto}} .st-key-{key} div:has(> [data-testid='stMultiSelectTagsContainer']) {{height: auto; "
            "max-height: none}}</style>")


def headline(scenario: Scenario) -> None:
    """The one headline of the live scenario, in the same words on every page: the CAPE gain G of the mean at the
    scenario's τ_c (dpcore.cape.headline_of), from the plan every page shares."""
    try:
        plan = cached_plan(scenario, "mean")
    except InputError as exc:
        show_error(exc)
        return
    line = headline_of(plan.design)
    with st.container(border=True, key="headline_box"):
        st.markdown(symbolic(line.sentence))
        st.caption(f"CAPE gain G = τ_conv² / τ_c² = {line.value_text}, for a mean: the conventional scheme (every "
                   f"site adds its own noise) leaves τ_conv = {line.tau_conv:.4g}, CAPE leaves τ_c = {line.tau_c:.4g}. "
                   "Other gains answer narrower questions; each is defined beside its value on the Gain page.")


def _on_undo() -> None:
    undo_scenario()


def _on_hide() -> None:
    st.session_state[CHANGE_HIDDEN_KEY] = True


def _arrow(row) -> str:
    if not row.changed:
        return f"{row.after} (unchanged)"
    colour = {True: "green", False: "red", None: "blue"}[row.better]
    return f":{colour}[**{row.after}**]"


def change_panel() -> None:
    """After a scenario edit: what it changed (τ_c, the headline gain, feasibility, the audit's verdicts for the mean
    with the general solver and the default number of colluders) against the scenario before, with Undo."""
    change = last_change()
    if change is None or st.session_state.get(CHANGE_HIDDEN_KEY):
        return
    before, after = change
    try:
        diff = compare_plans(cached_plan(before, "mean"), cached_plan(after, "mean"))
    except InputError as exc:
        show_error(exc, "Before and after")
        return
    with st.container(border=True, key="change_panel"):
        top, undo, hide = st.columns([6, 1, 1], vertical_alignment="center")
        top.markdown(f"**Your last edit**: {symbolic('; '.join(diff.edits) or 'no visible change')}.  \n"
                     f"{symbolic(diff.summary)}")
        undo.button("Undo", key="change_undo", icon=":material/undo:", on_click=_on_undo,
                    help="Go back to the scenario before this edit (again for the edit before it).")
        hide.button("Hide", key="change_hide", on_click=_on_hide, help="Close this panel until the next edit.")
        table = "\n".join(f"| {symbolic(r.quantity)} | {symbolic(r.before)} | {symbolic(_arrow(r))} |"
                           for r in diff.rows)
        st.markdown("| | before | after |\n|---|---|---|\n" + table)


def widget_range(settings: Mapping[str, Setting], key: str) -> dict[str, Any]:
    """``min_value`` and ``max_value`` of a number input or slider, from the page's table of its widgets: the range a
    link is checked against (:class:`dpcore.scenario.settings_link.Setting`)."""
    return {"min_value": settings[key].low, "max_value": settings[key].high}


def widget_options(settings: Mapping[str, Setting], key: str) -> list[Any]:
    """The options of a radio, select box or multiselect, from the page's table of its widgets."""
    choices = settings[key].choices
    if choices is None:
        raise KeyError(f"the setting {key} has no choices")
    return list(choices)


def restore_widgets(settings: Mapping[str, Any], valid: Mapping[str, object] | None = None) -> None:
    """Give the widgets of ``settings`` (the page's table of its widgets: key -> :class:`Setting`) the value they had
    on this page's last visit (Streamlit drops the state of widgets a page run did not draw), else the link's value,
    else the default. A remembered value the widget no longer allows falls back to the default. (A page that gives
    only defaults, and ``valid``: a predicate or a collection of allowed values per key, is read with
    :func:`~dpcore.scenario.settings_link.legacy_settings`.)"""
    if not all(isinstance(s, Setting) for s in settings.values()):
        settings = legacy_settings(settings, valid)  # type: ignore[arg-type]
    defaults = {key: s.default for key, s in settings.items()}
    registered = st.session_state.setdefault(REMEMBERED_KEY, set())
    registered.update(defaults)
    st.session_state.setdefault(SETTINGS_TABLE_KEY, {}).update(settings)
    _apply_settings_link(settings)
    for key, setting in settings.items():
        if key in st.session_state:
            continue
        value = st.session_state.get(f"_remember_{key}", setting.default)
        if setting.problem(value) is not None:
            value = setting.default
        st.session_state[key] = value
    _publish_settings(defaults)


SETTINGS_APPLIED_KEY = "_settings_link_applied"


def _apply_settings_link(settings: Mapping[str, Setting]) -> None:
    """The page's own settings from the address's ``?settings=`` (once per distinct value and group of widgets: a
    page may restore several groups), each value checked against its widget
    (:func:`dpcore.scenario.settings_link.settings_from_query`); what a link could not set is said on the page, naming
    the setting, and the rest of the link applies. Keys of other groups are left to them."""
    value = st.query_params.get(SETTINGS_KEY)
    applied = st.session_state.setdefault(SETTINGS_APPLIED_KEY, set())
    marker = f"{','.join(sorted(settings))}|{value}"
    if not value or marker in applied:
        return
    applied.add(marker)
    values, problems = settings_from_query(value, settings)
    if not values and not problems:
        return
    for key in settings:
        st.session_state.pop(key, None)
        st.session_state.pop(f"_remember_{key}", None)
    st.session_state.update(values)
    for problem in problems:
        if not problem.startswith("the link sets"):  # a key of another group of this page, or of none
            st.warning(problem, icon=":material/link_off:")


def _linked_settings() -> dict[str, object]:
    """The JSON object of the address's ``?settings=`` as it stands ({} when absent, too long or not an object)."""
    value = st.query_params.get(SETTINGS_KEY, "")
    if not value or len(value) > MAX_SETTINGS_QUERY_CHARS:
        return {}
    try:
        data = load_json(value, "page settings", max_bytes=MAX_SETTINGS_QUERY_CHARS, surrogates=True)
    except InputError:  # (a lone surrogate is kept: the value's own group refuses it, naming it, and keeps the rest)
        return {}
    return data if isinstance(data, dict) else {}


def _publish_settings(defaults: dict[str, object]) -> None:
    """Write the page's settings that differ from their defaults into the address (``?settings=``), merged with those
    of the page's other groups of widgets, or remove it when none differs."""
    merged = {k: v for k, v in _linked_settings().items() if k not in defaults}
    merged.update({k: st.session_state.get(k) for k in defaults if st.session_state.get(k) != defaults[k]})
    value = encode_settings(merged)
    applied = st.session_state.setdefault(SETTINGS_APPLIED_KEY, set())
    if value:
        if st.query_params.get(SETTINGS_KEY) != value:
            applied.add(f"{','.join(sorted(defaults))}|{value}")
            st.query_params[SETTINGS_KEY] = value
    elif SETTINGS_KEY in st.query_params:
        del st.query_params[SETTINGS_KEY]


def remember_widgets(keys: Iterable[str] | None = None) -> None:
    """Store the current values of the widgets ``keys`` (default: every key a page passed to
    :func:`restore_widgets`) for :func:`restore_widgets`. The router calls it before every page run, so that a
    run cut short by an error, whose later widgets Streamlit then forgets, gives them back on the next run."""
    if keys is None:
        keys = tuple(st.session_state.get(REMEMBERED_KEY, ()))
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


def bar_progress(bar: Any, start: float = 0.0, share: float = 1.0, prefix: str = ""):
    """A comparison's progress callback (the family contract's one form, ``progress(done, total, label)``) that moves
    ``bar`` (an ``st.progress``) over [``start``, ``start + share``], its text the step's label after ``prefix``."""

    def progress(done: int, total: int, label: str) -> None:
        bar.progress(start + share * min(done / max(total, 1), 1.0), text=f"{prefix}{label}")

    return progress
