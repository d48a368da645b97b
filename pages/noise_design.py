"""Noise design: solve the CAPE variances for the shared scenario, explain (in)feasibility, audit the design."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpcore.cape import AUDIT_VIEWS, GAINS, OBJECTIVES, SOLVERS, VIEWS, default_collusion, dp_floor
from dpcore.cape.explain import explain_design, floor_site, robust_gain_curve
from dpcore.cape.helper_note import helper_balance_note
from dpcore.cape.noise_compare import compare_noise
from dpcore.limits import E_SCALE_RANGE, MAX_OTD_DIM, MAX_SIGMA2
from dpcore.notation import symbolic
from dpcore.privacy import STATISTICS
from dpcore.reports import design_report
from dpcore.scenario import ScenarioError
from dpcore.scenario.settings_link import Setting
from dpcore.validation import InputError
from pages.shared.navigation import start_page
from pages.shared.reports import report_downloads
from pages.shared.state import cached_plan, set_scenario
from pages.shared.widgets import (
    STATISTIC_HELP,
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

SOLVER_HELP = symbolic(" ".join(entry.help for entry in SOLVERS.values()))
COLOURS = {"g": "#4c78a8", "e": "#f58518", "f": "#54a24b", "neg": "#e45756"}


@st.cache_data(show_spinner="Computing the collusion-robust calibration for every c ...", max_entries=16)
def _robust_curve(tau: tuple[float, ...], weights: tuple[float, ...], names: tuple[str, ...], objective: str):
    return robust_gain_curve(np.array(tau), np.array(weights), names=names, objective=objective)


def _variance_chart(design, relative: bool) -> go.Figure:
    """Per site two stacked bars: g + e (what the aggregator sees) and g + f (what the helper would see)."""
    names = list(design.names)
    unit = design.tau**2 if relative else np.ones(design.n_sites)
    ve, vf, vg = design.var_e / unit, design.var_f / unit, design.var_g / unit
    x = [[n for n in names for _ in range(2)], ["e+g", "f+g"] * len(names)]
    g_vals = np.repeat(vg, 2)
    e_vals = np.ravel(np.column_stack([ve, np.zeros_like(ve)]))
    f_vals = np.ravel(np.column_stack([np.zeros_like(vf), vf]))
    fig = go.Figure()
    fig.add_bar(x=x, y=g_vals, name="site noise g", marker_color=COLOURS["g"],
                hovertemplate="g: %{y:.4g}<extra></extra>")
    fig.add_bar(x=x, y=e_vals, name="helper noise e", marker_color=COLOURS["e"],
                hovertemplate="e: %{y:.4g}<extra></extra>")
    fig.add_bar(x=x, y=f_vals, name="aggregator noise f", marker_color=COLOURS["f"],
                hovertemplate="f: %{y:.4g}<extra></extra>")
    if relative:
        fig.add_hline(y=1.0, line_dash="dash", line_color="black", annotation_text="τ_s²",
                      annotation_position="top left")
    else:
        fig.add_scatter(x=x, y=np.repeat(design.tau**2, 2), mode="markers", name="τ_s² (needed)",
                        marker={"symbol": "line-ew", "size": 24, "line": {"width": 3, "color": "black"}})
    fig.update_layout(barmode="relative", yaxis_title="variance / τ_s²" if relative else "variance",
                      xaxis={"tickangle": 0})
    return fig


def _level_chart(design) -> go.Figure:
    """μ_s τ_s per site (what each site needs in the aggregate) against τ_c, the DP floor and τ_conv. τ_c sits on
    the floor by default, so the floor is a wide pale band and τ_c a thin dark line on top of it: both stay visible."""
    contrib = design.weights * design.tau
    names = list(design.names)
    fig = go.Figure()
    fig.add_bar(x=names, y=contrib, name="μ_s τ_s (site s needs τ_c ≥ this)",
                marker_color="#9ecae9", hovertemplate="%{x}: %{y:.4g}<extra></extra>")
    lines = ((design.tau_floor, "DP floor", {"color": "rgba(228, 87, 86, 0.35)", "width": 12}),
             (design.tau_conv, "conventional τ_conv", {"color": "#7f7f7f", "width": 2, "dash": "dash"}),
             (design.tau_c, "τ_c (CAPE)", {"color": "#1f3b73", "width": 3}))
    for value, label, style in lines:
        fig.add_scatter(x=names, y=[value] * design.n_sites, mode="lines", name=f"{label} = {value:.3g}", line=style,
                        hovertemplate=f"{label}: {value:.4g}<extra></extra>")
    fig.update_layout(yaxis_title="std of the aggregate's noise", yaxis_rangemode="tozero")
    return fig


def _audit_frame(plan) -> pd.DataFrame:
    tau = dict(zip(plan.design.names, plan.design.tau, strict=True))
    rows = []
    for r in plan.audit.rows:
        rows.append({
            "site": r.site, "view": r.view, "coalition": ", ".join(r.coalition) or "-",
            "σ_eff / τ_s": r.sigma_eff / tau[r.site] if math.isfinite(r.sigma_eff) else math.inf,
            "ε promised": r.eps, "ε effective": r.eps_eff,
            "δ promised": r.delta, "δ at ε promised": r.delta_eff,
            "kept": "yes" if r.ok else "NO", "exact": r.exact,
        })
    return pd.DataFrame(rows)


def _audit_chart(plan) -> go.Figure:
    fig = go.Figure()
    cap = 5.0
    for view in VIEWS:
        rows = [r for r in plan.audit.rows if r.view == view]
        if not rows:
            continue
        ratio = [min(r.eps_eff / r.eps, cap) for r in rows]
        fig.add_bar(x=[r.site for r in rows], y=ratio, name=view,
                    hovertemplate=view + " · %{x}: ε_eff/ε = %{y:.3g}<extra></extra>")
    fig.add_hline(y=1.0, line_dash="dash", line_color="black", annotation_text="promise",
                  annotation_position="top left")
    fig.update_layout(barmode="group", yaxis_title="ε effective / ε promised")
    return fig


def _robust_chart(points, n_sites: int, equal: bool) -> go.Figure:
    fig = go.Figure()
    cs = [p.collusion for p in points]
    fig.add_scatter(x=cs, y=[p.gain if p.feasible else None for p in points], mode="lines+markers",
                    name="collusion-robust gain G_c", line={"width": 3})
    if equal:
        fig.add_scatter(x=cs, y=[n_sites - c for c in cs], mode="lines", name="S - c (equal sites)",
                        line={"dash": "dot"})
    fig.update_layout(xaxis_title="colluding sites c", yaxis_title="G_c", xaxis={"dtick": 1},
                      yaxis_rangemode="tozero")
    return fig


# ------------------------------------------------------------------------------------------------
scenario_sidebar(scenario)
n_sites = scenario.n_sites
names = scenario.names

st.title("Noise design")
st.markdown(
    "CAPE splits each site's noise into three parts: **e** from the trusted helper (they cancel in the "
    "weighted sum), **f** from the aggregator (it subtracts them) and **g** from the site itself (what is left "
    "in the aggregate). Each release must stay private against the aggregator, who knows f, and against the "
    "helper, who knows e; the aggregate must carry **τ_c**, at least the DP floor."
)
st.latex(r"\begin{gathered}\tau_{f,s}^2+\tau_{g,s}^2\ge\tau_s^2,\quad \tau_{e,s}^2+\tau_{g,s}^2\ge\tau_s^2\\ "
         r"\textstyle\sum_s\mu_s^2\tau_{g,s}^2=\tau_c^2,\quad \sum_s\mu_s e_s=0\end{gathered}")
summary_slot = st.container()  # the headline and the before-and-after panel, once this run's τ_c edit is known

# The page's widgets, one table: each widget is drawn with its range and choices from here, and its link (?settings=)
# is checked against the same.
CHARTS = {"sites": "noise per site: e, f and g", "aggregate": "τ_c against the DP floor and τ_conv"}
ND = {
    "nd_statistic": Setting(default="mean", label="Statistic", choices=tuple(STATISTICS)),
    "nd_solver": Setting(default="general", label="Solver", choices=tuple(SOLVERS)),
    "nd_objective": Setting(default="balanced", label="Objective", choices=tuple(OBJECTIVES)),
    "nd_e_scale": Setting(default=1.0, label="Helper-noise scale", low=0.0, high=E_SCALE_RANGE[1]),
    "nd_dim": Setting(default=10, label="Dimension D", low=1, high=MAX_OTD_DIM),
    "nd_sigma2": Setting(default=0.05, label="Component variance σ²", low=0.0, high=MAX_SIGMA2),
    "nd_relative": Setting(default=True, label="Show variances in units of τ_s²"),
    "nd_failing_only": Setting(default=False, label="Only rows that break the promise"),
    "nd_chart": Setting(default="sites", label="Chart", choices=tuple(CHARTS)),
    "nd_audit_as_chart": Setting(default=False, label="Show the audit as a chart"),
    "nd_last": Setting(default=names[-1], label="Site playing 'site S' (last)", choices=tuple(names)),
    "nd_collusion": Setting(default=min(default_collusion(n_sites), max(n_sites - 1, 0)),
                            label="Colluding sites c (audit)", low=0, high=max(n_sites - 1, 0)),
}
defaults = {key: setting.default for key, setting in ND.items()}
restore_widgets(ND)

# --- tau_c, two-way bound to the shared scenario --------------------------------------------------
if st.session_state.get("nd_tau_c_source", "unset") != scenario.tau_c or "nd_at_floor" not in st.session_state:
    st.session_state["nd_at_floor"] = scenario.tau_c is None
    st.session_state["nd_tau_c"] = float(scenario.tau_c) if scenario.tau_c is not None else None
    st.session_state["nd_tau_c_source"] = scenario.tau_c

c1, c2, c3 = st.columns(3, gap="medium")
with c1:
    statistic = st.selectbox("Statistic", widget_options(ND, "nd_statistic"), key="nd_statistic", help=STATISTIC_HELP)
    dim = sigma2 = None
    if statistic == "mog-m3":
        dim = st.number_input("Dimension D", **widget_range(ND, "nd_dim"), step=1, key="nd_dim",
                              help="Data dimension; the MOG third-moment sensitivity grows with D σ².")
        sigma2 = st.number_input("Component variance σ²", **widget_range(ND, "nd_sigma2"), format="%.4f",
                                 key="nd_sigma2",
                                 help="Scaled variance of each Gaussian component (samples scaled to norm <= 1).")
with c2:
    solver = st.radio("Solver", widget_options(ND, "nd_solver"), key="nd_solver",
                      format_func=lambda name: SOLVERS[name].title,
                      help=SOLVER_HELP)
    options = SOLVERS[solver].options  # the settings this solver reads
    objective = last = None
    e_scale = 1.0
    if "objective" in options:
        objective = st.selectbox("Objective", widget_options(ND, "nd_objective"), key="nd_objective",
                                 help=symbolic(" · ".join(f"{k}: {v}" for k, v in OBJECTIVES.items())))
    if "last" in options:
        last = st.selectbox("Site playing 'site S' (last)", widget_options(ND, "nd_last"), key="nd_last",
                            help="The closed form treats one site specially; its feasibility depends on which.")
    if "e_scale" in options:
        e_scale = st.number_input(
            "Helper-noise scale", **widget_range(ND, "nd_e_scale"), step=0.5, format="%g", key="nd_e_scale",
            help="Multiply the helper's variances by this factor (>= 1): more protection against the aggregator "
            "(see the audit), the same noise in the aggregate.")
with c3:
    at_floor = st.toggle("τ_c at the DP floor", key="nd_at_floor",
                         help="Use the smallest τ_c that keeps every site's budget against an outside observer. "
                         "This setting is part of the shared scenario (also on the Sites page).")
    tau_c_value = None
    if not at_floor:
        if st.session_state.get("nd_tau_c") is None:  # start from the DP floor of the chosen statistic
            try:
                st.session_state["nd_tau_c"] = dp_floor(scenario.weights(), scenario.taus(statistic, dim=dim,
                                                                                          sigma2=sigma2))
            except InputError:
                pass
        tau_c_value = st.number_input(
            "τ_c", min_value=0.0, format="%.4e", key="nd_tau_c",
            help="Std of the noise left in the aggregate, in the units of the statistic; must be > 0. "
            "Below the DP floor the published aggregate breaks some site's budget.")
    if n_sites > 1:
        collusion = st.slider("Colluding sites c (audit)", **widget_range(ND, "nd_collusion"), key="nd_collusion",
                              help="The audit considers the aggregator with up to c other sites, and coalitions of "
                              "up to c sites. Default ceil(S/3) - 1, the bound of the authors' later analysis.")
    else:
        collusion = 0
        st.caption("One site: nothing to collude with.")
remember_widgets(defaults)

wanted_tau_c = None if at_floor else tau_c_value
if at_floor or tau_c_value is not None:
    if wanted_tau_c != scenario.tau_c:
        try:
            updated = scenario.replace(tau_c=wanted_tau_c)
        except ScenarioError as exc:
            show_error(exc, "τ_c")
        else:
            set_scenario(updated)
            st.session_state["nd_tau_c_source"] = wanted_tau_c
            scenario = updated

try:
    plan = cached_plan(scenario, statistic, solver=solver, objective=objective or "balanced", last=last,
                       collusion=int(collusion), e_scale=float(e_scale), dim=dim, sigma2=sigma2)
except InputError as exc:
    show_error(exc)
    st.stop()

with summary_slot:
    headline(scenario)
    change_panel()

design = plan.design
st.caption(f"Statistic **{statistic}**, {scenario.neighbouring} neighbours, {scenario.calibration} calibration, "
           f"solver **{SOLVERS[solver].title}**" + (f" ({design.objective})" if design.objective else "")
           + (f". Sensitivities Δ_s from {plan.sensitivities.min():.3g} to {plan.sensitivities.max():.3g}."
              if not np.allclose(plan.sensitivities, plan.sensitivities[0]) else
              f". Sensitivity Δ_s = {plan.sensitivities[0]:.3g} at every site."))

# --- verdict ----------------------------------------------------------------------------------------
explanation = [symbolic(line) for line in explain_design(design, gain=False)]
if design.feasible:
    st.success(explanation[0], icon=":material/check_circle:")
    for line in explanation[1:]:
        st.markdown(f"- {line}")
else:
    st.error("**Infeasible design.** " + "\n\n".join(explanation), icon=":material/block:")
    where = SOLVERS[solver].feasible_settings
    settings_table = where(design) if where is not None else None
    if settings_table is not None:  # where this solver would work (the closed form: each choice of the last site)
        st.markdown(settings_table.caption)
        table = pd.DataFrame(settings_table.rows).rename(columns=symbolic)
        st.dataframe(table, hide_index=True, width="stretch", column_config={
            column: st.column_config.NumberColumn(format="%.4e") for column in table.columns
            if pd.api.types.is_float_dtype(table[column])})
        st.latex(settings_table.conditions_latex)
for warning in plan.warnings:
    st.warning(symbolic(warning), icon=":material/warning:")

m1, m2, m3 = st.columns(3)
m1.metric("τ_c (aggregate noise std)" if design.feasible else "τ_c asked for", f"{design.tau_c:.4g}",
          help="√(Σ_s μ_s² τ_g,s²): the noise std left in the published aggregate.")
m2.metric("DP floor", f"{design.tau_floor:.4g}", help=f"max_s μ_s τ_s, set by site {floor_site(design)}: the "
          "smallest τ_c with which the published aggregate alone keeps every site's budget.")
m3.metric("Conventional τ_conv", f"{design.tau_conv:.4g}",
          help="√(Σ_s μ_s² τ_s²): the aggregate's noise in the conventional scheme, where every site adds its full "
          "τ_s on its own.")
if design.feasible and SOLVERS[solver].collusion_robust:
    robust_gain = GAINS["robust"]
    st.markdown(f"**{robust_gain.title} {robust_gain.symbol} = {design.gain:.3g}** for up to c = {plan.collusion} "
                f"colluders: {robust_gain.definition}.")
elif design.feasible and statistic != "mean" and scenario.tau_c is not None:
    st.caption(f"τ_c is an absolute standard deviation; for the {statistic} statistic this τ_c gives a CAPE gain "
               f"G = {design.gain:.3g} (the headline above is for the mean).")

# --- charts: one at a time, so that the page draws one plotly chart on arrival ---------------------------------
st.subheader("Who adds how much noise")
chart = st.radio("Chart", widget_options(ND, "nd_chart"), key="nd_chart", horizontal=True, format_func=CHARTS.get,
                 label_visibility="collapsed")
left, right = st.columns([3, 2], gap="medium")
if chart == "sites":
    with left:
        relative = st.toggle("Show variances in units of τ_s²", key="nd_relative",
                             help="Divide each site's variances by its τ_s², so sites with different budgets share "
                             "one scale and the requirement is the dashed line at 1.")
        show_chart(_variance_chart(design, relative), "Noise variances per site against τ_s²",
                   key="nd_variance_chart", height=400)
    with right:
        st.markdown(
            "Each site has two bars. **e+g** is the noise the aggregator faces in that site's release (it knows f); "
            "**f+g** is what the helper would face (it knows e). Both must reach **τ_s²**. The blue part, **g**, is "
            "the only noise that survives in the aggregate: the e terms cancel and the aggregator subtracts f."
        )
        balance = helper_balance_note(design)
        if balance:
            st.markdown(symbolic(balance))
        if not design.feasible:
            st.markdown("Bars **below zero** are the negative variances of the infeasible design: no random noise "
                        "has them.")
else:
    with left:
        show_chart(_level_chart(design), "τ_c against the DP floor and the conventional level", key="nd_level_chart")
    with right:
        st.markdown(
            "An outside observer of the aggregate sees site s behind noise τ_c / μ_s, so it needs "
            "**τ_c ≥ μ_s τ_s**: the tallest bar is the **DP floor** (the pale band). The conventional scheme (no "
            "correlated noise) leaves the dashed level τ_conv; CAPE leaves the dark line τ_c, on the band when τ_c is "
            "at the floor."
        )
        st.latex(r"\begin{gathered}G=\frac{\tau_{\mathrm{conv}}^2}{\tau_c^2}=\frac{\sum_s\mu_s^2\tau_s^2}{\tau_c^2}\\ "
                 r"\tau_c\ge\max_s\mu_s\tau_s\end{gathered}")

with st.expander("Variances as a table"):
    std = design.std
    st.dataframe(pd.DataFrame({
        "site": design.names, "μ_s": design.weights, "Δ_s": plan.sensitivities, "τ_s": design.tau,
        "τ_e,s": std(design.var_e), "τ_f,s": std(design.var_f), "τ_g,s": std(design.var_g),
        "τ_e,s² (may be < 0)": design.var_e, "τ_g,s² (may be < 0)": design.var_g,
    }), hide_index=True, width="stretch",
        column_config={c: st.column_config.NumberColumn(format="%.4e") for c in
                       ("Δ_s", "τ_s", "τ_e,s", "τ_f,s", "τ_g,s", "τ_e,s² (may be < 0)", "τ_g,s² (may be < 0)")})

# --- audit ----------------------------------------------------------------------------------------------
st.subheader("Privacy audit")
st.markdown(
    "The papers prove each release private **on its own**. The releases are correlated (the e terms sum to "
    "zero), so an adversary who sees several of them can learn more. The audit computes, for every site and "
    "every view, the exact noise σ_eff left on that site's statistic (the **effective noise**: the view is exactly as "
    "private as one release with that noise) and the ε it really gets at δ_s. The *What ε means* page shows what "
    "that does for an attacker:"
)
st.markdown("\n".join(f"- **{name}**: {view.description}" for name, view in AUDIT_VIEWS.items()))
st.latex(r"\begin{gathered}\sigma_{\mathrm{eff}}^2=\big(b^\top\mathrm{Cov}^{+}b\big)^{-1},\quad "
         r"m=\Delta_s/\sigma_{\mathrm{eff}}\\ "
         r"\delta(\varepsilon)=\Phi\!\left(\tfrac m2-\tfrac{\varepsilon}{m}\right)-e^{\varepsilon}"
         r"\Phi\!\left(-\tfrac m2-\tfrac{\varepsilon}{m}\right)\end{gathered}")
if plan.audit is None:
    st.info("No audit: the design is infeasible, so there is no noise to audit. Choose the general solver.",
            icon=":material/info:")
else:
    failing = plan.audit.failing()
    if failing:
        st.warning(f"{len(failing)} of {len(plan.audit.rows)} site-views break their promise (ε effective > ε "
                   f"promised) with up to c = {plan.collusion} colluders.", icon=":material/gpp_bad:")
    else:
        st.success(f"Every site keeps its promised ε in every view with up to c = {plan.collusion} colluders.",
                   icon=":material/verified_user:")
    st.markdown(
        "A view in which ε effective exceeds ε promised gives a site **less** privacy than it was promised. "
        "Classic calibration is conservative, so σ_eff a little below τ_s can still keep ε; with the analytic "
        "calibration (Sites page) any σ_eff < τ_s breaks the promise. Raising the helper-noise scale or "
        "choosing the collusion-robust calibration closes the gap."
    )
    t1, t2 = st.columns(2)
    failing_only = t1.toggle("Only rows that break the promise", key="nd_failing_only",
                             help="Hide the site-views whose effective ε is within the promise.")
    if t2.toggle("Show the audit as a chart", key="nd_audit_as_chart",
                 help="ε effective over ε promised for every site and view, as bars (drawn on request)."):
        show_chart(_audit_chart(plan), "Effective ε relative to the promise (capped at 5)", key="nd_audit_chart")
    frame = _audit_frame(plan)
    if failing_only:
        frame = frame[frame["kept"] == "NO"]
    st.dataframe(frame, hide_index=True, width="stretch", column_config={
        "σ_eff / τ_s": st.column_config.NumberColumn(format="%.3f", help="1 means exactly the site's own τ_s"),
        "ε effective": st.column_config.NumberColumn(format="%.4g", help="exact ε of this view at δ_s"),
        "δ at ε promised": st.column_config.NumberColumn(format="%.2e", help="exact δ of this view at ε_s"),
        "δ promised": st.column_config.NumberColumn(format="%.1e"),
        "exact": st.column_config.CheckboxColumn(help="False: worst coalition searched heuristically (large S)"),
    })

# --- collusion-robust calibration ----------------------------------------------------------------------
st.subheader("Collusion-robust calibration")
robust = plan.robust
if robust is None:
    st.info("With a single site there is no coalition to guard against.", icon=":material/info:")
else:
    left, right = st.columns([3, 2], gap="medium")
    with right:
        robust_gain = GAINS["robust"]
        if robust.feasible:
            compare = f" (the CAPE gain G of the design above: {design.gain:.3g})" if design.feasible else ""
            st.markdown(f"Against up to **c = {plan.collusion}** colluders: τ_c = {robust.tau_c:.4g}, "
                        f"{robust_gain.title} **{robust_gain.symbol} = {robust.gain:.3g}**{compare}.")
            st.caption(f"{robust_gain.symbol}: {robust_gain.definition}. " + symbolic(" ".join(robust.notes)))
        else:
            st.warning(symbolic(f"No collusion-robust design for c = {plan.collusion}: {robust.reason}"),
                       icon=":material/warning:")
        st.markdown(
            "With very large helper noise the aggregator and c colluders learn only the weighted sum of the other "
            "sites' releases, so each site must be covered by the g noise of the sites **outside** the worst "
            "coalition. For equal sites that is τ_g² = τ_s²/(S-c): the gain drops from S to S - c."
        )
        st.latex(r"\begin{gathered}\textstyle\sum_{t\notin C}\mu_t^2\tau_{g,t}^2\ \ge\ \mu_s^2\tau_s^2\\ "
                 r"\text{for every site }s\text{ and coalition }|C|\le c\end{gathered}")
    with left:
        tau_key = tuple(float(x) for x in design.tau)
        args = (tau_key, tuple(float(w) for w in design.weights), tuple(design.names), objective or "balanced")
        done = st.session_state.setdefault("nd_curves_done", set())
        if args in done:  # computed on request earlier in this session: cached, instant
            points = _robust_curve(*args)
            equal = bool(np.allclose(design.tau, design.tau[0]) and np.allclose(design.weights, 1 / n_sites))
            show_chart(_robust_chart(points, n_sites, equal), "Collusion-robust gain G_c against c colluders",
                       key="nd_robust_chart", height=320)
            bad = [p.collusion for p in points if not p.feasible]
            if bad:
                st.caption(f"No robust design was found for c = {', '.join(map(str, bad))} (gaps in the curve).")
        else:
            st.caption(f"The curve solves the collusion-robust calibration once for every c = 0 .. {n_sites - 1}; "
                       "it is computed on request, so that the page never waits for it.")
            if st.button("Compute G_c for every c", key="nd_curve_button", icon=":material/show_chart:",
                         help="Solve the collusion-robust calibration for c = 0 .. S-1 (cached afterwards)."):
                done.add(args)
                st.rerun()


# --- continuous or discrete noise (the noise-variant table) -----------------------------------------------------------
st.subheader("Continuous or discrete noise")
st.caption("A real run can draw every noise term as an integer with an exact sampler and add the releases up exactly "
           "on a ring of integers, as secure aggregation does; the table compares it with continuous CAPE (with and "
           "without a helper) and the conventional scheme on this scenario: the noise in the aggregate, each view's "
           "ε (worst site) and the bits every value travels on.")
if design.feasible and st.toggle("Compare the noise variants", key="nd_compare_noise",
                                 help="Computed on request: the discrete design's scale, ring and audit."):
    compare_dim = dim or st.number_input("D of the released matrix or tensor (its entries set the discrete scale; "
                                         "ignored for the mean)", min_value=1, max_value=2000, value=10, step=1,
                                         key="nd_compare_dim")
    try:
        schemes = compare_noise(plan, dim=int(compare_dim), sigma2=sigma2)
    except InputError as exc:
        show_error(exc)
    else:
        st.dataframe(pd.DataFrame([{
            "scheme": row.title, "noise std in the aggregate": row.aggregate_std, "gain": row.gain,
            **{f"ε {g.name}": g.eps for g in row.guarantees},
            "bits per value": row.bits, "note": row.reason or ""} for row in schemes]),
            hide_index=True, width="stretch")

# --- take it with you ------------------------------------------------------------------------------------------------
st.subheader("Take it with you")
report_options = {"statistic": statistic, "solver": solver, "objective": objective or "balanced", "last": last,
                  "collusion": int(collusion), "e_scale": float(e_scale), "dim": dim, "sigma2": sigma2}
report_downloads(lambda: design_report(plan, options=report_options), "noise_design", "nd_report")
