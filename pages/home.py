"""Home: what CAPE is, the live scenario's headline, one click to where CAPE wins and to where it stops helping, and
a five-minute lesson through the pages."""

import streamlit as st

from dpcore.cape.one_click import ONE_CLICKS, lesson_of, lesson_sentence
from dpcore.notation import symbolic
from pages.shared.catalog import LESSON, PAGES, page_title
from pages.shared.navigation import start_page
from pages.shared.state import cached_plan, set_scenario
from pages.shared.widgets import change_panel, headline, scenario_sidebar

scenario = start_page()


def _load(key: str) -> None:
    set_scenario(ONE_CLICKS[key].scenario())


scenario_sidebar(scenario)

st.title("Private multi-site analysis with correlated noise")
st.markdown(
    """
Hospitals, imaging consortia and labs each hold a few hundred sensitive records and may not pool them.
**Differential privacy** lets each site publish a statistic with a proven bound **(ε, δ)** on what it reveals about
any one person, at the price of added noise. If every site adds its own noise (the **conventional scheme**), the
combined result carries **S times** the noise variance that pooled data would need. **CAPE** (correlation-assisted
private estimation) removes that penalty: a trusted **helper** hands the sites noise terms *e* that cancel in the
aggregate, the **aggregator** (who combines the releases) hands out terms *f* it later subtracts, and each site adds
a small term *g* of its own. Each release is noisy enough on its own, yet the aggregate keeps only the *g* terms:
noise of standard deviation **τ_c**, the pooled-data level. On top of it sit **capePCA** (private PCA) and **capeAGN**
(private tensor decomposition). Every term is defined on the *Glossary* page.
"""
)
headline(scenario)

st.subheader("One click: where CAPE wins, and where it does not")
columns = st.columns(len(ONE_CLICKS), gap="medium")
for column, (key, lesson) in zip(columns, ONE_CLICKS.items(), strict=True):
    column.button(lesson.label, key=f"home_lesson_{key}", on_click=_load, args=(key,), width="stretch")
shown = lesson_of(scenario)  # the lesson the scenario is now: after Undo (or any edit) its sentence goes
if shown is not None:
    st.info(symbolic(lesson_sentence(shown, cached_plan(scenario), cached_plan)), icon=":material/school:")
change_panel()  # under the buttons: above them, its first appearance moved them away from the pointer

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
  agg [label="aggregator\\nΣ μ_s (a_s − f_s)\\n= pooled noise level", fillcolor="#dff3dc"];
  helper -> s1 [label="e_1"]; helper -> s2 [label="e_2"]; helper -> s3 [label="e_S"];
  agg -> s1 [label="f_1", style=dashed]; agg -> s2 [label="f_2", style=dashed]; agg -> s3 [label="f_S", style=dashed];
  s1 -> agg [label="a_1+e_1+f_1+g_1"]; s2 -> agg [label="a_2+e_2+f_2+g_2"]; s3 -> agg [label="a_S+e_S+f_S+g_S"];
}
""",
        width="stretch",
    )
with right:
    st.markdown("**Equal sites, one number each** (Algorithm 1 of the journal paper)")
    st.latex(r"\tau_e^2=\tau_f^2=\left(1-\tfrac1S\right)\tau_s^2,\qquad \tau_g^2=\tfrac{\tau_s^2}{S}")
    st.latex(r"\operatorname{var}\Big(\tfrac1S\sum_s(\hat a_s-f_s)\Big)=\tfrac{\tau_s^2}{S^2}=\tau_{\text{pooled}}^2")
    st.caption(
        "τ_s is the noise a site's release needs on its own. Against the aggregator (who knows f) a release carries "
        "e + g, against the helper (who knows e) f + g: both τ_s². The conventional average carries τ_s²/S, CAPE "
        "τ_s²/S², so for equal sites the CAPE gain is exactly S. What an aggregator who sees every release, or "
        "sites that collude, can learn is this tool's privacy audit."
    )

st.subheader("A five-minute lesson")
st.markdown(
    f"The scenario every page uses has **{scenario.n_sites} sites** and **N = {scenario.total_n:,}** samples "
    f"({scenario.calibration} calibration). Press the buttons above, or follow the pages:\n\n"
    + "\n".join(f"{i}. **{step.title}** ({', '.join(f'*{page_title(p)}*' for p in step.pages)}): {step.text}"
                 for i, step in enumerate(LESSON, 1))
    + "\n\nEvery change to the scenario is written into the address bar: copy it to share the exact scenario."
)

st.subheader("Pages")
for page in PAGES[1:]:
    st.page_link(page.path, label=f"**{page.title}**: {page.summary}", icon=page.icon)
