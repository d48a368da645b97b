"""What ε means: for one site, how well the best attacker can tell whether a person is in its data, from the site's
own release, from everything the aggregator sees, and from the published aggregate (pooled data)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpcore.cape import ATTACK_VIEWS, attack_sentence, default_collusion, site_attack_views
from dpcore.cape.lesson import class_scenario, widest_gap_fpr
from dpcore.notation import symbolic
from dpcore.privacy.tradeoff import (
    BUDGET_LADDER,
    dp_tradeoff_bound,
    gaussian_tradeoff,
    neighbour_densities,
    promise_separation,
    threshold,
)
from dpcore.scenario.settings_link import Setting
from dpcore.textio import site_label
from dpcore.validation import InputError
from pages.shared.navigation import start_page
from pages.shared.state import cached_plan
from pages.shared.widgets import (
    remember_widgets,
    restore_widgets,
    scenario_sidebar,
    show_chart,
    show_error,
    widget_options,
    widget_range,
)

scenario = start_page()

# Okabe-Ito colours (distinct for the common colour-blindnesses) and a dash style per view, so that the curves stay
# apart in grey print too.
STYLES = {"promise": ("#0072B2", "solid"), "aggregator": ("#D55E00", "dash"),
          "aggregator+coalition": ("#CC79A7", "dashdot"), "pooled": ("#009E73", "dot"),
          "robust": ("#E69F00", "longdash")}
# (colour, dash) of each curve: the views of dpcore.cape.ATTACK_VIEWS and the collusion-robust design's.
SOURCES = {"class": "A class demonstration: 10 equal sites at ε = 4 (the effect is large enough to see)",
           "scenario": "The shared scenario"}
CURVE = np.concatenate([[0.0], np.logspace(-4, -1, 60), np.linspace(0.1, 1.0, 91)[1:]])


def _densities_chart(view, fpr: float) -> go.Figure:
    """The release under "absent" and "present", in units of Δ_s, with the best test's threshold at ``fpr``."""
    fig = go.Figure()
    if math.isinf(view.m):
        fig.add_annotation(text="No noise left: the release shows the record exactly.", showarrow=False,
                           x=0.5, y=0.5, xref="paper", yref="paper")
        return fig
    x, absent, present = neighbour_densities(view.m)
    cut = threshold(fpr, view.m)
    right = x >= cut
    # Two fills that overlap: a solid tint for the caught present people, a hatch for the wrongly accused absent
    # ones, so both stay readable where they overlap (they blended into one brown) and in grey print.
    fig.add_scatter(x=x[right], y=present[right], fill="tozeroy", mode="none",
                    fillcolor="rgba(0, 114, 178, 0.25)", name=f"present, caught ({100 * float(view.tpr(fpr)):.1f} %)",
                    hoverinfo="skip")
    fig.add_scatter(x=x[right], y=absent[right], fill="tozeroy", mode="none", fillcolor="rgba(0, 0, 0, 0)",
                    fillpattern={"shape": "/", "fgcolor": "#222222", "size": 8, "solidity": 0.25},
                    name=f"absent, wrongly accused ({100 * fpr:.0f} %)", hoverinfo="skip")
    fig.add_scatter(x=x, y=absent, mode="lines", name="person absent",
                    line={"color": "#222222", "width": 2, "dash": "dot"})
    fig.add_scatter(x=x, y=present, mode="lines", name="person present",
                    line={"color": STYLES[view.key][0], "width": 3})
    fig.add_vline(x=cut, line_dash="dash", line_color="black")
    fig.update_layout(xaxis_title="release − what the attacker knows (units of Δ_s)",
                      yaxis_title="density", yaxis_showticklabels=False)
    return fig


def _tradeoff_chart(views, fpr: float, eps: float, delta: float, robust=None) -> go.Figure:
    """The views' trade-off curves, the (ε, δ) limit and, beside them, the aggregator's curve under the
    collusion-robust design (``robust``, an AttackView, or None)."""
    fig = go.Figure()
    fig.add_scatter(x=CURVE, y=CURVE, mode="lines", name="guessing", line={"color": "#bbbbbb", "dash": "dot"})
    fig.add_scatter(x=CURVE, y=dp_tradeoff_bound(CURVE, eps, delta), mode="lines",
                    name=f"limit of any (ε, δ) = ({eps:g}, {delta:.0e}) promise",
                    line={"color": "black", "dash": "dash", "width": 1})
    shown = [(v.key, v.label, v) for v in views]
    if robust is not None:
        shown.append(("robust", "the aggregator, collusion-robust design", robust))
    for key, label, view in shown:
        fig.add_scatter(x=CURVE, y=view.tpr(CURVE), mode="lines", name=label,
                        line={"color": STYLES[key][0], "width": 3 if key == "promise" else 2, "dash": STYLES[key][1]})
        fig.add_scatter(x=[fpr], y=[float(view.tpr(fpr))], mode="markers", showlegend=False,
                        marker={"color": STYLES[key][0], "size": 9},
                        hovertemplate=f"{label}: %{{y:.3f}} at %{{x:.2f}}<extra></extra>")
    fig.update_layout(xaxis_title="false-positive rate (absent people called present)",
                      yaxis_title="true-positive rate (present people caught)", xaxis_range=[0, 1], yaxis_range=[0, 1])
    return fig


def _ladder_chart(delta: float, fpr: float) -> go.Figure:
    """The best attacker against releases calibrated (exactly) for ε on the ladder, at the site's δ."""
    fig = go.Figure()
    fig.add_scatter(x=CURVE, y=CURVE, mode="lines", name="guessing", line={"color": "#bbbbbb", "dash": "dot"})
    shades = np.linspace(0.25, 1.0, len(BUDGET_LADDER))
    for eps, shade in zip(BUDGET_LADDER, shades, strict=True):
        m = promise_separation(eps, delta)
        fig.add_scatter(x=CURVE, y=gaussian_tradeoff(CURVE, m), mode="lines", name=f"ε = {eps:g}",
                        line={"color": f"rgba(31, 59, 115, {shade:.2f})", "width": 2},
                        hovertemplate=f"ε = {eps:g}: %{{y:.3f}} at %{{x:.2f}}<extra></extra>")
    fig.add_vline(x=fpr, line_dash="dash", line_color="#888888")
    fig.update_layout(xaxis_title="false-positive rate", yaxis_title="true-positive rate", xaxis_range=[0, 1],
                      yaxis_range=[0, 1])
    return fig


# ------------------------------------------------------------------------------------------------
scenario_sidebar(scenario)
st.title("What ε means")
st.markdown(
    "A budget **(ε, δ)** is a promise about one person. Imagine an attacker who knows everything except whether one "
    "person's record is in site s's data, and must guess *present* or *absent* from what it sees. Differential "
    "privacy bounds how well **any** guess can do: whatever rule it uses, the rate at which it catches present people "
    "can exceed the rate at which it wrongly accuses absent ones by only so much. For a Gaussian release the best rule "
    "is a threshold, and everything depends on **m = Δ_s / σ**, how many noise standard deviations one record moves "
    "the release."
)

SOURCE = {"eps_source": Setting(default="class", label="Sites", choices=tuple(SOURCES))}
restore_widgets(SOURCE)
source = st.radio("Sites", widget_options(SOURCE, "eps_source"), format_func=SOURCES.get, key="eps_source",
                  horizontal=True,
                  help="At the default scenario's small budgets the aggregator learns only slightly more than one "
                  "release promises: true, but too little to see on a chart. The class demonstration uses capePCA's "
                  "opening budgets (ε = 4), where the gap is wide.")
if source == "class":
    scenario = class_scenario()
names = scenario.names
CLASS_FPR = widest_gap_fpr(site_attack_views(cached_plan(class_scenario(), "mean"), class_scenario().names[0]))

# The page's widgets for the sites shown, one table: each widget is drawn with its range and choices from here, and
# its link (?settings=) is checked against the same.
VIEW = {
    "eps_site": Setting(default=names[int(np.argmax(scenario.weights() * scenario.taus("mean")))], label="Site",
                        choices=tuple(names)),
    "eps_fpr": Setting(default=float(CLASS_FPR), label="False-positive rate", low=0.01, high=0.5),
    "eps_collusion": Setting(default=min(default_collusion(scenario.n_sites), max(scenario.n_sites - 1, 0)),
                             label="Colluding sites c", low=0, high=max(scenario.n_sites - 1, 0)),
    "eps_view": Setting(default="aggregator", label="Release seen through", choices=tuple(ATTACK_VIEWS)),
}
defaults = {key: setting.default for key, setting in VIEW.items()}
for key, allowed in (("eps_site", names), ("eps_collusion", range(scenario.n_sites))):
    if key in st.session_state and st.session_state[key] not in allowed:  # the other set of sites was shown
        del st.session_state[key]
        st.session_state.pop(f"_remember_{key}", None)
restore_widgets(VIEW)
c1, c2, c3 = st.columns(3, gap="medium")
site = c1.selectbox("Site", widget_options(VIEW, "eps_site"), key="eps_site",
                    help="Whose records the attacker is after. It starts at the site that sets the DP floor.")
fpr = c2.slider("False-positive rate", **widget_range(VIEW, "eps_fpr"), step=0.01, key="eps_fpr", format="%.2f",
                help="How often the attacker may wrongly call an absent person present; it sets the threshold.")
if scenario.n_sites > 1:
    collusion = c3.slider("Colluding sites c", **widget_range(VIEW, "eps_collusion"), key="eps_collusion",
                          help="The audit's coalition bound: the aggregator with up to c other sites (as on the Noise "
                          "design page).")
else:
    collusion = 0
    c3.caption("One site: nothing to collude with.")

try:
    plan = cached_plan(scenario, "mean", collusion=int(collusion))
    views = site_attack_views(plan, site)
    sentence = attack_sentence(views, site, float(fpr))
    robust_plan = cached_plan(scenario, "mean", solver="collusion-robust", collusion=int(collusion))
    robust = next((v for v in site_attack_views(robust_plan, site) if v.key == "aggregator"), None)
except InputError as exc:
    show_error(exc)
    st.stop()

if plan.audit is None:
    st.warning(symbolic(f"No feasible noise design ({plan.design.reason}): only the site's own promise is shown."),
               icon=":material/warning:")
st.info(symbolic(sentence), icon=":material/person_search:")

index = int(names.index(site))
eps, delta = float(scenario.eps[index]), float(scenario.delta[index])
left, right = st.columns(2, gap="medium")
with right:
    show_chart(_tradeoff_chart(views, float(fpr), eps, delta, robust),
               f"The best attacker's trade-off, {site_label(site)}", key="eps_tradeoff_chart", height=420)
    if robust is not None:
        st.caption(symbolic(
            f"The collusion-robust design (for up to c = {int(collusion)} colluders) gives the aggregator ε "
            f"{robust.eps_eff:.3g} against the promised {eps:g} (the plain design: "
            f"{next(v.eps_eff for v in views if v.key == 'aggregator'):.3g}); it costs gain: G = "
            f"{robust_plan.design.gain:.2f} instead of {plan.design.gain:.2f}."))
with left:
    keys = [v.key for v in views]
    if st.session_state.get("eps_view") not in keys:
        st.session_state["eps_view"] = "promise"
    chosen = st.radio("Release seen through", keys, key="eps_view", horizontal=True,
                      format_func=lambda k: next(v.label for v in views if v.key == k),
                      help="Which view's noise the two distributions below carry.")
    view = next(v for v in views if v.key == chosen)
    show_chart(_densities_chart(view, float(fpr)), f"{site_label(site)}'s record absent or present: {view.label}",
               key="eps_density_chart", height=360)
remember_widgets(defaults)

st.markdown(
    "**How to read it.** Left: what the attacker sees when the person is absent (dotted) or present (coloured); the "
    "dashed line is the best threshold for the chosen false-positive rate. The hatched area is the absent people it "
    "wrongly accuses, the tinted area the present people it catches. Right: the same for every threshold at once. "
    "A curve on the dotted diagonal means the release says nothing about the person; the dashed black line is the "
    "most any (ε, δ)-private release may allow. The views that lie above the site's own curve are the ones the "
    "privacy audit flags."
)
st.dataframe(pd.DataFrame([{
    "view": v.label, "σ / τ_s": v.sigma / float(plan.design.tau[index]), "m = Δ_s / σ": v.m, "ε effective": v.eps_eff,
    f"caught at {100 * fpr:.0f} % false positives": float(v.tpr(fpr)), "best advantage": v.advantage,
    "promise kept": "yes" if v.kept else "NO",
} for v in views]), hide_index=True, width="stretch", column_config={
    "σ / τ_s": st.column_config.NumberColumn(format="%.3f", help="the view's noise over the site's own τ_s"),
    "m = Δ_s / σ": st.column_config.NumberColumn(format="%.4f", help="one record's shift in noise std"),
    "ε effective": st.column_config.NumberColumn(format="%.3g", help="the exact ε of this view at δ_s"),
    f"caught at {100 * fpr:.0f} % false positives": st.column_config.NumberColumn(format="%.3f"),
    "best advantage": st.column_config.NumberColumn(
        format="%.3f", help="the largest true-positive minus false-positive rate over all thresholds: 2Φ(m/2) − 1"),
})
if st.toggle("Compare with other budgets", key="eps_ladder",
             help="The best attacker against one release calibrated exactly (analytic calibration) for each ε, at "
             "this site's δ: how much each ε lets through."):
    left, right = st.columns([3, 2], gap="medium")
    with left:
        show_chart(_ladder_chart(delta, float(fpr)), f"One release at δ = {delta:.0e}, for each ε",
                   key="eps_ladder_chart", height=380)
    with right:
        caught = [(eps, float(gaussian_tradeoff(fpr, promise_separation(eps, delta)))) for eps in BUDGET_LADDER]
        st.markdown(f"At {100 * fpr:.0f} % false positives the best attacker catches "
                    + ", ".join(f"**{100 * rate:.0f} %** at ε = {eps:g}" for eps, rate in caught)
                    + f", against {100 * fpr:.0f} % by guessing.")
st.caption("Views: " + " · ".join(f"**{v.label}**: {symbolic(v.description)}" for v in views) + ". The pooled-data "
           "view is the audit's outside view, σ = τ_c / μ_s.")
