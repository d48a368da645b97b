"""One federated round of capePCA (one stage, "A") or capeAGN (two stages, "M2" then "M3"), party by party
(docs/federated.md): the plan (every stage's design and audit, or the reason to refuse the round), each site's
statistic and its whitened third-moment release, the aggregator's outputs, and the whole round in one process.

What a party computes in one stage (helper, aggregator and site noise, the release, the combination) is
:mod:`dpcore.cape.parties`; its streams :func:`dpcore.seeding.party_rng`. How the messages travel is not here:
the Flower app in ``federated/`` (which ``dpcore`` never imports) runs these functions in separate processes and
gets byte-identical aggregates (:func:`simulate_round`).

Imports the bottom layer (linalg, seeding, limits, validation), privacy, scenario, cape and otd (whitening,
tensor power method, single-topic-model moments); same layer as experiments, which it does not import.
"""

from .outputs import pca_output, tensor_output, whitening_output
from .plan import ROUND_STAGES, RoundPlan, RoundSettings, RoundStage, SiteBudget, budget_digest, plan_round
from .simulate import SimulatedRound, simulate_round
from .site import project_tensor, site_release_m3, site_statistic_m2, site_statistic_pca, stm_site

__all__ = [
    "ROUND_STAGES",
    "RoundPlan",
    "RoundSettings",
    "RoundStage",
    "SimulatedRound",
    "SiteBudget",
    "budget_digest",
    "pca_output",
    "plan_round",
    "project_tensor",
    "simulate_round",
    "site_release_m3",
    "site_statistic_m2",
    "site_statistic_pca",
    "stm_site",
    "tensor_output",
    "whitening_output",
]
