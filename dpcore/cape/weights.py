"""Aggregation weights mu_s that optimise a stated objective (docs/math/cape.md, "Generalized CAPE", weights)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..validation import check_choice
from .design import dp_floor

__all__ = ["WEIGHT_OBJECTIVES", "SuggestedWeights", "WeightObjective", "suggest_weights"]

WeightObjective = Literal["min-floor", "inverse-variance", "sample-size"]
WEIGHT_OBJECTIVES: dict[WeightObjective, str] = {
    "min-floor": "mu_s proportional to 1/tau_s (about N_s eps_s): equalises mu_s tau_s and minimises the "
    "DP floor max_s mu_s tau_s, i.e. the least noise the aggregate can carry",
    "inverse-variance": "mu_s proportional to 1/tau_s^2: minimises the conventional scheme's aggregator "
    "variance sum_s mu_s^2 tau_s^2",
    "sample-size": "mu_s = N_s / N: the aggregate is the pooled-data statistic (plain CAPE)",
}


@dataclass(frozen=True)
class SuggestedWeights:
    weights: np.ndarray
    objective: str
    description: str
    tau_floor: float


def suggest_weights(tau: Any, sizes: Any, objective: str = "min-floor") -> SuggestedWeights:
    """Weights optimising ``objective`` (:data:`WEIGHT_OBJECTIVES`). Weights other than N_s/N estimate a
    weighted average of the site statistics, not the pooled statistic."""
    objective = check_choice(objective, "objective", tuple(WEIGHT_OBJECTIVES))
    tau = np.asarray(tau, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    if objective == "min-floor":
        w = 1.0 / tau
    elif objective == "inverse-variance":
        w = 1.0 / tau**2
    else:
        w = sizes
    w = w / w.sum()
    return SuggestedWeights(w, objective, WEIGHT_OBJECTIVES[objective], dp_floor(w, tau))
