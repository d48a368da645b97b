"""Gaussian mechanism calibration and the exact privacy profile (docs/math/mechanisms.md).

Calibrations (sigma = Delta * c(eps, delta), linear in the sensitivity Delta):

* ``classic``: c = sqrt(2 ln(1.25/delta)) / eps (Dwork & Roth 2014, Thm A.1). A guarantee only for
  0 < eps < 1; larger eps is allowed to reproduce the papers and always raises
  :class:`ClassicCalibrationWarning` from :func:`noise_multiplier`.
* ``analytic``: the smallest sigma whose exact privacy profile is <= delta (Balle & Wang, ICML 2018,
  Thm 8), valid for every eps > 0. For eps < 1 it is never larger than the classic sigma; for large
  eps it can be larger (e.g. eps = 10, delta = 1e-5: 0.500 vs 0.484), because there the classic sigma
  does not meet delta at all.

The exact privacy profile of a Gaussian mechanism with m = Delta / sigma is
``delta(eps) = Phi(m/2 - eps/m) - e^eps Phi(-m/2 - eps/m)``; the audit inverts it.

Checked entry points (:func:`noise_multiplier`, :func:`gaussian_sigma`, :func:`eps_for_sigma`,
:func:`delta_for_sigma`) validate their arguments; :func:`multiplier` and :func:`exact_eps` are the formulas for
inputs already validated at the boundary (a :class:`~dpcore.scenario.Scenario`, a noise design).

numpy's generators are not cryptographically secure: fine for simulation and teaching, not for a
deployment (docs/math/corrections.md, item 9).
"""

from __future__ import annotations

import math
import warnings
from functools import lru_cache
from typing import Literal, get_args

from scipy.optimize import brentq
from scipy.special import log_ndtr

from ..validation import InputError, check_choice, check_delta, check_epsilon, check_positive

__all__ = [
    "CALIBRATIONS",
    "Calibration",
    "ClassicCalibrationWarning",
    "classic_caveat",
    "delta_for_sigma",
    "eps_for_sigma",
    "exact_delta",
    "exact_eps",
    "gaussian_sigma",
    "multiplier",
    "noise_multiplier",
    "privacy_profile",
]

Calibration = Literal["classic", "analytic"]
CALIBRATIONS: tuple[Calibration, ...] = get_args(Calibration)


class ClassicCalibrationWarning(UserWarning):
    """The classic Gaussian calibration was used with eps >= 1, where it guarantees nothing."""


def classic_caveat(eps: float) -> str | None:
    """The warning text for classic calibration at ``eps``, or None when 0 < eps < 1."""
    if eps >= 1.0:
        return (
            f"classic Gaussian calibration at eps = {eps:g} >= 1 is not a valid (eps, delta) guarantee "
            "(it is proven only for eps < 1); it is used here to reproduce the papers. "
            "Use the analytic calibration for a real guarantee."
        )
    return None


# ----------------------------------------------------------------------------------------------
# Exact privacy profile and calibrations
# ----------------------------------------------------------------------------------------------

def privacy_profile(m: float, eps: float) -> float:
    """delta(eps) = Phi(m/2 - eps/m) - e^eps Phi(-m/2 - eps/m) for m = Delta / sigma (Balle & Wang Thm 8).

    Evaluated in log space so that large eps does not overflow. m = 0 gives 0, m = inf gives 1.
    """
    if m <= 0.0:
        return 0.0
    if math.isinf(m):
        return 1.0
    log_a = float(log_ndtr(m / 2.0 - eps / m))
    log_b = eps + float(log_ndtr(-m / 2.0 - eps / m))
    if log_b >= log_a:
        return 0.0
    return float(math.exp(log_a) * -math.expm1(log_b - log_a))


def _classic_multiplier(eps: float, delta: float) -> float:
    return math.sqrt(2.0 * math.log(1.25 / delta)) / eps


_LOG_M_LIMIT = 1000.0
"""Bracket of the analytic calibration's root search in log m = log(Delta / sigma): every (eps, delta) of
:data:`~dpcore.limits.EPS_RANGE` and :data:`~dpcore.limits.DELTA_RANGE` (and their stage shares) is found within
|log m| < 100; the bound stops the search for a delta it cannot reach instead of looping for ever."""


@lru_cache(maxsize=4096)
def _analytic_multiplier(eps: float, delta: float) -> float:
    """sigma for Delta = 1: solve privacy_profile(1/sigma, eps) = delta (profile increases with m)."""

    def gap(log_m: float) -> float:
        return math.log(max(privacy_profile(math.exp(log_m), eps), 1e-300)) - math.log(delta)

    lo, hi = -30.0, 30.0
    while gap(lo) > 0:  # pragma: no cover - only for absurdly small delta
        lo -= 10.0
        if lo < -_LOG_M_LIMIT:  # delta below what log(max(profile, 1e-300)) can reach: the search would never end
            raise InputError(f"delta = {delta:g} is too small for the analytic calibration at eps = {eps:g}", "delta")
    while gap(hi) < 0:
        hi += 10.0
        if hi > _LOG_M_LIMIT:  # pragma: no cover - the profile reaches 1 long before
            raise InputError(f"no analytic calibration found for eps = {eps:g}, delta = {delta:g}", "delta")
    log_m = brentq(gap, lo, hi, xtol=1e-14, rtol=1e-13, maxiter=500)
    # brentq lands on either side of the root: a relative margin of 1e-10 puts sigma on the safe side.
    sigma = math.exp(-log_m) * (1.0 + 1e-10)
    while privacy_profile(1.0 / sigma, eps) > delta:  # pragma: no cover - the margin suffices
        sigma *= 1.0 + 1e-10
    return sigma


_MULTIPLIERS = {"classic": _classic_multiplier, "analytic": _analytic_multiplier}


def multiplier(eps: float, delta: float, calibration: Calibration) -> float:
    """c(eps, delta) for inputs validated at the boundary (eps > 0, 0 < delta < 1, a known calibration); no
    warning. Callers that take eps, delta or the calibration from a user call :func:`noise_multiplier`."""
    return _MULTIPLIERS[calibration](eps, delta)


def noise_multiplier(eps: float, delta: float, calibration: str = "classic") -> float:
    """c(eps, delta): the Gaussian noise std for sensitivity 1. ``sigma = Delta * c``.

    Checks its arguments; classic with eps >= 1 warns with :class:`ClassicCalibrationWarning`.
    """
    eps = check_epsilon(eps)
    delta = check_delta(delta)
    calibration = check_choice(calibration, "calibration", CALIBRATIONS)
    if calibration == "classic":
        caveat = classic_caveat(eps)
        if caveat:
            warnings.warn(caveat, ClassicCalibrationWarning, stacklevel=2)
    return multiplier(eps, delta, calibration)


def gaussian_sigma(sensitivity: float, eps: float, delta: float, calibration: str = "classic") -> float:
    """sigma = Delta * c(eps, delta) for the chosen calibration (docs/math/mechanisms.md)."""
    sensitivity = check_positive(sensitivity, "sensitivity")
    return sensitivity * noise_multiplier(eps, delta, calibration)


def eps_for_sigma(sigma: float, sensitivity: float, delta: float, calibration: str = "analytic") -> float:
    """eps of a Gaussian mechanism with noise ``sigma`` at ``delta``; sigma = 0 gives inf, inf gives 0.

    ``analytic`` (default, what the audit uses): the exact eps, the smallest with
    privacy_profile(Delta/sigma, eps) <= delta. ``classic``: the inverse of the classic formula,
    eps = Delta sqrt(2 ln(1.25/delta)) / sigma, a guarantee only when the result is < 1.
    """
    delta = check_delta(delta)
    sensitivity = check_positive(sensitivity, "sensitivity")
    calibration = check_choice(calibration, "calibration", CALIBRATIONS)
    if sigma < 0 or math.isnan(sigma):
        raise InputError(f"sigma must be >= 0 (got {sigma})", "sigma")
    if calibration == "classic":
        if sigma == 0.0:
            return math.inf
        if math.isinf(sigma):
            return 0.0
        return sensitivity * _classic_multiplier(1.0, delta) / sigma
    return exact_eps(sigma, sensitivity, delta)


def exact_eps(sigma: float, sensitivity: float, delta: float) -> float:
    """The exact eps at ``delta`` of a Gaussian mechanism with noise sigma >= 0 and sensitivity Delta > 0 (inputs
    validated by the caller: the audit's sigma_eff and a design's Delta_s, delta_s); 0 gives inf, inf gives 0."""
    if sigma == 0.0:
        return math.inf
    if math.isinf(sigma):
        return 0.0
    m = sensitivity / sigma
    if privacy_profile(m, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while privacy_profile(m, hi) > delta:
        hi *= 2.0
        if hi > 1e8:  # pragma: no cover - sigma ~ 1e-8 Delta
            return math.inf
    eps = brentq(lambda e: privacy_profile(m, e) - delta, 0.0, hi, xtol=1e-13, rtol=1e-12, maxiter=500)
    eps = eps * (1.0 + 1e-10) + 1e-13  # the safe side of the root
    while privacy_profile(m, eps) > delta:  # pragma: no cover - the margin suffices
        eps = eps * (1.0 + 1e-10) + 1e-13
    return float(eps)


def delta_for_sigma(sigma: float, sensitivity: float, eps: float) -> float:
    """The exact delta of a Gaussian mechanism with noise ``sigma`` at ``eps``: privacy_profile(Delta/sigma, eps)."""
    sensitivity = check_positive(sensitivity, "sensitivity")
    if sigma < 0 or math.isnan(sigma):
        raise InputError(f"sigma must be >= 0 (got {sigma})", "sigma")
    return exact_delta(sigma, sensitivity, eps)


def exact_delta(sigma: float, sensitivity: float, eps: float) -> float:
    """The exact delta at ``eps`` of a Gaussian mechanism with noise sigma >= 0 and sensitivity Delta > 0 (inputs
    validated by the caller); sigma = 0 gives 1."""
    if sigma == 0.0:
        return 1.0
    return privacy_profile(sensitivity / sigma, eps)
