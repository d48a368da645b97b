"""The three algorithm families a sweep can run, seen through their tables (:mod:`dpcore.pca.table`,
:mod:`dpcore.otd.table`, :mod:`dpcore.lda.table`): names, titles, colours, the default curves, metrics, and which
results cannot change along a swept parameter."""

from __future__ import annotations

from typing import Any

from ..lda import table as lda_table
from ..otd import table as otd_table
from ..pca import table as pca_table

__all__ = ["FAMILIES", "HIGHER_IS_BETTER", "METRICS", "algorithm_colours", "algorithm_table", "algorithm_titles",
           "default_algorithms", "invariant_algorithms"]

FAMILIES: dict[str, str] = {
    "pca": "capePCA and the PCA baselines (docs/math/capepca.md)",
    "otd": "capeAGN and the tensor-decomposition baselines (docs/math/capeagn.md)",
    "lda": "capeLDA, paper 004's four LDA configurations and the topic-model baselines (docs/math/lda.md)",
}
METRICS: dict[str, dict[str, str]] = {
    "pca": {
        "captured_energy": "captured energy q_CE = tr(V^T A V) (higher is better)",
        "captured_energy_ratio": "q_CE / q_CE(non-dp pool) (1 is optimal)",
        "subspace_distance": "subspace distance ||V_K V_K^T - V V^T||_2 (lower is better)",
    },
    "otd": {
        "q_comp": "q_comp = (1/K) sum_k min_k' ||a_hat_k - a_k'||_2 (lower is better)",
        "q_comp_normalised": "the paper's q_comp: the same distance between unit-length components (lower is "
        "better)",
        "weight_error": "weight error (1/K) sum_k |w_hat_k - w_m(k)| (lower is better)",
    },
    "lda": {
        "topic_error": "topic error: mean L1 distance per topic after optimal matching, in [0, 2] (lower is better)",
    },
}
HIGHER_IS_BETTER = {"captured_energy": True, "captured_energy_ratio": True, "subspace_distance": False,
                    "q_comp": False, "q_comp_normalised": False, "weight_error": False, "topic_error": False}
_TABLES = {"pca": pca_table, "otd": otd_table, "lda": lda_table}


def algorithm_table(family: str) -> dict[str, Any]:
    """The family's algorithm table (name -> entry)."""
    return _TABLES[family].ALGORITHMS


def algorithm_titles(family: str) -> dict[str, str]:
    """Display names of the family's algorithms (capePCA, DPdisPCA, ... / capeAGN, conv, ...)."""
    return {name: entry.title for name, entry in algorithm_table(family).items()}


def algorithm_colours(family: str) -> dict[str, str]:
    """Plot colour of each of the family's algorithms."""
    return {name: entry.colour for name, entry in algorithm_table(family).items()}


def default_algorithms(family: str) -> tuple[str, ...]:
    """A sweep's default curves: the journal paper's figures for PCA and OTD, in its legend order; for LDA the
    table's defaults (capeLDA, conventional, local, non-private, random)."""
    if family == "lda":
        return lda_table.default_algorithms()
    return _TABLES[family].paper_algorithms()


def invariant_algorithms(family: str, parameter: str) -> frozenset[str]:
    """The algorithms whose result cannot depend on ``parameter``: along eps and delta those that are not private,
    along N_s and S those that use no data, along c every algorithm that is not collusion-robust."""
    table = algorithm_table(family)
    if parameter in ("eps", "delta"):
        return frozenset(name for name, e in table.items() if not e.private)
    if parameter in ("ns", "sites"):
        return frozenset(name for name, e in table.items() if not e.uses_data)
    return frozenset(name for name, e in table.items() if not e.collusion_robust)
