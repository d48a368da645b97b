"""capePCA's hooks of the one run command (``python -m dpcore pca``; :func:`dpcore.cli.family_command.run_family`):
its data forms - a bundled data set, the synthetic Gaussian or a CSV file, and the sites built from ``--sites``,
``--site-size``, ``--split`` or a scenario file (:func:`prepare`) - and how it shows a result (:data:`VIEW`: the
story lines, the table with the numbers each algorithm sends, the JSON record).

Without ``--scenario`` the sites are equal (``--sites`` S, ``--site-size`` N_s) with the same ``--eps`` and
``--delta``, replace-one neighbours and the classic calibration. With ``--scenario`` the sites, sizes, budgets,
weights, tau_c, calibration and neighbouring relation come from the file; ``--eps``/``--delta`` then override
every site's budget.
"""

from __future__ import annotations

from dataclasses import replace
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
    table_to_dataset,
)
from ..family import CommandJob, CommandView, Comparison
from ..family.summary_table import fmt
from ..limits import MAX_UPLOAD_BYTES
from ..scenario import Scenario, equal_sites_scenario, load_scenario
from ..seeding import SITE_SIZES_STREAM, stream_rng
from ..textio import printable, read_file
from ..validation import InputError
from ..workers import worker_count
from .command import COMMAND, DEFAULT_DELTA, DEFAULT_EPS, DEFAULT_SITES, SYNTHETIC_SITE_SIZE
from .contract import PcaDetail, PcaRunData
from .metrics import METRICS
from .sweep import register_upload

__all__ = ["RUN_COMMAND", "VIEW", "load_csv", "prepare"]


def load_csv(path: str, header: str, label_column: str | None) -> Dataset:
    """A numeric CSV file as a data set (``header`` "auto", "yes" or "no"; ``label_column`` a name, a position,
    "auto" or "none"); an error names the file."""
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


def _scenario(args: Any, n_available: int | None) -> Scenario:
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


def prepare(args: Any) -> CommandJob:
    """The job of ``dpcore pca``: the data set (a CSV file is read and kept for this process,
    :func:`~dpcore.pca.sweep.register_upload`), the scenario, the data settings (:class:`PcaRunData`) and the
    workers, every one checked before any work."""
    if args.csv:
        dataset: Dataset | None = load_csv(args.csv, args.header, args.label_column)
    elif args.dataset in BUNDLED:
        dataset = load_bundled(args.dataset)
    else:
        dataset = None
    scenario = _scenario(args, None if dataset is None else dataset.n_samples)
    data = PcaRunData(dataset=args.dataset if args.dataset in BUNDLED else "synthetic",
                      upload=register_upload(dataset) if args.csv else None, k=args.k, dim=args.dim,
                      spectrum=args.spectrum, decay=args.decay, preprocessing=args.preprocess, features=args.features,
                      rank=args.rank, solver_dtype=args.precision, scale=args.scale, by_label=args.by_label,
                      allow_replacement=args.with_replacement)
    workers = worker_count(args.runs, args.workers)  # checked before anything runs
    return CommandJob(scenarios=(scenario,), data=data, algorithms=tuple(args.algorithms), runs=args.runs,
                      seed=args.seed, workers=workers, context=args)


def _detail(comparison: Comparison) -> PcaDetail:
    return comparison.detail


def _settings(job: CommandJob, comparison: Comparison) -> dict[str, Any]:
    setup, args, scenario = _detail(comparison).setup, job.context, comparison.scenario
    return {
        "dataset": setup.dataset.name, "dim": setup.dataset.dim, "samples": setup.dataset.n_samples,
        "k": setup.problem.k, "sites": scenario.n_sites, "site_sizes": scenario.sizes.tolist(),
        "eps": scenario.eps.tolist(), "delta": scenario.delta.tolist(), "calibration": scenario.calibration,
        "neighbouring": scenario.neighbouring, "features": args.features, "preprocessing": args.preprocess,
        "with_replacement": setup.split.with_replacement, "by_label": setup.split.by_label, "runs": job.runs,
        "seed": job.seed, "dpdis_rank": args.rank if args.rank is not None else setup.problem.k,
        "precision": args.precision,
    }


def _record(job: CommandJob, comparisons: tuple[Comparison, ...]) -> dict[str, Any]:
    comparison = comparisons[0]
    result = _detail(comparison).comparison
    return {"results": result.records(), "settings": _settings(job, comparison),
            "communication": result.communication, "bits_per_value": comparison.bits_per_value,
            "guarantees": run_guarantee_records(comparison.guarantees), "notes": list(comparison.notes)}


def _header(job: CommandJob, comparisons: tuple[Comparison, ...]) -> list[str]:
    comparison = comparisons[0]
    setup, scenario = _detail(comparison).setup, comparison.scenario
    dataset = setup.dataset
    same_budget = len(set(scenario.eps)) == 1 and len(set(scenario.delta)) == 1
    budget = (f"eps = {scenario.eps[0]:g}, delta = {scenario.delta[0]:g} at every site" if same_budget
              else "per-site budgets from the scenario")
    sizes = scenario.sizes
    size_text = f"N_s = {sizes[0]:,}" if np.all(sizes == sizes[0]) else f"N_s = {', '.join(f'{n:,}' for n in sizes)}"
    return [f"{printable(dataset.name)}: D = {dataset.dim}, {dataset.n_samples:,} samples; S = {scenario.n_sites} "
            f"sites ({size_text}{', resampled with replacement' if setup.split.with_replacement else ''}); "
            f"K = {setup.problem.k}; {job.runs} runs, seed {job.seed}",
            f"{scenario.calibration} calibration, {scenario.neighbouring} neighbours, {budget}"]


def _table(job: CommandJob, comparison: Comparison) -> tuple[list[str], list[list[Any]]]:
    communication = _detail(comparison).comparison.communication
    rows = [[name, *(f"{fmt(s.mean)} ± {fmt(s.std, 2)}" for s in (comparison.summary(name, m) for m in METRICS)),
             communication[name]] for name in comparison.algorithms]
    return ["algorithm", *(m.column for m in METRICS.values()), "numbers sent"], rows


VIEW = CommandView(header=_header, table=_table, record=_record, names="name")
"""How ``dpcore pca`` shows a result: the table and the privacy lines name each algorithm by its name."""

RUN_COMMAND = replace(COMMAND, prepare=prepare, view=VIEW)
"""capePCA's command: its argument table (:data:`dpcore.pca.command.COMMAND`) with these hooks."""
