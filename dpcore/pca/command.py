"""The argument table of ``dpcore pca`` (:class:`dpcore.family.FamilyCommand`, ``Family.command``): capePCA's own
flags as data; the command line builds the parser from them (:mod:`dpcore.cli.family_command`)."""

from __future__ import annotations

from ..data import BUNDLED, FEATURE_SCALINGS, PREPROCESSING, SIZE_SCHEMES, SPECTRA
from ..family import FamilyCommand, Flag
from ..limits import (
    CONCENTRATION_RANGE,
    DECAY_RANGE,
    DELTA_RANGE,
    EPS_RANGE,
    MAX_RUNS,
    MAX_SEED,
    MAX_SITE_NUMBERS,
    MAX_SITE_SIZE,
    MAX_SITES,
    MAX_SYNTHETIC_DIM,
    MAX_WORKERS,
)
from ..privacy import CALIBRATIONS, NEIGHBOURING
from ..workers import WORKERS_ENV
from .problem import SOLVER_DTYPES
from .table import ALGORITHMS, default_algorithms

__all__ = ["COMMAND", "DEFAULT_DELTA", "DEFAULT_EPS", "DEFAULT_SITES", "SYNTHETIC_SITE_SIZE"]

DEFAULT_EPS = 0.5
DEFAULT_DELTA = 0.01
DEFAULT_SITES = 10
SYNTHETIC_SITE_SIZE = 1000
_DEFAULTS = default_algorithms()

COMMAND = FamilyCommand(
    help="compare capePCA with its baselines on synthetic, bundled or CSV data",
    description=f"Runs capePCA (the real message flow) and the baselines ({', '.join(ALGORITHMS)}) and prints, "
    "per algorithm, the mean and standard deviation over runs of every metric ({metrics}). Preprocessing (centre or "
    "standardise, then scale by the largest norm or clip) is not private.",
    arguments=(
        Flag(name="--dataset", choices=(*BUNDLED, "synthetic"), exclusive="data",
             help="bundled data set or the synthetic Gaussian (default: synthetic)"),
        Flag(name="--csv", metavar="PATH", exclusive="data", help="numeric CSV file, one sample per row (gzip "
             "accepted)"),
        Flag(name="--sites", integer=(1, MAX_SITES), metavar="S",
             help=f"number of equal sites (default {DEFAULT_SITES}, at most {MAX_SITES})"),
        Flag(name="--scenario", metavar="FILE", help="scenario JSON: sites, sizes, budgets, calibration, "
             "neighbouring"),
        Flag(name="--eps", real=EPS_RANGE, help=f"eps of every site (default {DEFAULT_EPS})"),
        Flag(name="--delta", real=DELTA_RANGE, high_open=True, help=f"delta of every site (default {DEFAULT_DELTA})"),
        Flag(name="--k", integer=(1, MAX_SYNTHETIC_DIM), default=10, metavar="K",
             help="dimension of the subspace (default 10)"),
        Flag(name="--algorithms", nargs="+", algorithms=True, default=_DEFAULTS, metavar="NAME",
             help=f"algorithms to run: {', '.join(ALGORITHMS)} (default "
             f"{'all' if _DEFAULTS == tuple(ALGORITHMS) else ' '.join(_DEFAULTS)})"),
        Flag(name="--runs", integer=(1, MAX_RUNS), default=10,
             help=f"runs per algorithm (default 10, at most {MAX_RUNS:,})"),
        Flag(name="--seed", integer=(0, MAX_SEED), default=0, help="seed of data generation, split and noise (default "
             "0)"),
        Flag(name="--json", action="store_true", help="print JSON instead of a table"),
        Flag(name="--site-size", integer=(1, MAX_SITE_SIZE), metavar="N_S",
             help="samples per site without --scenario (default: all samples shared out; synthetic 1000)"),
        Flag(name="--split", choices=tuple(SIZE_SCHEMES), default="equal",
             help="site sizes without --scenario: equal or skewed (Dirichlet)"),
        Flag(name="--concentration", real=CONCENTRATION_RANGE, default=1.0,
             help="Dirichlet concentration of a skewed split"),
        Flag(name="--by-label", action="store_true", help="non-IID split: sort samples by label before dealing"),
        Flag(name="--with-replacement", action="store_true", exclusive="replacement",
             help="when the sites need more samples than exist, draw the shortfall again (a record used m times is "
             "protected only as a group of m records; nothing accounts for it)"),
        Flag(name="--no-replacement", action="store_true", exclusive="replacement",
             help="fail when the sites need more samples than exist (the default)"),
        Flag(name="--features", choices=tuple(FEATURE_SCALINGS), default="centre",
             help="feature scaling before the norm bound: " + "; ".join(
                 f"{k}: {v}" for k, v in FEATURE_SCALINGS.items()) + " (default centre)"),
        Flag(name="--preprocess", choices=tuple(PREPROCESSING), default="max-norm",
             help="norm bound after the feature scaling: max-norm (the papers') or clip to norm 1 after dividing by "
             "--scale"),
        Flag(name="--scale", real=(0.0, 1e12), low_open=True, default=1.0,
             help="public scale divided out before clipping"),
        Flag(name="--calibration", choices=CALIBRATIONS, help="Gaussian calibration (default classic, or the "
             "scenario's)"),
        Flag(name="--neighbouring", choices=NEIGHBOURING, help="neighbouring relation (default replace-one, or the "
             "scenario's)"),
        Flag(name="--rank", integer=(1, MAX_SYNTHETIC_DIM), metavar="R", help="DPdisPCA rank R (default K)"),
        Flag(name="--precision", choices=SOLVER_DTYPES, default="float32",
             help="precision of the eigen-decompositions of the noisy matrices (default float32: faster, its error is "
             "orders of magnitude below the DP noise; see docs/math/capepca.md)"),
        Flag(name="--workers", integer=(1, MAX_WORKERS), metavar="W",
             help=f"worker processes for the runs (default: {WORKERS_ENV} or the CPUs, at most {MAX_WORKERS}; any "
             "number gives the same numbers)"),
        Flag(name="--dim", integer=(2, MAX_SYNTHETIC_DIM), default=200,
             help=f"synthetic: dimension D (default 200, at most {MAX_SYNTHETIC_DIM:,}; N x D at most "
             f"{MAX_SITE_NUMBERS:,})"),
        Flag(name="--spectrum", choices=SPECTRA, default="power", help="synthetic: eigenvalue decay shape"),
        Flag(name="--decay", real=DECAY_RANGE, default=1.0, help="synthetic: decay rate of the spectrum"),
        Flag(name="--header", choices=("auto", "yes", "no"), default="auto", help="CSV: is the first row a header?"),
        Flag(name="--label-column", default="auto", metavar="NAME|POS|auto|none",
             help="CSV: column holding labels, excluded from the features (name, or position 1..D, -1 = last; auto, "
             "the default, as the capePCA and Planner pages and `plan --csv`: the column of text or of few distinct "
             "whole numbers, if any; none: every column is a feature)"),
    ),
)
"""In the order of the help."""
