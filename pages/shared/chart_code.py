"""Load the browser code of a page's results while the page is idle, before the first Run (issue 34).

The first chart or data grid a browser tab shows makes it load and run Streamlit's code for that kind of element:
plotly's component (4.7 MB of JavaScript) and the data grid's (1.3 MB). On the computing pages the first chart comes
with the first Run, so the tab compiled that code between the click and the results: about 2.5 of the 4.3 CPU
seconds chromium spent per opening Run (benchmarks/bench_runs.py). :func:`preload_results_code` asks the tab to import
those modules when it is idle (``requestIdleCallback``) after the page has drawn: the page opens as fast as before and
the Run finds the code loaded. The chromium work is the same per visit; it happens while the visitor reads the page,
not while the class waits for the results.

The server has the same first-use cost: plotly imports the classes and validators of a trace type or layout part when
a figure first uses them (about a hundred modules), which made a fresh server's first Run slower than the next ones
(capePCA's first click 4.1 s against a median of 3.0 s; in-process, its results' figures took 1.2 s the first time and
0.3 s after). :func:`preload_results_code` also builds and serializes, once per server process in a low-priority
thread (:func:`pages.shared.ahead.in_background`), a figure of every kind the results draw (:func:`warm_figures`).
"""

from __future__ import annotations

import json
import threading
from functools import cache
from pathlib import Path

import streamlit as st

from pages.shared.ahead import in_background

__all__ = ["FLAG", "RESULT_ELEMENTS", "STILL_PROGRESS", "preload_results_code", "warm_figures"]

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


@cache
def warm_figures() -> str:
    """Build and serialize (as ``st.plotly_chart`` does: ``plotly.io.to_json``) one small figure with every trace type
    and layout part the results use, so that plotly has imported their classes and validators before the first Run;
    returns its JSON (unused: the tab draws its own small figure off screen, :data:`BROWSER_FIGURE`)."""
    import plotly.graph_objects as go
    import plotly.io as pio
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=("a", "b"))
    fig.add_scatter(x=[1, 2], y=[1, 2], error_y={"type": "data", "array": [0.1, 0.1]}, mode="lines+markers",
                    line={"color": "#000", "dash": "dot"}, marker={"symbol": "circle"}, name="a", row=1, col=1)
    fig.add_bar(x=["a", "b"], y=[1, 2], error_y={"type": "data", "array": [0.1, 0.1]}, marker={"color": "#000"},
                text=["1", "2"], name="b", row=1, col=2)
    fig.add_heatmap(z=[[0.0, 1.0], [1.0, 0.0]], colorscale="RdBu", zmid=0.0)
    fig.add_hline(y=1.0, line_dash="dash", annotation_text="a")
    fig.add_vline(x=1.5, line_dash="dot", annotation_text="b")
    fig.add_annotation(x=1, y=1, text="c", showarrow=False)
    fig.update_xaxes(type="log", title="x")
    fig.update_yaxes(title="y", rangemode="tozero")
    fig.update_layout(height=300, margin={"l": 10, "r": 10, "t": 10, "b": 10}, barmode="group",
                      legend={"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0, "xanchor": "left"})
    return pio.to_json(go.Figure(fig), validate=False)


BROWSER_FIGURE = {
    "data": [
        {"type": "scatter", "x": [1, 10, 100], "y": [0.5, 0.3, 0.1], "mode": "lines+markers", "name": "a",
         "error_y": {"type": "data", "array": [0.05, 0.05, 0.05]}, "line": {"dash": "dot"}},
        {"type": "bar", "x": [1, 10, 100], "y": [0.2, 0.4, 0.6], "name": "b", "xaxis": "x2", "yaxis": "y2",
         "error_y": {"type": "data", "array": [0.05, 0.05, 0.05]}},
        {"type": "heatmap", "z": [[0, 1], [1, 0]], "colorscale": "RdBu", "zmid": 0, "xaxis": "x3", "yaxis": "y3"},
    ],
    "layout": {
        "height": 300, "margin": {"l": 10, "r": 10, "t": 10, "b": 10},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0, "xanchor": "left"},
        "xaxis": {"type": "log", "domain": [0, 0.3], "title": {"text": "x"}}, "yaxis": {"rangemode": "tozero"},
        "xaxis2": {"domain": [0.35, 0.65], "anchor": "y2"}, "yaxis2": {"anchor": "x2"},
        "xaxis3": {"domain": [0.7, 1], "anchor": "y3"}, "yaxis3": {"anchor": "x3"},
        "shapes": [{"type": "line", "xref": "x2", "yref": "paper", "x0": 10, "x1": 10, "y0": 0, "y1": 1,
                    "line": {"dash": "dash"}}],
        "annotations": [{"x": 1, "y": 0.5, "text": "a", "showarrow": False}],
    },
}
"""The figure the tab draws off screen once the results' code is loaded (and removes): plotly's drawing code for the
results' trace types and layout parts runs, and is compiled, while the visitor reads the page. A tab's first Run
cost chromium 2.0-2.4 CPU seconds and its next Runs 0.9-1.5 (issue 34, capePCA and Topic models at load 9)."""

_WARMED = threading.Event()


def _warm_once() -> None:
    """:func:`warm_figures` in the background, once per server process."""
    if _WARMED.is_set():
        return
    _WARMED.set()
    in_background(warm_figures, "warm-figures")


def preload_results_code() -> None:
    """An invisible element whose script imports RESULT_ELEMENTS' modules once the page's script run is over and the
    tab is idle (once per tab: a module is evaluated once per tab, and a rerun finds the flag set), with the page's
    :data:`STILL_PROGRESS` style; the server builds a figure of every kind once (:func:`warm_figures`)."""
    _warm_once()
    paths = _module_paths()
    if not paths:
        st.html(STILL_PROGRESS)
        return
    st.html(STILL_PROGRESS + f"""<script>
(() => {{
  if (window.{FLAG}) return;
  window.{FLAG} = "pending";
  const paths = {json.dumps(list(paths))};
  const figure = {json.dumps(BROWSER_FIGURE)};
  const draw = () => {{  // plotly's drawing code runs once, off screen, before the first Run draws its charts
    if (!window.Plotly) return null;
    const div = document.createElement("div");
    div.style.cssText = "position:fixed;left:-10000px;top:0;width:640px;height:300px;";
    document.body.appendChild(div);
    return window.Plotly.newPlot(div, figure.data, figure.layout, {{displaylogo: false, displayModeBar: "hover"}})
      .then(() => {{ window.Plotly.purge(div); div.remove(); }}, () => div.remove());
  }};
  const load = () => Promise.all(paths.map(p => import(new URL(p, document.baseURI).href).catch(() => null)))
    .then(draw).catch(() => null).then(() => {{ window.{FLAG} = "loaded"; }});
  const idle = (f) => (window.requestIdleCallback || ((g) => setTimeout(g, 1)))(f, {{timeout: 3000}});
  const app = () => document.querySelector('[data-testid="stApp"]');
  const ran = () => app() && app().getAttribute("data-test-script-state") === "notRunning";
  if (ran()) {{ idle(load); return; }}
  const watch = new MutationObserver(() => {{ if (ran()) {{ watch.disconnect(); idle(load); }} }});
  watch.observe(document.body, {{subtree: true, attributes: true, attributeFilter: ["data-test-script-state"]}});
}})();
</script>""", unsafe_allow_javascript=True)
