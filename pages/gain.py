"""Gain G(n): what CAPE gains over independent noise for the scenario's sizes, and as sizes become unequal."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from dpcore.cape import GAINS, HEADLINE_GAIN, gain_equal_weights
from dpcore.cape.gain import (
    SIZE_PATHS,
    dirichlet_gain_quantiles,
    dirichlet_sizes,
    gain_curves,
    gain_equal_weights_at_floor,
    imbalanced_sizes,
    scenario_gains,
)
from dpcore.limits import MAX_SEED, MAX_SITE_SIZE, MAX_SITES
from dpcore.scenario.settings_link import Setting
from dpcore.validation import InputError
from pages.shared.navigation import start_page
from pages.shared.state import set_scenario
from pages.shared.widgets import (
    change_panel,
    headline,
    remember_widgets,
    restore_widgets,
    scenario_sidebar,
    show_chart,
    show_error,
    widget_options,
    widget_range,
)

scenario = start_page()

CONCENTRATIONS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 1000.0)
CURVE_POINTS = 101
COLOURS = {"prop1": "#e45756", "floor": "#4c78a8", "size": "#54a24b"}


@st.cache_data(max_entries=32)
def _curves(total: int, n_sites: int, family: str):
    return gain_curves(total, n_sites, np.linspace(0.0, 1.0, CURVE_POINTS), family)


@st.cache_data(show_spinner="Drawing Dirichlet sizes ...", max_entries=32)
def _dirichlet(total: int, n_sites: int, draws: int, seed: int) -> np.ndarray:
    return dirichlet_gain_quantiles(total, n_sites, np.array(CONCENTRATIONS), draws, seed)


def _sizes_chart(sizes: np.ndarray) -> go.Figure:
    fig = go.Figure(go.Bar(x=[f"{i + 1}" for i in range(sizes.size)], y=sizes, marker_color="#9ecae9",
                           hovertemplate="site %{x}: %{y:,} samples<extra></extra>"))
    fig.update_layout(xaxis_title="site", yaxis_title="N_s", xaxis={"type": "category"}, showlegend=False)
    return fig


# ------------------------------------------------------------------------------------------------
scenario_sidebar(scenario)

st.title("CAPE gain: how much less noise, and when")
st.markdown(
    "How much less noise does the aggregate carry with CAPE than in the **conventional scheme**, where every site "
    "adds its full noise τ_s on its own? One number answers that for the scenario as it is, the **CAPE gain G**:"
)
headline(scenario)
change_panel()

try:
    gains = scenario_gains(scenario)
    values = {name: gain.of(scenario) for name, gain in GAINS.items() if name != "robust"}
except InputError as exc:
    show_error(exc)
    st.stop()

st.subheader("Every gain, beside its definition")
st.markdown(
    "The papers and this tool compute other gains too. Each answers a narrower question, so each has its own name; "
    "only the first is the headline."
)
for name, gain in GAINS.items():
    value = values.get(name)
    with st.container(border=name == HEADLINE_GAIN, key=f"gain_definition_{name}"):
        left, right = st.columns([1, 3], gap="medium", vertical_alignment="center")
        with left:
            if name == "robust":
                st.markdown(f"**{gain.symbol}**  \n{gain.title}: on the *Noise design* page, for the chosen number c "
                            "of colluders")
            else:
                st.markdown(f"**{gain.symbol} = {value:.3g}**  \n{gain.title}"
                            + ("" if gain.private else " (not private)"))
        with right:
            st.latex(gain.latex)
            st.caption(gain.definition)
st.caption(f"For these N = {gains.total:,} and S = {gains.n_sites}, Proposition 1's G(n) ranges from S = "
           f"{gains.prop1_min:.4g} (equal sizes) to {gains.prop1_max:.4g} at n = (1, ..., 1, N-S+1).")
st.info(
    "**Read G(n) with care.** Proposition 1 compares against τ_c = τ_pooled = c/N. With equal weights 1/S the DP "
    "floor is max_s τ_s/S = c/(S·N_min), which is larger than c/N whenever the sizes differ: the published "
    "aggregate would then break the smallest site's budget (the **outside** view of the audit on the Noise "
    "design page shows it). Raising τ_c to the floor leaves G_floor = Σ(N_min/N_s)² ≤ S. Weights **μ_s = N_s/N** put "
    "every μ_s τ_s at c/N, so the floor is τ_pooled itself and G_pool is exactly **S** for any sizes (with equal "
    "budgets).",
    icon=":material/lightbulb:",
)

# --- imbalance slider --------------------------------------------------------------------------------
st.subheader("Sizes becoming unequal")
# The page's widgets, one table: each widget is drawn with its range and choices from here, and its link (?settings=)
# is checked against the same.
GAIN = {
    "gain_total": Setting(default=int(scenario.total_n), label="Total samples N", low=1,
                          high=MAX_SITES * MAX_SITE_SIZE),
    "gain_sites": Setting(default=int(scenario.n_sites), label="Sites S", low=1, high=200),
    "gain_family": Setting(default="one-large", label="Family of sizes", choices=tuple(SIZE_PATHS)),
    "gain_imbalance": Setting(default=0.5, label="Imbalance", low=0.0, high=1.0),
    "gain_alpha": Setting(default=1.0, label="Concentration α", choices=CONCENTRATIONS),
    "gain_seed": Setting(default=int(scenario.seed), label="Seed", low=0, high=MAX_SEED),
    "gain_draws": Setting(default=400, label="Draws per α", low=10, high=2000),
    "gain_show_dirichlet": Setting(default=False, label="Draw random sizes"),
}
defaults = {key: setting.default for key, setting in GAIN.items()}
restore_widgets(GAIN)
c1, c2, c3 = st.columns(3, gap="medium")
total = c1.number_input("Total samples N", **widget_range(GAIN, "gain_total"), step=100, key="gain_total",
                        help="N = sum of the site sizes; starts at the scenario's N.")
n_sites = c2.number_input("Sites S", **widget_range(GAIN, "gain_sites"), step=1, key="gain_sites",
                          help="Number of sites; starts at the scenario's S. N must be at least S.")
family = c3.radio("Family of sizes", widget_options(GAIN, "gain_family"), key="gain_family", horizontal=True,
                  help=" · ".join(f"{k}: {v}" for k, v in SIZE_PATHS.items()))
imbalance = st.slider("Imbalance", **widget_range(GAIN, "gain_imbalance"), step=0.01, key="gain_imbalance",
                      help="0: equal sizes. 1: the most unequal sizes of the chosen family.")

try:
    curves = _curves(int(total), int(n_sites), family)
    sizes = imbalanced_sizes(int(total), int(n_sites), imbalance, family)
except InputError as exc:
    show_error(exc, "Sizes")
    curves = sizes = None

if curves is not None and sizes is not None:
    g_now = gain_equal_weights(sizes)
    floor_now = gain_equal_weights_at_floor(sizes)
    left, right = st.columns([3, 2], gap="medium")
    with left:
        fig = go.Figure()
        fig.add_scatter(x=curves.imbalance, y=curves.prop1, name="G(n), Proposition 1 (τ_c below the floor)",
                        line={"color": COLOURS["prop1"], "width": 3})
        fig.add_scatter(x=curves.imbalance, y=curves.floor_equal, name="G_floor: equal weights at the DP floor",
                        line={"color": COLOURS["floor"], "width": 3})
        fig.add_scatter(x=curves.imbalance, y=curves.size_weights, name="G_pool: weights N_s/N (= S)",
                        line={"color": COLOURS["size"], "dash": "dash"})
        fig.add_scatter(x=[imbalance, imbalance], y=[g_now, floor_now], mode="markers", name="chosen imbalance",
                        marker={"size": 11, "color": "black", "symbol": "diamond"})
        fig.update_layout(xaxis_title="imbalance", yaxis_title="gain (log scale)", yaxis_type="log")
        show_chart(fig, f"Gain as sizes become unequal (N = {int(total):,}, S = {int(n_sites)})",
                   key="gain_curve_chart", height=400)
    with right:
        show_chart(_sizes_chart(sizes), f"Sizes at imbalance {imbalance:.2f}", key="gain_sizes_chart", height=260)
        st.markdown(
            f"Here G(n) = **{g_now:.4g}**, but only G_floor = **{floor_now:.3g}** at the DP floor with equal "
            f"weights, and G_pool = **{int(n_sites)}** with weights N_s/N. The red curve grows without bound because "
            "the smallest site's τ_s = c/N_s is huge and the conventional average carries it at weight 1/S, while the "
            "comparison keeps τ_c = c/N."
        )
        if int(n_sites) == scenario.n_sites:
            if st.button("Use these sizes in the scenario", key="gain_use_sizes",
                         help="Replace the N_s of the scenario's sites (in order) by these sizes; budgets, weights "
                         "and settings are kept. Every page then uses them."):
                try:
                    set_scenario(scenario.with_sizes(sizes))
                except InputError as exc:
                    show_error(exc)
                else:
                    st.rerun()
        else:
            st.caption("Set S to the scenario's number of sites to copy these sizes into the scenario.")

# --- Dirichlet -------------------------------------------------------------------------------------------
st.subheader("Random sizes (Dirichlet)")
st.markdown(
    "Instead of one path, draw the shares of the N - S extra samples from a symmetric Dirichlet distribution "
    "with concentration α: large α gives nearly equal sizes, small α very unequal ones. The band shows the "
    "10-90 % range of G(n) over the draws, the line its median."
)
show_dirichlet = st.toggle("Draw random sizes", key="gain_show_dirichlet",
                           help="Draw the size vectors and their gains (on request: the page does not wait for it).")
if not show_dirichlet:
    remember_widgets(defaults)
    st.stop()
d1, d2, d3 = st.columns(3, gap="medium")
alpha = d1.select_slider("Concentration α", widget_options(GAIN, "gain_alpha"), key="gain_alpha",
                         help="Dirichlet(α, ..., α) shares; α = 1 is uniform over all share vectors.")
seed = d2.number_input("Seed", **widget_range(GAIN, "gain_seed"), step=1, key="gain_seed",
                       help="The same seed reproduces the draws (starts at the scenario's seed).")
draws = d3.number_input("Draws per α", **widget_range(GAIN, "gain_draws"), step=50, key="gain_draws",
                        help="Size vectors drawn per concentration (10 to 2000).")
remember_widgets(defaults)

try:
    quantiles = _dirichlet(int(total), int(n_sites), int(draws), int(seed))
    example = dirichlet_sizes(int(total), int(n_sites), float(alpha), np.random.default_rng(int(seed)))[0]
except InputError as exc:
    show_error(exc, "Dirichlet")
    quantiles = example = None

if quantiles is not None and example is not None:
    left, right = st.columns([3, 2], gap="medium")
    with left:
        xs = list(CONCENTRATIONS)
        fig = go.Figure()
        fig.add_scatter(x=xs, y=quantiles[:, 2], mode="lines", line={"width": 0}, showlegend=False,
                        hoverinfo="skip")
        fig.add_scatter(x=xs, y=quantiles[:, 0], mode="lines", line={"width": 0}, fill="tonexty",
                        fillcolor="rgba(228, 87, 86, 0.2)", name="10-90 %", hoverinfo="skip")
        fig.add_scatter(x=xs, y=quantiles[:, 1], mode="lines+markers", name="median G(n)",
                        line={"color": COLOURS["prop1"], "width": 3})
        fig.add_scatter(x=[alpha], y=[float(np.interp(np.log(alpha), np.log(xs), quantiles[:, 1]))],
                        mode="markers", name="chosen α", marker={"size": 11, "color": "black", "symbol": "diamond"})
        # The line at S as a trace with a legend entry: an add_hline annotation on a log axis is placed at 10^S.
        fig.add_scatter(x=[xs[0], xs[-1]], y=[int(n_sites)] * 2, mode="lines", name=f"S = {int(n_sites)}",
                        line={"color": COLOURS["size"], "dash": "dash"}, hoverinfo="skip")
        fig.update_layout(xaxis_type="log", yaxis_type="log", xaxis_title="concentration α",
                          yaxis_title="G(n) (log scale)")
        show_chart(fig, f"Proposition 1's G over {int(draws)} draws per α", key="gain_dirichlet_chart", height=400)
    with right:
        show_chart(_sizes_chart(example), f"One draw at α = {alpha:g} (seed {int(seed)})", key="gain_dirichlet_sizes",
                   height=260)
        st.markdown(f"This draw: G(n) = **{gain_equal_weights(example):.4g}**, "
                    f"G_floor (equal weights at the DP floor) = **{gain_equal_weights_at_floor(example):.3g}**.")
