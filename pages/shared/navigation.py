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

import gc
import sys
import threading
import time

import streamlit as st

from dpcore.scenario import Scenario
from pages.shared.catalog import PAGES
from pages.shared.state import current_scenario
from pages.shared.widgets import remember_widgets, show_error

__all__ = ["fragment_run_starts", "page_run_started", "run_app", "start_page"]

_ROUTING = threading.local()
_FREEZE_LOCK = threading.Lock()
_frozen_modules = 0  # len(sys.modules) at the last gc.freeze()


def run_app() -> None:
    """Page configuration and the navigation over :data:`~pages.shared.catalog.PAGES`, then the chosen page: app.py."""
    _ROUTING.started = time.perf_counter()
    st.set_page_config(page_title="CAPE: private multi-site analysis", page_icon=":material/hub:", layout="wide")
    navigation = st.navigation(  # expanded: every page's link shown (Streamlit folds them under "View more" at 13)
        [st.Page(p.path, title=p.title, icon=p.icon, default=(i == 0)) for i, p in enumerate(PAGES)], expanded=True
    )
    _ROUTING.active = True
    remember_widgets()
    try:
        navigation.run()
    except Exception as exc:  # noqa: BLE001 - the dashboard's last line of defence, once for every page
        # st.stop, st.rerun and st.switch_page raise Streamlit's ScriptControlException, a BaseException: they
        # pass through. Anything else is a message on the page (never a traceback) and, when unexpected, a log
        # record with the traceback. The shared scenario and every remembered widget value are kept.
        show_error(exc)
    finally:
        _ROUTING.active = False
        _freeze_new_imports()


def _freeze_new_imports() -> None:
    """Move what this process has imported so far out of the garbage collector's sight (``gc.freeze``), once after
    every run that imported new modules (the first run of each page in a server's life).

    Why: a full collection walks every tracked object: with streamlit, plotly, pandas, scipy and dpcore imported
    that is some 170,000 objects and 0.05-0.2 s holding the interpreter lock. Streamlit made one after every script
    run (``runner.postScriptGC``, now off in .streamlit/config.toml), and when a class opened the page at once 50 of
    them in a row were most of the server's CPU and kept it from answering anyone (benchmarks/bench_classroom.py,
    docs/dashboard.md "Serving a class"); Python's own collector still makes full collections now and then as
    objects accumulate. Modules, their functions and classes live as long as the process, so freezing them loses
    nothing; the garbage of the run is collected first so that it is not frozen with them. Later full collections
    walk only what was created since. What the sessions alive at a freeze hold is frozen too and, should it end in
    a reference cycle, never collected: a bounded cost, since a freeze happens only after a run that imported
    modules (at most once per page in a server's life)."""
    global _frozen_modules
    if len(sys.modules) == _frozen_modules:
        return
    with _FREEZE_LOCK:
        if len(sys.modules) != _frozen_modules:
            _frozen_modules = len(sys.modules)
            gc.collect()
            gc.freeze()


def start_page() -> Scenario:
    """The first statement of every page: the scenario all pages share (:func:`pages.shared.state.current_scenario`).

    A run that Streamlit's legacy ``pages/`` discovery started directly (module docstring) is routed through
    :func:`run_app` instead and stopped, so the page then runs inside the app's navigation."""
    if not getattr(_ROUTING, "active", False):
        run_app()
        st.stop()
    return current_scenario()


def page_run_started() -> float:
    """``time.perf_counter()`` at the start of this script run (set by :func:`run_app`, before the navigation and the
    page's imports; in a rerun of a fragment alone, at the fragment's start: :func:`fragment_run_starts`): what a
    page's "you waited" figure is measured from."""
    return _ROUTING.started


def fragment_run_starts() -> None:
    """Called first by a fragment: when it reruns alone (a click inside it, not a page run), its start is the run's
    start (:func:`page_run_started`); inside a page run nothing changes."""
    if not getattr(_ROUTING, "active", False):
        _ROUTING.started = time.perf_counter()
