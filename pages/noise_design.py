"""Noise design (work in progress)."""

import streamlit as st

from pages.common import current_scenario, scenario_sidebar

scenario_sidebar(current_scenario())
st.title("Noise design")
st.info("This page is being built.")
