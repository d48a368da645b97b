"""One federated round of capePCA (one stage, "A") or capeAGN (two stages, "M2" then "M3", on the dense or the
projected third-moment path, single topic model or Gaussian mixture), party by party (docs/federated.md): the plan
(every stage's design, audit and noise object, or the reason to refuse the round), each site's statistic and
release, the aggregator's outputs, the whole round in one process, and the message log of a real run compared
with the protocol.

What a party computes in one stage (helper, aggregator and site noise, the release, the combination) is
:mod:`dpcore.cape.parties`; its streams :func:`dpcore.seeding.party_rng`. How the messages travel is not here:
the Flower app in ``federated/`` (which ``dpcore`` never imports) runs these functions in separate processes and
gets byte-identical aggregates (:func:`simulate_round`).

Imports the bottom layer (limits, seeding, validation), privacy, scenario, cape, pca (site moment, top-K subspace)
and otd (moments, third-moment noise laws, whitening, tensor power method); same layer as experiments, which it
does not import.
"""

from .guard import design_matches, dropout_audit, release_entry, site_plan_problem
from .ledger import (
    LEDGER_FORMAT,
    Ledger,
    LedgerEntry,
    composed_eps,
    composed_mu,
    read_ledger,
    spend,
    update_ledger,
    write_ledger,
)
from .log import (
    LOG_FORMAT,
    ComparedMessage,
    LogEntry,
    LoggedRound,
    MessageLog,
    compare_with_protocol,
    parse_message_log,
    protocol_differences,
    protocol_round,
    round_protocol,
)
from .masking import (
    RELEASE_TAIL,
    decode_release,
    encode_release,
    quantised_release,
    release_bound,
    release_encoding,
    release_range_problem,
)
from .noise import (
    GENERATORS,
    noise_seed,
    party_generator,
    recovered_aggregate,
    secure_sum,
    site_draw,
    site_term,
    stage_encoding,
)
from .outputs import pca_output, tensor_output, whitening_output
from .plan import (
    AGN_PATHS,
    DEFAULT_M3_NOISE,
    ROUND_STAGES,
    RoundPlan,
    RoundSettings,
    RoundStage,
    SiteBudget,
    budget_digest,
    plan_round,
)
from .simulate import SimulatedRound, simulate_round
from .site import (
    aggregator_subtract,
    mog_site,
    noise_entries,
    noise_shape,
    noise_size,
    noise_unique,
    site_stage_release,
    site_statistic,
    stm_site,
)

__all__ = [
    "RELEASE_TAIL",
    "decode_release",
    "encode_release",
    "quantised_release",
    "release_bound",
    "release_encoding",
    "release_range_problem",
    "GENERATORS",
    "LEDGER_FORMAT",
    "Ledger",
    "LedgerEntry",
    "composed_eps",
    "composed_mu",
    "design_matches",
    "dropout_audit",
    "noise_seed",
    "party_generator",
    "read_ledger",
    "recovered_aggregate",
    "release_entry",
    "secure_sum",
    "site_draw",
    "site_plan_problem",
    "site_term",
    "spend",
    "stage_encoding",
    "update_ledger",
    "write_ledger",
    "AGN_PATHS",
    "DEFAULT_M3_NOISE",
    "LOG_FORMAT",
    "ComparedMessage",
    "LogEntry",
    "LoggedRound",
    "MessageLog",
    "compare_with_protocol",
    "parse_message_log",
    "protocol_differences",
    "protocol_round",
    "round_protocol",
    "ROUND_STAGES",
    "RoundPlan",
    "RoundSettings",
    "RoundStage",
    "SimulatedRound",
    "SiteBudget",
    "aggregator_subtract",
    "budget_digest",
    "mog_site",
    "noise_entries",
    "noise_shape",
    "noise_size",
    "noise_unique",
    "pca_output",
    "plan_round",
    "simulate_round",
    "site_stage_release",
    "site_statistic",
    "stm_site",
    "tensor_output",
    "whitening_output",
]
