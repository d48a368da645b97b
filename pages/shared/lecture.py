"""One scenario everywhere (issue 20, item 2): a computing page runs the scenario built on Sites and budgets once the
user has built or loaded one; on a first visit it may open on its lecture setting, which is then a named scenario
in the sidebar ("the lecture setting") with one click between it and the user's own."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dpcore.notation import symbolic
from dpcore.scenario import Scenario, default_scenario, sites_words

__all__ = ["LECTURE", "follow_scenario", "lecture_sidebar"]

LECTURE = "the lecture setting"


def _own(scenario: Scenario) -> bool:
    """The user built or loaded a scenario: it is no longer the embedded default."""
    return scenario != default_scenario()


def follow_scenario(page: str, mode_key: str, own_value: Any, scenario: Scenario) -> None:
    """Switch the page to the user's scenario (``mode_key`` = ``own_value``) whenever the shared scenario is the
    user's own and has changed since this page last looked (so a newly built or loaded scenario is what runs; a click
    back to the lecture setting stays until the scenario changes again). Call before the page restores its widgets, so
    that a link's own setting wins."""
    seen = f"_{page}_scenario_seen"
    if _own(scenario) and st.session_state.get(seen) != scenario:
        st.session_state[mode_key] = own_value
    st.session_state[seen] = scenario


def lecture_sidebar(page: str, mode_key: str, lecture_value: Any, own_value: Any, lecture: Scenario | None,
                    unit: str = "samples", *, budgets: bool = True) -> bool:
    """Say in the sidebar which scenario the page runs, the lecture setting (``lecture``, in words) or the user's,
    with one click to the other (``budgets`` False: the page sets every site's eps itself, so the promise is not
    named). Returns True when the page runs the lecture setting."""
    running_lecture = st.session_state.get(mode_key) == lecture_value
    with st.sidebar:
        if running_lecture:
            what = f": {sites_words(lecture, unit, budgets=budgets)}" if lecture is not None else ""
            st.markdown(symbolic(f"**This page runs {LECTURE}**{what}."))
            st.button("Run my scenario instead", key=f"{page}_to_own",
                      on_click=lambda: st.session_state.update({mode_key: own_value}),
                      help="The scenario above, from Sites and budgets (its sites, sizes, budgets, weights, "
                      "calibration and neighbouring relation).")
        else:
            st.markdown("**This page runs your scenario** (above).")
            st.button(f"Switch to {LECTURE}", key=f"{page}_to_lecture",
                      on_click=lambda: st.session_state.update({mode_key: lecture_value}),
                      help="The page's own equal sites, chosen to show the effect well.")
    return running_lecture
