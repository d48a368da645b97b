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
    Dataset,
    load_bundled,
    parse_label_column,
    parse_numeric_csv,
    site_sizes,
    sniff_columns,
    synthetic_dataset,
    table_to_dataset,
)
from ..limits import MAX_UPLOAD_BYTES
from ..pca import ALGORITHMS, FAMILY, METRICS, compare_pca, prepare_pca
from ..pca.command import DEFAULT_DELTA, DEFAULT_EPS, DEFAULT_SITES, SYNTHETIC_SITE_SIZE
from ..pca.guarantees import privacy_guarantees
from ..scenario import Scenario, equal_sites_scenario, load_scenario
from ..seeding import PCA_SYNTHETIC_STREAM, SITE_SIZES_STREAM, stream_rng
from ..textio import printable, read_file
from ..validation import InputError
from ..workers import worker_count
from . import print_guarantees, print_json, print_rings, say
from .family_command import register_family
from .table import fmt, table


def register(sub: argparse._SubParsersAction) -> None:
    """``dpcore pca``, its parser built from capePCA's argument table (``FAMILY.command``,
    :mod:`dpcore.pca.command`)."""
    register_family(sub, FAMILY, run)


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
