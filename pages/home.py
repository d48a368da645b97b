"""Home: what CAPE is, one picture, and a tour of the pages."""

import streamlit as st

from dpcore.cape import design_equal
from pages.shared.catalog import PAGES
from pages.shared.navigation import start_page
from pages.shared.widgets import scenario_sidebar

scenario = start_page()

scenario_sidebar(scenario)

st.title("Private multi-site analysis with correlated noise")
st.markdown(
    """
Hospitals, imaging consortia and labs each hold a few hundred sensitive samples and may not pool
them. If every site adds its own differential-privacy noise, the aggregate carries **S times** the noise
that pooled data would need. **CAPE** (correlation-assisted private estimation) fixes this: a trusted
helper hands the sites noise terms *e* that cancel in the aggregate, the aggregator adds *f* terms it
later subtracts, and each site adds a small term *g* of its own. Each release is noisy enough on its own,
yet the aggregate carries only the pooled-data noise. On top of it sit **capePCA** (private PCA) and
**capeAGN** (private tensor decomposition for mixtures of Gaussians and topic models).
"""
)

left, right = st.columns([3, 2], gap="large")
with left:
    st.graphviz_chart(
        """
digraph cape {
  rankdir=TB; bgcolor="transparent"; node [shape=box, style="rounded,filled", fontname="Helvetica"];
  helper [label="noise helper\\n(trusted)\\ne_1 + ... + e_S = 0", fillcolor="#fde2c4"];
  s1 [label="site 1\\nadds g_1", fillcolor="#d7e9f7"]; s2 [label="site 2\\nadds g_2", fillcolor="#d7e9f7"];
  s3 [label="site S\\nadds g_S", fillcolor="#d7e9f7"];
  {rank=same; s1; s2; s3;}
  agg [label="aggregator\\nsum mu_s (a_s - f_s)\\n= pooled noise level", fillcolor="#dff3dc"];
  helper -> s1 [label="e_1"]; helper -> s2 [label="e_2"]; helper -> s3 [label="e_S"];
  agg -> s1 [label="f_1", style=dashed]; agg -> s2 [label="f_2", style=dashed]; agg -> s3 [label="f_S", style=dashed];
  s1 -> agg [label="a_1+e_1+f_1+g_1"]; s2 -> agg [label="a_2+e_2+f_2+g_2"]; s3 -> agg [label="a_S+e_S+f_S+g_S"];
}
""",
        width="stretch",
    )
with right:
    design = design_equal(1.0, scenario.n_sites)
    st.markdown("**Equal sites, one number each** (Algorithm 1 of the journal paper)")
    st.latex(r"\tau_e^2=\tau_f^2=\left(1-\tfrac1S\right)\tau_s^2,\qquad \tau_g^2=\tfrac{\tau_s^2}{S}")
    st.latex(r"\operatorname{var}\Big(\tfrac1S\sum_s(\hat a_s-f_s)\Big)=\tfrac{\tau_s^2}{S^2}=\tau_{\text{pooled}}^2")
    st.metric(f"Noise reduction over independent noise, S = {scenario.n_sites}", f"{design.gain:.1f}x",
              help="G = conventional aggregator variance / CAPE aggregator variance; S for equal sites.")
    st.caption(
        "The papers prove each release private on its own. What an aggregator who sees every release, "
        "or sites that collude, can learn is shown by this tool's privacy audit."
    )

st.subheader("Pages")
for page in PAGES[1:]:
    st.page_link(page.path, label=f"**{page.title}**: {page.summary}", icon=page.icon)

st.subheader("Try this")
st.markdown(
    f"""
The scenario every page uses right now has **{scenario.n_sites} sites** and **N = {scenario.total_n:,}** samples
({scenario.calibration} calibration). A short tour:

1. **Sites and budgets**: load the preset *equal*, then give one site ε = 0.1: the *one strict site* case.
2. **Noise design**: switch to the *published closed form*. On equal sites it is infeasible; the page says which
   constraint fails and from which τ_c on it would work. The general solver always finds a design.
3. **Noise design**, audit: move the collusion slider and switch the calibration to *analytic* on the Sites page
   to see which views keep their promise.
4. **Gain G(n)**: slide the imbalance to 1 and compare Proposition 1 with the DP-safe gains.
5. **Protocol walk-through**: follow one round of capePCA message by message, and see why non-symmetric noise
   would leak.

Every change to the scenario is also written into the address bar: copy it to share the exact scenario.
"""
)
