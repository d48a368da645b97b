"""Protocol walk-through: one round of CAPE, capePCA and capeAGN, message by message, for the shared scenario."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpcore.cape import AGN_MODELS, agn_stage_plans
from dpcore.cape.helper_free import compare_variants, dropout_whatif
from dpcore.cape.noise_variants import NOISE_VARIANTS
from dpcore.cape.protocol import (
    AGGREGATOR,
    PUBLIC,
    ROUNDS,
    ProtocolRound,
    cape_round,
    capeagn_round,
    capepca_round,
    party_views,
    symmetry_leak,
)
from dpcore.limits import MAX_SIGMA2
from dpcore.notation import symbolic
from dpcore.scenario import scenario_from_json
from dpcore.scenario.settings_link import Setting
from dpcore.validation import InputError
from pages.shared.federated_log import show_run_log
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

ALGORITHM_HELP = (
    "CAPE: one private weighted average (Algorithm 1 and its generalization). capePCA: the same flow for the "
    "D × D second-moment matrix, then top-K eigenvectors (Algorithm 2). capeAGN: two CAPE stages, M2 for "
    "whitening and the whitened third moment for the tensor power method (Algorithm 3)."
)


@st.cache_data(show_spinner="Designing both capeAGN stages ...", max_entries=32)
def _agn_plans(scenario_json: str, model: str, split: float, dim: int, sigma2: float | None):
    return agn_stage_plans(scenario_from_json(scenario_json), model, split, dim=dim, sigma2=sigma2)


def _messages_frame(step) -> pd.DataFrame:
    return pd.DataFrame([{
        "step": step.number, "from": m.sender, "to": m.receiver, "carries": m.content,
        "noise std per entry": m.noise_std,
        "shape": m.shape_text, "numbers": m.numbers, "unique": m.unique, "channel": m.channel,
    } for m in step.messages])


def _range(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:.3g}" if np.isclose(lo, hi) else f"{lo:.3g} to {hi:.3g}"


def _diagram(round_: ProtocolRound, n_sites: int) -> str:
    """A graphviz picture of who sends what (one arrow per kind of message, sites drawn as one box)."""
    kinds: dict[tuple[str, str, str], list] = {}
    for m in round_.messages:
        sender = "sites" if m.sender.startswith("site ") else m.sender
        receiver = "sites" if m.receiver.startswith("site ") else m.receiver
        label = m.content.split("_")[0] if m.site else m.content
        kinds.setdefault((sender, receiver, label), []).append(m)
    lines = [
        'digraph protocol { rankdir=TB; nodesep=0.6; ranksep=0.7; bgcolor="transparent";',
        'node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];',
        'edge [fontname="Helvetica", fontsize=10];',
        'helper [label="noise helper\\n(trusted)", fillcolor="#fde2c4"];',
        f'sites [label="{n_sites} sites\\n(each adds g_s)", fillcolor="#d7e9f7"];',
        'aggregator [label="aggregator\\n(untrusted)", fillcolor="#dff3dc"];',
        f'{PUBLIC} [label="published", shape=note, fillcolor="#eeeeee"];',
    ]
    for (sender, receiver, label), msgs in kinds.items():
        stds = [m.noise_std for m in msgs if m.noise_std is not None]
        text = f"{msgs[0].step}. {label} ({msgs[0].shape_text})"
        if stds:
            text += f"\\nstd {_range(stds)}"
        style = ", style=dashed" if sender == AGGREGATOR and receiver == "sites" else ""
        lines.append(f'{sender} -> {receiver} [label="{text}"{style}];')
    lines.append("}")
    return "\n".join(lines)


def _symmetry_chart(rows) -> go.Figure:
    names = [r.site for r in rows]
    fig = go.Figure()
    fig.add_bar(x=names, y=[r.sigma_symmetric / r.tau for r in rows], name="symmetric E: √(τ_e²+τ_g²)",
                marker_color="#4c78a8")
    fig.add_bar(x=names, y=[r.sigma_iid / r.tau for r in rows], name="i.i.d. E: √(τ_g²+τ_e²/2)",
                marker_color="#e45756")
    fig.add_hline(y=1.0, line_dash="dash", line_color="black", annotation_text="τ_s", annotation_position="top left")
    fig.update_layout(barmode="group", yaxis_title="σ_eff / τ_s")
    return fig


# ------------------------------------------------------------------------------------------------
scenario_sidebar(scenario)
n_sites = scenario.n_sites

st.title("Protocol walk-through")
st.markdown("Three kinds of party take part in one round. Each message below uses the numbers of the current "
            f"scenario ({n_sites} sites, {scenario.calibration} calibration, {scenario.neighbouring} neighbours).")
p1, p2, p3 = st.columns(3, gap="medium")
with p1, st.container(border=True):
    st.markdown("**Noise helper** (trusted)\n\nDraws the e_s so that Σ μ_s e_s = 0 and hands each site its term "
                "privately. Sees no data.")
with p2, st.container(border=True):
    st.markdown("**Sites** (honest but curious)\n\nCompute their statistic, add e_s + f_s + their own g_s and "
                "send one release each.")
with p3, st.container(border=True):
    st.markdown("**Aggregator** (untrusted)\n\nHands out f_s, receives every release, subtracts the f_s and "
                "publishes the weighted sum, in which the e_s cancel.")

# The page's widgets, one table: each widget is drawn with its range and choices from here, and its link (?settings=)
# is checked against the same.
MODEL_TITLES = {"mog": "Gaussian mixture", "stm": "single-topic model"}
PR = {
    "pr_algorithm": Setting(default="CAPE", label="Algorithm", choices=tuple(ROUNDS)),
    "pr_dim_cape": Setting(default=1, label="Entries of the statistic D", low=1, high=100_000),
    "pr_dim_pca": Setting(default=50, label="Dimension D", low=1, high=100_000),
    "pr_rank_pca": Setting(default=5, label="Rank K", low=1, high=100_000),
    "pr_model": Setting(default="mog", label="Model", choices=tuple(AGN_MODELS)),
    "pr_dim_agn": Setting(default=10, label="Dimension D", low=2, high=5000),
    "pr_rank_agn": Setting(default=3, label="Components K", low=1, high=5000),
    "pr_split": Setting(default=0.5, label="Budget share of stage 1", low=0.05, high=0.95),
    "pr_sigma2": Setting(default=0.05, label="Component variance σ²", low=0.0, high=MAX_SIGMA2),
    "pr_projected": Setting(default=False, label="Noise sent already projected"),
}
defaults = {key: setting.default for key, setting in PR.items()}
restore_widgets(PR)
algorithm = st.radio("Algorithm", widget_options(PR, "pr_algorithm"), key="pr_algorithm", horizontal=True,
                     help=ALGORITHM_HELP)

def _cape_form() -> tuple[object, ProtocolRound | None]:
    """CAPE on a mean of D entries: the plan and its round (None when infeasible)."""
    dim = st.number_input("Entries of the statistic D", **widget_range(PR, "pr_dim_cape"), step=1,
                          key="pr_dim_cape",
                          help="A mean of D features in [0, 1] (D = 1: one number per site). "
                          "The noise per entry is the same; only the counts grow.")
    plan = cached_plan(scenario, "mean")
    return plan, cape_round(plan.design, int(dim)) if plan.design.feasible else None


def _pca_form() -> tuple[object, ProtocolRound | None]:
    """capePCA: D and K."""
    a, b = st.columns(2)
    dim = a.number_input("Dimension D", **widget_range(PR, "pr_dim_pca"), step=1, key="pr_dim_pca",
                         help="Features per sample; each site sends a D x D symmetric matrix.")
    rank = b.number_input("Rank K", **widget_range(PR, "pr_rank_pca"), step=1, key="pr_rank_pca",
                          help="Number of principal directions published (1 <= K <= D).")
    plan = cached_plan(scenario, "pca")
    return plan, capepca_round(plan.design, int(dim), int(rank)) if plan.design.feasible else None


def _agn_form() -> tuple[object, ProtocolRound | None]:
    """capeAGN: model, D, K, the stage split, sigma^2 and the path; the plan shown is stage 1's."""
    a, b, c = st.columns(3)
    model = a.radio("Model", widget_options(PR, "pr_model"), key="pr_model", horizontal=True,
                    format_func=MODEL_TITLES.get,
                    help="The model sets the moment sensitivities: MOG M3 grows with D σ², STM does not.")
    dim = b.number_input("Dimension D", **widget_range(PR, "pr_dim_agn"), step=1, key="pr_dim_agn",
                         help="Features (MOG) or vocabulary size (STM).")
    rank = c.number_input("Components K", **widget_range(PR, "pr_rank_agn"), step=1, key="pr_rank_agn",
                          help="Mixture components or topics (1 <= K <= D).")
    a, b, c = st.columns(3)
    split = a.slider("Budget share of stage 1", **widget_range(PR, "pr_split"), step=0.05, key="pr_split",
                     help="Stage 1 (M2, whitening) gets (share × ε_s, share × δ_s), stage 2 the rest. "
                     "The paper splits equally.")
    sigma2 = None
    if model == "mog":
        sigma2 = b.number_input("Component variance σ²", **widget_range(PR, "pr_sigma2"), format="%.4f",
                                key="pr_sigma2",
                                help="Scaled MOG component variance; M3 sensitivity 2/N + 6 D σ²/N.")
    projected = c.toggle("Noise sent already projected", key="pr_projected",
                         help="Send stage-2 noise as K × K × K tensors with the law of projected D × D × D noise "
                         "(docs/math/capeagn.md, \"Large D: the projected path\"): far less traffic for large D, "
                         "same privacy.")
    stage1, stage2 = _agn_plans(scenario.to_json(indent=None), model, float(split), int(dim),
                                None if sigma2 is None else float(sigma2))
    round_ = None
    if stage1.design.feasible and stage2.design.feasible:
        round_ = capeagn_round(stage1.design, stage2.design, int(dim), int(rank), projected=bool(projected))
    if scenario.tau_c is not None:
        st.caption("capeAGN stages use τ_c at their DP floors (the scenario's τ_c is for one statistic).")
    return stage1, round_


_ONE_STATISTIC = (r"\begin{aligned}\hat a&=\textstyle\sum_s\mu_s(\hat a_s-f_s)\\ &=\textstyle\sum_s\mu_s a_s"
                  r"+\underbrace{\textstyle\sum_s\mu_s e_s}_{=0}+\sum_s\mu_s g_s\end{aligned}")


@dataclass(frozen=True, kw_only=True)
class _Form:
    """One kind of round of :data:`dpcore.cape.protocol.ROUNDS` on this page: its widgets (returning the plan whose
    audit is shown and the round), its aggregate's formula, which statistic the audit is of, and whether its
    releases are symmetric objects."""

    widgets: Callable[[], tuple[object, ProtocolRound | None]]
    formula: str = _ONE_STATISTIC
    audited: str = "this statistic"
    symmetric: bool = True


FORMS = {
    "CAPE": _Form(widgets=_cape_form, symmetric=False),
    "capePCA": _Form(widgets=_pca_form),
    "capeAGN": _Form(widgets=_agn_form, audited="stage 1 (M2)",
                     formula=r"\begin{gathered}W=UD^{-1/2}\\ \widetilde M_3=\textstyle\sum_s\mu_s"
                             r"\big(\widetilde M_{3,s}-F_{3,s}(W,W,W)\big)\end{gathered}"),
}
# The page's form of every kind of round (keys: dpcore.cape.protocol.ROUNDS).
form = FORMS[algorithm]

round_ = None
plan = None
pca_plan = None
try:
    plan, round_ = form.widgets()
except InputError as exc:
    show_error(exc)
remember_widgets(defaults)

if round_ is None:
    if plan is not None and not plan.design.feasible:
        st.error(symbolic(f"No feasible noise design for this scenario: {plan.design.reason} Change τ_c on the "
                          "Sites or Noise design page."), icon=":material/block:")
    st.stop()

# --- diagram and steps -----------------------------------------------------------------------------------------
left, right = st.columns([1, 1], gap="medium")
with left:
    st.graphviz_chart(_diagram(round_, n_sites), width="stretch")
with right:
    st.markdown(f"**{algorithm}** publishes {round_.output}. Solid arrows carry data-dependent releases or the "
                "helper's noise; dashed arrows the aggregator's noise, which it subtracts again.")
    st.latex(form.formula)
    st.metric("Noise std left in the output", f"{round_.output_std:.4g}",
              help="τ_c of the (last) CAPE stage: √(Σ_s μ_s² τ_g,s²), per entry.")

st.subheader("Step by step")
st.markdown(symbolic("\n".join(f"{step.number}. **{step.title}**: {step.description}" for step in round_.steps)))
# Every message in one table (one data grid draws much faster than one per step), with its step's number.
st.dataframe(pd.concat([_messages_frame(step) for step in round_.steps if step.messages], ignore_index=True),
             hide_index=True, width="stretch", height=min(38 + 35 * len(round_.messages), 420),
             column_config={"step": st.column_config.NumberColumn(format="%d", width="small"),
                            "noise std per entry": st.column_config.NumberColumn(format="%.3e"),
                            "numbers": st.column_config.NumberColumn(format="%d", help="dense count"),
                            "unique": st.column_config.NumberColumn(
                                format="%d", help="unique entries of a symmetric object")})

# --- communication -----------------------------------------------------------------------------------------------
st.subheader("Communication")
m1, m2, m3 = st.columns(3)
m1.metric("Numbers moved", f"{round_.total_numbers:,}", help="Dense count of every message between parties "
          "(D² per D × D matrix), not counting what is published.")
m2.metric("Unique entries", f"{round_.total_unique:,}", help="Only the unique entries of symmetric objects; "
          "what an implementation has to send.")
m3.metric("Conventional scheme", f"{round_.conventional_numbers:,}", help="Only the releases (and broadcasts), "
          "each with the site's full noise: no helper or aggregator noise to hand out.")
parties = round_.per_party()
st.dataframe(pd.DataFrame([{"party": p, "sends": v["sent"], "receives": v["received"]} for p, v in parties.items()]),
             hide_index=True, width="stretch")
for note in round_.notes:
    st.caption(symbolic(note))

# --- what each party learns --------------------------------------------------------------------------------------
st.subheader("What each party can learn")
audit = plan.audit
if audit is None:
    st.info("No audit for an infeasible design.")
else:
    views = party_views(plan.design, audit)
    # A static table: its text wraps, so every column fits any window (a data grid cut the last columns at 1400 px).
    st.table(pd.DataFrame([{
        "party": v.party, "sees": symbolic(v.sees), "knows": symbolic(v.knows), "worst site": v.worst_site,
        "σ_eff / τ_s": f"{v.sigma_ratio:.3f}",
        "ε effective / promised": "not audited" if v.eps_eff is None else f"{v.eps_eff:.3g} / {v.eps:g}",
        "sites over budget": v.failing,
    } for v in views]).set_index("party"))
    st.caption("σ_eff / τ_s = 1: the view leaves the site exactly the noise of its own release. The helper is not "
               "audited by ε: it sees no release, and the design gives it f + g ≥ τ_s² by construction.")
    which = form.audited
    st.markdown(
        f"Worst site per party, for {which}, with up to c = {audit.collusion} colluders. The helper only ever "
        "sees noise. The aggregator sees every release and can combine them, so its σ_eff can fall below τ_s "
        "even though every single release has τ_s: the audit measures exactly how much."
    )
    st.page_link("pages/noise_design.py", label="Full audit, per site and view, on the Noise design page",
                 icon=":material/policy:")

# --- helper or helper-free, and drop-outs ---------------------------------------------------------------------------
st.subheader("With a helper or without one")
st.markdown(
    "The helper is a party everyone must trust. Without it the sites make the same zero-sum noise themselves: each "
    "draws its own w_s, a secure sum (pairwise masks on a fixed-point encoding, sealed from site to site) gives every "
    "site W = Σ w_t, and each sets μ_s e_s = w_s − c_s W. The joint law of the e_s is the helper's; what changes is "
    "that every site also knows W (the aggregator never sees it). Below: the worst site's σ_eff / τ_s in every view, "
    f"with up to c = {audit.collusion if audit else 0} colluders."
)
if audit is not None:
    rows = compare_variants(plan.design, audit.collusion)
    st.table(pd.DataFrame([{"view": r.view, "with a helper": f"{r.helper:.4f}", "helper-free": f"{r.helper_free:.4f}",
                            "worst site (helper-free)": r.site, "coalition": ", ".join(r.coalition) or "-",
                            "cost of the revealed sum": f"{100 * r.cost:.2f} %"} for r in rows]).set_index("view"))
    costly = [r for r in rows if r.cost > 1e-6]
    if costly:
        worst = max(costly, key=lambda r: r.cost)
        st.caption(symbolic(f"With these weights W is correlated with the sites' noise: colluders who know it learn "
                            f"more, {100 * worst.cost:.2f} % of the margin in the {worst.view} view (site "
                            f"{worst.site}). A real round counts this and raises the sites' shared noise until "
                            "every view holds again; the output's noise does not change."))
    else:
        st.caption("With these weights W is independent of every site's noise: helper-free costs nothing in any view.")

    st.markdown("**If sites drop out** after the noise was set up, the survivors (or the helper) hand the aggregator "
                "the vanished sites' terms so that the rest still cancels - only for sites a survivor set signed by "
                "every survivor excludes, whose masked releases are then never unmasked - and the audit counts those "
                "sites as colluders. What the round would release:")
    k = st.slider("Sites that drop out", 0, max(n_sites - 2, 0), 1 if n_sites > 2 else 0, key="pr_dropouts",
                  help="The worst choice of sites is shown (every choice is examined).")
    sens = plan.sensitivities
    eps = getattr(plan, "eps", scenario.eps)
    delta = getattr(plan, "delta", scenario.delta)
    cases = [dropout_whatif(plan.design, sens, eps, delta, audit.collusion, int(k), v)
             for v, entry in NOISE_VARIANTS.items() if not entry.integer]
    st.table(pd.DataFrame([{"variant": c.variant, "worst sites to lose": ", ".join(c.dropped) or "-",
                            "output noise (per unit weight)": f"{c.output_std:.4g}",
                            "full round": f"{c.tau_c / float(plan.design.weights.sum()):.4g}",
                            "worst σ_eff / τ_s": f"{c.worst_ratio:.4f}",
                            "promises broken": ", ".join(c.failing) or "none"} for c in cases]).set_index("variant"))
    needed = audit.collusion + 2 * int(k) + 1
    st.caption(symbolic("A round planned for k drop-outs designs for c + k colluders, so its promises survive; "
                        "the command line and the Flower app take dropouts=k (make federated NOISE=helper-free "
                        f"DROP=east). The Flower app also needs S >= c + 2k + 1 = {needed} sites, so that no c "
                        "colluders plus k dropped sites can rebuild a shared seed: "
                        + (f"these {n_sites} are enough." if n_sites >= needed else
                           f"with {n_sites} it would refuse this round.")))

# --- symmetric noise ------------------------------------------------------------------------------------------------
st.subheader("Why every noise term must be symmetric")
if not form.symmetric:  # a mean has no (i, j) and (j, i) entries: the point concerns matrix and tensor releases
    st.caption("A mean has no symmetric pairs of entries, so this concerns capePCA's matrices and capeAGN's "
               "tensors: choose one of them above to see why their noise must be symmetric.")
else:
    try:
        pca_plan = cached_plan(scenario, "pca")
    except InputError as exc:
        show_error(exc)
if pca_plan is not None and pca_plan.design.feasible:
    rows = symmetry_leak(pca_plan.design, pca_plan.sensitivities, scenario.eps, scenario.delta)
    left, right = st.columns([3, 2], gap="medium")
    with left:
        st.dataframe(pd.DataFrame([{"site": r.site, "σ_eff / τ_s, symmetric E": r.sigma_symmetric / r.tau,
                                    "σ_eff / τ_s, i.i.d. E": r.sigma_iid / r.tau, "ε promised": r.eps,
                                    "ε with i.i.d. E": r.eps_iid} for r in rows]),
                     hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.3g") for c in
                                    ("σ_eff / τ_s, symmetric E", "σ_eff / τ_s, i.i.d. E", "ε with i.i.d. E")})
        if st.toggle("Show as a chart", key="pr_symmetry_as_chart",
                     help="The same numbers as bars (drawn on request)."):
            show_chart(_symmetry_chart(rows), "Noise the aggregator faces on an off-diagonal pair",
                       key="pr_symmetry_chart", height=320)
    with right:
        st.markdown(
            "A site's matrix A_s is symmetric, so entries (i, j) and (j, i) carry the same value. If the helper drew "
            "E_s with independent entries in both triangles while G_s is symmetric, the aggregator (who removes "
            "F_s) would average the two entries: the e parts average out, the g part does not."
        )
        st.latex(r"\sigma_{\mathrm{eff}}^2=\tau_{g}^2+\tfrac12\tau_{e}^2<\tau_{g}^2+\tau_{e}^2=\tau_s^2")
        worst = max(rows, key=lambda r: r.eps_iid / r.eps)
        st.markdown(f"With capePCA's design, site {worst.site} would get ε = {worst.eps_iid:.3g} instead of "
                    f"{worst.eps_symmetric:.3g} (promised {worst.eps:g}). Every noise term on a symmetric object, "
                    "E, F and G alike, is drawn on the unique entries and mirrored.")

# --- a real run -----------------------------------------------------------------------------------------------------
show_run_log()
