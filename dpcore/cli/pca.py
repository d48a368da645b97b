"""``python -m dpcore pca``: capePCA and its baselines on synthetic, bundled or CSV data.

Without ``--scenario`` the sites are equal (``--sites`` S, ``--site-size`` N_s) with the same ``--eps`` and
``--delta``, replace-one neighbours and the classic calibration. With ``--scenario`` the sites, sizes, budgets,
weights, tau_c, calibration and neighbouring relation come from the file; ``--eps``/``--delta`` then override
every site's budget.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from ..cape.guarantee import run_guarantee_records
from ..data import (
    BUNDLED,
    FEATURE_SCALINGS,
    PREPROCESSING,
    SIZE_SCHEMES,
    SPECTRA,
    Dataset,
    load_bundled,
    parse_label_column,
    parse_numeric_csv,
    site_sizes,
    sniff_columns,
    synthetic_dataset,
    table_to_dataset,
)
from ..limits import (
    CONCENTRATION_RANGE,
    DECAY_RANGE,
    MAX_RUNS,
    MAX_SITE_NUMBERS,
    MAX_SITES,
    MAX_SYNTHETIC_DIM,
    MAX_UPLOAD_BYTES,
    MAX_WORKERS,
)
from ..pca import ALGORITHMS, METRICS, SOLVER_DTYPES, compare_pca, default_algorithms, prepare_pca
from ..pca.guarantees import privacy_guarantees
from ..privacy import CALIBRATIONS, NEIGHBOURING
from ..scenario import Scenario, equal_sites_scenario, load_scenario
from ..seeding import PCA_SYNTHETIC_STREAM, SITE_SIZES_STREAM, stream_rng
from ..textio import printable, read_file
from ..validation import InputError
from ..workers import WORKERS_ENV, worker_count
from . import print_guarantees, print_json, print_rings, say
from .options import DELTA, EPS, POSITIVE, RUNS, SEED, SITE_SIZE, SITES, WORKERS, algorithm_choices, integer, real
from .table import fmt, metrics_text, table

DEFAULT_EPS = 0.5
DEFAULT_DELTA = 0.01
DEFAULT_SITES = 10
SYNTHETIC_SITE_SIZE = 1000


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "pca",
        help="compare capePCA with its baselines on synthetic, bundled or CSV data",
        description=f"Runs capePCA (the real message flow) and the baselines ({', '.join(ALGORITHMS)}) and prints, "
        f"per algorithm, the mean and standard deviation over runs of every metric ({metrics_text(METRICS)}). "
        "Preprocessing (centre or standardise, then scale by the largest norm or clip) is "
        "not private.",
    )
    data = p.add_mutually_exclusive_group()
    data.add_argument("--dataset", choices=(*BUNDLED, "synthetic"), default=None,
                      help="bundled data set or the synthetic Gaussian (default: synthetic)")
    data.add_argument("--csv", metavar="PATH", help="numeric CSV file, one sample per row (gzip accepted)")
    p.add_argument("--sites", type=SITES, default=None, metavar="S",
                   help=f"number of equal sites (default {DEFAULT_SITES}, at most {MAX_SITES})")
    p.add_argument("--scenario", metavar="FILE", help="scenario JSON: sites, sizes, budgets, calibration, neighbouring")
    p.add_argument("--eps", type=EPS, default=None, help=f"eps of every site (default {DEFAULT_EPS})")
    p.add_argument("--delta", type=DELTA, default=None, help=f"delta of every site (default {DEFAULT_DELTA})")
    p.add_argument("--k", type=integer(1, MAX_SYNTHETIC_DIM), default=10, metavar="K",
                   help="dimension of the subspace (default 10)")
    p.add_argument("--algorithms", nargs="+", choices=algorithm_choices(ALGORITHMS), default=list(default_algorithms()),
                   metavar="NAME", help=f"algorithms to run: {', '.join(ALGORITHMS)} (default "
                   f"{'all' if default_algorithms() == tuple(ALGORITHMS) else ' '.join(default_algorithms())})")
    p.add_argument("--runs", type=RUNS, default=10, help=f"runs per algorithm (default 10, at most {MAX_RUNS:,})")
    p.add_argument("--seed", type=SEED, default=0, help="seed of data generation, split and noise (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--site-size", type=SITE_SIZE, default=None, metavar="N_S",
                   help="samples per site without --scenario (default: all samples shared out; synthetic 1000)")
    p.add_argument("--split", choices=tuple(SIZE_SCHEMES), default="equal",
                   help="site sizes without --scenario: equal or skewed (Dirichlet)")
    p.add_argument("--concentration", type=real(*CONCENTRATION_RANGE), default=1.0,
                   help="Dirichlet concentration of a skewed split")
    _add_preprocessing_flags(p)
    p.add_argument("--calibration", choices=CALIBRATIONS, default=None,
                   help="Gaussian calibration (default classic, or the scenario's)")
    p.add_argument("--neighbouring", choices=NEIGHBOURING, default=None,
                   help="neighbouring relation (default replace-one, or the scenario's)")
    p.add_argument("--rank", type=integer(1, MAX_SYNTHETIC_DIM), default=None, metavar="R",
                   help="DPdisPCA rank R (default K)")
    p.add_argument("--precision", choices=SOLVER_DTYPES, default="float32",
                   help="precision of the eigen-decompositions of the noisy matrices (default float32: faster, its "
                   "error is orders of magnitude below the DP noise; see docs/math/capepca.md)")
    p.add_argument("--workers", type=WORKERS, metavar="W",
                   help=f"worker processes for the runs (default: {WORKERS_ENV} or the CPUs, at most {MAX_WORKERS}; "
                   "any number gives the same numbers)")
    p.add_argument("--dim", type=integer(2, MAX_SYNTHETIC_DIM), default=200,
                   help=f"synthetic: dimension D (default 200, at most {MAX_SYNTHETIC_DIM:,}; N x D at most "
                   f"{MAX_SITE_NUMBERS:,})")
    p.add_argument("--spectrum", choices=SPECTRA, default="power", help="synthetic: eigenvalue decay shape")
    p.add_argument("--decay", type=real(*DECAY_RANGE), default=1.0, help="synthetic: decay rate of the spectrum")
    p.add_argument("--header", choices=("auto", "yes", "no"), default="auto", help="CSV: is the first row a header?")
    p.add_argument("--label-column", default="auto", metavar="NAME|POS|auto|none",
                   help="CSV: column holding labels, excluded from the features (name, or position 1..D, -1 = last; "
                   "auto, the default, as the capePCA and Planner pages and `plan --csv`: the column of text or of "
                   "few distinct whole numbers, if any; none: every column is a feature)")
    p.set_defaults(func=run)


def _add_preprocessing_flags(p: argparse.ArgumentParser) -> None:
    """The split by label, sampling with replacement, the feature scaling and the norm bound (docs/data.md)."""
    p.add_argument("--by-label", action="store_true", help="non-IID split: sort samples by label before dealing")
    replacement = p.add_mutually_exclusive_group()
    replacement.add_argument("--with-replacement", action="store_true",
                             help="when the sites need more samples than exist, draw the shortfall again (a record "
                             "used m times is protected only as a group of m records; nothing accounts for it)")
    replacement.add_argument("--no-replacement", action="store_true",
                             help="fail when the sites need more samples than exist (the default)")
    p.add_argument("--features", choices=tuple(FEATURE_SCALINGS), default="centre",
                   help="feature scaling before the norm bound: " + "; ".join(
                       f"{k}: {v}" for k, v in FEATURE_SCALINGS.items()) + " (default centre)")
    p.add_argument("--preprocess", choices=tuple(PREPROCESSING), default="max-norm",
                   help="norm bound after the feature scaling: max-norm (the papers') or clip to norm 1 after dividing "
                   "by --scale")
    p.add_argument("--scale", type=POSITIVE, default=1.0, help="public scale divided out before clipping")


def _load_csv(path: str, header: str, label_column: str | None) -> Dataset:
    file = Path(path)
    content = read_file(path, MAX_UPLOAD_BYTES, "CSV file")
    flag = {"auto": None, "yes": True, "no": False}[header]
    try:
        if label_column is None or label_column == "auto":
            label: str | int | None = sniff_columns(content, header=flag).label
        elif label_column == "none":
            label = None
        else:
            label = parse_label_column(label_column)
        table_ = parse_numeric_csv(content, header=flag, label_column=label)
    except InputError as exc:
        raise InputError(f"{path}: {exc}", exc.field) from exc
    return table_to_dataset(table_, file.name)


def _build_scenario(args: argparse.Namespace, n_available: int | None) -> Scenario:
    if args.scenario:
        if args.sites is not None or args.site_size is not None or args.split != "equal":
            raise InputError("--sites, --site-size and --split do not apply with --scenario: its sites set the number "
                             "and sizes of the sites")
        scenario = load_scenario(args.scenario)
        changes: dict[str, Any] = {}
        if args.eps is not None:
            changes["eps"] = args.eps
        if args.delta is not None:
            changes["delta"] = args.delta
        if changes:
            scenario = scenario.with_sites(**changes)
        overrides = {k: v for k, v in (("calibration", args.calibration), ("neighbouring", args.neighbouring)) if v}
        return scenario.replace(**overrides) if overrides else scenario
    n_sites = DEFAULT_SITES if args.sites is None else args.sites
    eps = DEFAULT_EPS if args.eps is None else args.eps
    delta = DEFAULT_DELTA if args.delta is None else args.delta
    if args.site_size is not None:
        total = n_sites * args.site_size
    elif n_available is None:
        total = n_sites * SYNTHETIC_SITE_SIZE
    else:
        if n_available < n_sites:
            raise InputError(f"{n_sites} sites need at least {n_sites} samples; the data set has {n_available}")
        total = n_available - n_available % n_sites if args.split == "equal" else n_available
    sizes = site_sizes(total, n_sites, args.split, rng=stream_rng(args.seed, SITE_SIZES_STREAM),
                       concentration=args.concentration)
    equal = equal_sites_scenario(n_sites, 1, eps, delta, calibration=args.calibration or "classic",
                                 neighbouring=args.neighbouring or "replace-one", seed=int(args.seed))
    return equal.with_sizes(sizes)


def run(args: argparse.Namespace) -> int:
    runs = args.runs
    if args.csv:
        dataset: Dataset | None = _load_csv(args.csv, args.header, args.label_column)
    elif args.dataset in BUNDLED:
        dataset = load_bundled(args.dataset)
    else:
        dataset = None
    scenario = _build_scenario(args, None if dataset is None else dataset.n_samples)
    if dataset is None:
        dim = args.dim
        dataset = synthetic_dataset(scenario.total_n, stream_rng(args.seed, PCA_SYNTHETIC_STREAM), dim=dim,
                                    spectrum=args.spectrum, decay=args.decay)
    workers = worker_count(runs, args.workers)  # checked before anything runs
    setup = prepare_pca(dataset, scenario, args.k, preprocessing=args.preprocess, scale=args.scale,
                        by_label=args.by_label, allow_replacement=args.with_replacement, seed=args.seed,
                        features=args.features,
                        solver_dtype=args.precision)
    comparison = compare_pca(setup.problem, setup.privacy, args.algorithms, runs, args.seed, rank=args.rank,
                             workers=workers)
    settings = {
        "dataset": dataset.name, "dim": dataset.dim, "samples": dataset.n_samples, "k": setup.problem.k,
        "sites": scenario.n_sites, "site_sizes": scenario.sizes.tolist(), "eps": scenario.eps.tolist(),
        "delta": scenario.delta.tolist(), "calibration": scenario.calibration, "neighbouring": scenario.neighbouring,
        "features": args.features, "preprocessing": args.preprocess, "with_replacement": setup.split.with_replacement,
        "by_label": setup.split.by_label, "runs": runs, "seed": args.seed,
        "dpdis_rank": args.rank if args.rank is not None else setup.problem.k, "precision": args.precision,
    }
    guarantees = privacy_guarantees(setup.privacy, comparison.results)
    if args.json:
        print_json({"results": comparison.records(), "settings": settings, "communication": comparison.communication,
                    "bits_per_value": comparison.bits_per_value(), "guarantees": run_guarantee_records(guarantees),
                    "notes": list(setup.notes) + [n for n in comparison.notes if n not in setup.notes]})
        return 0
    for note in list(setup.notes) + [n for n in comparison.notes if n not in setup.notes]:
        say(f"note: {note}")
    same_budget = len(set(scenario.eps)) == 1 and len(set(scenario.delta)) == 1
    budget = (f"eps = {scenario.eps[0]:g}, delta = {scenario.delta[0]:g} at every site" if same_budget
              else "per-site budgets from the scenario")
    sizes = scenario.sizes
    size_text = f"N_s = {sizes[0]:,}" if np.all(sizes == sizes[0]) else f"N_s = {', '.join(f'{n:,}' for n in sizes)}"
    print(f"{printable(dataset.name)}: D = {dataset.dim}, {dataset.n_samples:,} samples; S = {scenario.n_sites} sites "
          f"({size_text}"
          f"{', resampled with replacement' if setup.split.with_replacement else ''}); K = {setup.problem.k}; "
          f"{runs} runs, seed {args.seed}")
    print(f"{scenario.calibration} calibration, {scenario.neighbouring} neighbours, {budget}")
    by_key = {(m.algorithm, m.metric): m for m in comparison.summary}
    rows = []
    for algorithm in comparison.results:
        row: list[Any] = [algorithm]
        for metric in METRICS:
            m = by_key[(algorithm, metric)]
            row.append(f"{fmt(m.mean)} ± {fmt(m.std, 2)}")
        row.append(comparison.communication[algorithm])
        rows.append(row)
    print(table(["algorithm", *(m.column for m in METRICS.values()), "numbers sent"], rows))
    print_rings(comparison.bits_per_value(), ALGORITHMS)
    print_guarantees(guarantees)
    return 0
