"""Gain G(n): what CAPE gains over independent noise for the scenario's sizes, and as sizes become unequal."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from dpcore.cape import gain_equal_weights
from dpcore.cape.gain import (
    FAMILIES,
    dirichlet_gain_quantiles,
    dirichlet_sizes,
    gain_curves,
    gain_equal_weights_at_floor,
    imbalanced_sizes,
    scenario_gains,
)
from dpcore.validation import InputError
from pages.shared.navigation import start_page
from pages.shared.state import set_scenario
from pages.shared.widgets import remember_widgets, restore_widgets, scenario_sidebar, show_chart, show_error

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
    fig.update_layout(xaxis_title="site", yaxis_title="N_s", xaxis={"type": "category"})
    return fig


# ------------------------------------------------------------------------------------------------
scenario_sidebar(scenario)

st.title("Gain G(n)")
st.markdown(
    "How much less noise does the aggregate carry with CAPE than when every site adds its full noise on its "
    "own? For a mean with equal budgets, τ_s = c/N_s, and Proposition 1 of the paper gives the gain of the "
    "**equally weighted** average as a function of the sizes n = (N_1, ..., N_S):"
)
st.latex(r"G(n)=\frac{\tau_{\mathrm{conv}}^2}{\tau_{\mathrm{CAPE}}^2}=\frac{N^2}{S^2}\sum_{s=1}^S\frac1{N_s^2}")
st.latex(r"S\le G(n)\le\frac{N^2}{S^2}\left(\frac1{(N-S+1)^2}+S-1\right)")
st.caption("Minimum S at equal sizes; maximum at n = (1, ..., 1, N-S+1).")

try:
    gains = scenario_gains(scenario)
except InputError as exc:
    show_error(exc)
    st.stop()

st.subheader("This scenario")
m1, m2, m3, m4, m5 = st.columns(5)
m1.metric("G(n), Prop. 1", f"{gains.prop1:.4g}",
          help="Equal weights 1/S, equal budgets, tau_c = tau_pooled = c/N (below the DP floor when sizes differ).")
m2.metric("minimum S", f"{gains.prop1_min:.4g}", help="G at equal sizes.")
m3.metric("maximum", f"{gains.prop1_max:.4g}", help="G at n = (1, ..., 1, N-S+1) for this N and S.")
m4.metric("G at DP floor", f"{gains.floor_equal:.4g}",
          help="Equal weights with tau_c raised to the DP floor max_s tau_s / S: sum_s (N_min/N_s)^2 <= S.")
m5.metric("G, scenario μ_s", f"{gains.generalized:.4g}",
          help="sum_s mu_s^2 tau_s^2 / tau_c^2 with this scenario's weights, budgets and tau_c (mean statistic).")
st.latex(r"G_{\mathrm{gen}}=\frac{\sum_s\mu_s^2\tau_s^2}{\tau_c^2},\quad \tau_c\ge\max_s\mu_s\tau_s")
st.info(
    "**Read G(n) with care.** Proposition 1 compares against τ_c = τ_pooled = c/N. With equal weights 1/S the DP "
    "floor is max_s τ_s/S = c/(S·N_min), which is larger than c/N whenever the sizes differ: the published "
    "aggregate would then break the smallest site's budget (the **outside** view of the audit on the Noise "
    "design page shows it). Raising τ_c to the floor leaves Σ(N_min/N_s)² ≤ S. Weights **μ_s = N_s/N** put "
    "every μ_s τ_s at c/N, so the floor is τ_pooled itself and the gain is exactly **S** for any sizes."
    + (f" With this scenario's budgets, weights N_s/N give G = {gains.size_weights:.3g}." if
       abs(gains.size_weights - scenario.n_sites) > 1e-6 else ""),
    icon=":material/lightbulb:",
)
if gains.below_floor:
    st.warning(f"This scenario's τ_c = {gains.tau_c:.4g} is below its DP floor {gains.tau_floor:.4g}: its "
               "generalized gain is not a private one.", icon=":material/warning:")

# --- imbalance slider --------------------------------------------------------------------------------
st.subheader("Sizes becoming unequal")
defaults = {"gain_total": int(scenario.total_n), "gain_sites": int(scenario.n_sites), "gain_family": "one-large",
            "gain_imbalance": 0.5, "gain_alpha": 1.0, "gain_seed": int(scenario.seed), "gain_draws": 400}
restore_widgets(defaults, {"gain_family": tuple(FAMILIES), "gain_alpha": CONCENTRATIONS})
c1, c2, c3 = st.columns(3, gap="medium")
total = c1.number_input("Total samples N", min_value=1, step=100, key="gain_total",
                        help="N = sum of the site sizes; starts at the scenario's N.")
n_sites = c2.number_input("Sites S", min_value=1, max_value=200, step=1, key="gain_sites",
                          help="Number of sites; starts at the scenario's S. N must be at least S.")
family = c3.radio("Family of sizes", list(FAMILIES), key="gain_family", horizontal=True,
                  help=" · ".join(f"{k}: {v}" for k, v in FAMILIES.items()))
imbalance = st.slider("Imbalance", 0.0, 1.0, step=0.01, key="gain_imbalance",
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
        fig.add_scatter(x=curves.imbalance, y=curves.floor_equal, name="equal weights at the DP floor",
                        line={"color": COLOURS["floor"], "width": 3})
        fig.add_scatter(x=curves.imbalance, y=curves.size_weights, name="weights N_s/N (= S)",
                        line={"color": COLOURS["size"], "dash": "dash"})
        fig.add_scatter(x=[imbalance, imbalance], y=[g_now, floor_now], mode="markers", name="chosen imbalance",
                        marker={"size": 11, "color": "black", "symbol": "diamond"})
        fig.update_layout(xaxis_title="imbalance", yaxis_title="gain (log scale)", yaxis_type="log")
        show_chart(fig, f"Gain as sizes become unequal (N = {int(total):,}, S = {int(n_sites)})",
                   key="gain_curve_chart", height=400)
    with right:
        show_chart(_sizes_chart(sizes), f"Sizes at imbalance {imbalance:.2f}", key="gain_sizes_chart", height=260)
        st.markdown(
            f"Here G(n) = **{g_now:.4g}**, but only **{floor_now:.3g}** at the DP floor with equal weights, "
            f"and **{int(n_sites)}** with weights N_s/N. The red curve grows without bound because the smallest "
            "site's τ_s = c/N_s is huge and the conventional average carries it at weight 1/S, while the "
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
d1, d2, d3 = st.columns(3, gap="medium")
alpha = d1.select_slider("Concentration α", CONCENTRATIONS, key="gain_alpha",
                         help="Dirichlet(α, ..., α) shares; α = 1 is uniform over all share vectors.")
seed = d2.number_input("Seed", min_value=0, step=1, key="gain_seed",
                       help="The same seed reproduces the draws (starts at the scenario's seed).")
draws = d3.number_input("Draws per α", min_value=10, max_value=2000, step=50, key="gain_draws",
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
        fig.add_hline(y=int(n_sites), line_dash="dash", line_color=COLOURS["size"], annotation_text="S",
                      annotation_position="bottom right")
        fig.update_layout(xaxis_type="log", yaxis_type="log", xaxis_title="concentration α",
                          yaxis_title="G(n) (log scale)")
        show_chart(fig, f"Proposition 1's G over {int(draws)} draws per α", key="gain_dirichlet_chart", height=400)
    with right:
        show_chart(_sizes_chart(example), f"One draw at α = {alpha:g} (seed {int(seed)})", key="gain_dirichlet_sizes",
                   height=260)
        st.markdown(f"This draw: G(n) = **{gain_equal_weights(example):.4g}**, "
                    f"at the DP floor with equal weights **{gain_equal_weights_at_floor(example):.3g}**.")
