"""What a Gaussian release means to an attacker: the hypothesis test behind (eps, delta) (docs/math/mechanisms.md,
"What eps means: the attacker's trade-off").

One person's record moves site s's statistic by at most Delta. An attacker who knows everything but whether that
record is in the data sees the release y = a + noise, noise ~ N(0, sigma^2), and must decide between "absent"
(y ~ N(a, sigma^2)) and "present" (y ~ N(a + Delta, sigma^2)). Everything about the two hypotheses is in the
distance m = Delta / sigma. By the Neyman-Pearson lemma the most powerful test says "present" when y exceeds a
threshold; at false-positive rate alpha (absent records wrongly called present) the threshold is
a + sigma Phi^-1(1 - alpha) and the true-positive rate is

    TPR(alpha) = Phi(Phi^-1(alpha) + m),

the trade-off curve G_m of Gaussian differential privacy (Dong, Roth & Su, J. R. Stat. Soc. B 84 (2022)). No test
does better at any alpha. Its largest advantage over guessing, max_alpha TPR - alpha = 2 Phi(m/2) - 1, is reached
at alpha = Phi(-m/2). An (eps, delta) promise allows at most TPR <= min(1, e^eps alpha + delta,
1 - e^-eps (1 - delta - alpha)) (Kairouz, Oh & Viswanath, ICML 2015, Thm 2.1); the Gaussian curve of a sigma
calibrated for (eps, delta) lies below that bound.

Inputs: ``m`` >= 0 (inf when the view exposes the record exactly, sigma = 0), false-positive rates in [0, 1].
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, ndtri

from ..validation import InputError
from .calibration import noise_multiplier

# Budgets to compare one site's promise with (the page draws the best attacker's curve for each).
BUDGET_LADDER: tuple[float, ...] = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0)

__all__ = [
    "BUDGET_LADDER",
    "best_advantage",
    "dp_tradeoff_bound",
    "gaussian_tradeoff",
    "neighbour_densities",
    "promise_separation",
    "separation",
    "threshold",
]


def _rates(fpr) -> np.ndarray:
    a = np.asarray(fpr, dtype=float)
    if np.any(~np.isfinite(a)) or np.any(a < 0) or np.any(a > 1):
        raise InputError("false-positive rates must be numbers in [0, 1]", "false-positive rate")
    return a


def _distance(m: float) -> float:
    m = float(m)
    if math.isnan(m) or m < 0:
        raise InputError(f"the distance m = Delta / sigma must be >= 0 (got {m!r})", "m")
    return m


def separation(sensitivity: float, sigma: float) -> float:
    """m = Delta / sigma: how many noise standard deviations one record moves the release (inf for sigma = 0)."""
    if not sensitivity > 0 or math.isnan(sigma) or sigma < 0:
        raise InputError(f"need Delta > 0 and sigma >= 0 (got Delta = {sensitivity!r}, sigma = {sigma!r})", "sigma")
    return math.inf if sigma == 0 else float(sensitivity) / float(sigma)


def promise_separation(eps: float, delta: float, calibration: str = "analytic") -> float:
    """m = Delta / sigma = 1 / c(eps, delta) of a release calibrated for (eps, delta): the same for every
    statistic, since sigma = Delta c(eps, delta). The analytic calibration (default) makes the curve the exact
    meaning of (eps, delta); classic warns like :func:`noise_multiplier` at eps >= 1."""
    return 1.0 / noise_multiplier(eps, delta, calibration)


def gaussian_tradeoff(fpr, m: float) -> np.ndarray:
    """TPR = Phi(Phi^-1(alpha) + m) of the most powerful test at false-positive rate alpha (module docstring).

    m = 0: TPR = alpha (the release says nothing); m = inf: TPR = 1 for every alpha > 0."""
    alpha = _rates(fpr)
    m = _distance(m)
    if math.isinf(m):
        return np.where(alpha > 0, 1.0, 0.0)
    with np.errstate(divide="ignore"):
        return ndtr(ndtri(alpha) + m)


def threshold(fpr: float, m: float) -> float:
    """Where the best test at false-positive rate alpha says "present", in units of Delta above the absent mean:
    Phi^-1(1 - alpha) / m (inf for m = 0: no threshold beats guessing)."""
    alpha = float(_rates(fpr))
    m = _distance(m)
    if m == 0:
        return math.inf
    if math.isinf(m):
        return 0.5
    return float(ndtri(1.0 - alpha)) / m


def best_advantage(m: float) -> float:
    """max over alpha of TPR - alpha = 2 Phi(m/2) - 1: how much better than a coin the best attacker can do."""
    m = _distance(m)
    return 1.0 if math.isinf(m) else float(2.0 * ndtr(m / 2.0) - 1.0)


def dp_tradeoff_bound(fpr, eps: float, delta: float) -> np.ndarray:
    """The largest TPR any test may reach at false-positive rate alpha against an (eps, delta)-DP release:
    min(1, e^eps alpha + delta, 1 - e^-eps (1 - delta - alpha))."""
    alpha = _rates(fpr)
    if not eps > 0 or not 0 <= delta < 1 or math.isinf(eps):
        raise InputError(f"need a finite eps > 0 and 0 <= delta < 1 (got {eps!r}, {delta!r})", "eps")
    # e^eps alpha as exp(eps + ln alpha) with the exponent capped at 0: where e^eps alpha >= 1 the bound is 1 anyway,
    # so the cap changes nothing after the clip, and e^eps itself (inf above eps = 709.78) is never formed.
    with np.errstate(divide="ignore"):
        scaled = np.exp(np.minimum(eps + np.log(alpha), 0.0))
    upper = np.minimum(scaled + delta, 1.0 - math.exp(-eps) * (1.0 - delta - alpha))
    return np.clip(upper, 0.0, 1.0)


def neighbour_densities(m: float, points: int = 241, span: float = 4.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The release's density under "absent" (mean 0) and "present" (mean 1), in units of Delta, with noise
    sigma / Delta = 1 / m: x from -span sigma to 1 + span sigma, and the two normal densities at x.

    m = 0 is not drawable (the two densities are flat); m = inf (no noise) gives two spikes of width 0.01."""
    m = _distance(m)
    if m == 0:
        raise InputError("with m = 0 the release carries no information; there is nothing to draw", "m")
    scale = 0.01 if math.isinf(m) else 1.0 / m
    x = np.linspace(-span * scale, 1.0 + span * scale, int(points))
    norm = 1.0 / (scale * math.sqrt(2.0 * math.pi))
    absent = norm * np.exp(-0.5 * (x / scale) ** 2)
    present = norm * np.exp(-0.5 * ((x - 1.0) / scale) ** 2)
    return x, absent, present
