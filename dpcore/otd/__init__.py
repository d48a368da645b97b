"""capeAGN: distributed private orthogonal tensor decomposition, its baselines, the dense and projected paths
(docs/math/capeagn.md; Algorithm 3 of the journal paper, appendix E of the preprint, paper 001 Alg. 3).

1. Sites release M2_hat_s = M2_s + E2_s + F2_s + G2_s (symmetric; budget eps1 = a eps, delta1 = a delta,
   a = ``eps_split``). The aggregator forms M2_hat = sum_s mu_s (M2_hat_s - F2_s), whitens with its top-K
   eigenpairs, W = U D^{-1/2} (:mod:`~dpcore.otd.whitening`).
2. Sites release M3_tilde_s = (M3_s + E3_s + F3_s + G3_s)(W, W, W) (budget (1 - a) eps, (1 - a) delta); the
   aggregator forms M3_tilde = sum_s mu_s (M3_tilde_s - F3_s(W, W, W)) (:mod:`~dpcore.otd.release`, on the dense
   or the projected path: :mod:`~dpcore.otd.paths`).
3. Robust tensor power method and recovery a_k = lambda_k U D^{1/2} u_k, w_k = 1 / lambda_k^2 renormalised
   (:mod:`~dpcore.otd.power`); the online tensor power method of paper 001 (Alg. 2), a memory-light non-private
   path that streams the samples (:mod:`~dpcore.otd.online`).

Models and moments: :mod:`~dpcore.otd.models`, :mod:`~dpcore.otd.moments`; algorithms: one table
(:mod:`~dpcore.otd.table`) filled by :mod:`dpcore.otd.algorithms`; comparisons over runs: :mod:`~dpcore.otd.compare`.
Imports the bottom layer, privacy, data, scenario and cape.
"""

from .algorithm import OtdAlgorithm, RunContext
from .compare import AlgorithmRun, OtdComparison, compare_algorithms
from .evaluation import METRICS, evaluate, evaluate_metrics, match_components, q_comp, q_comp_normalised
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
from .moments import ESTIMATORS, MogSite, MomentSite, StmSite, mog_sites, pool_sites, stm_site_from_words
from .multilinear import multilinear, symmetrize, third_cross, third_moment
from .online import (
    OnlineOracle,
    mog_oracle,
    online_memory_estimate,
    online_tensor_power_method,
    stm_first_oracle,
    stm_oracle,
    streaming_whitening,
)
from .paths import PATHS, PathChoice, choose_path, memory_estimate
from .power import (
    DEFAULT_ITERATIONS,
    DEFAULT_RESTARTS,
    NoisyTpmBudget,
    PowerResult,
    noisy_tensor_power_method,
    noisy_tpm_budget,
    recover,
    tensor_power_method,
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
from .release import M3_NOISE, StageMessages, StageNoise, cape_stage_noise, check_m3_law, release_m2, release_m3
from .table import (
    ALGORITHMS,
    algorithm,
    check_algorithms,
    communication_volume,
    default_algorithms,
    paper_algorithms,
    run_algorithm,
)
from .whitening import Whitening, WhiteningError, whiten

__all__ = [
    "ALGORITHMS",
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
    "MogSite",
    "MomentSite",
    "NoisyTpmBudget",
    "OnlineOracle",
    "OtdAlgorithm",
    "OtdComparison",
    "OtdProblem",
    "OtdSettings",
    "PathChoice",
    "PowerResult",
    "RunContext",
    "StageMessages",
    "StageNoise",
    "StmSite",
    "SyntheticSpec",
    "Whitening",
    "WhiteningError",
    "algorithm",
    "cape_stage_noise",
    "check_algorithms",
    "choose_path",
    "communication_volume",
    "compare_algorithms",
    "corpus_problem",
    "default_algorithms",
    "evaluate",
    "evaluate_metrics",
    "authors_truth",
    "make_model",
    "match_components",
    "memory_estimate",
    "mog_norm_bound",
    "mog_problem",
    "mog_oracle",
    "mog_sites",
    "multilinear",
    "noisy_tensor_power_method",
    "noisy_tpm_budget",
    "online_memory_estimate",
    "online_tensor_power_method",
    "paper_algorithms",
    "pool_sites",
    "q_comp",
    "q_comp_normalised",
    "random_components",
    "recover",
    "check_m3_law",
    "release_m2",
    "release_m3",
    "run_algorithm",
    "sample_mog",
    "sample_stm",
    "stm_first_oracle",
    "stm_oracle",
    "stm_site_from_words",
    "streaming_whitening",
    "symmetrize",
    "synthetic_problem",
    "tensor_power_method",
    "third_cross",
    "third_moment",
    "upload_problem",
    "whiten",
]
