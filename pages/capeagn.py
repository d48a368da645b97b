"""capeAGN: distributed private orthogonal tensor decomposition (MOG / single topic model) and baselines. Opens on the
setting of dpcore.agn.story.OPENING (CAPE wins clearly); one click shows where it stops helping and why."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from dpcore.agn import (
    ALGORITHMS,
    DEFAULT_SIGMA2,
    OTD_PRESETS,
    OtdComparison,
    OtdSettings,
    SyntheticSpec,
    match_components,
)
from dpcore.agn.contract import OtdRunUpload, run_data
from dpcore.agn.contract import compare as compare_family
from dpcore.agn.guarantees import comparison_guarantees
from dpcore.agn.story import OPENING, data_words, opening_closure, run_breakdown, setting_sentence, story_sentence
from dpcore.cape import default_collusion
from dpcore.data import parse_numeric_csv, parse_uploaded_documents, parse_vocabulary, top_words
from dpcore.limits import DEFAULT_MEMORY_BUDGET, MAX_SEED, MAX_SITES
from dpcore.notation import symbolic
from dpcore.privacy import CALIBRATIONS, NEIGHBOURING
from dpcore.reports import otd_report
from dpcore.scenario import Scenario, equal_sites_scenario
from dpcore.scenario.settings_link import Setting
from dpcore.tensor import DEFAULT_ITERATIONS, DEFAULT_RESTARTS, ESTIMATORS, M3_NOISE, PATHS, choose_path
from dpcore.textio import values_text
from dpcore.validation import InputError, check_positive_int, check_rank
from dpcore.workers import warm_up
from pages.shared.chart_code import preload_results_code
from pages.shared.guarantees import robust_controls, show_guarantees
from pages.shared.lecture import follow_scenario, lecture_sidebar
from pages.shared.navigation import start_page
from pages.shared.rings import add_bits_column, ring_caption
from pages.shared.run_section import result_footer, results_fragment, run_into
from pages.shared.story import breakdown_section, computed_once, glossary_link, server_store, story_buttons
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

RESULT_KEY, BREAKDOWN_KEY, STORY_KEY = "capeagn_result", "capeagn_cases", "capeagn_story"
BREAKDOWN_RUNS = 4
TITLES = {name: entry.title for name, entry in ALGORITHMS.items()}
COLOURS = {name: entry.colour for name, entry in ALGORITHMS.items()}
MODEL_NAMES = {"stm": "single topic model (documents)", "mog": "mixture of spherical Gaussians"}
MAX_HEATMAP_COLUMNS = 60
ROBUST_HELP = ("The plain design keeps every site's promise for each release on its own; the aggregator sees every "
               "release of both stages and may learn more. The collusion-robust design keeps σ_eff ≥ τ_s in every view "
               "of the aggregator with up to c colluding sites, both stages composed, at the price of some gain "
               "(S - c instead of S for equal sites).")
OPENING_PRESET = next((name for name, size in OTD_PRESETS.items() if size == (OPENING.spec.dim, OPENING.spec.k)),
                      "custom")
SOURCES = ("Synthetic model", "Upload")
# The page's widgets, one table: each widget is drawn with its range and choices from here, and its link (?settings=)
# is checked against the same; the defaults are the opening setting.
AGN = {
    "capeagn_source": Setting(default=SOURCES[0], label="Data source", choices=SOURCES),
    "capeagn_model": Setting(default=OPENING.spec.kind, label="Model", choices=tuple(MODEL_NAMES)),
    "capeagn_preset": Setting(default=OPENING_PRESET, label="Size", choices=(*OTD_PRESETS, "custom")),
    "capeagn_doclen": Setting(default=OPENING.spec.doc_length, label="Words per document L", low=3, high=1000),
    "capeagn_override": Setting(default=True, label="The lecture setting"),
    "capeagn_sites": Setting(default=OPENING.sites, label="Sites S", low=1, high=MAX_SITES),
    "capeagn_ns": Setting(default=OPENING.site_size, label="Samples per site N_s", low=1, high=1_000_000),
    "capeagn_eps": Setting(default=float(OPENING.eps), label="ε (total)", low=0.0, high=1000.0),
    "capeagn_delta": Setting(default=float(OPENING.delta), label="δ (total)", low=0.0, high=0.5),
    "capeagn_calibration": Setting(default=OPENING.calibration, label="Calibration", choices=tuple(CALIBRATIONS)),
    "capeagn_relation": Setting(default="replace-one", label="Neighbouring relation", choices=tuple(NEIGHBOURING)),
    "capeagn_algorithms": Setting(default=list(OPENING.algorithms), label="Algorithms", choices=tuple(ALGORITHMS)),
    "capeagn_runs": Setting(default=OPENING.runs, label="Runs", low=1, high=200),
    "capeagn_robust": Setting(default=False, label="The collusion-robust design"),
}
OPENING_WIDGETS = {key: setting.default for key, setting in AGN.items()}


def _opening() -> None:
    """Button callback: the opening setting's widgets (runs before the widgets are drawn)."""
    st.session_state.update(OPENING_WIDGETS)
    st.session_state[STORY_KEY] = "opening"
    st.session_state.pop(BREAKDOWN_KEY, None)


def _breakdown() -> None:
    st.session_state[STORY_KEY] = "breakdown"


def cached_breakdown(seed: int, progress) -> tuple:
    """The breakdown of ``seed``, computed once per server (the same for every visitor), the two latest kept."""
    return computed_once(server_store("capeagn breakdowns"), seed,
                         lambda: run_breakdown(OPENING, seed=seed, runs=BREAKDOWN_RUNS, progress=progress))


follow_scenario("capeagn", "capeagn_override", False, scenario)
restore_widgets(AGN)
st.session_state.setdefault(STORY_KEY, "opening")
in_breakdown = st.session_state[STORY_KEY] == "breakdown"
scenario_sidebar(scenario)

st.title("capeAGN: private tensor decomposition across sites")
intro = st.empty()  # what the page will run, computed once its inputs are read (below)
story_buttons(in_breakdown, key="capeagn", on_breakdown=_breakdown, on_opening=_opening,
              breakdown_help="Run the opening setting with too few samples per site, too small ε, one dominant site "
              "and collusion, and say why the curves meet.")
with st.expander("What capeAGN does"):
    st.markdown(
        "Topic models and Gaussian mixtures can be learned from the second and third moments of the data by an "
        "**orthogonal tensor decomposition**. **capeAGN** does it across sites with differential privacy: the sites "
        "release noisy second moments with CAPE's correlated noise, the aggregator whitens, the sites release "
        "projected noisy third moments, and the aggregator runs the tensor power method. With CAPE the aggregate "
        "carries only the noise that pooled data would need. Compare it with the **conventional scheme** (**conv**, "
        "every site adds its full noise), one site alone (**local**), the pooled algorithms and the non-private "
        "result. **q_comp** is the mean distance of each recovered component to its matched true one.")
    glossary_link()
with st.expander("The algorithm (Algorithm 3 of the journal paper)"):
    st.latex(r"\hat M_2=\sum_s\mu_s(\hat M_2^s-F_2^s),\quad \hat M_2^s=M_2^s+E_2^s+F_2^s+G_2^s,\quad "
             r"W=U_K D_K^{-1/2}")
    st.latex(r"\tilde M_3=\sum_s\mu_s\big(\tilde M_3^s-F_3^s(W,W,W)\big),\quad "
             r"\tilde M_3^s=(M_3^s+E_3^s+F_3^s+G_3^s)(W,W,W)")
    st.latex(r"\hat a_k=\lambda_k\,U_K D_K^{1/2}u_k,\qquad \hat w_k=\lambda_k^{-2},\qquad "
             r"q_{\mathrm{comp}}=\frac1K\sum_k\min_{k'}\lVert\hat a_k-a_{k'}\rVert_2")
    st.markdown(
        "The budget is split between the two stages (share *a* for the whitening stage). Every noise term is "
        "symmetric, the helper's terms E cancel in the weighted sum and the aggregator removes its own F. For "
        "large D the sites compute M3(W, W, W) directly from their samples and add noise sampled already "
        "projected, so no D x D x D array exists (the *projected* path). Whitening fails when one of the top-K "
        "eigenvalues of the noisy second moment is not positive; the page then says so for that run."
    )

# ----------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------

st.subheader("Data")
source = st.radio("Data source", widget_options(AGN, "capeagn_source"), horizontal=True, key="capeagn_source",
                  help="A synthetic mixture with known components (q_comp against the truth), or your own data "
                  "(q_comp against the non-private result).")
model = st.selectbox("Model", widget_options(AGN, "capeagn_model"), format_func=MODEL_NAMES.get, key="capeagn_model",
                     help="stm: documents whose words are drawn from one topic each; mog: samples a_h + noise.")
input_problems: list[InputError] = []
upload_spec: dict = {}
spec: SyntheticSpec | None = None

if source == "Synthetic model":
    c1, c2, c3 = st.columns(3)
    preset = c1.selectbox("Size", widget_options(AGN, "capeagn_preset"), key="capeagn_preset",
                          help="The paper's experiment sizes (D, K), or your own.")
    d_default, k_default = OTD_PRESETS.get(preset, (20, 4))
    dim = c2.number_input("Dimension D", 2, 20_000, d_default, key=f"capeagn_d_{preset}",
                          disabled=preset != "custom", help="Features (MOG) or vocabulary size (STM).")
    k = c3.number_input("Components K", 1, 200, k_default, key=f"capeagn_k_{preset}",
                        disabled=preset != "custom", help="Number of mixture components / topics, K <= D.")
    c1, c2, c3 = st.columns(3)
    if model == "mog":
        sigma2 = c1.number_input("Component variance σ²", 0.0, 10.0, DEFAULT_SIGMA2, step=0.01, format="%.3f",
                                 key="capeagn_sigma2", help="Spherical covariance σ² I of each component "
                                 "(0.05 in the paper). Samples are divided by the public bound "
                                 "√(1 + D σ²) + 4 σ.")
        doc_length, estimator = 3, "first"
    else:
        sigma2 = DEFAULT_SIGMA2
        doc_length = c1.number_input("Words per document L", **widget_range(AGN, "capeagn_doclen"),
                                     key="capeagn_doclen",
                                     help="Each synthetic document has L >= 3 words from its topic.")
        estimator = c2.selectbox("Moment estimator", list(ESTIMATORS), key="capeagn_estimator",
                                 help="; ".join(f"{k_}: {v}" for k_, v in ESTIMATORS.items()))
    try:
        check_rank(int(k), int(dim))
        spec = SyntheticSpec(kind=model, dim=int(dim), k=int(k), sigma2=float(sigma2), doc_length=int(doc_length),
                             estimator=estimator)
    except InputError as exc:
        input_problems.append(exc)
        show_error(exc)
else:
    c1, c2 = st.columns(2)
    if model == "stm":
        upload = c1.file_uploader("Documents", type=["txt", "csv"], key="capeagn_upload_stm",
                                  help="Plain text, one document per line; or a .csv document-term count table "
                                  "(rows = documents, columns = words). Nothing uploaded is executed.")
        vocab_file = c2.file_uploader("Vocabulary (optional)", type=["txt", "csv"], key="capeagn_vocab",
                                      help="A public word list (one per line). Without it the vocabulary is the D "
                                      "most frequent words of the upload, which is not private.")
        vocab_size = c1.number_input("Vocabulary size D", 2, 20_000, 500, key="capeagn_vocab_size",
                                     help="Keep the D most frequent words (ignored when a vocabulary is given).")
        upload_spec = {"upload": upload, "vocab": vocab_file, "vocab_size": int(vocab_size)}
    else:
        upload = c1.file_uploader("Samples (numeric CSV)", type=["csv", "txt", "tsv"], key="capeagn_upload_mog",
                                  help="One sample per row, numbers only (a header row is detected).")
        estimate = c2.checkbox("Estimate σ² from the data", True, key="capeagn_estimate_sigma",
                               help="Smallest eigenvalue of the sample covariance (Hsu & Kakade); not private.")
        sigma2_in = c2.number_input("σ²", 0.0, 1e6, DEFAULT_SIGMA2, key="capeagn_upload_sigma2",
                                    disabled=estimate, help="Component variance in the data's units.")
        bound = c2.number_input("Public norm bound (0 = largest sample norm)", 0.0, 1e9, 0.0, key="capeagn_bound",
                                help="Samples are divided by this bound (longer ones clipped). 0 uses the data's "
                                "largest norm, as the paper does, which is not private.")
        upload_spec = {"upload": upload, "sigma2": None if estimate else float(sigma2_in),
                       "bound": None if bound == 0 else float(bound)}
    k = st.number_input("Components K", 1, 200, 3, key="capeagn_upload_k", help="Topics / components to recover.")

# ----------------------------------------------------------------------------------------------
# Sites and budgets
# ----------------------------------------------------------------------------------------------

st.subheader("Sites and privacy budgets")
override = st.toggle("The lecture setting: equal sites set on this page (instead of your scenario)",
                     key="capeagn_override",
                     help="Off: your scenario, shared by all pages (its sizes, budgets, weights). On: S equal sites.")
run_scenario: Scenario | None = scenario
if override:
    c1, c2, c3, c4 = st.columns(4)
    n_sites = c1.number_input("Sites S", **widget_range(AGN, "capeagn_sites"), key="capeagn_sites",
                              help="Number of sites (5 in the paper).")
    n_per = c2.number_input("Samples per site N_s", **widget_range(AGN, "capeagn_ns"), key="capeagn_ns",
                            help="Documents or samples per site (for uploads: only the proportions matter).")
    eps = c3.number_input("ε (total)", **widget_range(AGN, "capeagn_eps"), key="capeagn_eps",
                          help="Total ε per site, split between the two stages.")
    delta = c4.number_input("δ (total)", **widget_range(AGN, "capeagn_delta"), format="%.2e", key="capeagn_delta",
                            help="Total δ per site (0.01 in the paper; should be well below 1/N_s).")
    c1, c2 = st.columns(2)
    calibration = c1.selectbox("Calibration", widget_options(AGN, "capeagn_calibration"), key="capeagn_calibration",
                               help="classic: the paper's σ (a guarantee only for ε < 1); analytic: exact.")
    neighbouring = c2.selectbox("Neighbouring relation", widget_options(AGN, "capeagn_relation"),
                                key="capeagn_relation",
                                help="replace-one (safe default) or the papers' constants.")
    try:
        run_scenario = equal_sites_scenario(int(n_sites), int(n_per), float(eps), float(delta),
                                            calibration=calibration, neighbouring=neighbouring, seed=scenario.seed,
                                            name_prefix="site ")
    except InputError as exc:
        run_scenario = None
        input_problems.append(exc)
        show_error(exc)
else:
    st.caption(
        f"Shared scenario: {scenario.n_sites} sites, N_s = {values_text(scenario.sizes)}, "
        f"ε = {values_text(scenario.eps, 'g')}, δ = {values_text(scenario.delta, 'g')}; "
        f"{scenario.calibration} calibration, {scenario.neighbouring} neighbours. Change it on the scenario page."
    )

if run_scenario is not None:
    upload_name = upload_spec["upload"].name if source != "Synthetic model" and upload_spec.get("upload") else None
    intro.markdown(symbolic(setting_sentence(data_words(spec if source == "Synthetic model" else None, upload_name),
                                             run_scenario)))
lecture_sidebar("capeagn", "capeagn_override", True, False, run_scenario if override else None,
                "samples" if source != "Synthetic model" or spec is None else data_words(spec))

# ----------------------------------------------------------------------------------------------
# Algorithms and settings
# ----------------------------------------------------------------------------------------------

st.subheader("Algorithms")
algorithms = st.multiselect("Algorithms", widget_options(AGN, "capeagn_algorithms"), format_func=TITLES.get,
                            key="capeagn_algorithms",
                            help=symbolic("; ".join(f"{e.title}: {e.description}" for e in ALGORITHMS.values())))
c1, c2, c3, c4 = st.columns(4)
runs = c1.number_input("Runs", **widget_range(AGN, "capeagn_runs"), key="capeagn_runs",
                       help="Independent runs (10 in the paper).")
seed = c2.number_input("Seed", 0, MAX_SEED, int(scenario.seed), key="capeagn_seed",
                       help="Reproduces the model, the data and every noise draw.")
split = c3.slider("Share of the budget for whitening (a)", 0.05, 0.95, 0.5, 0.05, key="capeagn_split",
                  help="ε₁ = a ε, δ₁ = a δ for M2; the rest for M3 (the paper splits equally).")
path = c4.selectbox("Third-moment path", PATHS, key="capeagn_path",
                    help="dense: D x D x D tensors; projected: M3(W, W, W) from the samples, no D^3 array; auto: "
                    "dense when it fits the memory budget.")
with st.expander("Advanced"):
    c1, c2, c3, c4 = st.columns(4)
    restarts = c1.number_input("Power-method restarts L", 1, 200, DEFAULT_RESTARTS, key="capeagn_restarts",
                               help="Random starts per component (robust tensor power method).")
    iterations = c2.number_input("Power iterations N", 1, 500, DEFAULT_ITERATIONS, key="capeagn_iterations",
                                 help="Iterations per start (and after choosing the best start).")
    budget_mib = c3.number_input("Memory budget (MiB)", 16, 65_536, DEFAULT_MEMORY_BUDGET // 2**20,
                                 key="capeagn_budget", help="Decides the path in auto mode; the run refuses paths "
                                 "whose estimated arrays exceed it.")
    m3_noise = c4.selectbox("Third-moment noise law", list(M3_NOISE), key="capeagn_m3noise",
                            help=symbolic("; ".join(f"{k_}: {v}" for k_, v in M3_NOISE.items())))

n_run_sites = run_scenario.n_sites if run_scenario is not None else scenario.n_sites
collusion = robust_controls("capeagn_robust", n_run_sites, default_collusion(n_run_sites), ROBUST_HELP)
settings = OtdSettings(eps_split=float(split), n_restarts=int(restarts), n_iter=int(iterations), path=path,
                       memory_budget=int(budget_mib) * 2**20, m3_noise=m3_noise, collusion=collusion)
if spec is not None and run_scenario is not None:
    try:
        choice = choose_path(path, spec.dim, spec.k, run_scenario.n_sites, settings.memory_budget)
        st.caption(symbolic(f"Path: **{choice.path}** ({choice.reason})."))
    except InputError as exc:
        input_problems.append(exc)
        show_error(exc)


@st.cache_data(show_spinner=False, max_entries=8)
def _stm_corpus(content: bytes, name: str, vocab_size: int, vocab: bytes | None):
    vocabulary = parse_vocabulary(vocab) if vocab is not None else None
    return parse_uploaded_documents(content, name, vocab_size=vocab_size, vocabulary=vocabulary)


@st.cache_data(show_spinner=False, max_entries=8)
def _mog_values(content: bytes):
    return parse_numeric_csv(content).values


def _upload() -> OtdRunUpload:
    """The uploaded data (parsed once per file, cached)."""
    upload = upload_spec.get("upload")
    if upload is None:
        raise InputError("upload a file first", "file")
    if model == "stm":
        vocab = upload_spec["vocab"].getvalue() if upload_spec.get("vocab") is not None else None
        return OtdRunUpload(values=_stm_corpus(upload.getvalue(), upload.name, upload_spec["vocab_size"], vocab))
    return OtdRunUpload(values=_mog_values(upload.getvalue()), sigma2=upload_spec["sigma2"],
                        norm_bound=upload_spec["bound"])


def _compute(progress) -> OtdComparison:
    """The Run: capeAGN's comparison under the family contract (dpcore.agn.contract.compare, the family's
    ``Family.compare``) on the synthetic model or on the uploaded data; the page draws its own result (``detail``)."""
    check_positive_int(int(runs), "runs")
    data = (run_data(settings, spec) if source == "Synthetic model"
            else run_data(settings, upload=_upload(), k=int(k)))
    return compare_family(run_scenario, data, algorithms, runs=int(runs), seed=int(seed),
                          collusion=settings.collusion, progress=progress).detail


def _run_section() -> None:
    """The Run button, the breakdown and the results: one fragment, so a Run re-renders this section only."""
    if st.button("Run", type="primary", key="capeagn_run", disabled=bool(input_problems),
                 help="Run every chosen algorithm the chosen number of times.") and run_into(RESULT_KEY, _compute):
        st.session_state["capeagn_report_data"] = (
            spec if source == "Synthetic model" else None,
            "synthetic model" if source == "Synthetic model" else f"uploaded {upload_spec['upload'].name}")
    if in_breakdown:
        breakdown_section(BREAKDOWN_KEY, lambda progress: cached_breakdown(int(seed), progress), TITLES, COLOURS,
                          "q_comp (0 = perfect)", key="capeagn_breakdown_chart", runs=BREAKDOWN_RUNS)
    _results()


# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------


def _summary_table(result: OtdComparison) -> pd.DataFrame:
    rows = []
    for alg in result.algorithms:
        q, w = result.summary(alg, "q_comp"), result.summary(alg, "weight_error")
        rows.append({"algorithm": TITLES[alg], "q_comp": q.mean, "q_comp std": q.std, "weight error": w.mean,
                     "weight error std": w.std, "runs": q.runs, "failed (whitening)": q.failed})
    add_bits_column(rows, result.algorithms, result.bits_per_value())
    return pd.DataFrame(rows)


def _qcomp_chart(result: OtdComparison) -> go.Figure:
    fig = go.Figure()
    names = [TITLES[a] for a in result.algorithms]
    means = [result.summary(a).mean for a in result.algorithms]
    stds = [result.summary(a).std for a in result.algorithms]
    fig.add_bar(x=names, y=means, error_y={"type": "data", "array": stds}, name="mean ± std",
                marker_color=[COLOURS[a] for a in result.algorithms])
    for alg in result.algorithms:
        vals = [r.q_comp for r in result.records if r.algorithm == alg and r.error is None]
        fig.add_scatter(x=[TITLES[alg]] * len(vals), y=vals, mode="markers", showlegend=False,
                        marker={"color": "#222", "size": 5, "opacity": 0.6}, name=TITLES[alg])
    label = "q_comp" if result.reference == "truth" else "distance to non-private"
    fig.update_layout(yaxis_title=label, showlegend=False)
    return fig


def _columns_to_show(reference: np.ndarray) -> np.ndarray:
    dim = reference.shape[1]
    if dim <= MAX_HEATMAP_COLUMNS:
        return np.arange(dim)
    return np.sort(np.argsort(-np.abs(reference).max(axis=0), kind="stable")[:MAX_HEATMAP_COLUMNS])


def _components_figure(result: OtdComparison, alg: str, cols: np.ndarray, labels: list[str]) -> go.Figure:
    dec = result.examples[alg]
    ref = result.reference_components
    idx, _ = match_components(dec.components, ref)
    order = np.argsort(idx, kind="stable")
    ref_name = "true" if result.reference == "truth" else "non-private"
    fig = make_subplots(rows=2, cols=1, subplot_titles=(f"{ref_name} components", f"{TITLES[alg]} (matched order)"),
                        vertical_spacing=0.18)
    zmax = float(max(np.abs(ref[:, cols]).max(), 1e-12))
    for row, (mat, ylab) in enumerate(((ref[:, cols], [f"{ref_name} {i + 1}" for i in range(ref.shape[0])]),
                                       (dec.components[order][:, cols],
                                        [f"recovered {o + 1} ~ {ref_name} {idx[o] + 1}" for o in order])), start=1):
        fig.add_heatmap(z=mat, x=labels, y=ylab, coloraxis="coloraxis", row=row, col=1)
    colorscale = "Blues" if result.problem.kind == "stm" else "RdBu"
    fig.update_layout(coloraxis={"colorscale": colorscale, "cmin": 0 if result.problem.kind == "stm" else -zmax,
                                 "cmax": zmax, "colorbar": {"title": {"text": "probability" if result.problem.kind ==
                                                                      "stm" else "value"}, "thickness": 12}})
    fig.update_yaxes(autorange="reversed")
    return fig


def _weights_figure(result: OtdComparison, alg: str) -> go.Figure:
    dec = result.examples[alg]
    idx, _ = match_components(dec.components, result.reference_components)
    ref_name = "true" if result.reference == "truth" else "non-private"
    names = [f"recovered {i + 1} ~ {ref_name} {j + 1}" for i, j in enumerate(idx)]
    fig = go.Figure()
    fig.add_bar(x=names, y=dec.weights, name=f"{TITLES[alg]} ŵ")
    fig.add_bar(x=names, y=result.reference_weights[idx], name="true w" if result.reference == "truth"
                else "non-private w")
    fig.update_layout(barmode="group", yaxis_title="weight")
    return fig


def _components(result: OtdComparison) -> None:
    """One algorithm's recovered components and weights against the reference, and its top words (a fragment of their
    own: choosing the algorithm redraws these only)."""
    p = result.problem
    shown = [a for a in result.algorithms if a in result.examples]
    if shown:
        default = shown.index("cape") if "cape" in shown else 0
        alg = st.selectbox("Show the components of", shown, index=default, format_func=TITLES.get,
                           key="capeagn_show", help="One run (the first that finished) of this algorithm.")
        cols = _columns_to_show(result.reference_components)
        vocab = p.vocabulary
        labels = [vocab[i] for i in cols] if vocab else [str(i + 1) for i in cols]
        if len(cols) < p.dim:
            st.caption(f"Showing the {len(cols)} of {p.dim} coordinates with the largest reference entries.")
        show_chart(_components_figure(result, alg, cols, labels), "Components: reference against recovered (one run)",
                   key="capeagn_components", height=540, top=30)
        show_chart(_weights_figure(result, alg), "Recovered against reference weights (matched components)",
                   key="capeagn_weights", height=320)
        if vocab:
            st.markdown(f"**Top words per topic** - {TITLES[alg]} (each matched to its nearest non-private topic) "
                        "and the non-private result")
            rec_components = result.examples[alg].components
            match, _ = match_components(rec_components, result.reference_components)
            order = np.argsort(match, kind="stable")
            rec = top_words(rec_components[order], vocab)
            ref = top_words(result.reference_components, vocab)
            table = {f"{TITLES[alg]} {o + 1} ~ {match[o] + 1}": [w for w, _ in words]
                     for o, words in zip(order, rec, strict=True)}
            table.update({f"non-private {i + 1}": [w for w, _ in words] for i, words in enumerate(ref)})
            st.dataframe(pd.DataFrame(table), width="stretch", hide_index=True)


def _results() -> None:
    result: OtdComparison | None = st.session_state.get(RESULT_KEY)
    st.subheader("Results")
    if result is None:
        st.info("Press **Run** to compare the algorithms on the setting above; a progress bar shows how far it is. "
                "Results appear here.", icon=":material/play_circle:")
        return
    p = result.problem
    sentence = story_sentence(result)
    if sentence:
        closure = opening_closure(result)
        extra = "" if closure is None else (f" Privacy costs the conventional scheme {100 * closure.cost:.0f}% of the "
                                            "way from the non-private result to random vectors.")
        st.markdown(f"**{symbolic(sentence)}**{extra}")
    st.caption(
        f"{p.kind.upper()}, D = {p.dim}, K = {p.k}, {p.n_sites} sites (N_s = {values_text(p.sizes)}), "
        f"{result.runs} run(s), seed {result.seed}, a = {result.settings.eps_split:g}; "
        f"{result.scenario.calibration} calibration, {result.scenario.neighbouring} neighbours; "
        f"path **{result.path.path}** ({result.path.reason})."
    )
    guarantees = comparison_guarantees(result)
    show_guarantees(guarantees, TITLES, robust_key="capeagn_robust")
    if result.reference == "nonprivate":
        st.info("No ground truth for uploaded data: **q_comp is replaced by the distance of each result to the "
                "non-private result** (same matching rule), and the weight error is measured against its weights.")
    for alg, message in result.failures.items():
        st.warning(symbolic(f"{TITLES[alg]}: {result.summary(alg).failed} of {result.runs} run(s) stopped at "
                            f"whitening. {message}"), icon=":material/warning:")
    st.dataframe(_summary_table(result), width="stretch", hide_index=True)
    ring_caption(result.bits_per_value(), TITLES)
    if any(result.summary(a).mean is not None for a in result.algorithms):
        show_chart(_qcomp_chart(result), "Component error per algorithm (bars: mean ± std, dots: runs)",
                   key="capeagn_qcomp")
    results_fragment(lambda: _components(result))  # choosing an algorithm redraws its components only
    report_spec, report_source = st.session_state.get("capeagn_report_data", (None, "uploaded data"))
    result_footer(guarantees, TITLES, lambda: otd_report(result, spec=report_spec, source=report_source),
                  "capeagn_result", "capeagn_report")
    with st.expander("How each algorithm makes its noise"):  # one element each: the browser lays out each one
        st.markdown("\n".join(f"- **{TITLES[alg]}**: {symbolic(ALGORITHMS[alg].description)}"  # the table's words
                               for alg in result.algorithms))  # (its privacy: the guarantee table above)
    if result.notes:
        with st.expander(f"Notes ({len(result.notes)})"):
            st.markdown("\n".join(f"- {symbolic(note)}" for note in result.notes))


results_fragment(_run_section)
