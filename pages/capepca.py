"""capePCA: distributed private PCA on bundled, synthetic or uploaded data, beside every baseline. Opens on the
setting of dpcore.pca.story.OPENING (CAPE wins clearly); one click shows where it stops helping and why."""

from __future__ import annotations

import time
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpcore.data import (
    BUNDLED,
    FEATURE_SCALINGS,
    PREPROCESSING,
    SPECTRA,
    load_bundled,
)
from dpcore.data.split import REPLACEMENT_CONSEQUENCE, check_supply
from dpcore.limits import MAX_SEED, MAX_UPLOAD_BYTES, MAX_UPLOAD_CELLS
from dpcore.notation import symbolic
from dpcore.pca import ALGORITHMS, METRICS, PcaSetup, compare_pca
from dpcore.pca.guarantees import privacy_guarantees
from dpcore.pca.story import OPENING, opening_closure, run_breakdown, setting_sentence, story_sentence
from dpcore.privacy import CALIBRATIONS
from dpcore.reports import pca_report
from dpcore.scenario import Scenario, equal_sites_scenario
from dpcore.scenario.settings_link import Setting
from dpcore.textio import seconds_text, size_text
from dpcore.validation import InputError
from dpcore.workers import warm_up
from pages.shared.chart_code import preload_results_code
from pages.shared.guarantees import show_guarantees
from pages.shared.lecture import follow_scenario, lecture_sidebar
from pages.shared.navigation import page_run_started, start_page
from pages.shared.pca_data import NO_LABEL, cached_setup, data_source, parse_upload, prepare_ahead, sniff_upload
from pages.shared.pca_figures import component_images, scree_figure
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
    wrap_chips,
)

scenario = start_page()
warm_up()  # the worker processes of this page's runs start now, not at the first click
preload_results_code()  # the browser loads the results' chart code while the page is idle

RESULT_KEY, BREAKDOWN_KEY, STORY_KEY = "capepca_result", "capepca_breakdown", "pca_story"
AHEAD_KEY = "capepca_prepared_ahead"  # the setting prepared before the first click (pca_data.prepare_ahead)
BREAKDOWN_RUNS = 3
TITLES = {name: entry.title for name, entry in ALGORITHMS.items()}
COLOURS = {name: entry.colour for name, entry in ALGORITHMS.items()}
DATA_CHOICES = {**{name: info.label for name, info in BUNDLED.items()}, "synthetic": "synthetic Gaussian",
                "upload": "upload a CSV file"}
SITE_CHOICES = {"equal": "the lecture setting (equal sites set here)", "scenario": "your scenario (Sites and budgets)"}
METRIC_LABELS = {name: m.label for name, m in METRICS.items()}
DATA_FIELDS = {"file", "label_column", "data", "dataset", "header", "image_shape", "preprocessing", "features",
               "scale", "D", "spectrum", "decay", "split", "labels"}
SITE_FIELDS = {"sites", "sizes", "design", "N", "S", "eps", "delta", "scenario"}
# The page's widgets, one table: each widget is drawn with its range and choices from here, and its link (?settings=)
# is checked against the same; the defaults are the opening setting.
PCA = {
    "pca_data": Setting(default=OPENING.dataset, label="Data", choices=tuple(DATA_CHOICES)),
    "pca_site_mode": Setting(default="equal", label="Sites", choices=tuple(SITE_CHOICES)),
    "pca_sites": Setting(default=OPENING.sites, label="Sites S", low=1, high=50),
    "pca_site_size": Setting(default=OPENING.site_size, label="Samples per site N_s", low=1, high=100_000),
    "pca_eps": Setting(default=float(OPENING.eps), label="ε per site", low=1e-4, high=100.0),
    "pca_delta": Setting(default=float(OPENING.delta), label="δ per site", low=1e-12, high=0.5),
    "pca_calibration": Setting(default=OPENING.calibration, label="Calibration", choices=tuple(CALIBRATIONS)),
    "pca_k": Setting(default=OPENING.k, label="K (subspace dimension)", low=1, high=1000),
    "pca_runs": Setting(default=OPENING.runs, label="Runs", low=1, high=100),
    "pca_algorithms": Setting(default=list(OPENING.algorithms), label="Algorithms", choices=tuple(ALGORITHMS)),
    "pca_preprocess": Setting(default=OPENING.preprocessing, label="Norm bound", choices=tuple(PREPROCESSING)),
    "pca_features": Setting(default="centre", label="Features", choices=tuple(FEATURE_SCALINGS)),
    "pca_replace": Setting(default=False, label="Sample with replacement"),
    "pca_by_label": Setting(default=False, label="Split by label"),
}
OPENING_WIDGETS: dict[str, Any] = {key: setting.default for key, setting in PCA.items()}


# ----------------------------------------------------------------------------------------------
# Cached computations (keyed on plain inputs)
# ----------------------------------------------------------------------------------------------

def cached_breakdown(seed: int, progress) -> tuple:
    """The breakdown of ``seed``, computed once per server (the same for every visitor), the two latest kept."""
    return computed_once(server_store("capepca breakdowns"), seed, lambda: run_breakdown(
        load_bundled(OPENING.dataset), OPENING, seed=seed, runs=BREAKDOWN_RUNS, progress=progress))


def show_in(slot: Any, exc: Exception) -> None:
    with slot.container():
        show_error(exc)


def _opening() -> None:
    """Button callback: the opening setting's widgets (runs before the widgets are drawn)."""
    st.session_state.update(OPENING_WIDGETS)
    st.session_state[STORY_KEY] = "opening"
    st.session_state.pop(BREAKDOWN_KEY, None)


def _data_changed() -> None:
    """Uploaded tables of measurements are standardised by default, pictures and synthetic data centred."""
    st.session_state["pca_features"] = "standardise" if st.session_state.get("pca_data") == "upload" else "centre"


# ----------------------------------------------------------------------------------------------
# Page
# ----------------------------------------------------------------------------------------------

follow_scenario("pca", "pca_site_mode", "scenario", scenario)
restore_widgets(PCA)
st.session_state.setdefault(STORY_KEY, "opening")
in_breakdown = st.session_state[STORY_KEY] == "breakdown"
scenario_sidebar(scenario)

st.title("capePCA: distributed private PCA")
intro = st.empty()  # what the page will run, computed once its inputs are read (below)
story_buttons(in_breakdown, key="pca", on_breakdown=lambda: st.session_state.update({STORY_KEY: "breakdown"}),
              on_opening=_opening,
              breakdown_help="Run the opening setting with too few samples per site, too small ε, one dominant site "
              "and collusion, and say why the curves meet.")
with st.expander("The algorithms and the metrics"):
    st.markdown(
        "Every site summarises its samples in a second-moment matrix and releases it with CAPE noise; the "
        "aggregator removes its own noise terms, the helper's terms cancel, and the top-K eigenvectors of the sum are "
        "as accurate as if one trusted party had pooled all the data (the **conventional scheme**, **conv**, has "
        "every site add its full noise instead).")
    st.latex(r"A_s=\tfrac1{N_s}X_sX_s^\top,\qquad \hat A_s=A_s+E_s+F_s+G_s,\qquad "
             r"\hat A=\sum_s\mu_s(\hat A_s-F_s)=\sum_s\mu_sA_s+\sum_s\mu_sG_s")
    st.markdown(
        "E, F and G are symmetric (unique entries drawn once and mirrored); their variances come from the "
        "generalized CAPE noise design of the scenario, with τ_s = Δ_s c(ε_s, δ_s) and Δ_s the PCA "
        "sensitivity (√2/N_s for replace-one neighbours, 1/N_s as published).")
    st.markdown("| algorithm | what it does | numbers sent |\n|---|---|---|\n" + "\n".join(  # text, not a grid:
        f"| {e.title} | {symbolic(e.description)} | {symbolic(e.communication_text)} |"  # light to draw
        for e in ALGORITHMS.values()))
    st.latex(r"q_{CE}=\operatorname{tr}(V^\top A V),\qquad d=\|V_KV_K^\top-VV^\top\|_2")
    st.caption("A is the pooled, non-private second-moment matrix; V_K its true top-K subspace. "
               "numpy's random generator is not cryptographically secure: this is a simulation, not a deployment.")
    glossary_link()

data_col, sites_col, run_col = st.columns(3, gap="medium")
upload_dim: int | None = None

with data_col:
    st.subheader("Data")
    choice = st.radio("Data", widget_options(PCA, "pca_data"), format_func=DATA_CHOICES.get, key="pca_data",
                      on_change=_data_changed, help="Bundled files are in data/ (see data/README.md for origin and "
                      "licence).")
    data_key: tuple | None = None
    upload_bytes: bytes | None = None
    available: int | None = None  # the samples the data set has (None: synthetic, drawn as many as needed)
    labels_available = choice in BUNDLED
    if choice in BUNDLED:
        data_key = ("bundled", choice)
        info = BUNDLED[choice]
        available = info.samples
        st.caption(f"{info.description}. {info.origin} ({info.licence}).")
    elif choice == "synthetic":
        dim = st.number_input("D (features)", 2, 1000, 50, key="pca_dim",
                              help="Zero-mean Gaussian with a fixed covariance; the paper uses D = 200, K = 50.")
        spectrum = st.selectbox("Spectrum", SPECTRA, key="pca_spectrum",
                                help="power: λ_d = d^-decay; exponential: λ_d = exp(-decay (d-1)).")
        decay = st.number_input("Decay", 0.01, 10.0, 1.0, key="pca_decay", help="How fast the eigenvalues fall.")
        data_key = ("synthetic", int(dim), spectrum, float(decay))
        st.caption("As many samples as the sites need are drawn.")
    else:
        uploaded = st.file_uploader(
            "CSV file", type=["csv", "txt", "gz"], key="pca_upload",
            help=f"Numbers only, one sample per row, comma/semicolon/tab separated (gzip accepted); at most "
            f"{MAX_UPLOAD_CELLS:,} cells and {size_text(MAX_UPLOAD_BYTES)}. Nothing in the file is executed.")
        header = st.selectbox("First row is a header", ["auto", "yes", "no"], key="pca_header",
                              help="auto: a header if the first row's cells (outside a text label column) are text.")
        if uploaded is not None:
            upload_bytes = uploaded.getvalue()
            try:
                columns = sniff_upload(upload_bytes, header)
                options = [NO_LABEL, *range(len(columns.columns))]
                label = st.selectbox(
                    "Label column (left out of the features)", options,
                    index=options.index(NO_LABEL if columns.label is None else columns.label),
                    format_func=lambda j: "none" if j == NO_LABEL else f"{j + 1}: {columns.columns[j]}",
                    key=f"pca_label_{uploaded.name}",
                    help="Detected: a column of text, or a first or last column of few distinct whole numbers. A "
                    "label is not a feature; it is used only for the split by label.")
                st.caption(f"Detected label column: {columns.columns[columns.label]!r} ({columns.reason})."
                           if columns.label is not None else f"No label column detected ({columns.reason}).")
                ids = tuple(j for j in columns.ids if j != int(label))
                keep_ids = st.checkbox(
                    "Use the identifier column(s) as features", False, key=f"pca_keep_ids_{uploaded.name}",
                    disabled=not ids, help="A record identifier (a row number, an 'id' column) says nothing about the "
                    "data, but as a feature it would have the largest spread and take the first principal "
                    "direction. Detected identifier columns are left out unless you tick this.")
                if ids and not keep_ids:
                    st.caption("Left out as record identifiers: " + "; ".join(
                        f"{columns.columns[j]!r} ({why})" for j, why in zip(columns.ids, columns.id_reasons,
                                                                             strict=True) if j in ids) + ".")
                parsed = parse_upload(upload_bytes, header, int(label), () if keep_ids else ids)
            except InputError as exc:
                show_error(exc, uploaded.name)
            else:
                data_key = ("upload", header, int(label), uploaded.name, () if keep_ids else ids)
                upload_dim = parsed.dim
                available = parsed.n_samples
                labels_available = parsed.labels is not None
                st.caption(f"{uploaded.name}: {parsed.n_samples:,} samples x {parsed.dim} features"
                           + (f", label column {parsed.dropped_label!r} left out" if parsed.dropped_label else "")
                           + (f", identifier column(s) {', '.join(map(repr, parsed.dropped_columns))} left out"
                              if parsed.dropped_columns else ""))
    features = st.radio("Features", widget_options(PCA, "pca_features"), horizontal=True, key="pca_features",
                        help=" ".join(f"{k}: {v}." for k, v in FEATURE_SCALINGS.items()))
    preprocessing = st.radio("Norm bound", widget_options(PCA, "pca_preprocess"), horizontal=True,
                             key="pca_preprocess",
                             help="The sensitivity assumes every sample has norm ≤ 1. " + " ".join(
                                 f"{k}: {v}." for k, v in PREPROCESSING.items()))
    scale = 1.0
    if preprocessing == "clip":
        scale = st.number_input("Public scale", min_value=1e-6, value=255.0 * 28 if choice == "mnist" else 1.0,
                                key="pca_scale", help="Samples are divided by this public constant, then clipped "
                                "to norm 1.")
    st.caption("Preprocessing that reads the data (mean, standard deviations, largest norm) is not differentially "
               "private.")
    by_label = st.toggle("Split by label (non-IID)", key="pca_by_label", disabled=not labels_available,
                         help="Sort samples by label before dealing them to sites, so each site sees few labels.")
    allow_replacement = st.toggle("Sample with replacement when the sites need more samples", key="pca_replace",
                                  help="Off: a run that needs more samples than the data set has stops with a "
                                  "message.")
    if allow_replacement:
        st.warning(symbolic(REPLACEMENT_CONSEQUENCE), icon=":material/warning:")
    data_msg = st.empty()

with sites_col:
    st.subheader("Sites and budgets")
    site_mode = st.radio("Sites", widget_options(PCA, "pca_site_mode"), format_func=SITE_CHOICES.get,
                         key="pca_site_mode",
                         help="Equal sites with one budget, or the scenario shared by all pages.")
    page_scenario: Scenario | None = None
    sites_msg = st.empty()
    if site_mode == "scenario":
        page_scenario = scenario
        st.dataframe(pd.DataFrame({"site": scenario.names, "N_s": scenario.sizes, "ε": scenario.eps,
                                   "δ": scenario.delta, "weight μ_s": scenario.weights()}),
                     hide_index=True, width="stretch")
        st.caption(f"{scenario.calibration} calibration, {scenario.neighbouring} neighbours (from the shared "
                   "scenario).")
    else:
        n_sites = st.number_input("Sites S", **widget_range(PCA, "pca_sites"), key="pca_sites",
                                  help="Number of equal sites.")
        site_size = st.number_input("Samples per site N_s", **widget_range(PCA, "pca_site_size"),
                                    key="pca_site_size",
                                    help="The paper uses 1,000 per site with S = 10.")
        eps = st.number_input("ε per site", **widget_range(PCA, "pca_eps"), format="%g", key="pca_eps",
                              help="Privacy parameter ε of every site.")
        delta = st.number_input("δ per site", **widget_range(PCA, "pca_delta"), format="%g", key="pca_delta",
                                help="Privacy parameter δ of every site (well below 1/N_s).")
        calibration = st.selectbox("Calibration", widget_options(PCA, "pca_calibration"), key="pca_calibration",
                                   help="analytic: exact at every ε; classic: the papers' formula, a guarantee only "
                                   "for ε < 1.")
        try:
            page_scenario = equal_sites_scenario(int(n_sites), int(site_size), float(eps), float(delta),
                                                 calibration=calibration, neighbouring=scenario.neighbouring,
                                                 seed=scenario.seed)
        except InputError as exc:
            show_in(sites_msg, exc)
        st.caption(f"{scenario.neighbouring} neighbours (from the shared scenario).")
    supply_problem = None  # checked here, before Run is enabled, not after a click
    if page_scenario is not None and available is not None:
        try:
            check_supply(page_scenario.total_n, available, bool(allow_replacement))
        except InputError as exc:
            supply_problem = exc
            show_in(sites_msg, exc)

with run_col:
    st.subheader("Run")
    k = st.number_input("K (subspace dimension)", **widget_range(PCA, "pca_k"), key="pca_k",
                        help="Number of principal components; at most D.")
    algorithms = st.multiselect("Algorithms", widget_options(PCA, "pca_algorithms"), format_func=TITLES.get,
                                key="pca_algorithms",
                                help=symbolic("; ".join(f"{e.title}: {e.description}" for e in ALGORITHMS.values())))
    wrap_chips("pca_algorithms")  # a third of 1,400 px cut off "local" and hid "non-dp pool" on one line
    rank = st.number_input("DPdisPCA rank R (0 = K)", 0, 1000, 0, key="pca_rank",
                           help="Each DPdisPCA site sends its top-R partial square root; R must be ≥ K.")
    runs = st.number_input("Runs", **widget_range(PCA, "pca_runs"), key="pca_runs",
                           help="Independent noise draws per algorithm.")
    seed = st.number_input("Seed", 0, MAX_SEED, int(scenario.seed), key="pca_seed",
                           help="Seeds the data generation, the split and every noise draw.")


def _data_words(key: tuple | None) -> tuple[str, int | None]:
    """The data set in words and its D, for the introduction (from what the page will run)."""
    if key is None:
        return "the chosen data", None
    if key[0] == "bundled":
        return BUNDLED[key[1]].label.split(",")[0], BUNDLED[key[1]].dim
    if key[0] == "synthetic":
        return "synthetic Gaussian data", key[1]
    return key[3], upload_dim


words, data_dim = _data_words(data_key)
if page_scenario is not None:
    intro.markdown(symbolic(setting_sentence(words, data_dim if data_dim is not None else 0, page_scenario, int(k))
                            .replace(" (D = 0)", "")))
lecture_sidebar("pca", "pca_site_mode", "equal", "scenario", page_scenario if site_mode == "equal" else None)


def slot_for(exc: InputError, run_msg: Any) -> Any:
    """Where a Run's error is shown: next to the data, the sites or the Run button (``run_msg``)."""
    if exc.field in DATA_FIELDS:
        return data_msg
    if exc.field in SITE_FIELDS:
        return sites_msg
    return run_msg


def _setup_arguments() -> tuple:
    """What a Run prepares (pages.shared.pca_data.cached_setup): the data, sites, K, preprocessing and seed."""
    return (data_key, upload_bytes, page_scenario.to_json(None), int(k), features, preprocessing, float(scale),
            bool(by_label), bool(allow_replacement), int(seed))


def _compute(progress) -> dict[str, Any]:
    """The Run: the sites' data and noise design (prepared once per input), then every chosen algorithm."""
    prepare_start = time.perf_counter()
    progress(0, 1, "preparing the data and the site matrices")
    setup = cached_setup(*_setup_arguments())
    prepared = time.perf_counter() - prepare_start
    comparison = compare_pca(setup.problem, setup.privacy, algorithms, int(runs), int(seed), rank=int(rank) or None,
                             keep_first_matrix=True, progress=progress)
    return {"setup": setup, "comparison": comparison, "rank": int(rank) or None,
            "waited": time.perf_counter() - page_run_started(), "prepared": prepared,
            "report": {"source": data_source(data_key), "k": int(k), "features": features,
                       "preprocessing": preprocessing, "scale": float(scale), "by_label": bool(by_label),
                       "allow_replacement": bool(allow_replacement), "seed": int(seed),
                       "algorithms": list(algorithms), "runs": int(runs), "rank": int(rank) or None}}


def _run_section() -> None:
    """The Run button (drawn at the foot of the Run column), the breakdown and the results: one fragment, so a Run
    re-renders this section only, not the page above."""
    with run_col:
        clicked = st.button("Run", type="primary", key="pca_run", width="stretch", disabled=supply_problem is not None,
                            help="Prepare the sites and run every chosen algorithm.")
        run_msg = st.empty()
    if clicked:
        st.session_state.pop(RESULT_KEY, None)
        if data_key is None and choice == "upload" and upload_bytes is None:
            show_in(data_msg, InputError("upload a CSV file first", "file"))
        if not algorithms:
            show_in(run_msg, InputError("choose at least one algorithm", "algorithms"))
        if data_key is not None and page_scenario is not None and algorithms:
            run_into(RESULT_KEY, _compute, where=run_col, show=lambda exc: show_in(slot_for(exc, run_msg), exc),
                     text="Starting")
    if in_breakdown:
        breakdown_section(BREAKDOWN_KEY, lambda progress: cached_breakdown(int(seed), progress), TITLES, COLOURS,
                          METRIC_LABELS["captured_energy"], key="pca_breakdown_chart", runs=BREAKDOWN_RUNS)
    _results()


# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------


def _results_table(comparison) -> pd.DataFrame:
    """One row per algorithm: mean ± std of every metric, the numbers sent and the noise per entry (few columns, so
    that the table fits a laptop's width), and the bits per value when an algorithm's values travelled on a ring."""
    by_key = {(m.algorithm, m.metric): m for m in comparison.summary}
    rows = []
    for algorithm, runs_ in comparison.results.items():
        row: dict[str, Any] = {"algorithm": TITLES[algorithm]}
        for metric in METRICS:
            m = by_key[(algorithm, metric)]
            row[METRIC_LABELS[metric]] = f"{m.mean:.4g} ± {m.std:.2g}"
        row["numbers sent"] = f"{comparison.communication[algorithm]:,}"
        noise = runs_[0].noise_std
        row["noise std per entry"] = "-" if noise is None else f"{noise:.3g}"
        rows.append(row)
    add_bits_column(rows, list(comparison.results), comparison.bits_per_value())
    return pd.DataFrame(rows)


def _bar_chart(comparison, metric: str) -> go.Figure:
    by_key = {(m.algorithm, m.metric): m for m in comparison.summary}
    names = list(comparison.results)
    return go.Figure(go.Bar(
        x=[TITLES[a] for a in names], y=[by_key[(a, metric)].mean for a in names],
        error_y={"type": "data", "array": [by_key[(a, metric)].std for a in names], "visible": True},
        marker_color=[COLOURS[a] for a in names])).update_layout(yaxis_title=METRIC_LABELS[metric])


def _charts(setup: PcaSetup, comparison) -> None:
    """The charts of a result and their choices (a fragment of their own: choosing a metric or a matrix redraws these
    charts only): the bars of one metric, the scree plot of one algorithm's noisy matrix and, for pictures, its top
    components against the true ones."""
    problem = setup.problem
    chart_col, scree_col = st.columns(2, gap="medium")
    with chart_col:
        metric = st.selectbox("Metric in the chart", list(METRICS), format_func=METRIC_LABELS.get,
                              key="pca_chart_metric", help="Bars show the mean over runs, whiskers one std.")
        show_chart(_bar_chart(comparison, metric), "Mean over runs (whiskers: one std)", key="pca_bars", height=360)
    noisy_choices = [a for a in comparison.results  # algorithms that decompose a matrix (not nonpriv's true A)
                     if a != "nonpriv" and comparison.results[a][0].matrix is not None]
    if not noisy_choices:
        scree_col.caption("Run a private algorithm to see its noisy scree plot.")
        return
    with scree_col:
        shown = st.selectbox("Noisy matrix", noisy_choices, format_func=TITLES.get, key="pca_scree_alg",
                             help="Eigenvalues of the matrix this algorithm decomposed (first run) against those of "
                             "the true pooled second-moment matrix.")
        fig = scree_figure(problem, comparison.results[shown][0].matrix, f"{TITLES[shown]} (run 1)")
        show_chart(fig, "Scree plot", key="pca_scree", height=360)
    if setup.dataset.image_shape is not None:
        fig = component_images(problem, comparison.results[shown][0].subspace, setup.dataset.image_shape)
        show_chart(fig, f"Top components as images: true against {TITLES[shown]} (run 1, signs aligned; the colour "
                   "scale gives each pixel's weight)", key="pca_components", height=360, top=30)


def _results() -> None:
    """The results of the last Run (a fragment: the chart's and the scree plot's choices re-render these only)."""
    result = st.session_state.get(RESULT_KEY)
    if result is None:
        st.info("Press **Run** to compare the algorithms on the setting above; a progress bar shows how far it is. "
                "Results of the last run stay here until the next one.", icon=":material/play_circle:")
        return
    setup: PcaSetup = result["setup"]
    comparison = result["comparison"]
    problem, scen = setup.problem, setup.privacy.scenario
    st.subheader("Results")
    sentence = story_sentence(comparison)
    if sentence:
        closure = opening_closure(comparison)
        extra = "" if closure is None else (f" Privacy costs the conventional scheme {100 * closure.cost:.0f}% of the "
                                            "way from the non-private result to no information.")
        st.markdown(f"**{symbolic(sentence)}**{extra}")
    runs_done = len(next(iter(comparison.results.values())))
    waited = (f"this Run took {seconds_text(result['waited'])} from the click to these results: preparing the data "
              f"and the noise design {seconds_text(result['prepared'])} (instant when they were prepared before), the "
              f"{runs_done * len(comparison.results)} runs of the algorithms {seconds_text(comparison.seconds)}"
              if "waited" in result else f"the runs of the algorithms took {seconds_text(comparison.seconds)}")
    st.caption(
        f"{setup.dataset.description}; S = {scen.n_sites} sites, N = {scen.total_n:,}, K = {problem.k}, "
        f"{runs_done} runs; {scen.calibration} calibration, {scen.neighbouring} neighbours; {waited}.")
    guarantees = privacy_guarantees(setup.privacy, comparison.results)
    show_guarantees(guarantees, TITLES)
    for note in setup.notes:
        if note.startswith("preprocessing"):
            st.caption(symbolic(note))
        else:
            st.warning(symbolic(note), icon=":material/warning:")
    st.dataframe(_results_table(comparison), hide_index=True, width="stretch")
    ring_caption(comparison.bits_per_value(), TITLES)

    results_fragment(lambda: _charts(setup, comparison))  # a chart's choice redraws the charts, not the results

    down_a, down_b = st.columns(2)
    down_a.download_button("Download summary (CSV)", comparison.summary_csv(), "capepca_summary.csv", "text/csv",
                           key="pca_download_summary", on_click="ignore", width="stretch",
                           help="Mean and std of every metric per algorithm.")
    down_b.download_button("Download every run (CSV)", comparison.runs_csv(), "capepca_runs.csv", "text/csv",
                           key="pca_download_runs", on_click="ignore", width="stretch",
                           help="One row per algorithm and run.")
    options = result["report"]
    upload_name = options["source"].get("file")
    result_footer(guarantees, TITLES, lambda: pca_report(setup, comparison, **options), "capepca_result",
                  "pca_report", argument=f"the path to {upload_name}" if upload_name else None)


results_fragment(_run_section)
if (AHEAD_KEY not in st.session_state and data_key is not None and data_key[0] != "upload"
        and page_scenario is not None and supply_problem is None):
    # the setting the page opened on is prepared while the visitor reads it (once per visit, not at every change)
    st.session_state[AHEAD_KEY] = _setup_arguments()
    prepare_ahead(*st.session_state[AHEAD_KEY])
