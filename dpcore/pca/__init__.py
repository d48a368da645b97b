"""capePCA and its baselines (docs/math/capepca.md): the problem and privacy set-up, one module per algorithm
collected in one table, the comparison over runs, metrics, and the preparation from a data set.

Conventions: data are D x N_s matrices with one sample per column and ||x|| <= 1; a symmetric D x D matrix
travels as its D(D+1)/2 unique entries, so every released matrix and every noise term is symmetric by
construction (docs/math/corrections.md, item 1). Noise is standard normals scaled by a standard deviation, drawn
in a fixed order whose length does not depend on eps or delta, from a stream keyed by the algorithm's name
(:func:`dpcore.seeding.run_rng`): re-seeding reproduces the same draws at any privacy level (common random
numbers for sweeps). numpy's generators are not cryptographically secure (docs/math/corrections.md, item 9).

Imports the bottom layer, privacy, data, scenario and cape.
"""

from .algorithm import PcaOptions
from .algorithms.cape import CapeMessages, cape_aggregate, cape_messages, cape_pca
from .algorithms.central import central_pca
from .algorithms.conv import conv_pca
from .algorithms.dpdis import dpdis_pca
from .algorithms.local import local_pca
from .algorithms.nonpriv import nonpriv_pca
from .algorithms.pool_ag import pool_ag_pca
from .compare import PcaComparison, compare_pca, summarise
from .family import FAMILY
from .front import capepca
from .metrics import METRICS, align_signs, captured_energy, noise_spectral_norm, scree, subspace_distance
from .problem import SOLVER_DTYPES, PcaPrivacy, PcaProblem, pca_privacy, pca_problem
from .result import PcaResult
from .setup import PcaSetup, noise_dominance_note, prepare_pca
from .table import (
    ALGORITHMS,
    algorithm,
    check_algorithms,
    communication_volume,
    default_algorithms,
    paper_algorithms,
    run_algorithm,
)

__all__ = [
    "capepca",
    "SOLVER_DTYPES",
    "ALGORITHMS",
    "FAMILY",
    "METRICS",
    "CapeMessages",
    "PcaComparison",
    "PcaOptions",
    "PcaPrivacy",
    "PcaProblem",
    "PcaResult",
    "PcaSetup",
    "algorithm",
    "align_signs",
    "cape_aggregate",
    "cape_messages",
    "cape_pca",
    "captured_energy",
    "central_pca",
    "check_algorithms",
    "communication_volume",
    "compare_pca",
    "conv_pca",
    "default_algorithms",
    "dpdis_pca",
    "local_pca",
    "noise_dominance_note",
    "noise_spectral_norm",
    "nonpriv_pca",
    "paper_algorithms",
    "pca_privacy",
    "pca_problem",
    "pool_ag_pca",
    "prepare_pca",
    "run_algorithm",
    "scree",
    "subspace_distance",
    "summarise",
]
