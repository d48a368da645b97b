"""Planner: what do we need? The samples per site, eps or number of sites at which CAPE and the conventional scheme
reach a target, on the scenario in the sidebar and the data the user brings (docs/planner.md)."""

from __future__ import annotations

import hashlib
import json

import streamlit as st

from dpcore.data import VOCABULARY_RULES, parse_vocabulary
from dpcore.experiments import FAMILIES, PLANNED
from dpcore.family import data_form
from dpcore.limits import MAX_SEED, MAX_UPLOAD_BYTES
from dpcore.notation import symbolic
from dpcore.planner import (
    DESIGNS,
    KNOBS,
    PROBABILITY,
    check_plan,
    lead_scheme,
    plan_target,
    prepare_data,
    question,
    scheme_words,
)
from dpcore.planner.answer import question_sentence
from dpcore.planner.check import CHECK_RUNS, check_points
from dpcore.planner.export import curve_figure, plan_csv, plan_html, plan_json, plan_script
from dpcore.planner.report import answer_rows, guarantee_lines, site_rows
from dpcore.planner.schemes import sentence_start
from dpcore.planner.solve import PROBABILITY_RANGE
from dpcore.planner.sources import READS, planner_sources, proxy_data, read_bundled, read_upload, source_settings
from dpcore.scenario.settings_link import Setting
from dpcore.textio import load_json
from dpcore.validation import InputError
from dpcore.workers import warm_up
from pages.shared.family_form import field_widgets
from pages.shared.navigation import start_page
from pages.shared.widgets import restore_widgets, scenario_sidebar, show_chart, show_error, widget_options, widget_range

scenario = start_page()
scenario_sidebar(scenario)
warm_up()  # the worker processes of the curve's studies start now, not at the first Plan

STORE = "plan_uploads"
# The uploaded files by source: kept in the session so that a visit to another page (Sites and budgets, to change
# N_s as the answers suggest) does not lose them (Streamlit forgets a file uploader's file when its page is left).

# The page's own widgets, one table: drawn with these ranges and choices, and the link (?settings=) checked against
# them, never clamped (the data sources of the chosen algorithm and the sites that may move are a part of these
# choices, below).
PLAN = {
    "plan_family": Setting(default="pca", label="Algorithm", choices=tuple(PLANNED)),
    "plan_source": Setting(default="synthetic", label="Data",
                           choices=tuple(dict.fromkeys(s for f in PLANNED for s in planner_sources(f)))),
    "plan_solve": Setting(default="n", label="Solve for", choices=tuple(KNOBS)),
    "plan_site": Setting(default="every site", label="Which sites move", choices=("every site", *scenario.names)),
    "plan_target": Setting(default=80.0, label="Target (% of the non-private result)", low=1.0, high=100.0),
    "plan_error": Setting(default=0.5, label="Target (at most)", low=0.001, high=10.0),
    "plan_seed": Setting(default=0, label="Seed", low=0, high=MAX_SEED),
    "plan_probability": Setting(default=PROBABILITY * 100, label="Share of fresh studies that must meet the target (%)",
                                low=PROBABILITY_RANGE[0] * 100, high=PROBABILITY_RANGE[1] * 100),
    "plan_design": Setting(default=next(iter(DESIGNS)), label="Noise design", choices=tuple(DESIGNS)),
    "plan_read": Setting(default="proxy", label="Plan on", choices=tuple(READS)),
    # every planned family's data settings, from its table entry (its data type's fields: dpcore.family.data_form)
    **{key: setting for f in PLANNED for key, setting in data_form(FAMILIES[f], f"plan_{f}_").items()},
}
restore_widgets(PLAN)


def _vocabulary(col) -> list[str] | None:
    """A public vocabulary file (one word per line), its message under it when it does not parse."""
    upload = col.file_uploader("Public vocabulary (optional; one word per line)", type=["txt", "csv"],
                               key="plan_opt_vocabulary", help="Words chosen from public information: no privacy "
                               "spent on the vocabulary.")
    if upload is None:
        return None
    try:
        return list(parse_vocabulary(upload.getvalue()))
    except InputError as exc:
        with col.container():
            show_error(exc, upload.name)
        st.stop()


OPTION_WIDGETS = {
    "sigma2": lambda col: col.number_input("σ² (empty: estimated from the data, not private)", 0.0, 1e6, None,
                                           key="plan_opt_sigma2", help="Component variance in the data's units."),
    "norm_bound": lambda col: col.number_input("Public norm bound (empty: the largest sample norm, not private)",
                                               0.0, 1e9, None, key="plan_opt_norm_bound"),
    "vocab_size": lambda col: col.number_input("Vocabulary size D (the D most frequent words)", 2, 20_000, 200,
                                               key="plan_opt_vocab_size"),
    "rule": lambda col: col.selectbox("Vocabulary", tuple(VOCABULARY_RULES), key="plan_opt_rule",
                                      format_func=VOCABULARY_RULES.get),
    "vocabulary": _vocabulary,
    "estimator": lambda col: col.selectbox("Moment estimator", (None, "first", "all"), key="plan_opt_estimator",
                                           format_func=lambda e: "auto (text: first, counts: all)" if e is None else e),
}
# The widget of each loader option a data source asks for (DataSource.options). A comment, not a string: Streamlit's
# "magic" writes a bare string of a page onto the page.


def _data_fields(family: str, fixed: set[str]) -> dict:
    """The family's data settings the source leaves free, one widget each (keys plan_<family>_<field>), from its
    table entry's data type (dpcore.family.data_form): a family added later gets its fields with no form of its
    own; the data type checks the values (its message names the field)."""
    prefix = f"plan_{family}_"
    form = {key: s for key, s in data_form(FAMILIES[family], prefix).items() if key.removeprefix(prefix) not in fixed}
    if not form:
        return {}
    with st.expander(f"Data settings ({FAMILIES[family].label})", expanded=False):
        return field_widgets(form, prefix, PLAN, columns=2)


@st.cache_resource(max_entries=8, show_spinner="Preparing the data ...")
def _data(family: str, source: str, upload_digest: str | None, options: str, k: int | None, seed: int,
          _upload: bytes | None, name: str, read: str, fields: str = "{}"):
    dataset, loader = (read_upload(family, source, _upload, name, **load_json(options, "loader options"))
                       if _upload is not None else read_bundled(family, source))
    if _upload is not None and read == "proxy":
        return proxy_data(family, source, dataset, k, seed)
    settings = source_settings(family, source, **load_json(fields, "data settings"),
                               **({} if k is None else {"k": k}))
    return prepare_data(family, settings, dataset, seed, loader)


def _progress(bar):
    """The planner's progress on ``bar``: the share of each curve's runs done, in its own words."""
    def show(share: float, words: str) -> None:
        bar.progress(min(1.0, share), text=words)
    return show


def _check_tick(bar, total: int):
    """A tick for the check that moves ``bar`` through its ``total`` fresh studies."""
    count = [0]

    def tick(label: str) -> bool:
        count[0] += 1
        bar.progress(min(1.0, count[0] / total), text=f"{label} ({count[0]} of {total} fresh studies)")
        return False
    return tick


st.title("Planner: what do we need?")
st.markdown("Pick a target, the share of fresh studies that must reach it and the one thing to solve for; the "
            "scenario in the sidebar holds the rest. The planner first says what the scenario as it stands gets, then "
            "reads off, for CAPE and for the conventional scheme, where that share of simulated studies (new data of "
            "the answer's size, new noise) reaches the target (docs/planner.md has the method and its limits).")

left, right = st.columns(2)
family = left.selectbox("Algorithm", tuple(PLANNED), key="plan_family", format_func=lambda f: FAMILIES[f].label)
hooks = FAMILIES[family].planner
sources = planner_sources(family)
if st.session_state.get("plan_source") not in sources:
    st.session_state["plan_source"] = next(iter(sources))
source = right.selectbox("Data", tuple(sources), key="plan_source", format_func=lambda s: sources[s].label)
src = sources[source]
uploaded, options, k, read = None, {}, None, "mine"
if src.upload:
    up_left, up_right = st.columns(2)
    uploaded = up_left.file_uploader("Your file", type=list(src.types), key=f"plan_upload_{source}",
                                     help=f"{src.label}; at most {MAX_UPLOAD_BYTES // 2**20} MiB. Nothing uploaded "
                                     "is executed. Kept while you visit other pages.")
    store = st.session_state.setdefault(STORE, {})
    if uploaded is not None:
        store[source] = (uploaded.name, uploaded.getvalue())
    elif source in store:
        up_left.caption(f"Using {store[source][0]}, uploaded earlier (upload another file to replace it).")
    upload_error = up_left.empty()  # a bad file's message, next to the file
    read = up_left.radio("Plan on", widget_options(PLAN, "plan_read"), key="plan_read", format_func=READS.get,
                         help="The proxy reads nothing of your data but its size and dimension; your data give the "
                         "curve of data like yours, and reading them is not differentially private.")
    options = {name: OPTION_WIDGETS[name](up_right) for name in src.options if name in OPTION_WIDGETS}
if (src.upload or src.bundled is not None) and "k" in FAMILIES[family].sweep.data.__dataclass_fields__:
    k = int(right.number_input("Components K", 1, 200, FAMILIES[family].sweep.data().k, key="plan_upload_k",
                               help="Components or topics to recover from your data."))
fields = {} if src.upload or src.bundled is not None else _data_fields(family, set(src.fields))

solve = left.radio("Solve for", tuple(KNOBS), key="plan_solve", horizontal=True,
                   format_func=lambda k: symbolic(KNOBS[k]))
site_choices = ["every site", *scenario.names] if solve != "sites" else ["every site"]
if st.session_state.get("plan_site") not in site_choices:
    st.session_state["plan_site"] = "every site"
site = right.selectbox("Which sites move", site_choices, key="plan_site")
metric = FAMILIES[family].metrics[hooks.metric]
if hooks.percent:
    target = left.number_input("Target (% of the non-private result)", **widget_range(PLAN, "plan_target"), step=1.0,
                               key="plan_target") / 100
else:
    target = left.number_input(f"Target {metric.words} (at most)", **widget_range(PLAN, "plan_error"), step=0.05,
                               key="plan_error")
seed = right.number_input("Seed", **widget_range(PLAN, "plan_seed"), key="plan_seed")
probability = left.number_input("Share of fresh studies that must meet the target (%)",
                                **widget_range(PLAN, "plan_probability"), step=5.0, key="plan_probability",
                                help="A study: new data of the answer's size from the same source, new noise. The "
                                "answer is where this share of them meets the target.") / 100
design = right.selectbox("Noise design", widget_options(PLAN, "plan_design"), key="plan_design",
                         format_func=DESIGNS.get,
                         help="Certified against the aggregator: every site's noise raised until the audit's exact eps "
                         "of everything the aggregator sees keeps every site's promise.")
stored_upload = st.session_state.get(STORE, {}).get(source) if src.upload else None
if src.upload and stored_upload is None:
    st.info("Upload a file to plan on your own data.", icon=":material/upload:")
    st.stop()
upload_name, upload_bytes = stored_upload if stored_upload is not None else ("", None)

try:
    q = question(solve, float(target), scenario, None if site == "every site" else site)
except InputError as exc:
    show_error(exc)
    st.stop()
try:
    digest = hashlib.sha256(upload_bytes).hexdigest() if upload_bytes is not None else None
    data = _data(family, source, digest, json.dumps(options, sort_keys=True), k, int(seed), upload_bytes,
                 upload_name, read, json.dumps(fields, sort_keys=True))
except InputError as exc:
    if src.upload:
        with upload_error.container():
            show_error(exc, upload_name)
    else:
        show_error(exc)
    st.stop()

st.markdown(symbolic(question_sentence(family, scenario, q, data.description, probability)))
key = (family, data.key, scenario.to_json(None), solve, site, float(target), int(seed), float(probability), design)
if st.button("Plan", type="primary", key="plan_go"):
    bar = st.progress(0.0, text="measuring the curve of simulated studies ...")
    try:
        st.session_state["plan_result"] = (key, plan_target(
            family, data, scenario, q, seed=int(seed), probability=probability, design=design,
            progress=_progress(bar),
            settings={"algorithm": family, "source": source, "upload": upload_name or None, "read": read,
                      "options": options, "k": k, "solve": solve, "site": site, "target": float(target),
                      "probability": probability, "design": design}))
        st.session_state.pop("plan_check", None)
    except InputError as exc:
        show_error(exc)
    bar.empty()
stored = st.session_state.get("plan_result")
if not stored or stored[0] != key:
    st.stop()
result = stored[1]
st.info(symbolic(result.forward_sentence), icon=":material/trending_flat:")
reachable = result.answers[lead_scheme(family)].answer is not None
(st.success if reachable else st.warning)(symbolic(result.sentence), icon=":material/flag:" if reachable else
                                          ":material/block:")
st.dataframe(answer_rows(result), hide_index=True, width="stretch")
for scheme, a in result.answers.items():
    if a.answer is None:
        st.caption(symbolic(f"Why {scheme_words(family, scheme)} cannot: {a.reason}"))
    for note in a.notes:
        st.caption(symbolic(f"{sentence_start(scheme_words(family, scheme))}: {note}"))
sites_table = site_rows(result)
if sites_table:
    st.markdown("**Each site at the answers**")
    st.dataframe(sites_table, hide_index=True, width="stretch")
st.subheader("Privacy at the answer")
st.caption(symbolic(f"Design: {DESIGNS[result.design]}; {result.scenario.calibration} calibration. The audit's "
                    "exact eps of every view (at the promised delta) against each site's promise; certified means "
                    "every site keeps it in that view."))
st.markdown("\n".join(f"- {symbolic(line)}" for line in guarantee_lines(result)))
for caveat in result.caveats():
    st.warning(symbolic(caveat), icon=":material/warning:")
for limit in result.limits:
    st.info(symbolic(limit), icon=":material/info:")
show_chart(curve_figure(result), "The measured curve (simulated studies of the scenario's N)", key="plan_curve",
           height=420)

if st.button(f"Check: {CHECK_RUNS} fresh studies of {FAMILIES[family].cape} at the answer and at 0.8x",
             key="plan_check_go"):
    bar = st.progress(0.0, text="running fresh studies ...")
    try:
        points = len(check_points(result))
        st.session_state["plan_check"] = (key, check_plan(result, tick=_check_tick(bar, points * CHECK_RUNS)))
    except InputError as exc:
        show_error(exc)
    bar.empty()
stored_check = st.session_state.get("plan_check")
check = stored_check[1] if stored_check and stored_check[0] == key else None
if check is not None:
    st.markdown(symbolic(check.sentence))
    st.dataframe([{"scheme": scheme_words(family, p.scheme), "where": p.where, "value": p.value,
                   "studies that met the target": f"{p.met_count} of {len(p.values)}", "share": f"{p.share:.0%}",
                   "95 % CI": f"{p.lo:.0%} to {p.hi:.0%}", f"against p = {result.probability:.0%}":
                   "met" if p.met else "missed"} for p in check.points], hide_index=True, width="stretch")

st.subheader("Take it with you")
a, b, c, d = st.columns(4)
stem = f"plan_{family}_{solve}"
# Each built when it is asked for, as the other pages' downloads (pages/shared/reports.py), not on every rerun.
a.download_button("Download JSON", lambda: plan_json(result, check), f"{stem}.json", "application/json",
                  key="plan_dl_json", on_click="ignore")
b.download_button("Download CSV", lambda: plan_csv(result, check), f"{stem}.csv", "text/csv", key="plan_dl_csv",
                  on_click="ignore")
c.download_button("Download HTML report", lambda: plan_html(result, check), f"{stem}.html", "text/html",
                  key="plan_dl_html", on_click="ignore")
d.download_button("Download Python script", lambda: plan_script(result, CHECK_RUNS), f"{stem}.py",
                  "text/x-python", key="plan_dl_script", on_click="ignore")
st.caption("The script repeats the check's fresh studies with dpcore from any folder and prints the same numbers"
           + (f" (it reads {upload_name} beside it, or the path you give it)." if upload_name else ".")
           + f" Data read: {result.data.description}.")
