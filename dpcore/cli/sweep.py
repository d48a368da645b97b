"""``python -m dpcore sweep``: privacy-utility curves (vary one parameter, run the algorithms R times).

Examples::

    python -m dpcore sweep --list-presets
    python -m dpcore sweep --preset fig2b-mnist-eps --out fig2b.csv --html fig2b.html
    python -m dpcore sweep --scenario sites.json --vary eps --grid 0.01,0.1,1,10 --algorithms cape conv local \\
        --runs 5 --seed 1 --out results.csv
    python -m dpcore sweep --family otd --model stm --d 10 --k 5 --vary ns --grid 500,1000,5000 --out stm.csv
    python -m dpcore sweep --preset lda-cape-eps --runs 3
    python -m dpcore sweep --family lda --vary eps --grid 10,30,100 --ns 4000 --delta 1e-6 --calibration analytic \
        --algorithms cape conv 1 2

``--out`` gets the tidy table (parameter, value, algorithm, run, metric, result, status); the summary (mean,
standard error, 95% t-interval per value, algorithm and metric) is printed, or written with ``--summary-out``;
``--json`` prints ``{"spec", "version", "complete", "runs_done", "seconds", "summary", "gains", "guarantees",
"notes"}`` (``guarantees``: every view of every algorithm at every grid value, from the audit).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from ..data import BUNDLED
from ..data.shipped import shipped_path
from ..experiments import (
    FAMILIES,
    LDA_CALIBRATION,
    METRICS,
    PARAMETERS,
    PRESET_CALIBRATION,
    QUICK,
    SweepSpec,
    algorithm_titles,
    default_algorithms,
    default_grid,
    get_preset,
    parse_grid,
    presets,
    quick_spec,
    run_sweep,
)
from ..experiments.presets import quick_name
from ..limits import MAX_SWEEP_RUNS, MAX_WORKERS
from ..outfiles import check_outputs, write_atomic
from ..pca.command_run import load_csv
from ..pca.sweep import register_upload
from ..privacy import CALIBRATIONS, NEIGHBOURING
from ..scenario import Scenario, equal_sites_scenario, load_scenario
from ..validation import InputError
from ..workers import WORKERS_ENV, worker_count
from . import print_json, say
from .family_command import add_flags
from .options import (
    DELTA,
    EPS,
    SEED,
    SITE_SIZE,
    SITES,
    WORKERS,
    algorithm_names,
    integer,
)
from .table import fmt, table

DEFAULT_SITE_SIZE = 1000
# Options that describe a sweep built here; a preset fixes them.
_BUILD_OPTIONS = ("scenario", "csv", "family", "vary", "grid", "sites", "ns", "eps", "delta", "calibration",
                  "neighbouring", "dataset", "k", "dim", "spectrum", "decay", "preprocess", "features", "rank",
                  "model", "d", "sigma2", "doc_length", "estimator", "split", "path", "truth", "alpha0",
                  "alpha_shape")


def register(sub: argparse._SubParsersAction) -> None:  # long: one add_argument per option, in help order
    p = sub.add_parser(
        "sweep",
        help="privacy-utility curves: vary eps, delta, N_s, S or c and run the algorithms R times",
        description="Vary one parameter over a grid (the others stay at the scenario's values), run the chosen "
        "algorithms R times at every grid point with common random numbers, and write the tidy table (--out), "
        "the summary (mean, standard error, 95%% t-interval) and, with --html, the figure. Presets reproduce the "
        "journal paper's Figs. 2-5 (--list-presets).",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument("--preset", metavar="NAME", help="one of the paper's figures (see --list-presets)")
    what.add_argument("--list-presets", action="store_true", help="list the presets, available or not, and exit")
    p.add_argument("--quick", action="store_true", help=f"with --preset: a reduced version ({QUICK})")
    p.add_argument("--scenario", metavar="FILE", help="base scenario JSON (default: equal sites from --sites, --ns, "
                   "--eps, --delta)")
    p.add_argument("--family", choices=tuple(FAMILIES), help="pca (capePCA), otd (capeAGN) or lda (capeLDA and "
                   "paper 004's configurations); default pca, or otd when --model is given")
    p.add_argument("--vary", choices=tuple(PARAMETERS), help="the swept parameter: " + "; ".join(
        f"{k}: {v}" for k, v in PARAMETERS.items()))
    p.add_argument("--grid", metavar="V1,V2,...", help="grid values, comma separated (default: a grid for --vary)")
    p.add_argument("--algorithms", nargs="+", metavar="NAME", help=f"algorithms (default pca: "
                   f"{' '.join(default_algorithms('pca'))}; otd: {' '.join(default_algorithms('otd'))})")
    p.add_argument("--runs", type=integer(1, MAX_SWEEP_RUNS), help=f"runs R per grid point (default 10, at most "
                   f"{MAX_SWEEP_RUNS})")
    p.add_argument("--seed", type=SEED, help="seed of data, split and noise (default: the scenario's, presets 0)")
    p.add_argument("--out", metavar="CSV", help="write the tidy table here (checked writable before the sweep runs)")
    p.add_argument("--summary-out", metavar="CSV", help="write the summary table here")
    p.add_argument("--html", metavar="FILE", help="write the figure (curves and gain) as HTML with plotly.js embedded")
    p.add_argument("--metric", help="metric of the printed table and the figure (pca: captured_energy, "
                   "captured_energy_ratio, subspace_distance; otd: q_comp, q_comp_normalised, weight_error; lda: "
                   "topic_error; default: the preset's, else the first)")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.add_argument("--workers", type=WORKERS, metavar="W",
                   help=f"worker processes for the runs (default: {WORKERS_ENV} or the CPUs, at most {MAX_WORKERS}; "
                   "any number gives the same table byte for byte)")
    sites = p.add_argument_group("equal sites (without --scenario)")
    sites.add_argument("--sites", type=SITES, help="number of sites S (default 10 for pca, 5 for otd)")
    sites.add_argument("--ns", type=SITE_SIZE, help=f"samples per site N_s (default {DEFAULT_SITE_SIZE})")
    sites.add_argument("--eps", type=EPS, help="eps of every site (default 1)")
    sites.add_argument("--delta", type=DELTA, help="delta of every site (default 0.01, as in the paper)")
    sites.add_argument("--calibration", choices=CALIBRATIONS, help="Gaussian calibration (default classic)")
    sites.add_argument("--neighbouring", choices=NEIGHBOURING, help="neighbouring relation (default replace-one)")
    add_data_flags(p)
    p.set_defaults(func=run)


def add_data_flags(p: argparse.ArgumentParser) -> None:
    """The families' data flags (``Family.flags``, each under its family's heading, in the order of the families; a
    flag several families read once, as its first family declares it): the sweep and the plan command."""
    added: set[str] = set()
    for family in FAMILIES.values():
        rows = [flag for flag in family.flags if flag.name not in added]
        if rows:
            group = p.add_argument_group(family.flag_group or family.label)
            add_flags(group, rows)
            added.update(flag.name for flag in rows)


def _list_presets(as_json: bool) -> int:
    table_ = presets()
    if as_json:
        print_json({"calibration": PRESET_CALIBRATION, "quick": QUICK,
                    "presets": [p.to_dict() for p in table_.values()]})
        return 0
    rows = []
    reasons = {}
    for name, preset in table_.items():
        if preset.available:
            spec = preset.spec
            rows.append([name, preset.figure, "yes", f"{spec.label}: {', '.join(f'{v:g}' for v in spec.grid)}",
                         preset.title])
        else:
            reasons.setdefault(preset.unavailable, []).append(name)
            rows.append([name, preset.figure, "no (see below)", "-", preset.title])
    print(table(["preset", "figure", "available", "grid", "what"], rows))
    for reason, names in reasons.items():
        print(f"\nUnavailable ({', '.join(names)}): {reason}.")
    print(f"\nPCA and OTD presets: {PRESET_CALIBRATION}. LDA presets: {LDA_CALIBRATION}. --quick: {QUICK}.")
    return 0


def _base_scenario(args: argparse.Namespace, family: str) -> Scenario:
    if args.scenario:
        extra = [f"--{n}" for n in ("sites", "ns", "eps", "delta") if getattr(args, n) is not None]
        if extra:
            raise InputError(f"{', '.join(extra)} do(es) not apply with --scenario: the file sets the sites and "
                             "budgets")
        scenario = load_scenario(args.scenario)
    else:
        n_sites = FAMILIES[family].sweep_sites if args.sites is None else args.sites
        site = {"n": DEFAULT_SITE_SIZE if args.ns is None else args.ns,
                "eps": 1.0 if args.eps is None else args.eps,
                "delta": 0.01 if args.delta is None else args.delta}
        scenario = equal_sites_scenario(n_sites, site["n"], site["eps"], site["delta"])
    changes = {k: v for k, v in (("calibration", args.calibration), ("neighbouring", args.neighbouring)) if v}
    return scenario.replace(**changes) if changes else scenario


def _algorithm_list(args: argparse.Namespace, family: str) -> tuple[str, ...]:
    if not args.algorithms:
        return default_algorithms(family)
    allowed = tuple(algorithm_titles(family))
    names, unknown = algorithm_names(args.algorithms, algorithm_titles(family))
    if unknown:
        raise InputError(f"unknown {family} algorithm(s) {', '.join(unknown)}; choose from {', '.join(allowed)}")
    return tuple(names)


def family_data(args: argparse.Namespace, family: str) -> Any:
    """The family's data settings from the flags that set them (``OPTIONS`` of its data type); a flag not given
    keeps the type's default. ``--csv`` (pca): the file read as ``python -m dpcore pca`` reads it, kept for this
    process (:func:`dpcore.pca.sweep.register_upload`), its features standardised unless ``--features`` says."""
    data = FAMILIES[family].sweep.data
    fields = {field: getattr(args, flag) for flag, field in data.OPTIONS.items()
              if getattr(args, flag, None) is not None}
    csv_path = getattr(args, "csv", None)
    if csv_path:
        if "upload" not in data.__dataclass_fields__:
            raise InputError(f"--csv does not apply to a {family} sweep")
        dataset = load_csv(csv_path, getattr(args, "header", None) or "auto", getattr(args, "label_column", None)
                           or "auto")
        fields.setdefault("features", "standardise")
        fields["upload"] = register_upload(dataset)
    return data(**fields)


def _built_spec(args: argparse.Namespace) -> SweepSpec:
    family = args.family or ("otd" if args.model is not None else "pca")
    options = {name: tuple(f.sweep.data.OPTIONS) for name, f in FAMILIES.items()}
    given = {n for names in options.values() for n in names if getattr(args, n) is not None}
    wrong = sorted(given - set(options[family]))
    if wrong:
        names = ", ".join("--" + n.replace("_", "-") for n in wrong)
        raise InputError(f"{names} do(es) not apply to a {family} sweep")
    if args.vary is None:
        raise InputError("say what to vary: --vary " + "|".join(PARAMETERS) + " (or use --preset NAME)")
    scenario = _base_scenario(args, family)
    grid = parse_grid(args.grid, args.vary) if args.grid is not None else default_grid(args.vary, scenario)
    return SweepSpec(family=family, parameter=args.vary, grid=grid, algorithms=_algorithm_list(args, family),
                     scenario=scenario, data=family_data(args, family), runs=10 if args.runs is None else args.runs,
                     seed=scenario.seed if args.seed is None else args.seed)


def _preset_spec(args: argparse.Namespace) -> SweepSpec:
    given = ["--" + n.replace("_", "-") for n in _BUILD_OPTIONS if getattr(args, n, None) is not None]
    if args.precision is not None:
        given.append("--precision")
    if given:
        raise InputError(f"{', '.join(given)} do(es) not apply with --preset (it fixes the sweep); only --runs, "
                         "--seed, --algorithms and --quick change a preset")
    preset = get_preset(args.preset)
    if not preset.available:
        raise InputError(f"preset {preset.name} ({preset.figure}) is unavailable: {preset.unavailable}")
    spec = quick_spec(preset.spec) if args.quick else preset.spec
    changes = {}
    if args.runs is not None:
        changes["runs"] = args.runs
    if args.seed is not None:
        changes["seed"] = args.seed
    if args.algorithms:
        changes["algorithms"] = _algorithm_list(args, spec.family)
    return spec.replace(**changes) if changes else spec


def _progress(done: int, total: int, label: str) -> None:
    sys.stderr.write(f"\r{done}/{total} {label[:70]:<70}")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _inputs(args: argparse.Namespace, spec: SweepSpec) -> dict[str, str | Path]:
    """What the sweep reads: the scenario file, and the bundled data set's file (the copy it reads, when it is on the
    file system)."""
    inputs: dict[str, str | Path] = {}
    if getattr(args, "scenario", None):
        inputs["--scenario"] = args.scenario
    dataset = getattr(spec.data, "dataset", None)
    if dataset in BUNDLED:
        found = shipped_path(BUNDLED[dataset].file)
        if found is not None:
            inputs[f"the bundled data set {dataset}"] = found
    return inputs


def _check_figures(args: argparse.Namespace) -> None:
    """--html needs plotly, dpcore's figures extra: refused before the sweep when it is not installed."""
    if args.html and importlib.util.find_spec("plotly") is None:
        raise InputError("--html draws with plotly, which is not installed: pip install 'dpcore[figures]' (the "
                         "project's requirements.txt has it)", "--html")


def run(args: argparse.Namespace) -> int:  # long: the checks before any work, the sweep, its files and its table
    if args.list_presets:
        return _list_presets(args.json)
    if args.quick and not args.preset:
        raise InputError("--quick applies to --preset only")
    spec = _preset_spec(args) if args.preset else _built_spec(args)
    default_metric = get_preset(args.preset).metric if args.preset else next(iter(METRICS[spec.family]))
    metric = args.metric or default_metric
    if metric not in METRICS[spec.family]:
        raise InputError(f"--metric must be one of {', '.join(METRICS[spec.family])} for a {spec.family} sweep "
                         f"(got {metric!r})")
    # before the sweep: a bad path must not cost the results, and no output may be an input or another output
    outputs = check_outputs({"--out": args.out, "--summary-out": args.summary_out, "--html": args.html},
                            _inputs(args, spec))
    _check_figures(args)
    workers = worker_count(spec.runs, args.workers)  # checked before anything runs
    result = run_sweep(spec, progress=_progress if sys.stderr.isatty() and not args.json else None,
                       workers=workers)
    if args.out:
        write_atomic(outputs["--out"], result.to_csv(), "--out")
    if args.summary_out:
        write_atomic(outputs["--summary-out"], result.summary_csv(), "--summary-out")
    if args.html:
        from ..experiments.figures import figure_html  # plotly is imported only when a figure is written

        title = get_preset(args.preset).figure + " " + get_preset(args.preset).title if args.preset else None
        write_atomic(outputs["--html"], figure_html(result, metric, title=title), "--html")
    if args.json:
        print_json(result.to_dict())
        return 0
    for note in result.notes:
        say(f"note: {note}")
    if args.quick:
        print(f"Reduced variant: {quick_name(get_preset(args.preset), spec)}")
    print(spec.describe())
    print(f"{spec.scenario.n_sites} base site(s), {spec.scenario.calibration} calibration, "
          f"{spec.scenario.neighbouring} neighbours; {result.status()}; {result.seconds:.1f} s")
    titles = algorithm_titles(spec.family)
    summary = result.summary[result.summary["metric"] == metric]
    rows = []
    for value in spec.grid:
        at = summary[summary["value"] == float(value)]
        row = [f"{value:g}"]
        for algorithm in spec.algorithms:
            r = at[at["algorithm"] == algorithm].iloc[0]
            cell = fmt(r["mean"]) if r["runs"] else "failed"
            if r["runs"] > 1:
                cell += f" ± {fmt(r['ci_high'] - r['mean'], 2)}"
            if r["failed"]:
                cell += f" ({int(r['failed'])} failed)"
            row.append(cell)
        gains = result.gains[result.gains["value"] == float(value)]["gain"]
        row.append(" / ".join(fmt(g, 3) for g in gains))
        rows.append(row)
    print(f"{metric}: mean ± half-width of the 95% t-interval over runs")
    print(table([spec.label, *(titles[a] for a in spec.algorithms), "gain G"], rows))
    written = [f"{what} {path}" for what, path in (("table", args.out), ("summary", args.summary_out),
                                                    ("figure", args.html)) if path]
    if written:
        print("wrote " + ", ".join(written))
    return 0
