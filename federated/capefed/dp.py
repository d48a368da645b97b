"""Everything the federated apps use from dpcore, imported here only, so a change of dpcore's layout is one edit."""

from dpcore.cape.parties import (
    AGGREGATOR,
    HELPER,
    SITE,
    aggregator_noise,
    combine,
    helper_noise,
    site_noise,
    site_release,
    unique_count,
)
from dpcore.cape.protocol import capeagn_round, capepca_round
from dpcore.data import load_bundled, parse_numeric_csv, preprocess, split_sites
from dpcore.federation import (
    ROUND_STAGES,
    RoundPlan,
    RoundSettings,
    SimulatedRound,
    SiteBudget,
    budget_digest,
    pca_output,
    plan_round,
    project_tensor,
    simulate_round,
    site_release_m3,
    site_statistic_m2,
    site_statistic_pca,
    stm_site,
    tensor_output,
    whitening_output,
)
from dpcore.otd import WhiteningError, evaluate, make_model, sample_stm
from dpcore.pca import captured_energy
from dpcore.privacy import unique_count_matrix, unique_count_tensor
from dpcore.seeding import party_rng
from dpcore.validation import InputError

__all__ = [
    "AGGREGATOR",
    "aggregator_noise",
    "budget_digest",
    "capeagn_round",
    "capepca_round",
    "captured_energy",
    "combine",
    "evaluate",
    "HELPER",
    "helper_noise",
    "InputError",
    "load_bundled",
    "make_model",
    "parse_numeric_csv",
    "party_rng",
    "pca_output",
    "plan_round",
    "preprocess",
    "project_tensor",
    "RoundPlan",
    "ROUND_STAGES",
    "RoundSettings",
    "sample_stm",
    "simulate_round",
    "SimulatedRound",
    "SITE",
    "site_noise",
    "site_release",
    "site_release_m3",
    "site_statistic_m2",
    "site_statistic_pca",
    "SiteBudget",
    "split_sites",
    "stm_site",
    "tensor_output",
    "unique_count",
    "unique_count_matrix",
    "unique_count_tensor",
    "whitening_output",
    "WhiteningError",
]
