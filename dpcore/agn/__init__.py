"""capeAGN: distributed private orthogonal tensor decomposition, its baselines, the dense and projected paths
(docs/math/capeagn.md; Algorithm 3 of the journal paper, appendix E of the preprint, paper 001 Alg. 3).

1. Sites release M2_hat_s = M2_s + E2_s + F2_s + G2_s (symmetric; budget eps1 = a eps, delta1 = a delta,
   a = ``eps_split``). The aggregator forms M2_hat = sum_s mu_s (M2_hat_s - F2_s), whitens with its top-K
   eigenpairs, W = U D^{-1/2} (:mod:`~dpcore.tensor.whitening`).
2. Sites release M3_tilde_s = (M3_s + E3_s + F3_s + G3_s)(W, W, W) (budget (1 - a) eps, (1 - a) delta); the
   aggregator forms M3_tilde = sum_s mu_s (M3_tilde_s - F3_s(W, W, W)) (:mod:`~dpcore.tensor.release`, on the dense
   or the projected path: :mod:`~dpcore.tensor.paths`).
3. Robust tensor power method and recovery a_k = lambda_k U D^{1/2} u_k, w_k = 1 / lambda_k^2 renormalised
   (:mod:`~dpcore.tensor.power`); the online tensor power method of paper 001 (Alg. 2), a memory-light non-private
   path that streams the samples (:mod:`~dpcore.tensor.online`).

Models and moments: :mod:`~dpcore.agn.models`, :mod:`~dpcore.tensor.moments`; algorithms: one table
(:mod:`~dpcore.agn.table`) filled by :mod:`dpcore.agn.algorithms`; comparisons over runs: :mod:`~dpcore.agn.compare`.
Imports the bottom layer, privacy, data, scenario and cape.
"""

from ..tensor import DEFAULT_ITERATIONS, DEFAULT_RESTARTS, ESTIMATORS, M3_NOISE, PATHS, WhiteningError
from .compare import AlgorithmRun, OtdComparison, compare_algorithms
from .evaluation import METRICS, evaluate, evaluate_metrics, match_components, q_comp, q_comp_normalised
from .family import FAMILY
from .front import capeagn
from .models import (
    DEFAULT_SIGMA2,
    DEFAULT_TOPIC_CONCENTRATION,
    DEFAULT_WEIGHT_CONCENTRATION,
    MODELS,
    OTD_PRESETS,
    TRUTHS,
    MixtureModel,
    Truth,
    authors_truth,
    make_model,
    mog_norm_bound,
    random_components,
    sample_mog,
    sample_stm,
)
from .problem import (
    Decomposition,
    OtdProblem,
    OtdSettings,
    SyntheticSpec,
    corpus_problem,
    mog_problem,
    synthetic_problem,
    upload_problem,
)
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
    "capeagn",
    "ALGORITHMS",
    "FAMILY",
    "DEFAULT_ITERATIONS",
    "DEFAULT_RESTARTS",
    "DEFAULT_SIGMA2",
    "DEFAULT_TOPIC_CONCENTRATION",
    "DEFAULT_WEIGHT_CONCENTRATION",
    "ESTIMATORS",
    "M3_NOISE",
    "METRICS",
    "MODELS",
    "OTD_PRESETS",
    "TRUTHS",
    "PATHS",
    "AlgorithmRun",
    "Decomposition",
    "MixtureModel",
    "Truth",
    "OtdComparison",
    "OtdProblem",
    "OtdSettings",
    "SyntheticSpec",
    "WhiteningError",
    "algorithm",
    "check_algorithms",
    "communication_volume",
    "compare_algorithms",
    "corpus_problem",
    "default_algorithms",
    "evaluate",
    "evaluate_metrics",
    "authors_truth",
    "make_model",
    "match_components",
    "mog_norm_bound",
    "mog_problem",
    "paper_algorithms",
    "q_comp",
    "q_comp_normalised",
    "random_components",
    "run_algorithm",
    "sample_mog",
    "sample_stm",
    "synthetic_problem",
    "upload_problem",
]
