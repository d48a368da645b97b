"""Zero-sum correlated noise across sites: the helper's e with sum_s mu_s e_s = 0 (docs/math/cape.md).

* :func:`plain_zero_sum_noise` - the plain CAPE construction for equal weights (section "Equal sites").
* :func:`zero_sum_feasible` / :func:`weighted_zero_sum_mixing` - the polygon condition and an explicit law for
  any weights and variances (section "Generalized CAPE", zero-sum condition).
"""

from __future__ import annotations

import numpy as np

from ..validation import InputError

__all__ = ["plain_zero_sum_noise", "weighted_zero_sum_mixing", "zero_sum_feasible"]


def plain_zero_sum_noise(rng: np.random.Generator, stds: np.ndarray, size: int) -> np.ndarray:
    """Plain CAPE construction (docs/math/cape.md, "Equal sites"): z_s ~ N(0, std_s^2) i.i.d.,
    e_s = z_s - mean(z); sum_s e_s = 0.

    Returns an (S, size) array. With equal stds tau, var(e_s) = (1 - 1/S) tau^2.
    """
    stds = np.asarray(stds, dtype=float)
    z = rng.standard_normal((stds.size, size)) * stds[:, None]
    return z - z.mean(axis=0, keepdims=True)


def zero_sum_feasible(weights: np.ndarray, variances: np.ndarray, rtol: float = 1e-9) -> bool:
    """Polygon inequality: a Gaussian e with var(e_s) = v_s and sum mu_s e_s = 0 exists iff
    mu_s sqrt(v_s) <= sum_{t != s} mu_t sqrt(v_t) for every s (docs/math/cape.md, "Generalized CAPE")."""
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

