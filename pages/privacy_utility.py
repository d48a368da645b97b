"""Privacy-utility: curves of utility against eps, delta, N_s, S or c (the paper's Figs. 2-5 or your scenario).

A preset with a stored full-size result (dpcore.experiments.stored, dpcore/data/files/presets/) is shown at once,
computed by nothing but its summary; "Run it again live" recomputes it (or its reduced variant). A live sweep runs in a
background thread of this session (pages/shared/sweep_job.py: dpcore's run_sweep with its worker processes); a
fragment polls it every POLL_SECONDS and shows the progress per (run, algorithm, grid point) step, the time so far and
the time left, and a Stop button (the sweep stops after the current step and keeps the runs that finished).
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

import streamlit as st

from dpcore.experiments import (
    FAMILIES,
    METRICS,
    PARAMETER_LABELS,
    PARAMETERS,
    SweepResult,
    SweepSpec,
    algorithm_titles,
    check_designs,
    default_algorithms,
    default_grid,
    get_preset,
    parse_grid,
    preset_names,
    presets,
    quick_spec,
)
from dpcore.experiments.figures import curve_figure, figure_html, gain_figure
from dpcore.experiments.presets import quick_name
from dpcore.experiments.reading import STOP_CASES, figure_sentence, gain_sentence, meeting_sentence
from dpcore.experiments.stored import FIRST_FIGURE, estimate_seconds, stored_result, stored_status
from dpcore.family import page_form
from dpcore.limits import MAX_SEED, MAX_SWEEP_RUNS
from dpcore.notation import symbolic
from dpcore.reports import sweep_report
from dpcore.scenario.settings_link import Setting
from dpcore.validation import InputError
from dpcore.workers import warm_up, worker_count
from pages.shared.navigation import start_page
from pages.shared.reports import report_downloads
from pages.shared.sweep_job import JOB_KEY, POLL_SECONDS, duration, request_stop, start_job
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

MODES = {"preset": "a figure of the paper (preset)", "scenario": "my shared scenario"}
VARIANTS = {"full": "full size (as stored)", "quick": "reduced"}
UPLOAD_KEY = "pu_upload"


@st.cache_resource(max_entries=4, show_spinner="Reading the file ...")
def _registered(family: str, source: str, digest: str, content: bytes, name: str) -> dict[str, Any]:
    """An uploaded file read by the family's data source (as its computing page and the planner read it) and kept for
    this process's sweeps: the data settings' fields that name it (``DataSource.register``)."""
    src = FAMILIES[family].sources[source]
    if src.register is None:
        raise InputError(f"a sweep cannot run on {src.label}", "file")
    return src.register(src.load(content, name))


def _data_form(family: str) -> Any:
    """The family's data settings from its form, read from the family table (``Family.form``, or every field of its
    data type: dpcore.family.page_form; keys pu_...): a choice that names one of the family's upload sources asks for
    the file; the fields that follow from the chosen algorithms come from ``Family.form_rule``; the data type checks
    the values (an InputError names the field)."""
    entry = FAMILIES[family]
    values: dict[str, Any] = {}
    uploads: dict[str, str] = {}
    for key, (row, setting) in page_form(entry, "pu_").items():
        helptext = row.help or None
        if setting.choices is not None:
            values[row.field] = st.selectbox(row.label, widget_options(PU, key), key=key, help=helptext,
                                             format_func=(row.choices or {}).get)
            source = entry.sources.get(values[row.field]) if isinstance(values[row.field], str) else None
            if source is not None and source.upload:
                uploads[row.field] = values[row.field]
        elif setting.kind == "bool":
            values[row.field] = st.toggle(row.label, key=key, help=helptext)
        elif setting.kind == "text":
            values[row.field] = st.text_input(row.label, key=key, max_chars=setting.max_chars, help=helptext)
        else:
            disabled = row.enabled_if is not None and values.get(row.enabled_if[0]) not in row.enabled_if[1]
            values[row.field] = st.number_input(row.label, **widget_range(PU, key), key=key, disabled=disabled,
                                                help=helptext)
    for field, name in uploads.items():
        src = entry.sources[name]
        file = st.file_uploader("Your file", type=list(src.types), key=UPLOAD_KEY, help=f"{src.label}; nothing "
                                "uploaded is executed.")
        if file is None:
            raise InputError("upload a file to sweep your own data", "file")
        content = file.getvalue()
        del values[field]
        values.update(src.fields)
        values.update(_registered(family, name, hashlib.sha256(content).hexdigest(), content, file.name))
    if entry.form_rule is not None:
        values.update(entry.form_rule(values, tuple(st.session_state.get(f"pu_algorithms_{family}", ()))))
    return entry.sweep.data(**values)


@st.cache_data(max_entries=64, show_spinner=False)
def designs_ok(spec_json: str) -> None:
    """Raises InputError when a grid point's CAPE design is infeasible or an algorithm cannot carry it (before Run)."""
    from dpcore.experiments import spec_from_json

    check_designs(spec_from_json(spec_json))


@st.cache_data(max_entries=64, show_spinner=False)
def stored_reading(name: str, metric: str, shown: tuple[str, ...]):
    """What the page shows of preset ``name``'s stored result: the sentence under the metric, the constant-gain
    sentence (or None), the meeting sentence, the curves and the gain figure. The same for every session, so a class
    opening the page computes them once (benchmarks/bench_classroom.py); st.cache_data hands each session a copy."""
    result = stored_result(name).result
    return (figure_sentence(result, metric), gain_sentence(result), meeting_sentence(result, metric),
            curve_figure(result, metric, list(shown)), gain_figure(result))


def reading(result: SweepResult, source: str | None, metric: str, shown: list[str]):
    """:func:`stored_reading` of the stored result shown, else the same computed for a live result."""
    if source == "stored":
        return stored_reading(st.session_state["pu_preset"], metric, tuple(shown))
    return (figure_sentence(result, metric), gain_sentence(result), meeting_sentence(result, metric),
            curve_figure(result, metric, shown), gain_figure(result))


def fmt_grid(values) -> str:
    return ", ".join(f"{v:g}" for v in values)


def show_stop_case(key: str) -> None:
    """Button callback: switch the widgets to one of the cases where CAPE stops helping."""
    case = STOP_CASES[key]
    st.session_state.pop(JOB_KEY, None)
    st.session_state["pu_case"] = key
    if case.preset is not None:
        st.session_state.update(pu_mode="preset", pu_preset=case.preset, pu_variant="full")
    else:
        st.session_state.update(pu_mode="scenario", pu_family=case.data and "pca", pu_parameter=case.parameter,
                                pu_dataset=case.data.dataset, pu_k=case.data.k, pu_dim=case.data.dim,
                                pu_runs=case.runs, pu_algorithms_pca=list(case.algorithms), pu_autorun=True,
                                **{f"pu_grid_{case.parameter}": fmt_grid(default_grid(case.parameter, scenario))})


# ----------------------------------------------------------------------------------------------
# Page
# ----------------------------------------------------------------------------------------------

scenario_sidebar(scenario)


# The page's widgets, one table: each widget is drawn with its range and choices from here, and its link (?settings=)
# is checked against the same (a grid is parsed, and refused with a message, as typed).
PU = {
    "pu_mode": Setting(default="preset", label="Sweep", choices=tuple(MODES)),
    "pu_preset": Setting(default=FIRST_FIGURE, label="Preset", choices=tuple(preset_names(available_only=True))),
    "pu_variant": Setting(default="full", label="Live run", choices=tuple(VARIANTS)),
    "pu_case": Setting(default=next(iter(STOP_CASES)), label="Where CAPE stops helping", choices=tuple(STOP_CASES)),
    "pu_family": Setting(default="pca", label="Algorithms", choices=tuple(FAMILIES)),
    "pu_parameter": Setting(default=next(iter(PARAMETERS)), label="Vary", choices=tuple(PARAMETERS)),
    "pu_runs": Setting(default=5, label="Runs R", low=1, high=MAX_SWEEP_RUNS),
    "pu_seed": Setting(default=int(scenario.seed), label="Seed", low=0, high=MAX_SEED),
    # every family's data form, from the family table (Family.form or its data type's fields)
    **{key: setting for f in FAMILIES for key, (_, setting) in page_form(FAMILIES[f], "pu_").items()},
    **{f"pu_grid_{p}": Setting(default=fmt_grid(default_grid(p, scenario)), label=f"Values of {PARAMETER_LABELS[p]}",
                               max_chars=500) for p in PARAMETERS},
    **{f"pu_algorithms_{f}": Setting(default=list(default_algorithms(f)), label="Algorithms to run",
                                     choices=tuple(algorithm_titles(f))) for f in FAMILIES},
}
restore_widgets(PU)

st.title("Privacy-utility")
st.markdown(symbolic(
    "How much utility is left at a privacy level, and how much does correlated noise buy? Each figure varies one "
    "parameter (eps, delta, the samples per site N_s, the number of sites S or the collusion bound c) and runs every "
    "algorithm several times at each value. The paper's Figures 2 to 5 are shown at full size from stored results; "
    "any of them can be run again live, and any other sweep starts from the scenario shared by all pages."))
case_col, case_pick = st.columns([1, 2], vertical_alignment="bottom")
case_key = case_pick.selectbox("Where CAPE stops helping", widget_options(PU, "pu_case"),
                               format_func=lambda k: STOP_CASES[k].label,
                               key="pu_case", label_visibility="collapsed",
                               help="Cases where the CAPE and conventional curves meet; the sentence under the "
                               "figure says why, from its numbers.")
case_col.button("Show where CAPE stops helping", key="pu_show_case", on_click=lambda: show_stop_case(
    st.session_state["pu_case"]), help="Switch to a figure where the curves meet (the case chosen beside).")

mode = st.radio("Sweep", widget_options(PU, "pu_mode"), format_func=MODES.get, horizontal=True, key="pu_mode",
                help="Reproduce one panel of the paper, or sweep a parameter of the scenario you built on the Sites "
                "page.")
spec: SweepSpec | None = None
stored = None
results_box = None
setup_msg = st.empty()

if mode == "preset":
    table = presets()
    name = st.selectbox("Preset", widget_options(PU, "pu_preset"),
                        format_func=lambda n: symbolic(f"{table[n].figure}: {table[n].title}"),
                        key="pu_preset", help="The journal paper's panels we can reproduce with bundled data.")
    preset = get_preset(name)
    stored = stored_result(name)
    fallbacks = st.session_state.setdefault("pu_fallbacks", set())
    if stored is None and name not in fallbacks:  # unavailable (the reason is shown below): a live run instead
        fallbacks.add(name)
        st.session_state.update(pu_variant="quick", pu_autorun=True)
    results_box = st.container()
    st.markdown("**Run it again live**" if stored is not None else "**Run this preset**")
    variant = st.radio("Live run", widget_options(PU, "pu_variant"), horizontal=True, key="pu_variant",
                       format_func=lambda v: VARIANTS[v] if v == "full" else f"reduced: {quick_name(preset)}",
                       help="What 'Run it again live' computes: the preset at the paper's size, or a reduced "
                       "variant that draws the shape of the curves in seconds.")
    spec = quick_spec(preset.spec) if variant == "quick" else preset.spec
    st.caption(symbolic(f"Calibration: {preset.calibration}. Grid: {preset.grid_source}."))
    if stored is None:
        st.warning(symbolic(f"No stored result for this preset: {stored_status(name)}. A live run of the reduced "
                            "variant starts instead (choose full size and press Run sweep for the paper's size)."),
                   icon=":material/inventory_2:")
    unavailable = [p for p in table.values() if not p.available]
    if unavailable:
        with st.expander(f"{len(unavailable)} panels of the paper are not available"):
            for p in unavailable:
                st.markdown(symbolic(f"- **{p.figure}** {p.title}: {p.unavailable}"))
else:
    st.caption(symbolic(
        f"Base scenario: {scenario.n_sites} sites (N_s = {fmt_grid(scenario.sizes)}), eps = "
        f"{fmt_grid(scenario.eps)}, delta = {fmt_grid(scenario.delta)}; {scenario.calibration} calibration, "
        f"{scenario.neighbouring} neighbours. Edit it on the Sites page."))
    left, middle, right = st.columns(3, gap="medium")
    with left:
        family = st.radio("Algorithms", widget_options(PU, "pu_family"), format_func=lambda f: FAMILIES[f].label,
                          key="pu_family", help="; ".join(f"{k}: {v.description}" for k, v in FAMILIES.items()))
        data: Any = None
        try:
            data = _data_form(family)
        except InputError as exc:
            show_error(exc)
    with middle:
        parameter = st.selectbox("Vary", widget_options(PU, "pu_parameter"), format_func=lambda p: symbolic(
            f"{PARAMETER_LABELS[p]}: {PARAMETERS[p]}"), key="pu_parameter",
                                 help=symbolic("Every other setting stays at the scenario's value; eps, delta and N_s "
                                               "are set on every site."))
        st.session_state.setdefault(f"pu_grid_{parameter}", fmt_grid(default_grid(parameter, scenario)))
        grid_text = st.text_input(symbolic(f"Values of {PARAMETER_LABELS[parameter]}"), key=f"pu_grid_{parameter}",
                                  max_chars=PU[f"pu_grid_{parameter}"].max_chars,
                                  help=symbolic("Numbers separated by commas (1e-3 allowed); sorted ascending. "
                                                "eps > 0, 0 < delta < 1, N_s ≥ 1, S ≥ 2, 0 ≤ c ≤ S - 1."))
        grid_slot = st.empty()
    with right:
        titles = algorithm_titles(family)
        st.session_state.setdefault(f"pu_algorithms_{family}", list(default_algorithms(family)))
        chosen = st.multiselect("Algorithms to run", widget_options(PU, f"pu_algorithms_{family}"),
                                format_func=titles.get,
                                key=f"pu_algorithms_{family}",
                                help="The paper's figures use capePCA/capeAGN, DPdisPCA (PCA), conv, local and the "
                                "non-private and random references.")
        alg_slot = st.empty()
        runs = st.number_input("Runs R", **widget_range(PU, "pu_runs"), key="pu_runs",
                               help="Independent repetitions per value; the "
                               "interval narrows as 1/√R.")
        seed = st.number_input("Seed", **widget_range(PU, "pu_seed"), key="pu_seed",
                               help="Seeds data, split and every noise draw: the same seed gives the same table.")
    if data is not None:
        try:
            grid = parse_grid(grid_text, parameter)
            spec = SweepSpec(family=family, parameter=parameter, grid=grid, algorithms=tuple(chosen), scenario=scenario,
                             data=data, runs=int(runs), seed=int(seed))
            designs_ok(spec.to_json())
        except InputError as exc:
            spec = None
            slot = grid_slot if exc.field == "grid" else alg_slot if exc.field == "algorithms" else setup_msg
            with slot.container():
                show_error(exc)

# ----------------------------------------------------------------------------------------------
# Live run: estimate before it starts, progress per step while it runs
# ----------------------------------------------------------------------------------------------

job: dict[str, Any] | None = st.session_state.get(JOB_KEY)
running = job is not None and not job["finished"]
estimate = None
if spec is not None:
    workers = worker_count(spec.runs)
    estimate = estimate_seconds(spec, workers)
    st.caption(symbolic(f"Live run: {spec.describe()}."))
run_col, info_col = st.columns([1, 3], vertical_alignment="center")
label = "Run it again live" if stored is not None else "Run sweep"
clicked = run_col.button(label, type="primary", key="pu_run", disabled=spec is None or running,
                         help="Runs every algorithm R times at every value, with a progress bar, the time left and "
                         "a Stop button.")
if spec is not None:
    steps = spec.runs * len(spec.grid) * len(spec.algorithms)
    if estimate is not None:
        when = f"Estimated time: about {duration(estimate[0])} ({estimate[1]})."
    else:
        when = "Estimated time: shown after the first steps (no stored run of this sweep to scale from)."
    info_col.caption(symbolic(f"{len(spec.grid)} values × {len(spec.algorithms)} algorithms × {spec.runs} runs = "
                              f"{steps:,} runs of an algorithm. {when}"))
run_msg = st.empty()

autorun = st.session_state.pop("pu_autorun", False)
if (clicked or autorun) and spec is not None and not running:
    start_job(spec, estimate[0] if estimate else None)
    job = st.session_state[JOB_KEY]
    running = not job["finished"]


def progress_text(current: dict[str, Any]) -> tuple[float, str]:
    """The bar's fraction and text: steps done, time so far, time left (the stored estimate until the first
    step, then the pace so far)."""
    elapsed = time.perf_counter() - current["start"]
    done, total = current["done"], current["total"]
    if done and total:
        left = elapsed / done * (total - done)
        basis = "at the pace so far"
    elif current["estimate"] is not None:
        left = max(current["estimate"] - elapsed, 0.0)
        basis = "from the stored run"
    else:
        left = math.nan
        basis = ""
    remaining = "" if math.isnan(left) else f", about {duration(left)} left ({basis})"
    step = f"step {done} of {total}: {current['label']}" if total else "preparing the data and the designs"
    return (done / total if total else 0.0), symbolic(f"{step}; {elapsed:.0f} s so far{remaining}")


def poll() -> None:
    """Shows the running sweep's progress; reruns the page when it has finished."""
    current = st.session_state.get(JOB_KEY)
    if current is None or current["finished"]:
        st.rerun(scope="app")
    fraction, text = progress_text(current)
    st.progress(min(fraction, 1.0), text=text)
    st.button("Stop", key="pu_stop", on_click=request_stop, icon=":material/stop_circle:",
              disabled=current["stopped"], help="Stop after the current step; the curves then use the runs that "
              "finished.")


if running:
    st.fragment(poll, run_every=POLL_SECONDS)()
elif job is not None and job.get("error") is not None:
    with run_msg.container():
        show_error(job["error"])

# ----------------------------------------------------------------------------------------------
# Results: the live run of this setting, else the stored full-size result
# ----------------------------------------------------------------------------------------------

result: SweepResult | None = None
source = None
if job is not None and not running and job.get("result") is not None:
    if spec is not None and job["spec"] == spec.to_json():
        result, source = job["result"], "live"
    elif job["result"].runs_done == 0:
        result = None
if result is not None and result.runs_done == 0:
    run_msg.warning("Stopped before the first run finished: nothing to show yet.", icon=":material/stop_circle:")
    result = None
if result is None and stored is not None:
    result, source = stored.result, "stored"

with results_box if results_box is not None else st.container():
    if result is None and not running:
        st.info("Choose a preset or build a sweep, then press **Run sweep**. Nothing runs until you do.",
                icon=":material/play_circle:")
    elif result is not None:
        rspec = result.spec
        st.subheader("Results")
        if source == "stored":
            st.info(symbolic(f"**Stored result, full paper size**: nothing was computed to show it. Produced by "
                             f"{stored.provenance()}. Press **Run it again live** to recompute it."),
                    icon=":material/inventory_2:")
        elif result.complete:
            st.caption(symbolic(f"Live run: {rspec.describe()}. Complete: {result.runs_done} runs in "
                                f"{result.seconds:.1f} s."))
        else:
            st.warning(f"Stopped after {result.runs_done} of {rspec.runs} runs: the curves and intervals use the runs "
                       "that finished.", icon=":material/stop_circle:")
        caveats = [n for n in result.notes if "not a valid" in n or "not well below" in n]
        for note in caveats:
            st.warning(symbolic(note), icon=":material/warning:")
        with st.expander("Notes on this sweep (data, what is shared between values, settings)"):
            st.markdown(symbolic("\n".join(f"- {n}" for n in result.notes if n not in caveats)))

        titles = algorithm_titles(rspec.family)
        default_metric = get_preset(st.session_state["pu_preset"]).metric if mode == "preset" else None
        metrics = list(METRICS[rspec.family])
        metric_col, show_col = st.columns([1, 2])
        metric_table = METRICS[rspec.family]
        metric = metric_col.selectbox("Metric", metrics, format_func=lambda m: symbolic(metric_table[m].label),
                                      index=metrics.index(default_metric) if default_metric in metrics else 0,
                                      key=f"pu_metric_{rspec.family}",
                                      help=symbolic("; ".join(f"{d.label}: {d.description}"
                                                              for d in metric_table.values())))
        sentence_slot = st.empty()
        shown = show_col.multiselect("Curves shown", list(rspec.algorithms), default=list(rspec.algorithms),
                                     format_func=titles.get, key=f"pu_shown_{rspec.family}",
                                     help="Also click a name in the chart's legend to hide or show its curve.")
        shown = [a for a in shown if a in rspec.algorithms]
        sentence, constant_gain, meeting, curves, gains = reading(result, source, metric, shown)
        sentence_slot.markdown(symbolic(sentence))
        chart_col, gain_col = st.columns([3, 2], gap="medium") if constant_gain is None else (st.container(), None)
        with chart_col:
            show_chart(curves, symbolic(
                f"{metric_table[metric].label} against {PARAMETER_LABELS[rspec.parameter]} (mean over runs, shaded 95% "
                "interval)"), key="pu_curves", height=460)
        if gain_col is not None:
            with gain_col:
                show_chart(gains, symbolic(f"Gain G of the CAPE design at each {PARAMETER_LABELS[rspec.parameter]}"),
                           key="pu_gain", height=460)
        else:
            st.caption(symbolic(constant_gain))
        with st.container(border=True, key="pu_meeting"):
            st.markdown(symbolic("**Where CAPE stops helping.** " + meeting))

        rows = result.summary[result.summary["metric"] == metric].copy()
        rows["algorithm"] = rows["algorithm"].map(titles)
        rows = rows.rename(columns={"value": symbolic(PARAMETER_LABELS[rspec.parameter])}).drop(
            columns=["parameter", "metric"])
        number = {c: st.column_config.NumberColumn(format="%.4g") for c in ("mean", "std", "se", "ci_low", "ci_high")}
        with st.expander("Summary table: mean, standard deviation, standard error and 95% interval per value and "
                         "algorithm"):
            st.dataframe(rows, hide_index=True, width="stretch", column_config=number)

        stem = f"sweep_{rspec.family}_{rspec.parameter}"
        down_a, down_b, down_c = st.columns(3)
        down_a.download_button("Download the table (CSV)", result.to_csv, f"{stem}.csv", "text/csv",
                               key="pu_download_table", width="stretch", on_click="ignore",
                               help="One row per value, algorithm, run and metric (tidy format).")
        down_b.download_button("Download the summary (CSV)", result.summary_csv, f"{stem}_summary.csv", "text/csv",
                               key="pu_download_summary", width="stretch", on_click="ignore",
                               help="Mean, std, standard error and 95% interval per value, algorithm and metric.")
        down_c.download_button("Download the figure (HTML)", lambda: figure_html(result, metric, shown),
                               f"{stem}.html", "text/html", key="pu_download_html", width="stretch", on_click="ignore",
                               help="Curves and gain in one page with plotly.js embedded (about 5 MB): opens offline.")
        report_downloads(lambda: sweep_report(result, metric=metric, sentences=(sentence,)), f"{stem}_report",
                         "pu_report")
        with st.expander("Privacy of every view (computed by the audit from the scenario and the designs)"):
            st.dataframe([{symbolic(PARAMETER_LABELS[rspec.parameter]): r.value,
                           "algorithm": titles.get(r.algorithm, r.algorithm), "guarantee": symbolic(r.label)}
                          for r in result.guarantees().itertuples()], hide_index=True, width="stretch")

with st.expander("What is computed"):
    st.latex(r"\bar q=\frac1R\sum_{r=1}^R q_r,\qquad \mathrm{se}=\frac{s}{\sqrt R},\qquad "
             r"\bar q\pm t_{0.975,\,R-1}\,\mathrm{se}\ \ \text{(shaded 95\% interval)}")
    st.latex(r"G=\frac{\sum_s\mu_s^2\tau_s^2}{\tau_c^2}\quad\text{(conventional over CAPE aggregator variance)}")
    st.markdown(symbolic(
        "PCA: captured energy q_CE = tr(V^T A V) with A the pooled non-private second-moment matrix (the paper's y "
        "axis), its ratio to the optimum, and the subspace distance. OTD: q_comp, the mean distance of each "
        "recovered component to the nearest true one, and the weight error. The gain chart shows G of the CAPE "
        "design used at each value: the plain design, or along c the collusion-robust one (G = S - c for equal "
        "sites). Within a run every value reuses the same random draws (common random numbers), so the curves are "
        "smooth and the differences between algorithms sharp. numpy's random generator is not cryptographically "
        "secure: this is a simulation."))
