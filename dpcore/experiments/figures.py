"""Plotly figures of a sweep: the privacy-utility curves with shaded 95% intervals, the gain G per grid point,
and a stand-alone HTML file of both (used by the dashboard and by ``python -m dpcore sweep --html``).

Logarithmic x axes for eps, delta and N_s (as the paper's figures); linear for S and c. Every algorithm is one
legend entry whose band toggles with its line (plotly legend groups). HTML files embed plotly.js
(``include_plotlyjs=True``, about 4.8 MB) so they open without a network connection.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..notation import symbolic
from .families import METRICS, algorithm_colours, algorithm_titles
from .families import metric as metric_of
from .results import SweepResult
from .spec import LOG_PARAMETERS, PARAMETER_LABELS, SWEPT

__all__ = ["combined_figure", "curve_figure", "figure_html", "gain_figure"]

DESIGN_STYLES = (("#333333", "solid"), ("#999999", "dot"))
"""Colour and dash of a sweep's CAPE designs in the family's order (its stage taus: one design, or the M2 then the M3
stage); a later design takes the last style."""


def _rgba(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i: i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _default_metric(result: SweepResult) -> str:
    return next(iter(METRICS[result.spec.family]))


def _curve_traces(result: SweepResult, metric: str, algorithms: list[str] | None) -> list[go.Scatter]:
    spec = result.spec
    titles = algorithm_titles(spec.family)
    colours = algorithm_colours(spec.family)
    shown = [a for a in spec.algorithms if algorithms is None or a in algorithms]
    traces = []
    for algorithm in shown:
        rows = result.summary_of(algorithm, metric)
        colour = colours[algorithm]
        name = titles[algorithm]
        band = rows[rows["ci_low"].notna() & rows["ci_high"].notna()]
        if len(band):
            x = list(band["value"]) + list(band["value"])[::-1]
            y = list(band["ci_high"]) + list(band["ci_low"])[::-1]
            traces.append(go.Scatter(x=x, y=y, mode="lines", fill="toself", fillcolor=_rgba(colour, 0.15),
                                     line={"width": 0},
                                     hoverinfo="skip", legendgroup=algorithm, showlegend=False, name=f"{name} 95%"))
        hover = [symbolic(f"{name}<br>{spec.label} = {v:g}<br>mean {m:.4g}") + ("" if math.isnan(lo) else
                 f"<br>95% interval [{lo:.4g}, {hi:.4g}]") + f"<br>runs {n}" + (f", failed {f}" if f else "")
                 for v, m, lo, hi, n, f in zip(rows["value"], rows["mean"], rows["ci_low"], rows["ci_high"],
                                               rows["runs"], rows["failed"], strict=True)]
        traces.append(go.Scatter(x=list(rows["value"]), y=list(rows["mean"]), mode="lines+markers", name=name,
                                 legendgroup=algorithm,
                                 line={"color": colour, "width": 3 if algorithm == "cape" else 2},
                                 marker={"size": 7}, hovertext=hover, hoverinfo="text"))
    return traces


def _x_axis(result: SweepResult) -> dict:
    spec = result.spec
    axis: dict = {"title": symbolic(SWEPT[spec.parameter].axis_title)}
    if spec.parameter in LOG_PARAMETERS:
        axis["type"] = "log"
    axis["tickmode"] = "array"  # ticks at the grid values only (no unlabelled minor ticks of a log axis)
    axis["tickvals"] = list(spec.grid)
    axis["ticktext"] = [f"{v:g}" for v in spec.grid]
    return axis


def curve_figure(result: SweepResult, metric: str | None = None, algorithms: list[str] | None = None) -> go.Figure:
    """Mean of ``metric`` (default: the family's first, q_CE or q_comp) per grid point and algorithm, with its 95%
    interval shaded; ``algorithms`` limits the curves (all by default; each can also be toggled in the legend)."""
    metric = metric or _default_metric(result)
    fig = go.Figure(_curve_traces(result, metric, algorithms))
    fig.update_layout(xaxis=_x_axis(result), yaxis={"title": symbolic(metric_of(metric).label)}, hovermode="closest",
                      legend={"title": "click to hide / show"})
    return fig


def _gain_traces(result: SweepResult) -> list[go.Scatter]:
    gains = result.gains
    traces = []
    for i, design in enumerate(dict.fromkeys(gains["design"])):
        rows = gains[gains["design"] == design]
        colour, dash = DESIGN_STYLES[min(i, len(DESIGN_STYLES) - 1)]
        hover = [symbolic(f"{design}<br>{result.spec.label} = {v:g}<br>G = {g:.4g}<br>tau_c = {t:.3g}, conventional "
                          f"{c:.3g}")
                 for v, g, t, c in zip(rows["value"], rows["gain"], rows["tau_c"], rows["tau_conv"], strict=True)]
        traces.append(go.Scatter(x=list(rows["value"]), y=list(rows["gain"]), mode="lines+markers",
                                 name=f"gain G ({design})", line={"color": colour, "dash": dash},
                                 hovertext=hover, hoverinfo="text"))
    return traces


def gain_figure(result: SweepResult) -> go.Figure:
    """G = sum mu_s^2 tau_s^2 / tau_c^2 of the CAPE design used at each grid point (collusion-robust along c)."""
    fig = go.Figure(_gain_traces(result))
    fig.update_layout(xaxis=_x_axis(result), yaxis={"title": "gain G",
                                                     "rangemode": "tozero"})
    return fig


def combined_figure(result: SweepResult, metric: str | None = None, algorithms: list[str] | None = None,
                    title: str | None = None) -> go.Figure:
    """The curves (top) and the gain (bottom) sharing the x axis: what ``--html`` writes."""
    metric = metric or _default_metric(result)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.7, 0.3], vertical_spacing=0.06)
    for trace in _curve_traces(result, metric, algorithms):
        fig.add_trace(trace, row=1, col=1)
    for trace in _gain_traces(result):
        fig.add_trace(trace, row=2, col=1)
    axis = _x_axis(result)
    fig.update_xaxes(**{k: v for k, v in axis.items() if k != "title"})
    fig.update_xaxes(title=axis["title"], row=2, col=1)
    fig.update_yaxes(title=symbolic(metric_of(metric).label), row=1, col=1)
    fig.update_yaxes(title="gain G", rangemode="tozero", row=2, col=1)
    spec = result.spec
    heading = title or f"{metric_of(metric).label} vs {PARAMETER_LABELS[spec.parameter]}"
    subtitle = (f"{spec.data.describe()}<br>{spec.scenario.calibration} calibration, {spec.scenario.neighbouring} "
                f"neighbours; {result.runs_done} of {spec.runs} runs, seed {spec.seed}; shaded: 95% t-intervals"
                + ("" if result.complete else " (stopped early)"))
    fig.update_layout(title={"text": f"{heading}<br><sup>{subtitle}</sup>"}, height=720, hovermode="closest",
                      margin={"t": 110})
    return fig


def figure_html(result: SweepResult, metric: str | None = None, algorithms: list[str] | None = None,
                title: str | None = None, *, include_plotlyjs: bool | str = True) -> str:
    """A self-contained HTML page with :func:`combined_figure` (plotly.js embedded unless told otherwise)."""
    fig = combined_figure(result, metric, algorithms, title)
    return fig.to_html(include_plotlyjs=include_plotlyjs, full_html=True)
