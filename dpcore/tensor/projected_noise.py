"""The published third-moment noise law, sampled already projected (docs/math/capeagn.md, "Large D: the projected
path").

The published law P (preprint Appendix E.1) is the symmetric D x D x D tensor whose C(D+2, 3) unique entries are
i.i.d. N(0, 1) (scaled by tau afterwards). What a site sends is P(W, W, W), a symmetric K x K x K Gaussian tensor.
Its law is fixed by the covariance of its m = C(K+2, 3) unique entries u = (p <= q <= r), u' = (p' <= q' <= r'):

    Cov(u, u') = sum_{sigma in S3} prod_t G[u_t, u'_sigma(t)]
               - sum_{x, y in {0,1,2}} H[u \\ x, u' \\ y] G[u_x, u'_y]
               + 4 Q[u, u'],

with G = W^T W = sum_i w_i w_i^T, H = sum_i w_i^(x)4 and Q = sum_i w_i^(x)6 (w_i the rows of W; u \\ x the pair
left when position x is dropped). Derivation: an ordered index triple (a, b, c) shares its unique entry with the
6 / |stab(a, b, c)| rearrangements of itself, and 1 / |stab| = 1 - ([a=b] + [a=c] + [b=c]) / 2 + (2/3) [a=b=c]
(1, 1/2, 1/6 for 3, 2, 1 distinct indices); the three terms are the contributions of these indicators. The first
term alone is the law of sqrt(6) Sym(Z)(W, W, W) (Z i.i.d.), which gives entries with two equal indices twice and
all-equal entries six times the variance; the two corrections remove exactly that excess.

The sampler draws m standard normals per site and noise term and multiplies them by a factor F with
F F^T = Cov (Cholesky). The map is linear, so the helper's zero-sum mixing across sites, applied to the standard
normals, still cancels exactly after it. Cost per W: O(D K^4 + D m^2) for H and Q, O(m^2) gathers for the
covariance, O(m^3 / 3) for the factor; memory O(m^2), hence :data:`~dpcore.limits.MAX_PUBLISHED_PROJECTED_K`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import scipy.linalg

from ..privacy.symmetric import symmetric_tensor, unique_index_tuples

__all__ = ["published_covariance", "published_factor", "published_projected_tensor"]


_CHUNK_ENTRIES = 1 << 22  # rows x columns per chunk of the sums over the D rows of W (32 MiB)


def _row_gram(w: np.ndarray, columns: Callable[[np.ndarray], np.ndarray], width: int) -> np.ndarray:
    """sum_i c(w_i) c(w_i)^T over the rows w_i of W, in chunks of rows, for a map ``columns`` to ``width`` numbers."""
    out = np.zeros((width, width))
    step = max(1, _CHUNK_ENTRIES // max(width, 1))
    for start in range(0, w.shape[0], step):
        block = columns(w[start:start + step])
        out += block.T @ block
    return out


def published_covariance(w: np.ndarray) -> np.ndarray:
    """Covariance (m x m, m = C(K+2, 3), colex order) of the unique entries of P(W, W, W) for the published law P
    with unit variance (module docstring). Memory: about 4 m^2 numbers besides W."""
    k = w.shape[1]
    a, b, c = unique_index_tuples(k, 3)  # (m,) each: the unique triples p <= q <= r
    positions = (a, b, c)
    gram = w.T @ w
    fourth = _row_gram(w, lambda rows: (rows[:, :, None] * rows[:, None, :]).reshape(rows.shape[0], k * k), k * k)
    cov = _row_gram(w, lambda rows: rows[:, a] * rows[:, b] * rows[:, c], a.size)  # Q on unique entries
    cov *= 4.0

    def g(t: int, s: int) -> np.ndarray:
        return gram[positions[t][:, None], positions[s][None, :]]

    for sigma in itertools.permutations(range(3)):
        term = g(0, sigma[0])
        term *= g(1, sigma[1])
        term *= g(2, sigma[2])
        cov += term
    rest = [(1, 2), (0, 2), (0, 1)]  # the pair left when position x is dropped
    pair = [positions[i] * k + positions[j] for i, j in rest]
    for x in range(3):
        for y in range(3):
            term = fourth[pair[x][:, None], pair[y][None, :]]
            term *= g(x, y)
            cov -= term
    cov += cov.T
    cov /= 2.0
    return cov


def published_factor(w: np.ndarray) -> np.ndarray:
    """F (m x m) with F F^T = :func:`published_covariance` (lower Cholesky factor; for a W without full column
    rank, where the covariance is singular, the symmetric square root with negative rounding clipped)."""
    cov = published_covariance(w)
    try:
        return scipy.linalg.cholesky(cov, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        values, vectors = scipy.linalg.eigh(cov)
        return vectors * np.sqrt(np.clip(values, 0.0, None))


def published_projected_tensor(normals: np.ndarray, factor: np.ndarray, k: int) -> np.ndarray:
    """One draw of P(W, W, W) as a K x K x K tensor from m = C(K+2, 3) standard normals (scaled by tau)."""
    return symmetric_tensor(factor @ normals, k)
