"""Privacy-utility: curves of utility against eps, delta, N_s, S or c (the paper's Figs. 2-5 or your scenario).

The sweep runs one run per step in a fragment that reruns itself (``run_every``), so the page stays responsive
and the Stop button is seen between runs; every run's rows are cached (st.cache_data) by the spec's JSON and the
run index, so a re-render, or running the same sweep again, is instant.
"""

from __future__ import annotations

import time
from typing import Any

import pandas as pd
import streamlit as st

from dpcore.experiments import (
    FAMILIES,
    METRICS,
    PARAMETER_LABELS,
    PARAMETERS,
    PCA_DATASETS,
    QUICK,
    LdaData,
    OtdData,
    PcaData,
    SweepResult,
    SweepSpec,
    algorithm_titles,
    cached_result,
    default_algorithms,
    default_grid,
    get_preset,
    parse_grid,
    preset_names,
    presets,
    quick_spec,
    spec_from_json,
    sweep_gains,
    sweep_result,
    sweep_runs,
)
from dpcore.experiments.figures import METRIC_LABELS, curve_figure, figure_html, gain_figure
from dpcore.limits import MAX_SEED
from dpcore.validation import InputError
from dpcore.workers import worker_count
from pages.shared.navigation import start_page
from pages.shared.widgets import scenario_sidebar, show_chart, show_error

shared = start_page()

JOB_KEY = "pu_job"
RESULT_KEY = "pu_result"
STEP_SECONDS = 0.1
MODES = {"preset": "a figure of the paper (preset)", "scenario": "my shared scenario"}
DATA_FIELDS = {"dataset", "D", "K", "R", "spectrum", "decay", "preprocessing", "model", "sigma^2", "data",
               "document length L", "estimator", "eps_split", "path", "m3_noise", "solver precision"}


@st.cache_data(max_entries=512, show_spinner=False)
def sweep_chunk(spec_json: str, first: int, count: int) -> pd.DataFrame:
    """The tidy rows of runs first .. first + count - 1 of a sweep, computed side by side in worker processes
    (cached by the spec's JSON and the runs)."""
    return sweep_runs(spec_from_json(spec_json), range(first, first + count))


@st.cache_data(max_entries=64, show_spinner=False)
def designs_ok(spec_json: str) -> None:
    """Raises InputError when the CAPE design of some grid point is infeasible (before anything runs)."""
    sweep_gains(spec_from_json(spec_json))


def build_result(spec_json: str, chunks: list[int], seconds: float) -> SweepResult:
    """The result of the runs done so far: ``chunks`` are the numbers of runs of the steps, in order."""
    spec = spec_from_json(spec_json)
    firsts = [sum(chunks[:i]) for i in range(len(chunks))]
    return sweep_result(spec, [sweep_chunk(spec_json, f, c) for f, c in zip(firsts, chunks, strict=True)],
                        seconds=seconds)


def request_stop() -> None:
    job = st.session_state.get(JOB_KEY)
    if job is not None:
        job["stopped"] = True


def fmt_grid(values) -> str:
    return ", ".join(f"{v:g}" for v in values)


# ----------------------------------------------------------------------------------------------
# Page
# ----------------------------------------------------------------------------------------------

scenario_sidebar(shared)

st.title("Privacy-utility")
st.markdown(
    "How much utility is left at a privacy level, and how much does correlated noise buy? Sweep one parameter "
    "(eps, delta, the samples per site N_s, the number of sites S or the collusion bound c), run every algorithm "
    "several times at each value, and compare the curves. The paper's Figures 2 to 5 are presets; any other sweep "
    "starts from the scenario shared by all pages. Within a run every value reuses the same random draws (common "
    "random numbers), so the curves are smooth and the differences between algorithms sharp."
)
with st.expander("What is computed"):
    st.latex(r"\bar q=\frac1R\sum_{r=1}^R q_r,\qquad \mathrm{se}=\frac{s}{\sqrt R},\qquad "
             r"\bar q\pm t_{0.975,\,R-1}\,\mathrm{se}\ \ \text{(shaded 95\% interval)}")
    st.latex(r"G=\frac{\sum_s\mu_s^2\tau_s^2}{\tau_c^2}\quad\text{(conventional over CAPE aggregator variance)}")
    st.markdown(
        "PCA: captured energy q_CE = tr(V^T A V) with A the pooled non-private second-moment matrix (the paper's y "
        "axis), its ratio to the optimum, and the subspace distance. OTD: q_comp, the mean distance of each "
        "recovered component to the nearest true one, and the weight error. The gain chart shows G of the CAPE "
        "design used at each value: the plain design, or along c the collusion-robust one (G = S - c for equal "
        "sites). numpy's random generator is not cryptographically secure: this is a simulation."
    )

mode = st.radio("Sweep", list(MODES), format_func=MODES.get, horizontal=True, key="pu_mode",
                help="Reproduce one panel of the paper, or sweep a parameter of the scenario you built on the Sites "
                "page.")
spec: SweepSpec | None = None
setup_msg = st.empty()
grid_msg = None
data_msg = None
alg_msg = None

if mode == "preset":
    names = preset_names(available_only=True)
    table = presets()
    name = st.selectbox("Preset", names, format_func=lambda n: f"{table[n].figure}: {table[n].title}",
                        key="pu_preset", help="The journal paper's panels we can reproduce with bundled data.")
    preset = get_preset(name)
    quick = st.toggle("Quick version", value=True, key="pu_quick",
                      help=f"A reduced sweep that draws a curve in seconds: {QUICK}. Turn off for the paper's size "
                      "(up to a minute for MNIST).")
    spec = quick_spec(preset.spec) if quick else preset.spec
    st.caption(f"{preset.figure} ({preset.grid_source}): {spec.describe()}.")
    st.caption(f"Calibration: {preset.calibration}.")
    unavailable = [p for p in table.values() if not p.available]
    if unavailable:
        with st.expander(f"{len(unavailable)} panels of the paper are not available"):
            for p in unavailable:
                st.markdown(f"- **{p.figure}** {p.title}: {p.unavailable}")
else:
    st.caption(f"Base scenario: {shared.n_sites} sites (N_s = {fmt_grid(shared.sizes)}), eps = "
               f"{fmt_grid(shared.eps)}, delta = {fmt_grid(shared.delta)}; {shared.calibration} calibration, "
               f"{shared.neighbouring} neighbours. Edit it on the Sites page.")
    left, middle, right = st.columns(3, gap="medium")
    with left:
        family = st.radio("Algorithms", list(FAMILIES), format_func=lambda f: {
            "pca": "capePCA (PCA)", "otd": "capeAGN (tensors)", "lda": "capeLDA (topic models)"}[f],
                          key="pu_family", help="; ".join(f"{k}: {v}" for k, v in FAMILIES.items()))
        data: PcaData | OtdData | LdaData | None = None
        try:
            if family == "pca":
                dataset = st.selectbox("Data", list(PCA_DATASETS), index=2, format_func=PCA_DATASETS.get,
                                       key="pu_dataset", help="Bundled data are in data/; synthetic draws as many "
                                       "samples as the sites need.")
                k = st.number_input("K (subspace dimension)", 1, 784, 10, key="pu_k",
                                    help="Number of principal components; at most D.")
                dim = st.number_input("D (synthetic features)", 2, 1000, 50, key="pu_dim",
                                      disabled=dataset != "synthetic", help="Dimension of the synthetic data.")
                data = PcaData(dataset=dataset, k=int(k), dim=int(dim))
            elif family == "lda":
                d = st.number_input("D (vocabulary)", 3, 5000, 100, key="pu_lda_d", help="Vocabulary size.")
                k_lda = st.number_input("K (topics)", 1, 50, 5, key="pu_lda_k", help="Topics, K <= D - 1.")
                alpha0 = st.number_input("α₀", 0.01, 1000.0, 1.0, key="pu_lda_alpha0",
                                         help="Dirichlet concentration of the topic proportions.")
                data = LdaData(dim=int(d), k=int(k_lda), alpha0=float(alpha0))
            else:
                model = st.selectbox("Model", ["mog", "stm"], key="pu_model",
                                     format_func={"mog": "mixture of Gaussians", "stm": "single topic model"}.get,
                                     help="Synthetic ground truth; q_comp is measured against it.")
                d = st.number_input("D", 2, 200, 10, key="pu_d", help="Features (MOG) or vocabulary size (STM).")
                k_otd = st.number_input("K (components)", 1, 50, 5, key="pu_otd_k", help="Components, K <= D.")
                data = OtdData(model=model, dim=int(d), k=int(k_otd), path="projected")
        except InputError as exc:
            show_error(exc)
            data_msg = exc
    with middle:
        parameter = st.selectbox("Vary", list(PARAMETERS), format_func=lambda p: f"{PARAMETER_LABELS[p]}: "
                                 f"{PARAMETERS[p]}", key="pu_parameter",
                                 help="Every other setting stays at the scenario's value; eps, delta and N_s are set "
                                 "on every site.")
        grid_text = st.text_input(f"Values of {PARAMETER_LABELS[parameter]}", fmt_grid(default_grid(parameter, shared)),
                                  key=f"pu_grid_{parameter}", help="Numbers separated by commas (1e-3 allowed); "
                                  "sorted ascending. eps > 0, 0 < delta < 1, N_s >= 1, S >= 2, 0 <= c <= S - 1.")
        grid_slot = st.empty()
    with right:
        titles = algorithm_titles(family)
        chosen = st.multiselect("Algorithms to run", list(titles), default=list(default_algorithms(family)),
                                format_func=titles.get, key=f"pu_algorithms_{family}",
                                help="The paper's figures use capePCA/capeAGN, DPdisPCA (PCA), conv, local and the "
                                "non-private and random references.")
        alg_slot = st.empty()
        runs = st.number_input("Runs R", 1, 200, 5, key="pu_runs", help="Independent repetitions per value; the "
                               "interval narrows as 1/sqrt(R).")
        seed = st.number_input("Seed", 0, MAX_SEED, int(shared.seed), key="pu_seed",
                               help="Seeds data, split and every noise draw: the same seed gives the same table.")
    if data is not None:
        try:
            grid = parse_grid(grid_text, parameter)
            spec = SweepSpec(family=family, parameter=parameter, grid=grid, algorithms=tuple(chosen), scenario=shared,
                             data=data, runs=int(runs), seed=int(seed))
            designs_ok(spec.to_json())
        except InputError as exc:
            spec = None
            slot = grid_slot if exc.field == "grid" else alg_slot if exc.field == "algorithms" else setup_msg
            with slot.container():
                show_error(exc)
    if spec is not None:
        st.caption(f"{spec.describe()}.")

job: dict[str, Any] | None = st.session_state.get(JOB_KEY)
running = job is not None and not job["stopped"] and job["done"] < job["runs"]
run_col, info_col = st.columns([1, 3])
clicked = run_col.button("Run sweep", type="primary", key="pu_run", disabled=spec is None or running,
                         help="Runs every algorithm R times at every value. Shows a progress bar and a Stop button.")
run_msg = st.empty()
if spec is not None:
    evaluations = spec.runs * len(spec.grid) * len(spec.algorithms)
    info_col.caption(f"{len(spec.grid)} values x {len(spec.algorithms)} algorithms x {spec.runs} runs = "
                     f"{evaluations:,} runs of an algorithm.")

if clicked and spec is not None:
    spec_json = spec.to_json()
    st.session_state.pop(RESULT_KEY, None)
    hit = cached_result(spec)
    if hit is not None:
        st.session_state[JOB_KEY] = {"spec": spec_json, "runs": spec.runs, "done": spec.runs, "stopped": False,
                                     "seconds": hit.seconds, "error": None, "chunks": [spec.runs], "hit": hit}
    else:
        st.session_state[JOB_KEY] = {"spec": spec_json, "runs": spec.runs, "done": 0, "stopped": False,
                                     "seconds": 0.0, "error": None, "chunks": []}
    job = st.session_state[JOB_KEY]
    running = job["done"] < job["runs"]


def advance() -> None:
    """One step of the sweep per call - as many runs as there are worker processes, side by side; the fragment
    reruns itself every STEP_SECONDS until done or stopped."""
    current = st.session_state.get(JOB_KEY)
    if current is None or current["stopped"] or current["done"] >= current["runs"] or current["error"]:
        st.rerun(scope="app")
    done, total = current["done"], current["runs"]
    count = worker_count(total - done)
    running_text = f"Run {done + 1}" if count == 1 else f"Runs {done + 1} to {done + count}"
    bar = st.progress(done / total, text=f"{running_text} of {total} running ({current['seconds']:.1f} s so far)")
    st.button("Stop", key="pu_stop", on_click=request_stop, icon=":material/stop_circle:",
              help="Stop after the current runs; the curves then use the runs that finished.")
    start = time.perf_counter()
    try:
        sweep_chunk(current["spec"], done, count)
    except InputError as exc:
        current["error"] = str(exc)
        st.rerun(scope="app")
    current["seconds"] += time.perf_counter() - start
    current["chunks"] = [*current["chunks"], count]
    current["done"] = done + count
    if current["done"] >= total:
        st.rerun(scope="app")
    bar.progress(current["done"] / total, text=f"{current['done']} of {total} runs done ({current['seconds']:.1f} s)")


if running:
    st.fragment(advance, run_every=STEP_SECONDS)()
elif job is not None and job.get("error"):
    with run_msg.container():
        show_error(InputError(job["error"]))

# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------

result: SweepResult | None = None
if job is not None and not running and not job.get("error") and job["done"] > 0:
    try:
        result = job.get("hit") or build_result(job["spec"], job["chunks"], job["seconds"])
    except InputError as exc:
        with run_msg.container():
            show_error(exc)
elif job is not None and job["stopped"] and job["done"] == 0:
    run_msg.warning("Stopped before the first run finished: nothing to show yet.", icon=":material/stop_circle:")

if result is None and not running:
    st.info("Choose a preset or build a sweep, then press **Run sweep**. Nothing runs until you do.",
            icon=":material/play_circle:")
elif result is not None:
    rspec = result.spec
    st.subheader("Results")
    if result.complete:
        st.caption(f"{rspec.describe()}. Complete: {result.runs_done} runs in {result.seconds:.1f} s.")
    else:
        st.warning(f"Stopped after {result.runs_done} of {rspec.runs} runs: the curves and intervals use the runs "
                   "that finished.", icon=":material/stop_circle:")
    caveats = [n for n in result.notes if "not a valid" in n or "not well below" in n]
    for note in caveats:
        st.warning(note, icon=":material/warning:")
    with st.expander("Notes on this sweep (data, what is shared between values, settings)"):
        st.markdown("\n".join(f"- {n}" for n in result.notes if n not in caveats))

    titles = algorithm_titles(rspec.family)
    metric_col, show_col = st.columns([1, 2])
    metric = metric_col.selectbox("Metric", list(METRICS[rspec.family]), format_func=METRIC_LABELS.get,
                                  key=f"pu_metric_{rspec.family}",
                                  help="; ".join(f"{METRIC_LABELS[m]}: {d}" for m, d in METRICS[rspec.family].items()))
    shown = show_col.multiselect("Curves shown", list(rspec.algorithms), default=list(rspec.algorithms),
                                 format_func=titles.get, key=f"pu_shown_{rspec.family}",
                                 help="Also click a name in the chart's legend to hide or show its curve.")
    shown = [a for a in shown if a in rspec.algorithms]
    chart_col, gain_col = st.columns([3, 2], gap="medium")
    with chart_col:
        show_chart(curve_figure(result, metric, shown), f"{METRIC_LABELS[metric]} against "
                   f"{PARAMETER_LABELS[rspec.parameter]} (mean over runs, shaded 95% interval)", key="pu_curves",
                   height=440)
    with gain_col:
        show_chart(gain_figure(result), f"Gain G of the CAPE design at each {PARAMETER_LABELS[rspec.parameter]}",
                   key="pu_gain", height=440)

    rows = result.summary[result.summary["metric"] == metric].copy()
    rows["algorithm"] = rows["algorithm"].map(titles)
    rows = rows.rename(columns={"value": PARAMETER_LABELS[rspec.parameter]}).drop(columns=["parameter", "metric"])
    number = {c: st.column_config.NumberColumn(format="%.4g") for c in ("mean", "std", "se", "ci_low", "ci_high")}
    st.dataframe(rows, hide_index=True, width="stretch", column_config=number)

    stem = f"sweep_{rspec.family}_{rspec.parameter}"
    down_a, down_b, down_c = st.columns(3)
    down_a.download_button("Download the table (CSV)", result.to_csv(), f"{stem}.csv", "text/csv",
                           key="pu_download_table", width="stretch",
                           help="One row per value, algorithm, run and metric (tidy format).")
    down_b.download_button("Download the summary (CSV)", result.summary_csv(), f"{stem}_summary.csv", "text/csv",
                           key="pu_download_summary", width="stretch",
                           help="Mean, std, standard error and 95% interval per value, algorithm and metric.")
    down_c.download_button("Download the figure (HTML)", lambda: figure_html(result, metric, shown),
                           f"{stem}.html", "text/html", key="pu_download_html", width="stretch",
                           help="Curves and gain in one page with plotly.js embedded (about 5 MB): opens offline.")
