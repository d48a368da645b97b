"""Zero-sum correlated noise across sites: the helper's e with sum_s mu_s e_s = 0 (docs/math/cape.md).

* :func:`plain_zero_sum_noise` - the plain CAPE construction for equal weights (section "Equal sites").
* :func:`zero_sum_feasible` / :func:`weighted_zero_sum_mixing` - the polygon condition and an explicit law for
  any weights and variances (section "Generalized CAPE", zero-sum condition).
* :class:`ZeroSumLaw` / :func:`weighted_zero_sum_law` - the same law in factored form, mu_s e_s = w_s - c_s sum_t w_t
  with independent w_t, which is what makes the privacy audit fast (docs/math/audit.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import InputError

__all__ = ["ZeroSumLaw", "plain_zero_sum_noise", "weighted_zero_sum_law", "weighted_zero_sum_mixing",
           "zero_sum_feasible"]


@dataclass(frozen=True, kw_only=True)
class ZeroSumLaw:
    """The joint law of the helper's terms in factored form (docs/math/audit.md, "The structure of the helper's
    noise").

    For a site with weight mu_s > 0, u_s = mu_s e_s = w_s - c_s W with W = sum_t w_t over those sites and
    w_t ~ N(0, ``var_w``_t) independent; a site with mu_s = 0 draws e_s ~ N(0, ``var_w``_s) independently of
    everything (``common``_s = 0). So Cov(u) = diag(var_w) - c var_w^T - var_w c^T + (sum var_w) c c^T on the
    weighted sites: diagonal plus rank two. Every design of :mod:`dpcore.cape` has this form: the equal design
    (c_s = 1/S), the published closed form (c = the last site's unit vector, var_w of the last site 0) and the
    weighted construction of :func:`weighted_zero_sum_mixing` (c proportional to mu_s tau_e,s)."""

    common: np.ndarray
    var_w: np.ndarray

    def covariance(self, weights: np.ndarray) -> np.ndarray:
        """Cov(e), S x S, for the aggregation weights the law was built for."""
        mu = np.asarray(weights, dtype=float)
        c, v = self.common, self.var_w
        cov_u = np.diag(v) - np.outer(c, v) - np.outer(v, c) + float(np.sum(v[mu > 0])) * np.outer(c, c)
        weighted = mu > 0
        scale = np.where(weighted, 1.0 / np.where(weighted, mu, 1.0), 0.0)
        cov = cov_u * np.outer(scale, scale)
        free = np.flatnonzero(~weighted)
        cov[free, free] = v[free]
        return cov


def weighted_zero_sum_law(weights: np.ndarray, variances: np.ndarray) -> ZeroSumLaw:
    """:func:`weighted_zero_sum_mixing` in factored form (:class:`ZeroSumLaw`), for the same valid inputs.

    Inside: with a_s = mu_s sqrt(v_s), A = sum(a) and c = a / A, the mixing is u = (I - c 1^T) diag(d) z, i.e.
    w = diag(d) z and var_w = d^2 = c^2 A^2 / ((1 + Q)(1 - 2 c)). On the boundary (one a_s equal to the others'
    sum A') the law is rank one, u_t = a_t z_0 and u_big = -A' z_0: w_big ~ N(0, A'^2), c_t = a_t / A' for the
    others and c_big = 0. Sites with mu_s > 0 and v_s = 0 have c_s = var_w,s = 0."""
    mu = np.asarray(weights, dtype=float)
    v = np.asarray(variances, dtype=float)
    n_sites = mu.size
    common = np.zeros(n_sites)
    var_w = np.where(mu <= 0, v, 0.0)
    active = np.flatnonzero((mu > 0) & (v > 0))
    if active.size == 0:
        return ZeroSumLaw(common=common, var_w=var_w)
    a = mu[active] * np.sqrt(v[active])
    total = a.sum()
    c = a / total
    if np.max(c) >= 0.5 - 1e-12:
        big = int(np.argmax(c))
        rest = total - a[big]
        common[active] = a / rest
        common[active[big]] = 0.0
        var_w[active[big]] = rest**2
        return ZeroSumLaw(common=common, var_w=var_w)
    q = np.sum(c**2 / (1.0 - 2.0 * c))
    common[active] = c
    var_w[active] = c**2 * total**2 / ((1.0 + q) * (1.0 - 2.0 * c))
    return ZeroSumLaw(common=common, var_w=var_w)


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

