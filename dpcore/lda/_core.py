"""The few pieces of the rest of dpcore that the LDA package uses, imported in this one place.

Whitening, the robust tensor power method, the Gaussian calibrations and the symmetric noise are the
project's own (the LDA package writes none of its own); when those modules move, only this file changes.
"""

from __future__ import annotations

from ..mechanisms import (
    ClassicCalibrationWarning,
    noise_multiplier,
    symmetric_gaussian_matrix,
    symmetric_gaussian_tensor,
)
from ..models import symmetrize, third_cross, third_moment
from ..tensor import PowerResult, Whitening, WhiteningError, multilinear, tensor_power_method, top_eigenpairs, whiten
from ..validation import (
    InputError,
    check_choice,
    check_delta,
    check_epsilon,
    check_positive,
    check_positive_int,
    check_rank,
)

__all__ = [
    "ClassicCalibrationWarning",
    "InputError",
    "PowerResult",
    "Whitening",
    "WhiteningError",
    "check_choice",
    "check_delta",
    "check_epsilon",
    "check_positive",
    "check_positive_int",
    "check_rank",
    "multilinear",
    "noise_multiplier",
    "symmetric_gaussian_matrix",
    "symmetric_gaussian_tensor",
    "symmetrize",
    "tensor_power_method",
    "third_cross",
    "third_moment",
    "top_eigenpairs",
    "whiten",
]
