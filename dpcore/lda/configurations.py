"""The four noise configurations of paper 004 (section 5, Tables 2 and 3) on the data-flow graph of its Figure 1,
run on one corpus held by one curator (docs/math/lda.md, "The four configurations").

Edges, budgets and results: :mod:`dpcore.lda.budget`; the configurations as published: :mod:`dpcore.lda.placements`;
configuration 2 made (eps, delta)-DP by propose-test-release: :mod:`dpcore.lda.ptr`. Configuration 1 uses global
sensitivities and is (eps, delta)-DP; configurations 2-4 calibrate to local sensitivities and are not DP as published
(their results say so); a configuration whose condition fails on the corpus is reported unusable with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..tensor.power import DEFAULT_ITERATIONS, DEFAULT_RESTARTS
from ..validation import InputError, check_choice, check_delta, check_epsilon
from .budget import (
    CONFIGURATIONS,
    EDGES,
    PRIVACY,
    PTR_EDGES,
    ConfigurationResult,
    EdgeBudget,
    LdaDataSummary,
    edge_budgets,
    summarize_data,
    summarize_site,
)
from .placements import configuration_1, configuration_2_or_3, configuration_4
from .ptr import configuration_2_ptr

__all__ = [
    "CONFIGURATIONS",
    "EDGES",
    "PRIVACY",
    "PTR_EDGES",
    "ConfigurationResult",
    "EdgeBudget",
    "LdaDataSummary",
    "check_configuration",
    "edge_budgets",
    "run_configuration",
    "run_configuration_unchecked",
    "summarize_data",
    "summarize_site",
]


def check_configuration(configuration: object, privacy: str = "local", share_m2: bool = False) -> int:
    """A configuration number 1-4 with its privacy mode ("local" as published, "ptr" for configuration 2 only) and
    the sharing of one M2 release (configuration 1 only)."""
    if configuration not in CONFIGURATIONS:
        raise InputError(f"configuration must be one of {', '.join(map(str, CONFIGURATIONS))} (got {configuration!r})",
                         "configuration")
    if share_m2 and configuration != 1:
        raise InputError("sharing one M2 release between e4 and e8 applies to configuration 1 only", "share_m2")
    check_choice(privacy, "privacy", tuple(PRIVACY))
    if privacy == "ptr" and configuration != 2:
        raise InputError("propose-test-release is implemented for configuration 2 only (configuration 1 is DP as it "
                         "is; 3 and 4 would need a private estimate of the tensor's eigengaps)", "privacy")
    return int(configuration)


def run_configuration(
    configuration: int, data: LdaDataSummary, eps: float, delta: float, rng: np.random.Generator, *,
    calibration: str = "analytic", split: Mapping[str, float] | None = None, share_m2: bool = False,
    privacy: str = "local", n_restarts: int = DEFAULT_RESTARTS, n_iter: int = DEFAULT_ITERATIONS,
) -> ConfigurationResult:
    """Run configuration 1-4 on the corpus summarised by ``data`` (:func:`summarize_data`) with total budget
    (eps, delta) split over its edges. ``share_m2`` (configuration 1 only) releases M2 once for both e4 and e8.
    ``privacy`` (:data:`PRIVACY`): "local" as published, "ptr" (configuration 2 only) propose-test-release.
    Raises WhiteningError when a noisy M2 cannot be whitened (configurations 1-3). Checks its arguments."""
    configuration = check_configuration(configuration, privacy, share_m2)
    eps = check_epsilon(eps)
    delta = check_delta(delta)
    check_choice(calibration, "calibration", ("classic", "analytic"))
    budget = edge_budgets(configuration, eps, delta, split, privacy)
    return run_configuration_unchecked(configuration, data, budget, calibration, rng, share_m2=share_m2,
                                       privacy=privacy, n_restarts=n_restarts, n_iter=n_iter)


def run_configuration_unchecked(
    configuration: int, data: LdaDataSummary, budget: dict[str, tuple[float, float]], calibration: str,
    rng: np.random.Generator, *, share_m2: bool = False, privacy: str = "local", n_restarts: int = DEFAULT_RESTARTS,
    n_iter: int = DEFAULT_ITERATIONS,
) -> ConfigurationResult:
    """:func:`run_configuration` for validated settings and the per-edge budget of :func:`edge_budgets`."""
    if privacy == "ptr":
        return configuration_2_ptr(data, budget, calibration, rng, n_restarts, n_iter)
    if configuration == 1:
        return configuration_1(data, budget, calibration, rng, n_restarts, n_iter, share_m2)
    if configuration in (2, 3):
        return configuration_2_or_3(configuration, data, budget, calibration, rng, n_restarts, n_iter)
    return configuration_4(data, budget, calibration, rng, n_restarts, n_iter)
