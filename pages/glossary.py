"""Glossary: every term of art the pages use, and every named gain, each in one line (dpcore.notation.GLOSSARY,
dpcore.cape.GAINS)."""

from __future__ import annotations

import streamlit as st

from dpcore.cape import GAINS
from dpcore.notation import GLOSSARY
from pages.shared.navigation import start_page
from pages.shared.widgets import scenario_sidebar

scenario = start_page()

scenario_sidebar(scenario)
st.title("Glossary")
st.markdown("Every word of the trade the pages use, in one line each; the mathematics is in the `docs/` file named "
            "beside it. The symbols are those of every page.")

st.markdown("\n".join(f"- **{t.name}**" + (f" ({t.symbol})" if t.symbol else "") + f": {t.definition}. "
                      f"<small>`{t.docs}`</small>" for t in sorted(GLOSSARY, key=lambda t: t.name.lower())),
            unsafe_allow_html=True)

st.subheader("Gains")
st.markdown("Each gain answers its own question; the first is the headline every page shows.")
st.markdown("\n".join(f"- **{g.title} {g.symbol}**: {g.definition}." + ("" if g.private else
                      " *Not a private gain.*") for g in GAINS.values()))
