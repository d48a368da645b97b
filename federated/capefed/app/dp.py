"""Everything the federated apps use from dpcore, named here only, so a change of dpcore's layout is one edit.

Each name is imported from its dpcore module on first use (a module ``__getattr__``, PEP 562) and then kept: a process
imports only the dpcore modules it uses. A command that reads a file and checks it (the runner, the operator's key and
roster commands) does not import scipy, the tensor toolkit and the federation package for names it never touches.
``from capefed.app.dp import name`` and ``dp.name`` work as with plain imports; a name not listed here is an
AttributeError.
"""

from __future__ import annotations

import importlib
from typing import Any

_SOURCES: dict[str, tuple[str, ...]] = {
    "dpcore.agn": ("WhiteningError", "evaluate", "make_model", "mog_norm_bound", "sample_mog", "sample_stm"),
    "dpcore.cape.audit": ("default_collusion",),
    "dpcore.cape.helper_free": ("NOISE_VARIANTS", "mask_share"),
    "dpcore.cape.noise_variants": ("federated_variant", "federated_variants", "noise_variant"),
    "dpcore.cape.parties": (
        "AGGREGATOR", "HELPER", "SITE", "aggregator_noise", "combine", "helper_noise", "mixing_problem", "site_noise",
    ),
    "dpcore.cape.protocol": ("SITES",),
    "dpcore.data": ("load_bundled", "parse_numeric_csv", "preprocess", "split_sites"),
    "dpcore.federation": (
        "FEDERATED_ALGORITHMS", "LOG_FORMAT", "RELEASE_TAIL", "RING_ROLES", "ROUND_STAGES", "Budget", "Ledger",
        "LedgerEntry", "LedgerHead", "LogEntry", "MessageLog", "RoundPlan", "RoundSettings", "SimulatedRound",
        "SiteBudget", "Study", "aggregator_subtract", "approve_event", "approved", "budget", "budget_digest",
        "composed_eps", "composed_mu", "create_ledger", "decode_release", "dense_statistic", "describe_exposure",
        "describe_study", "design_matches", "dropout_audit", "encode_release", "federated_algorithm", "mog_site",
        "mu_for_eps", "new_ledger_key", "noise_entries", "noise_seed", "noise_size", "noise_unique", "open_round",
        "parse_ledger_key", "parse_message_log", "parse_study", "party_generator", "pca_output", "peer_problem",
        "plan_round", "protocol_differences", "quantised_release", "read_ledger", "read_ledger_key",
        "recovered_aggregate", "release_encoding", "release_entry", "release_range_problem", "reserve_event",
        "ring_aggregate", "ring_draw", "ring_release", "ring_release_problem", "round_accounts", "round_problem",
        "secure_sum", "settle_event", "simulate_round", "site_draw", "site_exposure", "site_plan_problem",
        "site_stage_release", "site_term", "spend_event", "stage_encoding", "stale_rounds", "stm_site",
        "study_rounds_used", "study_text", "sum_from_wire", "sum_to_wire", "tensor_output", "update_ledger",
        "whitening_output",
    ),
    "dpcore.federation.log": ("ROUND_STATUSES",),
    "dpcore.limits": (
        "MAX_FEDERATED_MATRIX_DIM", "MAX_JSON_BYTES", "MAX_MESSAGE_LOG_BYTES", "MAX_NPY_HEADER_BYTES", "MAX_SITES",
        "MAX_STUDY_BYTES", "MAX_WIRE_ARRAY_DIMS", "MAX_WIRE_ARRAY_NUMBERS", "MAX_WIRE_ARRAYS", "MAX_WIRE_BYTES",
        "MAX_WIRE_LIST", "MAX_WIRE_NUMBERS", "MAX_WIRE_TEXT", "MAX_WIRE_VALUES",
    ),
    "dpcore.pca": ("captured_energy",),
    "dpcore.scenario": ("Site",),
    "dpcore.seeding": ("fresh_secret", "party_key", "party_rng", "secret_bytes", "secure_rng"),
    "dpcore.textio": ("MissingFile", "decode_text", "load_json", "read_file"),
    "dpcore.validation": ("InputError",),
}
"""dpcore module -> the names taken from it (each name once)."""

_MODULE_OF = {name: module for module, names in _SOURCES.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    """``name`` from its dpcore module (:data:`_SOURCES`), imported now and kept in this module."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
