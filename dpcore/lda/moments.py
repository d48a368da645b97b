"""Unbiased estimators of the LDA moments from word counts (paper 004, Appendix B, Definition B.1).

Per document n with counts c_n and length l_n >= 3 (``docs/math/lda.md``):

* p_n = c_n / l_n, whose conditional mean given theta_n is mu theta_n;
* P2_n = (c_n x c_n - Diag(c_n)) / (l_n (l_n - 1)): the empirical distribution of ordered pairs of distinct word
  positions, conditional mean (mu theta_n)^(x)2 (paper eq. 8);
* P3_n = (c_n^(x)3 - sum_ij c_i c_j (e_i e_i e_j + e_i e_j e_i + e_j e_i e_i) + 2 sum_i c_i e_i^(x)3)
  / (l_n (l_n - 1)(l_n - 2)): ordered triples of distinct positions, conditional mean (mu theta_n)^(x)3 (eq. 44).

With S1 = sum p_n, S2 = sum P2_n, Q1 = sum p_n p_n^T, X = sum_n P2_n x p_n, a2 = alpha_0/(alpha_0 + 1),
a3 = alpha_0/(alpha_0 + 2), b3 = 2 alpha_0^2 / ((alpha_0 + 1)(alpha_0 + 2)):

* M1_hat = S1 / N
* M2_hat = S2 / N - a2 (S1 S1^T - Q1) / (N (N - 1))                         [paper eq. 11]
* M3_hat = sum P3_n / N - a3 Sym3(S2 x S1 - X) / (N (N - 1))
  + b3 (S1^(x)3 - Sym3(Q1 x S1) + 2 sum_n p_n^(x)3) / (N (N - 1)(N - 2))

where Sym3(A x v) is the sum of the three placements of v (A symmetric). The corrections are U-statistics
over distinct documents: (S1 S1^T - Q1) / (N (N - 1)) is the mean of p_n x p_m over n != m, whose
expectation is M1 x M1 because documents are independent; likewise for the two others. So every
estimator is exactly unbiased for Definition 3.1 (needs N >= 3). Paper 004's printed B1 and b carry the
coefficients a2 and alpha_0^2/((alpha_0+1)(alpha_0+2)) and no minus sign; those are misprints (the
unbiasedness test by exact enumeration fails with them).

Nothing here forms a D^3 array: :func:`lda_m3_projected` computes M3_hat(W, W, W) for a D x K matrix W in
O(nnz K + (N + D) K^3) time from the sparse counts (nnz = number of non-zero counts); with W = I_D it gives the
dense tensor for small D (:func:`lda_m3_dense`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..limits import MAX_DENSE_M3_DIM
from ..tensor.moments import DocumentCounts
from ..tensor.multilinear import symmetrize, third_cross, third_moment
from ..validation import InputError
from .corpus import MIN_DOC_LENGTH

__all__ = [
    "MAX_DENSE_M3_DIM",
    "DocumentSums",
    "MomentCoefficients",
    "coefficients",
    "document_sums",
    "doc_count_tensor_p3",
    "lda_m1",
    "lda_m2",
    "lda_m2_matvec",
    "lda_m3_dense",
    "lda_m3_projected",
    "m2_from_sums",
    "m2_matvec_from_sums",
    "m3_frobenius_bound",
    "m3_projected_from_sums",
    "prepare_counts",
]


@dataclass(frozen=True)
class MomentCoefficients:
    """a2 = alpha_0/(alpha_0+1), a3 = alpha_0/(alpha_0+2), b3 = 2 alpha_0^2/((alpha_0+1)(alpha_0+2))."""

    a2: float
    a3: float
    b3: float


def coefficients(alpha0: float) -> MomentCoefficients:
    """The alpha_0 corrections of Definition 3.1 (alpha_0 -> 0 gives the single topic model)."""
    a0 = float(alpha0)
    return MomentCoefficients(a0 / (a0 + 1.0), a0 / (a0 + 2.0), 2.0 * a0 * a0 / ((a0 + 1.0) * (a0 + 2.0)))


def prepare_counts(counts: object) -> sp.csr_matrix:
    """A float64 CSR copy of a non-negative integer count matrix (documents x words) with every document of
    length >= 3 and at least 3 documents; raises InputError otherwise (the boundary check)."""
    c = sp.csr_matrix(counts, dtype=np.float64)
    c.sum_duplicates()
    if c.shape[0] < 3:
        raise InputError(f"the LDA moments need at least 3 documents (got {c.shape[0]})", "documents")
    data = c.data
    if data.size and (np.any(data < 0) or np.any(data != np.round(data)) or not np.all(np.isfinite(data))):
        raise InputError("word counts must be non-negative whole numbers", "counts")
    lengths = np.asarray(c.sum(axis=1)).ravel()
    short = int(np.sum(lengths < MIN_DOC_LENGTH))
    if short:
        raise InputError(f"{short} document(s) have fewer than {MIN_DOC_LENGTH} words; every document needs at least "
                         f"{MIN_DOC_LENGTH} (drop them before estimating)", "documents")
    c.eliminate_zeros()
    return c


@dataclass(frozen=True, eq=False)
class DocumentSums(DocumentCounts):
    """Per-document quantities shared by the estimators (counts already validated)."""

    counts: sp.csr_matrix

    @cached_property
    def beta2(self) -> np.ndarray:
        ell = self.lengths
        return 1.0 / (ell * (ell - 1.0))

    @cached_property
    def beta3(self) -> np.ndarray:
        ell = self.lengths
        return 1.0 / (ell * (ell - 1.0) * (ell - 2.0))

    @cached_property
    def p(self) -> sp.csr_matrix:
        """Rows p_n = c_n / l_n."""
        return sp.diags(1.0 / self.lengths) @ self.counts

    @cached_property
    def s1(self) -> np.ndarray:
        return np.asarray(self.p.sum(axis=0)).ravel()

    @cached_property
    def word_beta2(self) -> np.ndarray:
        """C^T beta2 (D), computed once: every projected moment of the site uses it."""
        return np.asarray(self.counts.T @ self.beta2).ravel()

    @cached_property
    def word_beta3(self) -> np.ndarray:
        """C^T beta3 (D), computed once."""
        return np.asarray(self.counts.T @ self.beta3).ravel()


def document_sums(counts: sp.csr_matrix) -> DocumentSums:
    """The per-document quantities of a validated count matrix (:func:`prepare_counts`), computed when first used."""
    return DocumentSums(counts)


def lda_m1(counts: sp.csr_matrix) -> np.ndarray:
    """M1_hat = (1/N) sum_n c_n / l_n (paper eq. 10)."""
    d = document_sums(counts)
    return d.s1 / d.n


def _pair_sum_sparse(d: DocumentSums) -> sp.csr_matrix:
    """S2 = sum_n P2_n = C^T diag(beta2) C - Diag(C^T beta2) (sparse D x D)."""
    c = d.counts
    gram = c.T @ sp.diags(d.beta2) @ c
    return (gram - sp.diags(d.word_beta2)).tocsr()


DENSE_PAIRS_RATIO = 400.0
"""The dense products of :func:`m2_from_sums` (BLAS, N D^2 multiply-adds) are used while N D^2 is at most this many
times the sparse products' work, the sum over documents of nnz_n^2. Measured with one BLAS thread (S2 and Q1
together): N = 1,000, D = 100, 50 words a document (ratio 6): sparse 13.3 ms, dense 4.0 ms; N = 736, D = 600, 30
words (ratio 420): 32 ms and 27 ms; N = 1,000, D = 2,000 (ratio 1,640): 192 ms and 247 ms."""
DENSE_PAIRS_ENTRIES = 1 << 22
"""The largest N x D count matrix made dense for those products (32 MiB of float64)."""


def _pair_sums(d: DocumentSums) -> tuple[np.ndarray, np.ndarray]:
    """S2 = C^T diag(beta2) C - Diag(C^T beta2) and Q1 = P^T P (dense D x D each), by dense BLAS products when they
    are the cheaper (:data:`DENSE_PAIRS_RATIO`, :data:`DENSE_PAIRS_ENTRIES`), else by sparse ones; the two differ
    by rounding only."""
    c = d.counts
    n, dim = c.shape
    work = float(np.sum(np.diff(c.indptr).astype(float) ** 2))
    if n * dim > DENSE_PAIRS_ENTRIES or float(n) * dim * dim > DENSE_PAIRS_RATIO * work:
        return _pair_sum_sparse(d).toarray(), (d.p.T @ d.p).toarray()
    dense = c.toarray()
    pairs = (dense * d.beta2[:, None]).T @ dense
    pairs[np.diag_indices(dim)] -= d.word_beta2
    dense /= d.lengths[:, None]
    return pairs, dense.T @ dense


def lda_m2(counts: sp.csr_matrix, alpha0: float) -> np.ndarray:
    """Dense M2_hat = S2/N - a2 (S1 S1^T - Q1) / (N (N - 1)) (paper eq. 11, corrected: see the module)."""
    return m2_from_sums(document_sums(counts), alpha0)


def m2_from_sums(d: DocumentSums, alpha0: float) -> np.ndarray:
    n = d.n
    a2 = coefficients(alpha0).a2
    pairs, q1 = _pair_sums(d)
    m2 = pairs / n
    m2 -= a2 / (n * (n - 1.0)) * (np.outer(d.s1, d.s1) - q1)
    return (m2 + m2.T) / 2.0


def lda_m2_matvec(counts: sp.csr_matrix, alpha0: float) -> Callable[[np.ndarray], np.ndarray]:
    """v -> M2_hat v for a vector or a D x r block, without forming M2_hat: O(nnz r) per product, memory
    O(nnz + D r). Used by the memory-light (online) path to whiten large vocabularies."""
    return m2_matvec_from_sums(document_sums(counts), alpha0)


def m2_matvec_from_sums(d: DocumentSums, alpha0: float) -> Callable[[np.ndarray], np.ndarray]:
    n, c, p = d.n, d.counts, d.p
    a2 = coefficients(alpha0).a2
    diag = np.asarray(c.T @ d.beta2).ravel()
    beta2, s1 = d.beta2, d.s1
    scale = a2 / (n * (n - 1.0))

    def matvec(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        block = v if v.ndim == 2 else v[:, None]
        pairs = c.T @ (beta2[:, None] * (c @ block)) - diag[:, None] * block
        cross = np.outer(s1, s1 @ block) - p.T @ (p @ block)
        out = pairs / n - scale * cross
        return out if v.ndim == 2 else out[:, 0]

    return matvec


def lda_m3_projected(counts: sp.csr_matrix, alpha0: float, w: np.ndarray) -> np.ndarray:
    """M3_hat(W, W, W) (K x K x K) from the counts, never forming a D^3 array.

    With y_n = W^T c_n, q_n = y_n / l_n, Q_n = W^T Diag(c_n) W = sum_d c_nd w_d w_d^T (w_d the rows of W):
    P3_n(W,W,W) = beta3_n (y_n^(x)3 - Sym3(Q_n x y_n) + 2 sum_d c_nd w_d^(x)3),
    P2_n(W,W) = beta2_n (y_n y_n^T - Q_n). Time O(nnz K + (N + D) K^3)."""
    return m3_projected_from_sums(document_sums(counts), alpha0, w)


def m3_projected_from_sums(d: DocumentSums, alpha0: float, w: np.ndarray) -> np.ndarray:
    """:func:`lda_m3_projected` from the document sums. The terms over the non-zero counts group by word:
    sum_n b_n Q_n x y_n = sum_d w_d x w_d x z_d with z_d = sum_n b_n c_nd y_n (the rows of Z = C^T diag(b) Y), so
    they cost O(nnz K + D K^3) instead of O(nnz K^3)."""
    n = d.n
    co = coefficients(alpha0)
    w = np.asarray(w, dtype=float)
    c = d.counts
    y = np.asarray(c @ w)  # N x K
    q = y / d.lengths[:, None]
    # sum_n P3_n(W, W, W)
    cubes = third_moment(y, d.beta3)
    spread = third_cross(w, w, np.asarray(c.T @ (y * d.beta3[:, None])))  # sum beta3 Q_n x y_n
    diag3 = third_moment(w, d.word_beta3)
    e3 = (cubes - 3.0 * symmetrize(spread) + 2.0 * diag3) / n
    # cross term: S2(W,W) x S1w - sum_n P2_n(W,W) x q_n
    s2w = y.T @ (y * d.beta2[:, None]) - w.T @ (w * d.word_beta2[:, None])
    s1w = q.sum(axis=0)
    weights = d.beta2 / d.lengths
    x_term = third_moment(y, weights) - third_cross(w, w, np.asarray(c.T @ (y * weights[:, None])))
    cross = np.einsum("ab,c->abc", s2w, s1w) - x_term
    # U-statistic of M1^(x)3: S1^(x)3 - Sym3(Q1 x S1) + 2 sum q_n^(x)3
    q1w = q.T @ q
    ustat = (np.einsum("a,b,c->abc", s1w, s1w, s1w) - 3.0 * symmetrize(np.einsum("ab,c->abc", q1w, s1w))
             + 2.0 * third_moment(q))
    t = (e3 - co.a3 * 3.0 * symmetrize(cross) / (n * (n - 1.0))
         + co.b3 * ustat / (n * (n - 1.0) * (n - 2.0)))
    return symmetrize(t)


def lda_m3_dense(counts: sp.csr_matrix, alpha0: float) -> np.ndarray:
    """Dense M3_hat (D x D x D) for D <= MAX_DENSE_M3_DIM: :func:`lda_m3_projected` with W = I_D."""
    dim = counts.shape[1]
    if dim > MAX_DENSE_M3_DIM:
        raise InputError(f"the dense third moment is for D <= {MAX_DENSE_M3_DIM} (got D = {dim}); use the projected "
                         "moment M3(W, W, W)", "D")
    return lda_m3_projected(counts, alpha0, np.eye(dim))


def doc_count_tensor_p3(c: np.ndarray) -> np.ndarray:
    """P3 of one document (dense D x D x D; tests and tiny D): the empirical distribution of ordered triples of
    distinct word positions, (c^(x)3 - Sym3(Diag(c) x c) + 2 sum_i c_i e_i^(x)3) / (l (l-1)(l-2))."""
    c = np.asarray(c, dtype=float)
    ell = c.sum()
    raw = np.einsum("i,j,k->ijk", c, c, c)
    b = np.einsum("ab,c->abc", np.diag(c), c)  # [a = b] c_a c_e
    placements = b + b.transpose(0, 2, 1) + b.transpose(2, 1, 0)
    diag = np.zeros_like(raw)
    idx = np.arange(c.size)
    diag[idx, idx, idx] = c
    return (raw - placements + 2.0 * diag) / (ell * (ell - 1.0) * (ell - 2.0))


def _p3_frobenius(counts: sp.csr_matrix, beta3: np.ndarray) -> np.ndarray:
    """||P3_n||_F for every document, from power sums of its counts in O(nnz).

    The entries of l(l-1)(l-2) P3_n are falling-factorial products: c_a c_b c_e (a, b, e distinct),
    c_a (c_a - 1) c_b (two equal, three placements) and c_a (c_a - 1)(c_a - 2) (all equal)."""
    c = counts
    x2 = c.multiply(c)  # c^2
    pow_sum = [np.asarray(x2.power(j).sum(axis=1)).ravel() for j in (1, 2, 3)]  # sum c^2, c^4, c^6
    distinct = pow_sum[0] ** 3 - 3.0 * pow_sum[0] * pow_sum[1] + 2.0 * pow_sum[2]  # sum over distinct a, b, e
    ff2 = c.multiply(c - c.sign())  # c (c - 1), zero where c = 0
    ff2_sq = ff2.multiply(ff2)
    # sum_{a != b} (c_a (c_a - 1))^2 c_b^2 = (sum ff2^2)(sum c^2) - sum ff2^2 c^2
    two_equal = (np.asarray(ff2_sq.sum(axis=1)).ravel() * pow_sum[0]
                 - np.asarray(ff2_sq.multiply(x2).sum(axis=1)).ravel())
    ff3 = ff2.multiply(c - 2.0 * c.sign())
    all_equal = np.asarray(ff3.multiply(ff3).sum(axis=1)).ravel()
    total = np.maximum(distinct, 0.0) + 3.0 * two_equal + all_equal
    return beta3 * np.sqrt(np.maximum(total, 0.0))


def _row_power_sum(c: sp.csr_matrix, power: int) -> np.ndarray:
    return np.asarray(c.power(power).sum(axis=1)).ravel()


def m3_frobenius_bound(counts: sp.csr_matrix, alpha0: float) -> float:
    """A computable upper bound on ||M3_hat||_F (O(nnz + D^2) time, no D^3 array), by the triangle inequality
    on the three parts of the estimator: (1/N) sum ||P3_n||_F, then
    a3 * 3 (||S2||_F ||S1|| + sum ||P2_n||_F ||p_n||) / (N (N-1)) and
    b3 (||S1||^3 + 3 ||Q1||_F ||S1|| + 2 sum ||p_n||^3) / (N (N-1)(N-2)).
    Used where a local sensitivity needs ||M3_hat||_F and D is too large for the dense tensor."""
    d = document_sums(counts)
    n = d.n
    co = coefficients(alpha0)
    p3 = _p3_frobenius(d.counts, d.beta3).sum() / n
    p_norm = np.sqrt(np.asarray(d.p.multiply(d.p).sum(axis=1)).ravel())
    c2, c3, c4 = (_row_power_sum(d.counts, j) for j in (2, 3, 4))
    # ||c c^T - Diag(c)||_F^2 = sum_{a != b} c_a^2 c_b^2 + sum_a (c_a^2 - c_a)^2
    p2_norm = d.beta2 * np.sqrt(np.maximum(c2 * c2 - c4 + (c4 - 2.0 * c3 + c2), 0.0))
    s1n = float(np.linalg.norm(d.s1))
    s2n = float(sp.linalg.norm(_pair_sum_sparse(d)))
    cross = 3.0 * (s2n * s1n + float(np.sum(p2_norm * p_norm))) / (n * (n - 1.0))
    q1n = float(sp.linalg.norm(d.p.T @ d.p))
    ustat = (s1n**3 + 3.0 * q1n * s1n + 2.0 * float(np.sum(p_norm**3))) / (n * (n - 1.0) * (n - 2.0))
    return float(p3 + co.a3 * cross + co.b3 * ustat)
