"""The sites' moments M2, M3 and the projected M3(W, W, W) of the two models (docs/math/capeagn.md).

* MOG: after dividing every sample by a public bound zeta (so ||t|| <= 1; samples beyond it are clipped) and
  sigma^2 by zeta^2: M2 = mean t t^T - sigma^2 I and
  M3 = mean t^(x)3 - sigma^2 sum_d (m x e_d x e_d + e_d x m x e_d + e_d x e_d x m), m = mean t,
  so that M2 = sum_k w_k a_k a_k^T and M3 = sum_k w_k a_k^(x)3 (components scaled by 1/zeta).
* STM: M2 = E[t1 t2^T], M3 = E[t1 x t2 x t3]. Two estimators:

  - ``first`` (the paper's): the first two / three words of each document, symmetrised;
  - ``all``: per document, the average over all ordered pairs / triples of distinct word positions
    (a U-statistic, computable from word counts, lower variance for long documents).

  Both keep the published sensitivity sqrt(2)/N: each document contributes an entry-wise
  non-negative array of Frobenius norm <= 1, and for non-negative A, B with norms <= 1,
  ||A - B||_F^2 = ||A||^2 + ||B||^2 - 2 <A, B> <= 2. ``tests/test_tensor_models.py`` checks it by brute force.

Sites hold their samples in :class:`MogSite` / :class:`StmSite`, which compute the second moment
(whole, or a block of columns for large D), the dense third moment (small D only) and the projected
third moment M3(W, W, W) directly from the samples in O(N D K + N K^3), never forming a D^3 array.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, Protocol

import numpy as np
import scipy.sparse as sp

from ..limits import MAX_KEPT_M3_DIM
from ..validation import InputError, check_choice, check_positive
from .multilinear import outer_identity_sym, symmetrize, third_cross, third_moment

__all__ = ["ESTIMATORS", "DocumentCounts", "Estimator", "KeptM3", "MogSite", "MomentSite", "Site", "StmSite",
           "mog_sites", "pool_sites", "stm_site_from_words"]

Estimator = Literal["first", "all"]
ESTIMATORS: dict[Estimator, str] = {
    "first": "first two / three words of each document, symmetrised (as in the paper)",
    "all": "average over all ordered pairs / triples of distinct word positions of each document "
    "(works from word counts)",
}


class KeptM3:
    """A site's dense M3 (its ``_dense_m3()``) computed once and kept, read-only, when D <= MAX_KEPT_M3_DIM: a
    site's samples never change, and every release adds its noise into a new array (one writing into the kept
    moment would raise). Larger D compute it at each call, as the memory estimate of the dense path counts."""

    dim: int

    def _dense_m3(self) -> np.ndarray:
        raise NotImplementedError

    def m3(self) -> np.ndarray:
        """The dense M3 (D^3 entries; small D only)."""
        if self.dim > MAX_KEPT_M3_DIM:
            return self._dense_m3()
        kept = self._kept_m3
        kept.setflags(write=False)  # at every call: a site unpickled in a worker process arrives writeable
        return kept

    @cached_property
    def _kept_m3(self) -> np.ndarray:
        return self._dense_m3()


@dataclass(frozen=True, eq=False)
class MogSite(KeptM3):
    """One site's MOG samples, scaled so ||x_n|| <= 1; ``sigma2`` is the scaled component variance."""

    x: np.ndarray
    sigma2: float
    kind: str = field(default="mog", init=False)

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    @property
    def dim(self) -> int:
        return int(self.x.shape[1])

    @cached_property
    def mean(self) -> np.ndarray:
        return self.x.mean(axis=0)

    def m2(self) -> np.ndarray:
        """M2 = (1/N) X^T X - sigma^2 I."""
        return self.x.T @ self.x / self.n - self.sigma2 * np.eye(self.dim)

    def m2_block(self, j0: int, j1: int) -> np.ndarray:
        """Rows 0..j1-1, columns j0..j1-1 of M2 (the upper-triangle block the CAPE flow needs)."""
        block = self.x[:, :j1].T @ self.x[:, j0:j1] / self.n
        cols = np.arange(j1 - j0)
        block[j0 + cols, cols] -= self.sigma2
        return block

    def m2_matvec(self) -> Callable[[np.ndarray], np.ndarray]:
        """V -> M2 V = X^T (X V) / N - sigma^2 V without forming M2 (memory O(N D) for the samples themselves)."""
        return lambda v: self.x.T @ (self.x @ v) / self.n - self.sigma2 * v

    def _dense_m3(self) -> np.ndarray:
        """Dense M3 = (1/N) sum x^(x)3 - sigma^2 sum_d (m x e_d x e_d + e_d x m x e_d + e_d x e_d x m)."""
        return third_moment(self.x) / self.n - self.sigma2 * outer_identity_sym(self.mean, np.eye(self.dim))

    def m3_projected(self, w: np.ndarray) -> np.ndarray:
        """M3(W, W, W) from the samples: (1/N) sum (W^T x)^(x)3 - sigma^2 3 Sym(W^T m x W^T W), O(N D K + N K^3)."""
        y = self.x @ w
        return third_moment(y) / self.n - self.sigma2 * outer_identity_sym(w.T @ self.mean, w.T @ w)


class DocumentCounts:
    """``n``, ``dim`` and the document ``lengths`` of a class whose ``counts`` is a sparse documents x words count
    matrix (the STM site here, the LDA sites and sums in :mod:`dpcore.lda`)."""

    counts: sp.csr_matrix

    @property
    def n(self) -> int:
        return int(self.counts.shape[0])

    @property
    def dim(self) -> int:
        return int(self.counts.shape[1])

    @cached_property
    def lengths(self) -> np.ndarray:
        return np.asarray(self.counts.sum(axis=1)).ravel()


@dataclass(frozen=True, eq=False)
class StmSite(KeptM3, DocumentCounts):
    """One site's documents: word ``counts`` (sparse N x D) and, when word order is known, the
    ``first`` three word indices (N x 3). ``estimator`` picks the moment estimator (:data:`ESTIMATORS`)."""

    counts: sp.csr_matrix
    first: np.ndarray | None
    estimator: str = "first"
    kind: str = field(default="stm", init=False)

    def __post_init__(self) -> None:
        check_choice(self.estimator, "estimator", tuple(ESTIMATORS))
        if self.estimator == "first" and self.first is None:
            raise InputError("the 'first' estimator needs word order; word-count data needs the 'all' estimator",
                             "estimator")
        if np.any(self.lengths < 3):
            raise InputError("every document needs at least 3 words", "documents")

    @cached_property
    def _first_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The "first" estimator's M2 = (1/N) sum_n (e_a e_b^T + e_b e_a^T) / 2 over each document's first two words
        (a, b), by its non-zero upper entries i <= j: (colex positions j (j + 1) / 2 + i ascending, i, j, values),
        a pair met k times in either order giving k / (2N) (k / N on the diagonal). Counted with one sort
        (``np.unique``) instead of sparse matrices: m2_upper at D = 10 and 2,000 documents took 0.18 ms instead of
        1.1 ms."""
        a, b = self.first[:, 0].astype(np.int64), self.first[:, 1].astype(np.int64)  # j (j + 1) / 2 in 64 bits
        low, high = np.minimum(a, b), np.maximum(a, b)
        positions, first, counts = np.unique(high * (high + 1) // 2 + low, return_index=True, return_counts=True)
        values = counts * (0.5 / self.n)
        rows, cols = low[first], high[first]
        values[rows == cols] *= 2.0
        return positions, rows, cols, values

    @cached_property
    def _m2_sparse(self) -> sp.csc_matrix:
        n, d = self.n, self.dim
        if self.estimator == "first":
            _, rows, cols, values = self._first_pairs
            off = rows != cols
            return sp.csc_matrix((np.concatenate([values, values[off]]),
                                  (np.concatenate([rows, cols[off]]), np.concatenate([cols, rows[off]]))), shape=(d, d))
        alpha = 1.0 / (self.lengths * (self.lengths - 1.0))
        c = self.counts
        gram = (c.T @ sp.diags(alpha) @ c).tocsc()
        return ((gram - sp.diags(np.asarray(c.T @ alpha).ravel())) / n).tocsc()

    def m2(self) -> np.ndarray:
        """Dense M2 (D x D)."""
        return self._m2_sparse.toarray()

    def m2_block(self, j0: int, j1: int) -> np.ndarray:
        """Rows 0..j1-1, columns j0..j1-1 of M2."""
        return self._m2_sparse[:j1, j0:j1].toarray()

    @cached_property
    def m2_upper(self) -> tuple[np.ndarray, np.ndarray]:
        """The stored entries of M2's upper triangle (i <= j) as (colex positions j (j + 1) / 2 + i, ascending; their
        values): the unique entries the CAPE flow releases, read without densifying blocks of M2."""
        if self.estimator == "first":
            positions, _, _, values = self._first_pairs
            return positions, values
        upper = sp.triu(self._m2_sparse, format="coo")
        upper.sum_duplicates()
        positions = upper.col.astype(np.int64) * (upper.col.astype(np.int64) + 1) // 2 + upper.row
        order = np.argsort(positions, kind="stable")
        return positions[order], upper.data[order]

    def m2_matvec(self) -> Callable[[np.ndarray], np.ndarray]:
        """V -> M2 V through the sparse M2 (at most 2 N non-zero entries for "first", the word pairs of the
        documents for "all"), never a dense D x D array."""
        m2 = self._m2_sparse
        return lambda v: m2 @ v

    def _alpha3(self) -> np.ndarray:
        ell = self.lengths
        return 1.0 / (ell * (ell - 1.0) * (ell - 2.0))

    def _dense_m3(self) -> np.ndarray:
        """Dense symmetric M3 (D^3 entries; small D only)."""
        n, d = self.n, self.dim
        if self.estimator == "first":
            f = self.first
            flat = (f[:, 0] * d + f[:, 1]) * d + f[:, 2]
            raw = np.bincount(flat, minlength=d**3).astype(float).reshape(d, d, d) / n
            return symmetrize(raw)
        alpha = self._alpha3()
        c = self.counts.toarray()
        cubes = third_moment(c, alpha)
        pair = c.T @ (c * alpha[:, None])  # Q_ik = sum_n alpha_n c_ni c_nk
        b = np.zeros((d, d, d))
        idx = np.arange(d)
        b[idx, idx, :] = pair
        diag = np.zeros((d, d, d))
        diag[idx, idx, idx] = c.T @ alpha
        return (cubes - 3.0 * symmetrize(b) + 2.0 * diag) / n

    def m3_projected(self, w: np.ndarray) -> np.ndarray:
        """M3(W, W, W) from the documents, never forming a D^3 array."""
        if self.estimator == "first":
            f = self.first
            return symmetrize(third_cross(w[f[:, 0]], w[f[:, 1]], w[f[:, 2]])) / self.n
        alpha = self._alpha3()
        y = np.asarray(self.counts @ w)
        cubes = third_moment(y, alpha)
        coo = self.counts.tocoo()
        vals = alpha[coo.row] * coo.data
        b = third_cross(w[coo.col], w[coo.col], y[coo.row], vals)  # sum alpha c_nd w_d x w_d x y_n
        diag = third_moment(w, np.asarray(self.counts.T @ alpha).ravel())
        return (cubes - 3.0 * symmetrize(b) + 2.0 * diag) / self.n


Site = MogSite | StmSite


class MomentSite(Protocol):
    """What the message flows of :mod:`dpcore.tensor.release` need of a site: its number of samples, the dimension,
    blocks of its second moment, its dense third moment (small D) and its projected third moment M3(W, W, W).
    :class:`MogSite`, :class:`StmSite` and the LDA sites of :mod:`dpcore.lda` provide them."""

    @property
    def n(self) -> int: ...

    @property
    def dim(self) -> int: ...

    def m2_block(self, j0: int, j1: int) -> np.ndarray: ...

    def m3(self) -> np.ndarray: ...

    def m3_projected(self, w: np.ndarray) -> np.ndarray: ...


def mog_sites(
    parts: list[np.ndarray], sigma2: float, norm_bound: float
) -> tuple[tuple[MogSite, ...], float, int]:
    """Scale raw MOG samples (one array per site, original units) by the public ``norm_bound`` zeta,
    clip the rare sample still longer than 1, scale sigma^2 by 1/zeta^2.
    Returns (sites, scaled sigma^2, number of clipped samples)."""
    zeta = check_positive(norm_bound, "norm bound")
    sigma2_scaled = float(sigma2) / zeta**2
    sites = []
    clipped = 0
    for x in parts:
        y = np.asarray(x, dtype=float) / zeta
        norms = np.linalg.norm(y, axis=1)
        over = norms > 1.0
        clipped += int(over.sum())
        if over.any():
            y[over] /= norms[over, None]
        sites.append(MogSite(y, sigma2_scaled))
    return tuple(sites), sigma2_scaled, clipped


def stm_site_from_words(words: np.ndarray, dim: int, estimator: str = "first") -> StmSite:
    """A site from equal-length documents given as word indices (N x L, L >= 3)."""
    words = np.asarray(words, dtype=np.int64)
    n, length = words.shape
    rows = np.repeat(np.arange(n), length)
    counts = sp.csr_matrix((np.ones(n * length), (rows, words.ravel())), shape=(n, dim))
    counts.sum_duplicates()
    return StmSite(counts, words[:, :3].copy(), estimator)


def pool_sites(sites: tuple[Site, ...] | list[Site]) -> Site:
    """All samples in one site (the pooled-data scenario)."""
    first = sites[0]
    if isinstance(first, MogSite):
        return MogSite(np.vstack([s.x for s in sites]), first.sigma2)
    firsts = None if any(s.first is None for s in sites) else np.vstack([s.first for s in sites])
    return StmSite(sp.vstack([s.counts for s in sites]).tocsr(), firsts, first.estimator)
