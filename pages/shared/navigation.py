"""The router: app.py runs :func:`run_app`; every page begins with :func:`start_page`.

Why pages begin with :func:`start_page` and not just with their content: Streamlit 1.67 keeps its legacy,
file-based navigation of a ``pages/`` folder beside the main script switched on until the first call to
``st.navigation`` in the server process (``PagesManager.uses_pages_directory``, set from
``(main script folder / "pages").exists()``; there is no configuration option to switch it off). So when a deep
link (``/capepca``) is the first request a fresh server sees, Streamlit runs ``pages/capepca.py`` directly, without
app.py; and if no file of ``pages/`` matched the link, it would show a "Page not found" error dialog before
falling back to app.py (tried with a scratch app: moving the page scripts where Streamlit does not look makes
every fresh-server deep link open with that dialog). AppTest resets the switch before every run, so tests take the
same legacy path. The page run that Streamlit started directly therefore hands over to app.py's navigation here,
once, and stops; every page gets that by the one call it needs anyway for the shared scenario.
"""

from __future__ import annotations

import threading

import streamlit as st

from dpcore.scenario import Scenario
from pages.shared.catalog import PAGES
from pages.shared.state import current_scenario

__all__ = ["run_app", "start_page"]

_ROUTING = threading.local()


def run_app() -> None:
    """Page configuration and the navigation over :data:`~pages.shared.catalog.PAGES`, then the chosen page: app.py."""
    st.set_page_config(page_title="CAPE: private multi-site analysis", page_icon=":material/hub:", layout="wide")
    navigation = st.navigation(
        [st.Page(p.path, title=p.title, icon=p.icon, default=(i == 0)) for i, p in enumerate(PAGES)]
    )
    _ROUTING.active = True
    try:
        navigation.run()
    finally:
        _ROUTING.active = False


def start_page() -> Scenario:
    """The first statement of every page: the scenario all pages share (:func:`pages.shared.state.current_scenario`).

    A run that Streamlit's legacy ``pages/`` discovery started directly (module docstring) is routed through
    :func:`run_app` instead and stopped, so the page then runs inside the app's navigation."""
    if not getattr(_ROUTING, "active", False):
        run_app()
        st.stop()
    return current_scenario()
