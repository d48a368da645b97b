"""The story parts of the computing pages (capePCA, capeAGN): the opening sentence, the one-click "where CAPE stops
helping" with its chart and sentences, and the way back. The settings and sentences come from dpcore
(dpcore.pca.story, dpcore.agn.story); this module only draws them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import plotly.graph_objects as go
import streamlit as st

from dpcore.notation import symbolic
from dpcore.validation import InputError
from pages.shared.widgets import show_chart, show_error

__all__ = ["GLOSSARY_PAGE", "breakdown_chart", "computed_once", "glossary_link", "server_store", "show_breakdown",
           "story_buttons"]

GLOSSARY_PAGE = "pages/glossary.py"


def glossary_link() -> None:
    """A link to the Glossary page, where every term of art is defined in one line."""
    st.page_link(GLOSSARY_PAGE, label="Words such as τ_c, conventional scheme, helper or q_comp: see the Glossary",
                 icon=":material/menu_book:")


def story_buttons(in_breakdown: bool, *, key: str, on_breakdown: Callable[[], None], on_opening: Callable[[], None],
                  breakdown_help: str) -> None:
    """"Show where CAPE stops helping" on the opening setting, "Back to the opening setting" after it."""
    if in_breakdown:
        st.button("Back to the opening setting", key=f"{key}_opening", on_click=on_opening, icon=":material/undo:",
                  help="Restore the opening setting's widgets.")
    else:
        st.button("Show where CAPE stops helping", key=f"{key}_breakdown", on_click=on_breakdown,
                  icon=":material/troubleshoot:", help=breakdown_help)


def breakdown_chart(results: Sequence[Any], titles: dict[str, str], colours: dict[str, str], metric: str) -> go.Figure:
    """Grouped bars: one group per case (its title), one bar per algorithm (mean, whiskers one standard error)."""
    fig = go.Figure()
    names = list(results[0].mean) if results else []
    cases = [symbolic(r.case.title) for r in results]
    for name in names:
        fig.add_bar(x=cases, y=[r.mean[name] for r in results], name=titles.get(name, name),
                    error_y={"type": "data", "array": [r.se[name] for r in results], "visible": True},
                    marker_color=colours.get(name))
    fig.update_layout(barmode="group", yaxis_title=metric)
    return fig


def show_breakdown(results: Sequence[Any], titles: dict[str, str], colours: dict[str, str], metric: str, *,
                   key: str, runs: int) -> None:
    """The cases of "where CAPE stops helping": a chart and, per case, why the curves meet (from dpcore)."""
    st.subheader("Where CAPE stops helping")
    st.caption(f"The opening setting changed in one way per group, {runs} runs each; whiskers: one standard error.")
    show_chart(breakdown_chart(results, titles, colours, metric), f"{metric} in each case", key=key, height=380)
    for r in results:
        st.markdown(f"**{symbolic(r.case.title).capitalize()}.** {symbolic(r.sentence)}")


T = TypeVar("T")


@st.cache_resource(show_spinner=False)
def server_store(name: str) -> dict:
    """A dict named ``name`` shared by every session of the server, for results that are the same for every visitor:
    a plain dict, because st.cache_resource on the computation itself would replay its progress bar into the next
    session's page (CacheReplayClosureError)."""
    return {}


def computed_once(store: dict, key: Any, compute: Callable[[], T], *, keep: int = 2) -> T:
    """``store[key]``, computed by ``compute()`` the first time it is asked for; ``store`` (e.g. a
    :func:`server_store`) keeps the ``keep`` latest keys."""
    if key not in store:
        result = compute()
        while len(store) >= keep:
            store.pop(next(iter(store)), None)
        store[key] = result
    return store[key]


def breakdown_section(state_key: str, compute: Callable[[Callable[[float, str], None]], Sequence[Any]],
                      titles: dict[str, str], colours: dict[str, str], metric: str, *, key: str, runs: int) -> None:
    """Run the cases once per session (``compute(progress)``, kept under ``state_key``) with a progress bar, then
    show them (:func:`show_breakdown`); a library error is shown in place of the cases."""
    if state_key not in st.session_state:
        bar = st.progress(0.0, text="Running the cases where CAPE stops helping")
        try:
            st.session_state[state_key] = compute(lambda f, t: bar.progress(min(f, 1.0), text=symbolic(t)))
        except InputError as exc:
            show_error(exc)
        finally:
            bar.empty()
    if state_key in st.session_state:
        show_breakdown(st.session_state[state_key], titles, colours, metric, key=key, runs=runs)
