"""The argument table of ``dpcore otd`` (:class:`dpcore.family.FamilyCommand`, ``Family.command``): capeAGN's own
flags as data; the command line builds the parser from them (:mod:`dpcore.cli.family_command`)."""

from __future__ import annotations

from ..family import FamilyCommand, Flag
from ..limits import (
    DEFAULT_MEMORY_BUDGET,
    DELTA_RANGE,
    EPS_RANGE,
    MAX_COMPONENTS,
    MAX_DOC_LENGTH,
    MAX_OTD_DIM,
    MAX_OTD_SAMPLES,
    MAX_POWER_ITERATIONS,
    MAX_POWER_RESTARTS,
    MAX_PUBLISHED_PROJECTED_K,
    MAX_RUNS,
    MAX_SEED,
    MAX_SIGMA2,
    MAX_SITE_SIZE,
    MAX_SITES,
    MAX_WORKERS,
    MEMORY_BUDGET_RANGE,
    NORM_BOUND_RANGE,
    SPLIT_RANGE,
)
from ..privacy import CALIBRATIONS, NEIGHBOURING
from ..tensor import DEFAULT_ITERATIONS, DEFAULT_RESTARTS, ESTIMATORS, M3_NOISE, PATHS
from ..workers import WORKERS_ENV
from .models import DEFAULT_SIGMA2, MODELS, TRUTHS
from .table import ALGORITHMS, default_algorithms

__all__ = ["COMMAND"]

_DEFAULTS = default_algorithms()

COMMAND = FamilyCommand(
    help="capeAGN: distributed private tensor decomposition (MOG or single topic model) and baselines",
    description="Run capeAGN and its baselines R times on a synthetic mixture of Gaussians (mog) or single topic "
    "model (stm), or on uploaded data (--data), and report every metric ({metrics}). Sites and budgets come from "
    "--scenario or from --sites/--ns/--eps/--delta (which override the file's values when both are given).",
    arguments=(
        Flag(name="--model", choices=MODELS, required=True, help="mog (mixture of Gaussians) or stm (single topic)"),
        Flag(name="--d", integer=(2, MAX_OTD_DIM), help=f"dimension D (vocabulary size for stm; 2 to "
             f"{MAX_OTD_DIM:,}); default 10 for synthetic data"),
        Flag(name="--k", integer=(1, MAX_COMPONENTS), help=f"number of components K (default 5, at most "
             f"{MAX_COMPONENTS})"),
        Flag(name="--sites", integer=(1, MAX_SITES), help="number of sites S (default 5 without --scenario)"),
        Flag(name="--ns", integer=(1, MAX_SITE_SIZE), help=f"samples per site N_s (default 1000 without --scenario; "
             f"S x N_s at most {MAX_OTD_SAMPLES:,})"),
        Flag(name="--scenario", metavar="FILE", help="scenario JSON (sites, budgets, weights, relation, "
             "calibration)"),
        Flag(name="--eps", real=EPS_RANGE, help="total eps per site, split between the two stages (default 1)"),
        Flag(name="--delta", real=DELTA_RANGE, high_open=True, help="total delta per site (default 0.01, as in the "
             "paper)"),
        Flag(name="--algorithms", nargs="+", metavar="NAME", default=_DEFAULTS,
             help=f"any of {', '.join(ALGORITHMS)} (default: {' '.join(_DEFAULTS)})"),
        Flag(name="--runs", integer=(1, MAX_RUNS), default=10, help=f"number of runs R (default 10, as in the paper; "
             f"at most {MAX_RUNS:,})"),
        Flag(name="--seed", integer=(0, MAX_SEED), help="seed of the model, the data and all noise (default: the "
             "scenario's)"),
        Flag(name="--path", choices=PATHS, default="auto",
             help="third moment: dense D^3 tensors, projected (no D^3 array), or auto (dense when it fits the memory "
             "budget)"),
        Flag(name="--memory-budget", real=(MEMORY_BUDGET_RANGE[0] / 2**20, MEMORY_BUDGET_RANGE[1] / 2**20),
             default=DEFAULT_MEMORY_BUDGET / 2**20, metavar="MIB",
             help=f"memory budget in MiB that decides the path (default {DEFAULT_MEMORY_BUDGET // 2**20}; "
             f"{MEMORY_BUDGET_RANGE[0] // 2**20} to {MEMORY_BUDGET_RANGE[1] // 2**20:,})"),
        Flag(name="--split", real=SPLIT_RANGE, default=0.5, help="share of eps and delta for the first stage, from "
             f"{SPLIT_RANGE[0]:g} to {SPLIT_RANGE[1]:g} (default 0.5)"),
        Flag(name="--collusion", integer=(0, MAX_SITES - 1), metavar="C",
             help="capeAGN with the collusion-robust design for up to C colluding sites (0 to S - 1): every view keeps "
             "the promised eps, at a cost in accuracy; default: the plain design, whose aggregator may learn more "
             "than promised (the guarantees say)"),
        Flag(name="--m3-noise", choices=tuple(M3_NOISE), default="published",
             help="third-moment noise law: published (i.i.d. unique entries, the paper's; default; projected path up "
             f"to K = {MAX_PUBLISHED_PROJECTED_K}) or symmetrized (more noise on repeated indices, any K)"),
        Flag(name="--restarts", integer=(1, MAX_POWER_RESTARTS), default=DEFAULT_RESTARTS,
             help=f"tensor power method restarts L (at most {MAX_POWER_RESTARTS:,})"),
        Flag(name="--iterations", integer=(1, MAX_POWER_ITERATIONS), default=DEFAULT_ITERATIONS,
             help=f"tensor power method iterations N (at most {MAX_POWER_ITERATIONS:,})"),
        Flag(name="--sigma2", real=(0.0, MAX_SIGMA2), help=f"MOG component variance sigma^2 (default {DEFAULT_SIGMA2}; "
             "for --data: estimated from the data when omitted, which is not private)"),
        Flag(name="--doc-length", integer=(3, MAX_DOC_LENGTH), default=3,
             help=f"STM words per synthetic document, 3 <= L <= {MAX_DOC_LENGTH}"),
        Flag(name="--estimator", choices=tuple(ESTIMATORS), help="STM moment estimator (default first; count CSVs use "
             "all)"),
        Flag(name="--calibration", choices=CALIBRATIONS, help="Gaussian calibration (default classic, as the paper)"),
        Flag(name="--neighbouring", choices=NEIGHBOURING, help="neighbouring relation (default replace-one)"),
        Flag(name="--data", metavar="FILE", help="uploaded data: numeric CSV of samples (mog); text, one document per "
             "line, or a .csv document-term count table (stm)"),
        Flag(name="--vocabulary", metavar="FILE", help="stm: a public vocabulary file (one word per line); it sets D, "
             "so it does not go with --d"),
        Flag(name="--norm-bound", real=NORM_BOUND_RANGE, help="mog --data: public bound on sample norms (default: the "
             "largest norm, not private)"),
        Flag(name="--truth", choices=tuple(TRUTHS), default="ours",
             help="synthetic ground truth: ours (default: " + TRUTHS["ours"] + ") or authors (" + TRUTHS["authors"]
             + ")"),
        Flag(name="--workers", integer=(1, MAX_WORKERS), metavar="W",
             help=f"worker processes for the runs (default: {WORKERS_ENV} or the CPUs, at most {MAX_WORKERS}; any "
             "number gives the same results)"),
        Flag(name="--json", action="store_true", help="print JSON instead of a table"),
    ),
)
"""In the order of the help."""
