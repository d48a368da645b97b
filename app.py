"""CAPE dashboard: `make run` (or `streamlit run app.py`). Pages are listed in pages/common.py."""

import streamlit as st

from pages.common import PAGES

st.set_page_config(page_title="CAPE: private multi-site analysis", page_icon=":material/hub:", layout="wide")

navigation = st.navigation(
    [st.Page(p.path, title=p.title, icon=p.icon, default=(i == 0)) for i, p in enumerate(PAGES)]
)
navigation.run()
