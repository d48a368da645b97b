"""capePCA: distributed private PCA on synthetic, bundled or uploaded data, beside every baseline."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from dpcore.data import (
    BUNDLED,
    PREPROCESSING,
    SPECTRA,
    NumericTable,
    load_bundled,
    parse_label_column,
    parse_numeric_csv,
    synthetic_dataset,
    table_to_dataset,
)
from dpcore.limits import MAX_UPLOAD_BYTES, MAX_UPLOAD_CELLS
from dpcore.pca import (
    ALGORITHMS,
    METRICS,
    PcaSetup,
    align_signs,
    compare_pca,
    default_algorithms,
    prepare_pca,
    scree,
)
from dpcore.scenario import Scenario, equal_sites_scenario
from dpcore.validation import InputError
from pages.shared.navigation import start_page
from pages.shared.widgets import scenario_sidebar, show_error

shared = start_page()

RESULT_KEY = "capepca_result"
TITLES = {name: entry.title for name, entry in ALGORITHMS.items()}
DATA_CHOICES = {
    "digits": "digits (bundled, 1,797 images, D = 64)",
    "mnist": "MNIST (bundled, 5,000 images, D = 784)",
    "synthetic": "synthetic Gaussian",
    "upload": "upload a CSV file",
}
SITE_CHOICES = {"scenario": "sites and budgets of the shared scenario", "equal": "equal sites set here"}
METRIC_LABELS = {
    "captured_energy": "captured energy q_CE",
    "captured_energy_ratio": "q_CE / q_CE(non-dp pool)",
    "subspace_distance": "subspace distance",
}
DATA_FIELDS = {"file", "label_column", "data", "dataset", "header", "image_shape", "preprocessing", "scale", "D",
               "spectrum", "decay", "split", "labels"}
SITE_FIELDS = {"sites", "sizes", "design", "N", "S", "eps", "delta", "scenario"}


# ----------------------------------------------------------------------------------------------
# Cached computations (keyed on plain inputs)
# ----------------------------------------------------------------------------------------------

@st.cache_data(max_entries=4, show_spinner=False)
def parse_upload(content: bytes, header: str, label: str) -> NumericTable:
    flag = {"auto": None, "yes": True, "no": False}[header]
    return parse_numeric_csv(content, header=flag, label_column=parse_label_column(label))


@st.cache_resource(max_entries=3, show_spinner="Preparing the data and the site matrices ...")
def cached_setup(data: tuple, upload: bytes | None, scenario_json: str, k: int, preprocessing: str, scale: float,
                 by_label: bool, allow_replacement: bool, seed: int) -> PcaSetup:
    from dpcore.scenario import scenario_from_json

    scenario = scenario_from_json(scenario_json)
    kind = data[0]
    if kind == "bundled":
        dataset = load_bundled(data[1])
    elif kind == "synthetic":
        _, dim, spectrum, decay = data
        dataset = synthetic_dataset(scenario.total_n, np.random.default_rng([seed, 2]), dim=dim, spectrum=spectrum,
                                    decay=decay)
    else:
        _, header, label, name = data
        dataset = table_to_dataset(parse_upload(upload, header, label), name)
    return prepare_pca(dataset, scenario, k, preprocessing=preprocessing, scale=scale, by_label=by_label,
                       allow_replacement=allow_replacement, seed=seed)


def show_in(slot: Any, exc: Exception) -> None:
    with slot.container():
        show_error(exc)


# ----------------------------------------------------------------------------------------------
# Page
# ----------------------------------------------------------------------------------------------

scenario_sidebar(shared)

st.title("capePCA: distributed private PCA")
st.markdown(
    "Every site summarises its samples in a second-moment matrix and releases it with CAPE noise; the aggregator "
    "removes its own noise terms, the helper's terms cancel, and the top-K eigenvectors of the sum are as accurate "
    "as if one trusted party had pooled all the data. Compare that with the baselines on real or synthetic data."
)
with st.expander("The algorithms and the metrics"):
    st.latex(r"A_s=\tfrac1{N_s}X_sX_s^\top,\qquad \hat A_s=A_s+E_s+F_s+G_s,\qquad "
             r"\hat A=\sum_s\mu_s(\hat A_s-F_s)=\sum_s\mu_sA_s+\sum_s\mu_sG_s")
    st.markdown(
        "E, F and G are symmetric (unique entries drawn once and mirrored); their variances come from the "
        "generalized CAPE noise design of the scenario, with tau_s = Delta_s c(eps_s, delta_s) and Delta_s the PCA "
        "sensitivity (sqrt(2)/N_s for replace-one neighbours, 1/N_s as published)."
    )
    st.dataframe(pd.DataFrame({"algorithm": [e.title for e in ALGORITHMS.values()],
                               "what it does": [e.description for e in ALGORITHMS.values()],
                               "numbers sent": [e.communication_text for e in ALGORITHMS.values()]}),
                 hide_index=True, width="stretch")
    st.latex(r"q_{CE}=\operatorname{tr}(V^\top A V),\qquad d=\|V_KV_K^\top-VV^\top\|_2")
    st.caption("A is the pooled, non-private second-moment matrix; V_K its true top-K subspace. "
               "numpy's random generator is not cryptographically secure: this is a simulation, not a deployment.")

data_col, sites_col, run_col = st.columns(3, gap="medium")

with data_col:
    st.subheader("Data")
    choice = st.radio("Data", list(DATA_CHOICES), format_func=DATA_CHOICES.get, key="pca_data",
                      help="Bundled files are in data/ (see data/README.md for origin and licence).")
    data_key: tuple | None = None
    upload_bytes: bytes | None = None
    labels_available = choice in BUNDLED
    if choice in BUNDLED:
        data_key = ("bundled", choice)
        st.caption(BUNDLED[choice].description + ". " + BUNDLED[choice].origin + ".")
    elif choice == "synthetic":
        dim = st.number_input("D (features)", 2, 1000, 50, key="pca_dim",
                              help="Zero-mean Gaussian with a fixed covariance; the paper uses D = 200, K = 50.")
        spectrum = st.selectbox("Spectrum", SPECTRA, key="pca_spectrum",
                                help="power: lambda_d = d^-decay; exponential: lambda_d = exp(-decay (d-1)).")
        decay = st.number_input("Decay", 0.01, 10.0, 1.0, key="pca_decay", help="How fast the eigenvalues fall.")
        data_key = ("synthetic", int(dim), spectrum, float(decay))
        st.caption("As many samples as the sites need are drawn.")
    else:
        uploaded = st.file_uploader(
            "CSV file", type=["csv", "txt", "gz"], key="pca_upload",
            help=f"Numbers only, one sample per row, comma/semicolon/tab separated (gzip accepted); at most "
            f"{MAX_UPLOAD_CELLS:,} cells and {MAX_UPLOAD_BYTES // 2**20} MB. Nothing in the file is executed.")
        header = st.selectbox("First row is a header", ["auto", "yes", "no"], key="pca_header",
                              help="auto: a header if most cells of the first row are not numbers.")
        label = st.text_input("Label column (optional)", key="pca_label",
                               help="Name, or position (1 = first column, -1 = last), of a column to leave out of "
                               "the features; used for the split by label.")
        if uploaded is not None:
            upload_bytes = uploaded.getvalue()
            try:
                parsed = parse_upload(upload_bytes, header, label)
            except InputError as exc:
                show_error(exc, uploaded.name)
            else:
                data_key = ("upload", header, label, uploaded.name)
                labels_available = parsed.labels is not None
                st.caption(f"{uploaded.name}: {parsed.n_samples:,} samples x {parsed.dim} features"
                           + (f", label column {parsed.dropped_label!r} left out" if parsed.dropped_label else ""))
    preprocessing = st.radio("Preprocessing", list(PREPROCESSING), horizontal=True, key="pca_preprocess",
                             help="Both centre the samples first. " + " ".join(f"{k}: {v}." for k, v in
                                                                              PREPROCESSING.items()))
    scale = 1.0
    if preprocessing == "clip":
        scale = st.number_input("Public scale", min_value=1e-6, value=255.0 * 28 if choice == "mnist" else 1.0,
                                key="pca_scale", help="Samples are divided by this public constant, then clipped "
                                "to norm 1.")
    st.caption("Preprocessing reads the data (mean, largest norm): it is not differentially private.")
    by_label = st.toggle("Split by label (non-IID)", key="pca_by_label", disabled=not labels_available,
                         help="Sort samples by label before dealing them to sites, so each site sees few labels.")
    allow_replacement = st.toggle("Sample with replacement when the sites need more samples", value=True,
                                  key="pca_replace", help="Otherwise a run fails when the data set is too small.")
    data_msg = st.empty()

with sites_col:
    st.subheader("Sites and budgets")
    site_mode = st.radio("Sites", list(SITE_CHOICES), format_func=SITE_CHOICES.get, key="pca_site_mode",
                         help="Use the scenario shared by all pages, or equal sites with one budget.")
    page_scenario: Scenario | None = None
    sites_msg = st.empty()
    if site_mode == "scenario":
        page_scenario = shared
        st.dataframe(pd.DataFrame({"site": shared.names, "N_s": shared.sizes, "eps": shared.eps,
                                   "delta": shared.delta, "weight": shared.weights()}),
                     hide_index=True, width="stretch")
    else:
        n_sites = st.number_input("S (sites)", 1, 50, 10, key="pca_sites", help="Number of equal sites.")
        site_size = st.number_input("N_s (samples per site)", 1, 100_000, 500, key="pca_site_size",
                                    help="The paper uses 1,000 per site with S = 10.")
        eps = st.number_input("eps per site", min_value=1e-4, max_value=100.0, value=0.5, format="%g",
                              key="pca_eps", help="Privacy parameter epsilon of every site.")
        delta = st.number_input("delta per site", min_value=1e-12, max_value=0.5, value=1e-4, format="%g",
                                key="pca_delta", help="Privacy parameter delta of every site (well below 1/N_s).")
        try:
            page_scenario = equal_sites_scenario(int(n_sites), int(site_size), float(eps), float(delta),
                                                 calibration=shared.calibration, neighbouring=shared.neighbouring,
                                                 seed=shared.seed)
        except InputError as exc:
            show_in(sites_msg, exc)
    st.caption(f"{shared.calibration} calibration, {shared.neighbouring} neighbours (from the shared scenario).")

with run_col:
    st.subheader("Run")
    k = st.number_input("K (subspace dimension)", 1, 1000, 10, key="pca_k",
                        help="Number of principal components; at most D.")
    algorithms = st.multiselect("Algorithms", list(ALGORITHMS), default=list(default_algorithms()),
                                format_func=TITLES.get, key="pca_algorithms",
                                help="; ".join(f"{e.title}: {e.description}" for e in ALGORITHMS.values()))
    rank = st.number_input("DPdisPCA rank R (0 = K)", 0, 1000, 0, key="pca_rank",
                           help="Each DPdisPCA site sends its top-R partial square root; R must be >= K.")
    runs = st.number_input("Runs", 1, 100, 5, key="pca_runs", help="Independent noise draws per algorithm.")
    seed = st.number_input("Seed", 0, 2**31 - 1, int(shared.seed), key="pca_seed",
                           help="Seeds the data generation, the split and every noise draw.")
    clicked = st.button("Run", type="primary", key="pca_run", width="stretch",
                        help="Prepare the sites and run every chosen algorithm.")
    run_msg = st.empty()


def slot_for(exc: InputError) -> Any:
    if exc.field in DATA_FIELDS:
        return data_msg
    if exc.field in SITE_FIELDS:
        return sites_msg
    return run_msg


if clicked:
    st.session_state.pop(RESULT_KEY, None)
    problems = False
    if data_key is None:
        problems = True
        if choice == "upload" and upload_bytes is None:
            show_in(data_msg, InputError("upload a CSV file first", "file"))
    if page_scenario is None:
        problems = True
    if not algorithms:
        problems = True
        show_in(run_msg, InputError("choose at least one algorithm", "algorithms"))
    if not problems:
        try:
            setup = cached_setup(data_key, upload_bytes, page_scenario.to_json(None), int(k), preprocessing,
                                 float(scale), bool(by_label), bool(allow_replacement), int(seed))
            bar = run_col.progress(0.0, text="Starting")
            comparison = compare_pca(setup.problem, setup.privacy, algorithms, int(runs), int(seed),
                                     rank=int(rank) or None, keep_first_matrix=True,
                                     progress=lambda done, total, label: bar.progress(done / total, text=label))
            bar.empty()
        except InputError as exc:
            show_in(slot_for(exc), exc)
        else:
            st.session_state[RESULT_KEY] = {"setup": setup, "comparison": comparison, "rank": int(rank) or None}


# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------

result = st.session_state.get(RESULT_KEY)
if result is None:
    st.info("Choose the data, the sites and the algorithms, then press **Run**. Results of the last run stay here "
            "until the next one.", icon=":material/play_circle:")
else:
    setup: PcaSetup = result["setup"]
    comparison = result["comparison"]
    problem, scen = setup.problem, setup.privacy.scenario
    st.subheader("Results")
    st.caption(
        f"{setup.dataset.description}; S = {scen.n_sites} sites, N = {scen.total_n:,}, K = {problem.k}, "
        f"{len(next(iter(comparison.results.values())))} runs; {scen.calibration} calibration, "
        f"{scen.neighbouring} neighbours; computed in {comparison.seconds:.1f} s."
    )
    for note in setup.notes:
        if note.startswith("preprocessing"):
            st.caption(note)
        else:
            st.warning(note, icon=":material/warning:")

    by_key = {(m.algorithm, m.metric): m for m in comparison.summary}
    rows = []
    for algorithm, runs_ in comparison.results.items():
        row: dict[str, Any] = {"algorithm": TITLES[algorithm]}
        for metric in METRICS:
            m = by_key[(algorithm, metric)]
            row[METRIC_LABELS[metric]] = m.mean
            row[f"std ({metric})"] = m.std
        row["numbers sent"] = comparison.communication[algorithm]
        noise = runs_[0].noise_std
        row["noise std per entry"] = np.nan if noise is None else noise
        rows.append(row)
    table = pd.DataFrame(rows)
    number_format = {c: st.column_config.NumberColumn(format="%.4g") for c in table.columns[1:]}
    number_format["numbers sent"] = st.column_config.NumberColumn(format="localized")
    st.dataframe(table, hide_index=True, width="stretch", column_config=number_format)

    chart_col, scree_col = st.columns(2, gap="medium")
    with chart_col:
        metric = st.selectbox("Metric in the chart", list(METRICS), index=1, format_func=METRIC_LABELS.get,
                              key="pca_chart_metric", help="Bars show the mean over runs, whiskers one std.")
        names = list(comparison.results)
        fig = go.Figure(go.Bar(
            x=[TITLES[a] for a in names], y=[by_key[(a, metric)].mean for a in names],
            error_y={"type": "data", "array": [by_key[(a, metric)].std for a in names], "visible": True},
            marker_color=["#d62728" if a == "cape" else "#1f77b4" for a in names],
        ))
        fig.update_layout(yaxis_title=METRIC_LABELS[metric], margin={"l": 10, "r": 10, "t": 30, "b": 10},
                          height=380, title="Mean over runs (error bars: one std)")
        st.plotly_chart(fig, width="stretch")
    with scree_col:
        noisy_choices = [a for a in comparison.results  # algorithms that decompose a matrix (not nondp's true A)
                         if a != "nondp" and comparison.results[a][0].matrix is not None]
        if noisy_choices:
            shown = st.selectbox("Noisy matrix", noisy_choices, format_func=TITLES.get, key="pca_scree_alg",
                                 help="Eigenvalues of the matrix this algorithm decomposed (first run) against "
                                 "those of the true pooled second-moment matrix.")
            count = min(problem.dim, max(3 * problem.k, 30))
            true_values, noisy_values = scree(problem, comparison.results[shown][0].matrix, count)
            index = np.arange(1, count + 1)
            fig = go.Figure()
            fig.add_trace(go.Scatter(x=index, y=true_values, mode="lines+markers", name="true A"))
            fig.add_trace(go.Scatter(x=index, y=noisy_values, mode="lines+markers",
                                     name=f"{TITLES[shown]} (run 1)"))
            fig.add_vline(x=problem.k + 0.5, line_dash="dot", annotation_text="K")
            fig.update_layout(xaxis_title="eigenvalue index", yaxis_title="eigenvalue", height=380,
                              margin={"l": 10, "r": 10, "t": 30, "b": 10}, title="Scree plot",
                              legend={"orientation": "h", "y": -0.25})
            st.plotly_chart(fig, width="stretch")
        else:
            st.caption("Run a private algorithm to see its noisy scree plot.")

    if setup.dataset.image_shape is not None and noisy_choices:
        shown = st.session_state.get("pca_scree_alg", noisy_choices[0])
        shown = shown if shown in noisy_choices else noisy_choices[0]
        count = min(problem.k, 6)
        true_v = problem.top_vectors[:, :count]
        private_v = align_signs(true_v, comparison.results[shown][0].subspace[:, :count])
        h, w = setup.dataset.image_shape
        fig = make_subplots(rows=2, cols=count, horizontal_spacing=0.01, vertical_spacing=0.06,
                            row_titles=["true", "private"], subplot_titles=[f"#{i + 1}" for i in range(count)])
        limit = float(max(np.abs(true_v).max(), np.abs(private_v).max()))
        for i in range(count):
            for row_index, vectors in ((1, true_v), (2, private_v)):
                fig.add_trace(go.Heatmap(z=vectors[:, i].reshape(h, w), coloraxis="coloraxis"), row=row_index,
                              col=i + 1)
        fig.update_layout(coloraxis={"colorscale": "RdBu", "cmid": 0.0, "cmin": -limit, "cmax": limit,
                                     "showscale": False}, height=330, margin={"l": 10, "r": 30, "t": 40, "b": 10},
                          title=f"Top components: true vs {TITLES[shown]} (run 1, signs aligned)")
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False, autorange="reversed", scaleanchor="x")
        st.plotly_chart(fig, width="stretch")

    down_a, down_b = st.columns(2)
    down_a.download_button("Download summary (CSV)", comparison.summary_csv(), "capepca_summary.csv", "text/csv",
                           key="pca_download_summary", help="Mean and std of every metric per algorithm.",
                           width="stretch")
    down_b.download_button("Download every run (CSV)", comparison.runs_csv(), "capepca_runs.csv", "text/csv",
                           key="pca_download_runs", help="One row per algorithm and run.", width="stretch")
