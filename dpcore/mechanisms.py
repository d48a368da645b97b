"""Gaussian mechanism calibration, symmetric noise and zero-sum correlated noise (SPEC section 2-3).

Calibrations (sigma = Delta * c(eps, delta), linear in the sensitivity Delta):

* ``classic``: c = sqrt(2 ln(1.25/delta)) / eps (Dwork & Roth 2014, Thm A.1). A guarantee only for
  0 < eps < 1; larger eps is allowed to reproduce the papers and always raises
  :class:`ClassicCalibrationWarning`.
* ``analytic``: the smallest sigma whose exact privacy profile is <= delta (Balle & Wang, ICML 2018,
  Thm 8), valid for every eps > 0. For eps < 1 it is never larger than the classic sigma; for large
  eps it can be larger (e.g. eps = 10, delta = 1e-5: 0.500 vs 0.484), because there the classic sigma
  does not meet delta at all.

The exact privacy profile of a Gaussian mechanism with m = Delta / sigma is
``delta(eps) = Phi(m/2 - eps/m) - e^eps Phi(-m/2 - eps/m)``; the audit inverts it.

numpy's generators are not cryptographically secure: fine for simulation and teaching, not for a
deployment (SPEC 9.9).
"""

from __future__ import annotations

import math
import warnings
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from .validation import InputError, check_choice, check_delta, check_epsilon, check_positive, check_positive_int

__all__ = [
    "CALIBRATIONS",
    "MAX_DENSE_ENTRIES",
    "ClassicCalibrationWarning",
    "avn_noise",
    "classic_caveat",
    "delta_for_sigma",
    "eps_for_sigma",
    "gaussian_sigma",
    "noise_multiplier",
    "plain_zero_sum_noise",
    "privacy_profile",
    "symmetric_gaussian_matrix",
    "symmetric_gaussian_tensor",
    "symmetric_matrix",
    "symmetric_tensor",
    "unique_count_matrix",
    "unique_count_tensor",
    "unique_entries_matrix",
    "unique_entries_tensor",
    "weighted_zero_sum_mixing",
    "zero_sum_feasible",
]

CALIBRATIONS = ("classic", "analytic")


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


@lru_cache(maxsize=4096)
def _analytic_multiplier(eps: float, delta: float) -> float:
    """sigma for Delta = 1: solve privacy_profile(1/sigma, eps) = delta (profile increases with m)."""

    def gap(log_m: float) -> float:
        return math.log(max(privacy_profile(math.exp(log_m), eps), 1e-300)) - math.log(delta)

    lo, hi = -30.0, 30.0
    while gap(lo) > 0:  # pragma: no cover - only for absurdly small delta
        lo -= 10.0
    while gap(hi) < 0:
        hi += 10.0
    log_m = brentq(gap, lo, hi, xtol=1e-14, rtol=1e-13, maxiter=500)
    # brentq lands on either side of the root: a relative margin of 1e-10 puts sigma on the safe side.
    sigma = math.exp(-log_m) * (1.0 + 1e-10)
    while privacy_profile(1.0 / sigma, eps) > delta:  # pragma: no cover - the margin suffices
        sigma *= 1.0 + 1e-10
    return sigma


def noise_multiplier(eps: float, delta: float, calibration: str = "classic") -> float:
    """c(eps, delta): the Gaussian noise std for sensitivity 1. ``sigma = Delta * c``.

    Classic with eps >= 1 warns with :class:`ClassicCalibrationWarning`.
    """
    eps = check_epsilon(eps)
    delta = check_delta(delta)
    calibration = check_choice(calibration, "calibration", CALIBRATIONS)
    if calibration == "classic":
        caveat = classic_caveat(eps)
        if caveat:
            warnings.warn(caveat, ClassicCalibrationWarning, stacklevel=2)
        return _classic_multiplier(eps, delta)
    return _analytic_multiplier(eps, delta)


def gaussian_sigma(sensitivity: float, eps: float, delta: float, calibration: str = "classic") -> float:
    """sigma = Delta * c(eps, delta) for the chosen calibration (SPEC section 2)."""
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
    if sigma == 0.0:
        return math.inf
    if math.isinf(sigma):
        return 0.0
    if calibration == "classic":
        return sensitivity * _classic_multiplier(1.0, delta) / sigma
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
    if sigma == 0.0:
        return 1.0
    return privacy_profile(sensitivity / sigma, eps)


# ----------------------------------------------------------------------------------------------
# Symmetric matrices and tensors from their unique entries
# ----------------------------------------------------------------------------------------------

def unique_count_matrix(dim: int) -> int:
    """D(D+1)/2 unique entries of a symmetric D x D matrix."""
    return dim * (dim + 1) // 2


def unique_count_tensor(dim: int) -> int:
    """C(D+2, 3) unique entries of a symmetric D x D x D tensor."""
    return dim * (dim + 1) * (dim + 2) // 6


def _colex_position(*sorted_indices: np.ndarray) -> np.ndarray:
    """Position of a sorted index tuple i <= j (<= k) among all such tuples in colex order:
    pos(i, j) = C(j+1, 2) + i and pos(i, j, k) = C(k+2, 3) + C(j+1, 2) + i."""
    if len(sorted_indices) == 2:
        i, j = sorted_indices
        return j * (j + 1) // 2 + i
    i, j, k = sorted_indices
    return k * (k + 1) * (k + 2) // 6 + j * (j + 1) // 2 + i


@lru_cache(maxsize=8)
def _full_index(dim: int, order: int) -> np.ndarray:
    """Flat D^order array mapping every index tuple to the position of its unique entry.

    Built by broadcasting (one int64 array of D^order entries plus temporaries of the same size):
    the sorted tuple of (a, b) is (min, max); of (a, b, c) it is (min, a + b + c - min - max, max)."""
    r = np.arange(dim, dtype=np.int64)
    if order == 2:
        a, b = r[:, None], r[None, :]
        idx = _colex_position(np.minimum(a, b), np.maximum(a, b))
    else:
        a, b, c = r[:, None, None], r[None, :, None], r[None, None, :]
        lo = np.minimum(np.minimum(a, b), c)
        hi = np.maximum(np.maximum(a, b), c)
        idx = _colex_position(lo, a + b + c - lo - hi, hi)
    idx = idx.ravel()
    idx.setflags(write=False)
    return idx


def _pairs(count: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``count`` pairs i <= j in colex order: pos = j (j + 1) / 2 + i."""
    pos = np.arange(count, dtype=np.int64)
    j = ((np.sqrt(8.0 * pos + 1.0) - 1.0) // 2).astype(np.int64)
    j += (j + 1) * (j + 2) // 2 <= pos  # guard against floating-point rounding at block edges
    j -= j * (j + 1) // 2 > pos
    return pos - j * (j + 1) // 2, j


@lru_cache(maxsize=8)
def _unique_tuples(dim: int, order: int) -> np.ndarray:
    """(order, n_unique) sorted index tuples in colex order (the order of the unique entries)."""
    if order == 2:
        tuples = np.stack(_pairs(unique_count_matrix(dim)))
    else:
        # block k holds the C(k+2, 2) pairs (i <= j <= k), in pair colex order
        sizes = np.arange(1, dim + 1, dtype=np.int64) * np.arange(2, dim + 2, dtype=np.int64) // 2
        k = np.repeat(np.arange(dim, dtype=np.int64), sizes)
        offset = np.arange(k.size, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        i_all, j_all = _pairs(int(sizes[-1]))
        tuples = np.stack([i_all[offset], j_all[offset], k])
    tuples.setflags(write=False)
    return tuples


MAX_DENSE_ENTRIES = 64_000_000  # 512 MB per float64 array; larger tensors take the projected path


def _check_dense_dim(dim: int, order: int) -> int:
    dim = check_positive_int(dim, "D")
    if dim**order > MAX_DENSE_ENTRIES:
        raise InputError(
            f"a dense symmetric array with D = {dim} and order {order} has {dim**order:,} entries, "
            f"more than the {MAX_DENSE_ENTRIES:,} allowed in memory; use a smaller D or the projected path",
            "D",
        )
    return dim


def symmetric_matrix(unique: np.ndarray, dim: int) -> np.ndarray:
    """Mirror unique entries (last axis, colex order of i <= j) into (..., D, D) symmetric matrices."""
    dim = _check_dense_dim(dim, 2)
    unique = np.asarray(unique)
    if unique.shape[-1] != unique_count_matrix(dim):
        raise InputError(f"expected {unique_count_matrix(dim)} unique entries for D = {dim}, got {unique.shape[-1]}")
    return unique[..., _full_index(dim, 2)].reshape(*unique.shape[:-1], dim, dim)


def symmetric_tensor(unique: np.ndarray, dim: int) -> np.ndarray:
    """Copy each unique entry (i <= j <= k, colex order) to all index permutations: (..., D, D, D)."""
    dim = _check_dense_dim(dim, 3)
    unique = np.asarray(unique)
    if unique.shape[-1] != unique_count_tensor(dim):
        raise InputError(f"expected {unique_count_tensor(dim)} unique entries for D = {dim}, got {unique.shape[-1]}")
    return unique[..., _full_index(dim, 3)].reshape(*unique.shape[:-1], dim, dim, dim)


def unique_entries_matrix(matrix: np.ndarray) -> np.ndarray:
    """Entries (i <= j, colex order) of (..., D, D); inverse of :func:`symmetric_matrix`."""
    i, j = _unique_tuples(matrix.shape[-1], 2)
    return matrix[..., i, j]


def unique_entries_tensor(tensor: np.ndarray) -> np.ndarray:
    """Entries (i <= j <= k, colex order) of (..., D, D, D); inverse of :func:`symmetric_tensor`."""
    i, j, k = _unique_tuples(tensor.shape[-1], 3)
    return tensor[..., i, j, k]


def symmetric_gaussian_matrix(rng: np.random.Generator, dim: int, std: float) -> np.ndarray:
    """D x D symmetric matrix whose D(D+1)/2 unique entries are i.i.d. N(0, std^2)."""
    dim = _check_dense_dim(dim, 2)
    return symmetric_matrix(rng.normal(0.0, std, unique_count_matrix(dim)), dim)


def symmetric_gaussian_tensor(rng: np.random.Generator, dim: int, std: float) -> np.ndarray:
    """D x D x D symmetric tensor whose C(D+2, 3) unique entries are i.i.d. N(0, std^2)."""
    dim = _check_dense_dim(dim, 3)
    return symmetric_tensor(rng.normal(0.0, std, unique_count_tensor(dim)), dim)


# ----------------------------------------------------------------------------------------------
# Zero-sum correlated noise across sites
# ----------------------------------------------------------------------------------------------

def plain_zero_sum_noise(rng: np.random.Generator, stds: np.ndarray, size: int) -> np.ndarray:
    """Plain CAPE construction (SPEC 3): z_s ~ N(0, std_s^2) i.i.d., e_s = z_s - mean(z); sum_s e_s = 0.

    Returns an (S, size) array. With equal stds tau, var(e_s) = (1 - 1/S) tau^2.
    """
    stds = np.asarray(stds, dtype=float)
    z = rng.standard_normal((stds.size, size)) * stds[:, None]
    return z - z.mean(axis=0, keepdims=True)


def zero_sum_feasible(weights: np.ndarray, variances: np.ndarray, rtol: float = 1e-9) -> bool:
    """Polygon inequality: a Gaussian e with var(e_s) = v_s and sum mu_s e_s = 0 exists iff
    mu_s sqrt(v_s) <= sum_{t != s} mu_t sqrt(v_t) for every s (SPEC 4)."""
    a = np.asarray(weights, float) * np.sqrt(np.clip(np.asarray(variances, float), 0.0, None))
    total = a.sum()
    return bool(np.all(2.0 * a <= total * (1.0 + rtol)))


def weighted_zero_sum_mixing(weights: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """Mixing matrix M (S x S) with e = M z, z ~ N(0, I): var(e_s) = v_s and sum_s mu_s e_s = 0 exactly.

    Construction: for the sites with mu_s > 0 and v_s > 0 let a_s = mu_s sqrt(v_s) (the std of
    u_s = mu_s e_s), c = a / sum(a) and u = (I - c 1^T) diag(d) z, which sums to 0 for every z. Then
    var(u_s) = d_s^2 (1 - 2 c_s) + c_s^2 sum_t d_t^2, and d_s^2 = c_s^2 A^2 / ((1 + Q)(1 - 2 c_s)) with
    A = sum(a), Q = sum_t c_t^2 / (1 - 2 c_t) gives var(u_s) = a_s^2 exactly. It needs every c_s < 1/2,
    which is the polygon inequality; it has the largest possible rank (one less than the number of
    such sites). On the boundary (one a_s equal to the sum of the others) the only law is rank one.
    Sites with mu_s = 0 get independent N(0, v_s). Raises InputError when no such law exists.
    """
    mu = np.asarray(weights, dtype=float)
    v = np.asarray(variances, dtype=float)
    if mu.shape != v.shape or mu.ndim != 1:
        raise InputError("weights and variances must be 1-d arrays of the same length")
    if np.any(v < 0):
        raise InputError("zero-sum noise needs non-negative variances", "variances")
    n_sites = mu.size
    mixing = np.zeros((n_sites, n_sites))
    free = mu <= 0
    mixing[free, free] = np.sqrt(v[free])
    active = np.flatnonzero((mu > 0) & (v > 0))
    if active.size == 0:
        return mixing
    a = mu[active] * np.sqrt(v[active])
    total = a.sum()
    c = a / total
    if active.size == 1 or np.max(c) > 0.5 + 1e-9:
        worst = int(active[np.argmax(c)])
        raise InputError(
            f"no zero-sum noise exists with these variances: site {worst + 1} has weighted std "
            f"{a.max():.4g}, more than the {total - a.max():.4g} of all other sites together "
            "(polygon inequality mu_s sqrt(v_s) <= sum_(t != s) mu_t sqrt(v_t))"
        )
    if np.max(c) >= 0.5 - 1e-12:
        # Boundary: u_big = -sum of the others, all driven by one shared standard normal.
        big = int(np.argmax(c))
        column = a.copy()
        column[big] = -(total - a[big])
        u_mixing = np.zeros((active.size, active.size))
        u_mixing[:, 0] = column
    else:
        q = np.sum(c**2 / (1.0 - 2.0 * c))
        d = np.sqrt(c**2 * total**2 / ((1.0 + q) * (1.0 - 2.0 * c)))
        u_mixing = (np.eye(active.size) - np.outer(c, np.ones(active.size))) * d[None, :]
    mixing[np.ix_(active, active)] = u_mixing / mu[active][:, None]
    return mixing


# ----------------------------------------------------------------------------------------------
# AVN noise (appendix E of the preprint)
# ----------------------------------------------------------------------------------------------

def avn_noise(rng: np.random.Generator, dim: int, beta: float) -> np.ndarray:
    """Vector b in R^dim with density proportional to exp(-beta ||b||_2): a uniform direction times a
    Gamma(shape = dim, scale = 1/beta) radius. With beta = eps / Delta this is pure eps-DP."""
    dim = check_positive_int(dim, "dim")
    beta = check_positive(beta, "beta")
    direction = rng.standard_normal(dim)
    direction /= np.linalg.norm(direction)
    return direction * rng.gamma(shape=dim, scale=1.0 / beta)
