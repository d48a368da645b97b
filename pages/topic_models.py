"""Topic models: private LDA by the method of moments - paper 004's four configurations, capeLDA across sites and
their baselines - on a synthetic corpus, the bundled Python documentation or uploaded text."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpcore.cape import agn_stage_plans, default_collusion
from dpcore.cape.protocol import capeagn_round, party_views
from dpcore.data import VOCABULARY_RULES, load_bundled_corpus, parse_text_corpus, parse_vocabulary, top_words
from dpcore.data.split import sizes_from_fractions
from dpcore.lda import ALGORITHMS, ALPHA_SHAPES, METRICS, LdaSettings, LdaSpec, check_synthetic_size, corpus_lda_problem
from dpcore.lda.ahead import CurvePreparation
from dpcore.lda.curves import LdaCurve, curve_preparation_key, eps_curve, prepare_curve
from dpcore.lda.guarantees import curve_guarantees
from dpcore.lda.story import (
    BREAKDOWN,
    OPENING,
    REGIME_DOCS,
    REGIME_GRID,
    REGIME_SPEC,
    TEXT_GRID,
    TopicStory,
    breakdown_sentence,
    corpus_words,
    headline_eps,
    no_headline_sentence,
    regime_sentences,
    setting_sentence,
    story_sentence,
)
from dpcore.limits import (
    MAX_LDA_ALPHA0,
    MAX_LDA_DOC_LENGTH,
    MAX_LDA_TOPICS,
    MAX_LDA_VOCABULARY,
    MAX_SITES,
    MAX_VOCABULARY,
)
from dpcore.notation import symbolic
from dpcore.privacy import CALIBRATIONS
from dpcore.reports import lda_report
from dpcore.scenario import equal_sites_scenario
from dpcore.scenario.settings_link import Setting
from dpcore.seeding import UPLOAD_SPLIT_STREAM, stream_rng
from dpcore.textio import values_text
from dpcore.validation import InputError, check_delta
from dpcore.workers import warm_up
from pages.shared.ahead import in_background
from pages.shared.chart_code import preload_results_code
from pages.shared.guarantees import robust_controls, show_guarantees
from pages.shared.lecture import follow_scenario, lecture_sidebar
from pages.shared.navigation import start_page
from pages.shared.run_section import result_footer, results_fragment, run_into, stage
from pages.shared.widgets import (
    restore_widgets,
    scenario_sidebar,
    show_chart,
    show_error,
    widget_options,
    widget_range,
)

scenario = start_page()
warm_up()  # the worker processes of this page's runs start now, not at the first click
preload_results_code()  # the browser loads the results' chart code while the page is idle

RESULT_KEY, REGIME_KEY = "tm_result", "tm_regimes"
AHEAD_KEY = "tm_prepared_ahead"  # the setting the page opened on is prepared while the visitor reads it
TITLES = {name: entry.title for name, entry in ALGORITHMS.items()}
SITE_MODES = {"lecture": "the lecture setting (equal sites set here)", "scenario": "your scenario (Sites and budgets)"}
SOURCES = ("Synthetic corpus", "Python documentation (bundled)", "Upload text")
TEXT_GRID_TEXT = ", ".join(f"{e:g}" for e in TEXT_GRID)
CONFIGURATION_CURVES = ("1", "2", "2ptr", "3", "4", "nonpriv")
ROBUST_HELP = ("The plain design keeps every site's promise for each release on its own; the aggregator sees every "
               "release of both stages and may learn more (at the opening setting ε 34.9 where 30 is promised). The "
               "collusion-robust design keeps σ_eff ≥ τ_s in every view of the aggregator with up to c colluding "
               "sites, both stages composed, at the price of some gain (S - c instead of S for equal sites).")


def _apply(story: TopicStory) -> None:
    """Put a story's settings into the widgets and ask for a run (a button callback: runs before the widgets)."""
    st.session_state.update({
        "tm_source": SOURCES[0], "tm_dim": story.spec.dim, "tm_k": story.spec.k, "tm_alpha0": story.spec.alpha0,
        "tm_shape": story.spec.alpha_shape, "tm_doclen": story.spec.doc_length, "tm_docs": story.docs_per_site,
        "tm_sites": story.sites, "tm_grid": ", ".join(f"{e:g}" for e in story.grid), "tm_delta": story.delta,
        "tm_algorithms": list(story.algorithms), "tm_runs": story.runs, "tm_story": story.name, "tm_autorun": True,
        "tm_robust": False, "tm_sites_mode": "lecture",
    })
    st.session_state.pop(REGIME_KEY, None)


if "tm_story" not in st.session_state:
    _apply(OPENING)
    st.session_state.update({"tm_autorun": False, "tm_grid_text": TEXT_GRID_TEXT})


# The page's widgets, one table: each widget is drawn with its range and choices from here, and its link (?settings=)
# is checked against the same (the opening setting's values are the defaults; a link sets only what differs).
TM = {
    "tm_source": Setting(default=SOURCES[0], label="Documents", choices=SOURCES),
    "tm_dim": Setting(default=OPENING.spec.dim, label="Vocabulary size D", low=3, high=MAX_LDA_VOCABULARY),
    "tm_k": Setting(default=OPENING.spec.k, label="Topics K", low=1, high=MAX_LDA_TOPICS),
    "tm_alpha0": Setting(default=float(OPENING.spec.alpha0), label="Dirichlet concentration α₀", low=0.01,
                         high=MAX_LDA_ALPHA0),
    "tm_shape": Setting(default=OPENING.spec.alpha_shape, label="Shape of α", choices=tuple(ALPHA_SHAPES)),
    "tm_doclen": Setting(default=OPENING.spec.doc_length, label="Words per document", low=3,
                         high=MAX_LDA_DOC_LENGTH),
    "tm_docs": Setting(default=OPENING.docs_per_site, label="Documents per site", low=3, high=200_000),
    "tm_sites": Setting(default=OPENING.sites, label="Sites S", low=1, high=MAX_SITES),
    "tm_grid": Setting(default=", ".join(f"{e:g}" for e in OPENING.grid), label="ε values", max_chars=200),
    "tm_delta": Setting(default=OPENING.delta, label="δ", low=0.0, high=0.5),
    "tm_algorithms": Setting(default=list(OPENING.algorithms), label="Algorithms", choices=tuple(ALGORITHMS)),
    "tm_runs": Setting(default=OPENING.runs, label="Runs", low=1, high=50),
    "tm_story": Setting(default=OPENING.name, label="story", choices=(OPENING.name, BREAKDOWN.name)),
    "tm_grid_text": Setting(default=TEXT_GRID_TEXT, label="ε values", max_chars=200),
    "tm_k_text": Setting(default=8, label="Topics K", low=1, high=MAX_LDA_TOPICS),
    "tm_vocab_size": Setting(default=500, label="Vocabulary size D", low=2, high=MAX_VOCABULARY),
    "tm_calibration": Setting(default="analytic", label="Calibration", choices=tuple(CALIBRATIONS)),
    "tm_seed": Setting(default=0, label="Seed", low=0, high=2**31 - 1),
    "tm_rule": Setting(default=next(iter(VOCABULARY_RULES)), label="Vocabulary", choices=tuple(VOCABULARY_RULES)),
    "tm_sites_mode": Setting(default="lecture", label="Sites", choices=tuple(SITE_MODES)),
}
follow_scenario("tm", "tm_sites_mode", "scenario", scenario)
restore_widgets(TM)
story = BREAKDOWN if st.session_state["tm_story"] == BREAKDOWN.name else OPENING

scenario_sidebar(scenario)
st.title("Topic models: private LDA across sites")
intro = st.empty()  # what the page will run, computed once its inputs are read (below)
left, right = st.columns([1, 1])
if story is OPENING:
    left.button("Show where CAPE stops helping", key="tm_breakdown", on_click=_apply, args=(BREAKDOWN,),
                help=f"Switch to {BREAKDOWN.docs_per_site} documents per site and run; the sentence under the chart "
                "says, from the runs, where the private curves are at random topics.")
else:
    left.button("Back to the opening setting", key="tm_opening", on_click=_apply, args=(OPENING,))
    st.info(symbolic(story.explanation), icon=":material/info:")
with st.expander("The method of moments, the four configurations and capeLDA"):
    st.markdown(
        "LDA's moments M2 and M3 (with the Dirichlet concentration alpha_0) are sums of the topics' outer products. "
        "The topics come back by whitening M2, decomposing the whitened M3 with the tensor power method and "
        "un-whitening. **Paper 004** puts Gaussian noise on one of four places of this data flow (configurations "
        "1-4): only configuration 1 uses global sensitivities and is differentially private; 2, 3 and 4 calibrate "
        "to the corpus's own (local) sensitivity and need conditions on its spectrum. **capeLDA** lets every site "
        "release the moments of its own documents with CAPE's correlated noise: the aggregate carries only the "
        "noise pooled data would need. The topic error is the mean L1 distance per topic after the best matching "
        "(0 = perfect, 2 = disjoint). docs/math/lda.md has the mathematics.")

# --- data ------------------------------------------------------------------------------------------------------------
st.subheader("Corpus")
problems: list[InputError] = []
source = st.radio("Documents", widget_options(TM, "tm_source"), horizontal=True, key="tm_source",
                  help="A synthetic LDA corpus (error against the true topics), or real text (error against the "
                  "non-private topics).")
spec = corpus = None
c1, c2, c3 = st.columns(3)
alpha0 = c2.number_input("Dirichlet concentration α₀", **widget_range(TM, "tm_alpha0"), step=0.5, key="tm_alpha0",
                         help="alpha_0 = sum of the Dirichlet prior's parameters; small: documents with few topics.")
try:
    if source == SOURCES[0]:
        k = c1.number_input("Topics K", **widget_range(TM, "tm_k"), key="tm_k")
        shape = c3.selectbox("Shape of α", widget_options(TM, "tm_shape"), key="tm_shape", help="; ".join(
            f"{n}: {t}" for n, t in ALPHA_SHAPES.items()))
        c1, c2, c3 = st.columns(3)
        dim = c1.number_input("Vocabulary size D", **widget_range(TM, "tm_dim"), key="tm_dim")
        doc_length = c2.number_input("Words per document", **widget_range(TM, "tm_doclen"), key="tm_doclen")
        docs = c3.number_input("Documents per site", **widget_range(TM, "tm_docs"), step=500, key="tm_docs")
        spec = LdaSpec(dim=int(dim), k=int(k), alpha0=float(alpha0), alpha_shape=shape, doc_length=int(doc_length))
    else:
        k = c1.number_input("Topics K", **widget_range(TM, "tm_k_text"), key="tm_k_text")
        if source == SOURCES[1]:
            corpus = load_bundled_corpus()
            st.caption("2,208 paragraphs and docstrings of the Python and SciPy documentation (PSF-2.0, BSD-3-Clause), "
                       "stop words removed, its public 600-word vocabulary. With this few documents privacy needs a "
                       "large eps.")
        else:
            upload = st.file_uploader("Text file, one document per line", type=["txt"], key="tm_upload")
            rule = st.radio("Vocabulary", widget_options(TM, "tm_rule"), key="tm_rule",
                            format_func=VOCABULARY_RULES.get)
            if rule == "frequent":
                st.warning("The most frequent words of your documents are **not private**: which words are frequent "
                           "is information about the documents. Use a public word list for an end-to-end guarantee.",
                           icon=":material/warning:")
            size = st.number_input("Vocabulary size D", **widget_range(TM, "tm_vocab_size"), key="tm_vocab_size",
                                   disabled=rule != "frequent")
            vocab_file = st.file_uploader("Vocabulary file (one word per line)", type=["txt"], key="tm_vocab_file",
                                          disabled=rule != "file")
            if upload is not None:
                vocabulary = parse_vocabulary(vocab_file.getvalue()) if vocab_file is not None else None
                corpus = parse_text_corpus(upload.getvalue(), rule=rule, vocab_size=int(size), vocabulary=vocabulary)
except InputError as exc:
    problems.append(exc)
    show_error(exc)

# --- sites and budgets ---------------------------------------------------------------------------------------------
st.subheader("Sites and privacy")
sites_mode = st.radio("Sites", widget_options(TM, "tm_sites_mode"), format_func=SITE_MODES.get, horizontal=True,
                      key="tm_sites_mode",
                      help="Equal sites set here, or the scenario shared by all pages (its sites, sizes, weights, "
                      "δ, calibration and neighbouring relation; every site's ε takes the values of the curve).")
own_sites = sites_mode == "scenario"
c1, c2, c3, c4 = st.columns(4)
if own_sites:
    n_sites = scenario.n_sites
    delta, calibration = float(scenario.delta.min()), scenario.calibration
    c1.caption(symbolic(f"{scenario.n_sites} sites, N_s = {values_text(scenario.sizes)}, δ = "
                        f"{values_text(scenario.delta, 'g')}, {scenario.calibration} calibration (your scenario)."))
else:
    n_sites = c1.number_input("Sites S", **widget_range(TM, "tm_sites"), key="tm_sites",
                              help="Equal sites; documents are shared out equally.")
grid_text = c2.text_input("ε values", key="tm_grid" if source == SOURCES[0] else "tm_grid_text",
                          max_chars=TM["tm_grid"].max_chars,
                          help="The ε of every site, separated by commas: one point of the curves each.")
if not own_sites:
    delta = c3.number_input("δ", **widget_range(TM, "tm_delta"), format="%.1e", key="tm_delta",
                            help="delta of every site (well below 1/N_s).")
    calibration = c4.selectbox("Calibration", widget_options(TM, "tm_calibration"), key="tm_calibration",
                               help="analytic: exact at every ε; classic: the papers' formula, a guarantee only for "
                               "ε < 1.")
collusion = robust_controls("tm_robust", int(n_sites), default_collusion(int(n_sites)), ROBUST_HELP)
lda_settings = LdaSettings(collusion=collusion)


def _run_sites(first_eps: float):
    """The sites the curve runs: the user's scenario (every site's eps set along the curve), or equal sites."""
    if own_sites:
        return scenario.with_sites(eps=first_eps)
    return equal_sites_scenario(int(n_sites), int(st.session_state.get("tm_docs", 3)), first_eps, float(delta),
                                calibration=calibration, name_prefix="site ")


if spec is not None:
    try:
        check_synthetic_size(spec, list(scenario.sizes) if own_sites else [int(st.session_state["tm_docs"])] *
                             int(n_sites))
    except InputError as exc:
        problems.append(exc)
        show_error(exc)
grid: tuple[float, ...] = ()
try:
    grid = tuple(float(v) for v in str(grid_text).replace(";", ",").split(",") if v.strip())
    if not grid or min(grid) <= 0:
        raise InputError("give the eps values as positive numbers separated by commas, e.g. 3, 10, 30, 100", "eps")
    check_delta(float(delta), "δ")
except ValueError as exc:
    problems.append(exc)
    show_error(exc if isinstance(exc, InputError) else InputError(f"ε values: {exc}", "eps"))

def _fractions(sites) -> np.ndarray:
    """Each site's share of a text corpus's documents: the scenario's N_s, or equal shares."""
    return sites.sizes / sites.total_n if own_sites else np.full(int(n_sites), 1 / int(n_sites))


try:
    shown_sites = _run_sites(grid[0] if grid else 1.0)
    if corpus is not None:  # a text is split over the sites: they hold its documents, not the synthetic N_s
        shown_sites = shown_sites.with_sizes(sizes_from_fractions(corpus.n, _fractions(shown_sites)))
except InputError:
    shown_sites = None
if shown_sites is not None and grid and (spec is not None or corpus is not None):
    words = corpus_words(spec if source == SOURCES[0] else None, None if source == SOURCES[0] else source)
    intro.markdown(symbolic(setting_sentence(words, shown_sites, grid, truth=spec is not None)))
lecture_sidebar("tm", "tm_sites_mode", "lecture", "scenario", None if own_sites else shown_sites, "documents",
                budgets=False)

st.subheader("Algorithms")
algorithms = st.multiselect("Algorithms", widget_options(TM, "tm_algorithms"), key="tm_algorithms",
                            format_func=TITLES.get,
                            help="; ".join(f"{e.title}: {e.description}" for e in ALGORITHMS.values()))
c1, c2 = st.columns(2)
runs = c1.number_input("Runs", **widget_range(TM, "tm_runs"), key="tm_runs",
                       help="Independent runs (fresh documents for synthetic data).")
seed = c2.number_input("Seed", **widget_range(TM, "tm_seed"), key="tm_seed",
                       help="Reproduces the corpus and every noise draw.")


@st.cache_resource(max_entries=2, show_spinner=False)
def _preparation(key_text: str, _key: tuple) -> CurvePreparation:
    """The runs of one synthetic setting prepared ahead (dpcore.lda.ahead), shared by the sessions (keyed by the
    setting's text: every value it depends on)."""
    return CurvePreparation(_key)


def _prepared(sites) -> CurvePreparation:
    key = curve_preparation_key(sites, grid, spec=spec, seed=int(seed), settings=lda_settings)
    return _preparation(repr(key), key)


def _compute(progress) -> LdaCurve:
    """The Run: the curve of every chosen algorithm over the ε values, on the synthetic corpus or a text's documents
    dealt to the sites (a synthetic corpus's runs prepared ahead are used: the same numbers)."""
    sites = _run_sites(grid[0])
    if spec is not None:
        return eps_curve(sites, algorithms, grid, spec=spec, runs=int(runs), seed=int(seed), settings=lda_settings,
                         progress=progress, prepared=_prepared(sites))
    if corpus is None:
        raise InputError("upload a text file first", "file")
    problem = corpus_lda_problem(corpus, int(k), float(alpha0), _fractions(sites),
                                 stream_rng(seed, UPLOAD_SPLIT_STREAM))
    return eps_curve(sites.with_sizes(problem.sizes), algorithms, grid, problem=problem, runs=int(runs),
                     seed=int(seed), settings=lda_settings, progress=progress)


def _run_section() -> None:
    """The Run button and the results: one fragment, so a Run re-renders this section only, not the page above (a
    story button reruns the page, and its Run starts here: ``tm_autorun``)."""
    clicked = st.button("Run", type="primary", key="tm_run", disabled=bool(problems))
    if (clicked or st.session_state.pop("tm_autorun", False)) and not problems and run_into(RESULT_KEY, _compute):
        st.session_state["tm_report_data"] = (spec, "synthetic corpus" if spec is not None else source)
        st.session_state.pop(REGIME_KEY, None)
    _results()

# --- results ---------------------------------------------------------------------------------------------------------


def _curve_chart(curve: LdaCurve) -> go.Figure:
    fig = go.Figure()
    for name in curve.algorithms:
        rows = curve.summary[(curve.summary["algorithm"] == name) & (curve.summary["metric"] == next(iter(METRICS)))]
        fig.add_scatter(x=rows["eps"], y=rows["mean"], error_y={"type": "data", "array": rows["se"]}, name=TITLES[name],
                        mode="lines+markers", line={"color": ALGORITHMS[name].colour,
                                                    "dash": "dot" if not ALGORITHMS[name].private else "solid"})
    fig.update_xaxes(type="log", title="ε of every site")
    fig.update_yaxes(title="topic error (0 = perfect, 2 = disjoint)", rangemode="tozero")
    return fig


def _privacy_cell(per_eps: dict[float, dict], name: str) -> str:
    """'certified in every view' at every ε of the run, or which views are not certified at which ε."""
    failing: dict[str, list[str]] = {}
    for eps, guarantees in per_eps.items():
        for g in guarantees[name]:
            if not g.certified:
                failing.setdefault(g.name, []).append(f"{eps:g}")
    if not failing:
        return "certified in every view"
    return "not certified: " + "; ".join(f"{view} at ε = {', '.join(values)}" for view, values in failing.items())


def _table(curve: LdaCurve, per_eps: dict[float, dict]) -> pd.DataFrame:
    rows = []
    for name in curve.algorithms:
        row = {"algorithm": TITLES[name], "privacy": _privacy_cell(per_eps, name)}
        for eps in curve.grid:
            r = curve.at(name, eps)
            row[f"ε = {eps:g}"] = (f"{r['mean']:.3f} ± {r['se']:.3f}" if r["runs"] > 1 else
                                   f"{r['mean']:.3f}" if r["runs"] else "unusable" if r["unusable"] else "failed")
        rows.append(row)
    return pd.DataFrame(rows)


def _headline_eps(curve: LdaCurve) -> float:
    return min(curve.grid, key=lambda e: abs(np.log(e / OPENING.eps)))


def _top_words(result: LdaCurve) -> None:
    """The top words of one algorithm's topics at one ε (a fragment of its own: a choice redraws this table only)."""
    names = [n for n in result.algorithms if (n, result.grid[-1]) in result.examples]
    c1, c2 = st.columns(2)
    shown = c1.selectbox("Top words of", names, format_func=TITLES.get, key="tm_words_of") if names else None
    eps_shown = c2.selectbox("at ε", result.grid, index=len(result.grid) - 1, key="tm_words_eps")
    example = result.examples.get((shown, eps_shown)) if shown else None
    if example is not None:
        words = top_words(example.topics, result.problem.vocabulary, 8)
        st.dataframe(pd.DataFrame({f"topic {i + 1}": [w for w, _ in ws] for i, ws in enumerate(words)}),
                     hide_index=True, width="stretch")


def _results() -> None:
    """The results of the last Run (in the Run's fragment: choosing the top words or comparing the configurations
    re-renders this section only)."""
    result: LdaCurve | None = st.session_state.get(RESULT_KEY)
    st.subheader("Results")
    if result is None:
        st.info("Press **Run** to compute the topic error of every chosen algorithm at every ε; a progress bar shows "
                "how far it is (the opening setting takes about ten seconds on a quiet machine).")
        return
    telling = headline_eps(result, OPENING.eps)  # where the chart shows what CAPE buys, from the runs
    eps0 = _headline_eps(result) if telling is None else telling
    per_eps = {eps: curve_guarantees(result, eps) for eps in result.grid}
    sentence = story_sentence(result, eps0) if telling is not None else no_headline_sentence(result)
    if sentence:
        st.markdown(f"**{symbolic(sentence)}**")
    if story is BREAKDOWN and telling is not None:  # else the sentence above says it
        at_random, _ = breakdown_sentence(result)
        if at_random:
            st.markdown(symbolic(at_random))
    p = result.problem
    st.caption(f"D = {p.dim}, K = {p.k}, α₀ = {p.alpha0:g}, {p.n_sites} sites (N_s = "
               f"{values_text(p.sizes)}), {result.runs} run(s), seed {result.seed}; error against "
               f"{'the true topics' if result.reference == 'truth' else 'the non-private topics'}; bars: ± one "
               "standard error.")
    if len(result.grid) > 1:
        st.caption(f"Guarantees at ε = {eps0:g}{', the headline value' if telling is not None else ''}; the table's "
                   f"privacy column covers every ε of the run ({', '.join(f'{e:g}' for e in result.grid)}).")
    show_guarantees(per_eps[eps0], TITLES, robust_key="tm_robust")
    show_chart(_curve_chart(result), "Topic error against ε", key="tm_chart")
    st.dataframe(_table(result, per_eps), hide_index=True, width="stretch")
    usable_lines = []
    for name in result.algorithms:
        usable = result.usable(name)
        kind = "; ".join(dict.fromkeys(g.short for g in per_eps[eps0][name] if g.short)) or _privacy_cell(per_eps,
                                                                                                            name)
        why = "; ".join(dict.fromkeys(g.why for g in per_eps[eps0][name]))  # the audit's words, view by view
        line = f"- **{TITLES[name]}** - {'usable' if usable else 'unusable'}, *{kind}*: {symbolic(why)}"
        if name in result.reasons:
            line += f"  \n  *Why {'some runs had no result' if usable else 'not'}:* {symbolic(result.reasons[name])}"
        usable_lines.append(line)
    st.markdown("**Which algorithms are usable on this corpus, and how they make their noise**\n\n"  # one element:
                + "\n".join(usable_lines))  # the browser renders and lays out each element it is sent
    if p.vocabulary:
        results_fragment(lambda: _top_words(result))  # choosing redraws the top words only
    if result.notes:
        st.caption("  \n".join(symbolic(note) for note in result.notes))  # one element for the notes
    report_spec, report_source = st.session_state.get("tm_report_data", (None, "a text corpus"))
    result_footer(per_eps[eps0], TITLES, lambda: lda_report(result, spec=report_spec, source=report_source),
                  "topic_models_result", "tm_report")

    with st.expander("How capeLDA's releases are protected: the two CAPE stages and the audit"):
        try:
            run_settings = result.settings or LdaSettings()
            plan_scenario = result.scenario.with_sites(eps=eps0)
            stage1, stage2 = agn_stage_plans(
                plan_scenario, "lda", run_settings.eps_split, dim=p.dim, alpha0=p.alpha0,
                solver="general" if run_settings.collusion is None else "collusion-robust",
                collusion=run_settings.collusion)
            round_ = capeagn_round(stage1.design, stage2.design, p.dim, p.k, projected=True)
            st.markdown(f"At ε = {eps0:g}: stage 1 releases M2 (D x D) with τ_c = {stage1.design.tau_c:.3g}, stage 2 "
                        f"the whitened M3 (K x K x K) with τ_c = {stage2.design.tau_c:.3g}; one round moves "
                        f"{round_.total_numbers:,} numbers. What each party can learn in each stage on its own (the "
                        "guarantees above compose both stages):")
            for label, plan in (("stage 1 (M2)", stage1), ("stage 2 (M3)", stage2)):
                if plan.audit is not None:
                    st.caption(label)
                    st.dataframe(pd.DataFrame([{"party": v.party, "sees": v.sees, "worst site": v.worst_site,
                                                "σ_eff / τ_s": v.sigma_ratio, "sites over budget": v.failing}
                                               for v in party_views(plan.design, plan.audit)]),
                                 hide_index=True, width="stretch")
        except InputError as exc:
            show_error(exc)

    st.subheader("Paper 004's regime comparisons (Remarks 5.1-5.3)")
    st.markdown("Configurations 1-4 against ε on this corpus (Remark 5.1), and on a corpus where all four are usable "
                f"(K = {REGIME_SPEC.k} topics over D = {REGIME_SPEC.dim} words, distinct α, {REGIME_DOCS:,} "
                f"documents of {REGIME_SPEC.doc_length} words at one curator) for Remarks 5.2 and 5.3.")

    def configurations(progress) -> tuple[LdaCurve, LdaCurve]:
        """Configurations 1-4 on this corpus (the first half of the bar), then on the regime corpus."""
        if spec is not None:
            here = eps_curve(equal_sites_scenario(int(n_sites), int(st.session_state["tm_docs"]), grid[0],
                                                  float(delta), calibration=calibration),
                             CONFIGURATION_CURVES, grid, spec=spec, runs=int(runs), seed=int(seed),
                             progress=stage(progress, 0.0, 0.5, "this corpus: "))
        else:
            here = eps_curve(equal_sites_scenario(p.n_sites, 3, grid[0], float(delta), calibration=calibration),
                             CONFIGURATION_CURVES, grid, problem=result.problem, runs=int(runs), seed=int(seed),
                             progress=stage(progress, 0.0, 0.5, "this corpus: "))
        regime = eps_curve(equal_sites_scenario(1, REGIME_DOCS, REGIME_GRID[0], 1e-6, calibration="analytic"),
                           CONFIGURATION_CURVES, REGIME_GRID, spec=REGIME_SPEC, runs=int(runs), seed=int(seed),
                           progress=stage(progress, 0.5, 0.5, "the regime corpus: "))
        return here, regime

    if st.button("Compare the configurations", key="tm_regimes_run",
                 help="Runs configurations 1-4 on this corpus and on the regime corpus; a progress bar shows how far "
                 "it is (tens of seconds on the Python documentation)."):
        run_into(REGIME_KEY, configurations, text="this corpus")
    regimes = st.session_state.get(REGIME_KEY)
    if regimes is not None:
        here, regime = regimes
        c1, c2 = st.columns(2)
        with c1:
            show_chart(_curve_chart(here), "This corpus", key="tm_regime_here", height=320)
        with c2:
            show_chart(_curve_chart(regime), "A corpus where all four are usable", key="tm_regime_other", height=320)
        sentences = regime_sentences(here)
        sentences.update({k: v for k, v in regime_sentences(regime).items() if k != "5.1"})
        for key in sorted(sentences):
            st.markdown(f"- {symbolic(sentences[key])}")


results_fragment(_run_section)
if AHEAD_KEY not in st.session_state and spec is not None and not problems and algorithms:
    # the setting the page opened on: its documents, site moments and fixed results while the visitor reads the page
    st.session_state[AHEAD_KEY] = True
    try:
        ahead_sites = _run_sites(grid[0])
        preparation = _prepared(ahead_sites)
        preparation.stop.clear()
        in_background(lambda: prepare_curve(preparation, ahead_sites, algorithms, grid, spec=spec, runs=int(runs),
                                            seed=int(seed), settings=lda_settings), "topic-models-prepare-ahead")
    except InputError:
        pass  # the Run shows what is wrong next to the input
