"""Privacy primitives (docs/math/mechanisms.md, docs/math/sensitivities.md): Gaussian calibration and the exact
privacy profile, sensitivities of every released statistic, symmetric noise, zero-sum noise, AVN noise.

Imports only the bottom layer (validation, limits)."""

from .avn import avn_noise
from .calibration import (
    CALIBRATIONS,
    Calibration,
    ClassicCalibrationWarning,
    classic_caveat,
    delta_for_sigma,
    eps_for_sigma,
    exact_delta,
    exact_eps,
    gaussian_sigma,
    multiplier,
    noise_multiplier,
    privacy_profile,
)
from .sensitivity import (
    LDA_STATISTICS,
    NEIGHBOURING,
    STATISTICS,
    LdaStatistic,
    Neighbouring,
    Statistic,
    lda_sensitivity,
    lda_sensitivity_unchecked,
    sensitivity,
    sensitivity_unchecked,
)
from .symmetric import (
    symmetric_gaussian_matrix,
    symmetric_gaussian_tensor,
    symmetric_matrix,
    symmetric_tensor,
    symmetrize,
    unique_count_matrix,
    unique_count_tensor,
    unique_entries_matrix,
    unique_entries_tensor,
)
from .zero_sum import plain_zero_sum_noise, weighted_zero_sum_mixing, zero_sum_feasible

__all__ = [
    "CALIBRATIONS",
    "LDA_STATISTICS",
    "NEIGHBOURING",
    "STATISTICS",
    "Calibration",
    "ClassicCalibrationWarning",
    "LdaStatistic",
    "Neighbouring",
    "Statistic",
    "avn_noise",
    "classic_caveat",
    "delta_for_sigma",
    "eps_for_sigma",
    "exact_delta",
    "exact_eps",
    "gaussian_sigma",
    "lda_sensitivity",
    "lda_sensitivity_unchecked",
    "multiplier",
    "noise_multiplier",
    "plain_zero_sum_noise",
    "privacy_profile",
    "sensitivity",
    "sensitivity_unchecked",
    "symmetric_gaussian_matrix",
    "symmetric_gaussian_tensor",
    "symmetric_matrix",
    "symmetric_tensor",
    "symmetrize",
    "unique_count_matrix",
    "unique_count_tensor",
    "unique_entries_matrix",
    "unique_entries_tensor",
    "weighted_zero_sum_mixing",
    "zero_sum_feasible",
]
