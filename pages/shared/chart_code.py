"""Load the browser code of a page's results while the page is idle, before the first Run (issue 34).

The first chart or data grid a browser tab shows makes it load and run Streamlit's code for that kind of element:
plotly's component (4.7 MB of JavaScript) and the data grid's (1.3 MB). On the computing pages the first chart comes
with the first Run, so the tab compiled that code between the click and the results: about 2.5 of the 4.3 CPU
seconds chromium spent per opening Run (benchmarks/bench_runs.py). :func:`preload_results_code` asks the tab to import
those modules when it is idle (``requestIdleCallback``) after the page has drawn: the page opens as fast as before and
the Run finds the code loaded. The chromium work is the same per visit; it happens while the visitor reads the page,
not while the class waits for the results.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import streamlit as st

__all__ = ["FLAG", "RESULT_ELEMENTS", "STILL_PROGRESS", "preload_results_code"]

RESULT_ELEMENTS = ("PlotlyChart", "DataFrame")
"""Streamlit's front-end modules a computing page's results need (file name before the content hash)."""
FLAG = "__capeResultsCode"
"""The tab's ``window`` property: "pending" from the page's first run until the modules are loaded, then "loaded"
(benchmarks/bench_runs.py presses Run once the page is idle, this load included, as a reader of the page would)."""


@cache
def _module_paths() -> tuple[str, ...]:
    """The static paths (relative to the app's address) of RESULT_ELEMENTS' modules in the installed Streamlit (names
    carry a content hash, so they are read from its static folder); none when the folder is not there."""
    folder = Path(st.__file__).parent / "static" / "static" / "js"
    return tuple(f"static/js/{path.name}" for name in RESULT_ELEMENTS for path in sorted(folder.glob(f"{name}.*.js")))


STILL_PROGRESS = ('<style>[data-testid="stProgress"] *, [data-testid="stProgress"] *::before {transition: none '
                  '!important; animation: none !important}</style>')
"""The progress bar's width moves without a transition: each update animated the bar for a fraction of a second, so
a Run's updates kept the browser drawing frames the whole Run (Topic models' opening Run at load 10, 10 s long:
0.2-0.3 of chromium's 3 CPU seconds); the bar still moves at every update."""


def preload_results_code() -> None:
    """An invisible element whose script imports RESULT_ELEMENTS' modules once the page's script run is over and the
    tab is idle (once per tab: a module is evaluated once per tab, and a rerun finds the flag set), with the page's
    :data:`STILL_PROGRESS` style."""
    paths = _module_paths()
    if not paths:
        st.html(STILL_PROGRESS)
        return
    st.html(STILL_PROGRESS + f"""<script>
(() => {{
  if (window.{FLAG}) return;
  window.{FLAG} = "pending";
  const paths = {json.dumps(list(paths))};
  const load = () => Promise.all(paths.map(p => import(new URL(p, document.baseURI).href).catch(() => null)))
    .then(() => {{ window.{FLAG} = "loaded"; }});
  const idle = (f) => (window.requestIdleCallback || ((g) => setTimeout(g, 1)))(f, {{timeout: 3000}});
  const app = () => document.querySelector('[data-testid="stApp"]');
  const ran = () => app() && app().getAttribute("data-test-script-state") === "notRunning";
  if (ran()) {{ idle(load); return; }}
  const watch = new MutationObserver(() => {{ if (ran()) {{ watch.disconnect(); idle(load); }} }});
  watch.observe(document.body, {{subtree: true, attributes: true, attributeFilter: ["data-test-script-state"]}});
}})();
</script>""", unsafe_allow_javascript=True)
