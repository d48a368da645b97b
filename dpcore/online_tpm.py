"""Online robust tensor power method (paper 001, Algorithm 2): power iterations computed from the samples as
they stream, never forming the third-moment tensor.

The tensor to decompose is a whitened empirical moment T = M3(W, W, W) = (1/N) sum_n t_n (plus, for LDA, terms
built from K-dimensional corpus summaries). Algorithm 2 replaces the power step T(I, u, u) by a "data
association" pass that accumulates each sample's contribution t_n(I, u, u) and t_n(u, u, u) for the L current
vectors at once, then deflates by the components already found, v <- v - sum_j lambda_j (v_j . u)^2 v_j, and
normalises. Memory: W (D x K), the L vectors and their accumulators (K x L), one batch of samples: O(D K + K L)
besides the data (paper 001 states O(D (K + L)) for unwhitened vectors); time O(nnz K L) per pass.

Models (one oracle each; ``contract(batch, U)`` returns sum over the batch of (t_n(I, u, u), t_n(u, u, u)) for
the columns u of U, and ``finish`` adds the non-per-sample terms):

* **MOG**: t_n = y^(x)3 - sigma^2 Sym3(y x G), y = W^T x_n, G = W^T W (the unbiased per-sample form of the
  project's MOG M3 with the sigma^2 correction, :class:`dpcore.models.MogSite`);
* **STM** (estimator "all"): t_n = P3_n(W, W, W), the ordered distinct-position triples of document n;
* **LDA**: the estimator of :mod:`dpcore.lda.moments` - per document P3_n, P2_n x q_n and q_n^(x)3, plus terms in
  the corpus summaries S1(W), S2(W, W), Q1(W, W) from one pass before the power iterations.

Two reading modes: ``batch_size=None`` reads the whole data set at every iteration (the exact power method,
agreeing with the batch method up to rounding and convergence); a batch size n < N reads the next n samples
(cycling through the data), as Algorithm 2 does with a stream of fresh samples.

Departures from Algorithm 2 as printed, both stated: lambda is evaluated at the final vectors u_R in one more
pass (the printed algorithm keeps the value at u_{R-1}); the sign of each component is chosen so that lambda >= 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh

from .lda.moments import coefficients, lda_m2_matvec, prepare_counts
from .tensor import PowerResult, Whitening, WhiteningError
from .validation import check_positive_int, check_rank

__all__ = [
    "OnlineOracle",
    "lda_oracle",
    "mog_oracle",
    "lda_streaming_whitening",
    "online_tensor_power_method",
    "stm_oracle",
    "streaming_whitening",
]

Contract = Callable[[object, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True, eq=False)
class OnlineOracle:
    """Per-sample contractions of a whitened moment over a data set held as rows (dense or CSR).

    ``contract(rows, U)`` sums the samples' contributions (K x L, L); ``finish(U, tu, tuuu, n)`` turns the sums
    over n samples into T(I, u, u), T(u, u, u) (dividing by n and adding corpus-level terms)."""

    data: object
    k: int
    contract: Contract
    finish: Callable[[np.ndarray, np.ndarray, np.ndarray, int], tuple[np.ndarray, np.ndarray]]

    @property
    def n(self) -> int:
        return int(self.data.shape[0])


def _mean_finish(_u: np.ndarray, tu: np.ndarray, tuuu: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    return tu / n, tuuu / n


def mog_oracle(x: np.ndarray, w: np.ndarray, sigma2: float) -> OnlineOracle:
    """MOG samples (rows of ``x``, already scaled) and the whitening W: t_n = y^(x)3 - sigma^2 Sym3(y x G).
    (y x G summed over its three placements)(I, u, u) = y (u^T G u) + 2 (G u)(y . u)."""
    gram = w.T @ w

    def contract(rows: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        y = rows @ w
        yu = y @ u
        ugu = np.einsum("kl,kl->l", u, gram @ u)
        tu = y.T @ (yu**2) - sigma2 * (np.outer(y.sum(axis=0), ugu) + 2.0 * (gram @ u) * yu.sum(axis=0))
        tuuu = (yu**3).sum(axis=0) - 3.0 * sigma2 * ugu * yu.sum(axis=0)
        return tu, tuuu

    return OnlineOracle(np.asarray(x, dtype=float), w.shape[1], contract, _mean_finish)


def _doc_pieces(c: sp.csr_matrix, w: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
    """Per-document contractions with Q_n = W^T Diag(c_n) W and y_n = W^T c_n, for the columns u of U:
    y (n x K), yu = y.u (n x L), uqu = u^T Q_n u (n x L), and the D-space weights wu = W U (D x L)."""
    y = np.asarray(c @ w)
    wu = w @ u
    return {"y": y, "yu": y @ u, "uqu": np.asarray(c @ (wu**2)), "wu": wu}


def _weighted_q_u(c: sp.csr_matrix, w: np.ndarray, wu: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """sum_n weights_nl Q_n u_l = W^T Diag(W u_l) C^T weights_l for every column l (K x L)."""
    return w.T @ (wu * np.asarray(c.T @ weights))


def _p3_contractions(c: sp.csr_matrix, w: np.ndarray, u: np.ndarray, beta3: np.ndarray,
                     pieces: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """sum_n beta3_n P3_n(W,W,W)(I, u, u) and (u, u, u):
    P3(I,u,u) l(l-1)(l-2) = y (y.u)^2 - y (u^T Q u) - 2 (Q u)(y.u) + 2 sum_d c_d (w_d.u)^2 w_d."""
    y, yu, uqu, wu = pieces["y"], pieces["yu"], pieces["uqu"], pieces["wu"]
    b = beta3[:, None]
    tu = (y.T @ (b * yu**2) - y.T @ (b * uqu) - 2.0 * _weighted_q_u(c, w, wu, b * yu)
          + 2.0 * w.T @ (wu**2 * np.asarray(c.T @ beta3)[:, None]))
    tuuu = ((b * yu**3).sum(axis=0) - 3.0 * (b * yu * uqu).sum(axis=0)
            + 2.0 * np.asarray(c.T @ beta3) @ (wu**3))
    return tu, tuuu


def _lengths(c: sp.csr_matrix) -> np.ndarray:
    return np.asarray(c.sum(axis=1)).ravel()


def stm_oracle(counts: object, w: np.ndarray) -> OnlineOracle:
    """Single topic model, estimator "all": t_n = P3_n(W, W, W) (:class:`dpcore.models.StmSite`)."""
    c = prepare_counts(counts)

    def contract(rows: sp.csr_matrix, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ell = _lengths(rows)
        return _p3_contractions(rows, w, u, 1.0 / (ell * (ell - 1.0) * (ell - 2.0)), _doc_pieces(rows, w, u))

    return OnlineOracle(c, w.shape[1], contract, _mean_finish)


def lda_oracle(counts: object, w: np.ndarray, alpha0: float) -> OnlineOracle:
    """LDA (:mod:`dpcore.lda.moments`). A first pass computes the K-dimensional summaries S1w = sum q_n,
    S2w = sum P2_n(W, W) and Q1w = sum q_n q_n^T (q_n = W^T c_n / l_n). Per document the pass accumulates
    P3_n, the placements of P2_n x q_n and q_n^(x)3 contracted with u; ``finish`` combines them with the
    summaries using A x s placements: (I,u,u) -> 2 (A u)(s.u) + s (u^T A u), (u,u,u) -> 3 (u^T A u)(s.u)."""
    c = prepare_counts(counts)
    n_total = c.shape[0]
    co = coefficients(alpha0)
    ell = _lengths(c)
    y = np.asarray(c @ w)
    q = y / ell[:, None]
    beta2 = 1.0 / (ell * (ell - 1.0))
    s1w = q.sum(axis=0)
    s2w = y.T @ (y * beta2[:, None]) - w.T @ (w * np.asarray(c.T @ beta2).ravel()[:, None])
    q1w = q.T @ q
    del y, q

    def contract(rows: sp.csr_matrix, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        el = _lengths(rows)
        b2, b3 = 1.0 / (el * (el - 1.0)), 1.0 / (el * (el - 1.0) * (el - 2.0))
        pieces = _doc_pieces(rows, w, u)
        e3_u, e3_uuu = _p3_contractions(rows, w, u, b3, pieces)
        y, yu, uqu, wu = pieces["y"], pieces["yu"], pieces["uqu"], pieces["wu"]
        qv, qu = y / el[:, None], yu / el[:, None]
        # P2_n u = b2 (y (y.u) - Q_n u), u^T P2_n u = b2 ((y.u)^2 - u^T Q_n u)
        p2u_qu = y.T @ (b2[:, None] * yu * qu) - _weighted_q_u(rows, w, wu, b2[:, None] * qu)
        up2u = b2[:, None] * (yu**2 - uqu)
        x_u = 2.0 * p2u_qu + qv.T @ up2u
        x_uuu = 3.0 * (up2u * qu).sum(axis=0)
        c_u = qv.T @ (qu**2)
        c_uuu = (qu**3).sum(axis=0)
        stacked_u = np.concatenate([e3_u, x_u, c_u], axis=0)
        return stacked_u, np.stack([e3_uuu, x_uuu, c_uuu])

    def finish(u: np.ndarray, tu: np.ndarray, tuuu: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        k = w.shape[1]
        scale = n_total / n  # a batch of n documents stands for the whole corpus
        e3_u, x_u, c_u = tu[:k] * scale, tu[k:2 * k] * scale, tu[2 * k:] * scale
        e3_uuu, x_uuu, c_uuu = tuuu * scale
        s2u, q1u = s2w @ u, q1w @ u
        s1u = s1w @ u
        u_s2_u, u_q1_u = np.einsum("kl,kl->l", u, s2u), np.einsum("kl,kl->l", u, q1u)
        cross_u = 2.0 * s2u * s1u + np.outer(s1w, u_s2_u) - x_u
        cross_uuu = 3.0 * u_s2_u * s1u - x_uuu
        trip_u = np.outer(s1w, s1u**2) - (2.0 * q1u * s1u + np.outer(s1w, u_q1_u)) + 2.0 * c_u
        trip_uuu = s1u**3 - 3.0 * u_q1_u * s1u + 2.0 * c_uuu
        nn = float(n_total)
        t_u = e3_u / nn - co.a3 * cross_u / (nn * (nn - 1)) + co.b3 * trip_u / (nn * (nn - 1) * (nn - 2))
        t_uuu = e3_uuu / nn - co.a3 * cross_uuu / (nn * (nn - 1)) + co.b3 * trip_uuu / (nn * (nn - 1) * (nn - 2))
        return t_u, t_uuu

    return OnlineOracle(c, w.shape[1], contract, finish)


def _pass(oracle: OnlineOracle, u: np.ndarray, start: int, size: int, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """Read ``size`` samples from position ``start`` (cycling) in chunks; return T(I, u, u), T(u, u, u)."""
    n = oracle.n
    tu = tuuu = None
    read = 0
    while read < size:
        a = (start + read) % n
        b = min(n, a + min(chunk, size - read))
        part_u, part_uuu = oracle.contract(oracle.data[a:b], u)
        tu = part_u if tu is None else tu + part_u
        tuuu = part_uuu if tuuu is None else tuuu + part_uuu
        read += b - a
    return oracle.finish(u, tu, tuuu, size)


def online_tensor_power_method(
    oracle: OnlineOracle, rng: np.random.Generator, *, n_restarts: int = 10, n_iter: int = 30,
    batch_size: int | None = None, chunk: int = 4096,
) -> PowerResult:
    """Algorithm 2 of paper 001: for each of the K components, L random unit starts (K-dimensional, in the
    whitened space), R passes of data association (each reads ``batch_size`` samples, all when None, in chunks
    of ``chunk``), deflation by the components found so far and normalisation; the start with the largest
    lambda wins. Returns eigenvalues (>= 0) and unit eigenvectors like :func:`dpcore.tensor.tensor_power_method`."""
    n_restarts = check_positive_int(n_restarts, "restarts L")
    n_iter = check_positive_int(n_iter, "iterations R")
    size = oracle.n if batch_size is None else check_positive_int(batch_size, "batch size")
    chunk = check_positive_int(chunk, "chunk")
    k = oracle.k
    values, vectors = np.empty(k), np.empty((k, k))
    position = 0
    for i in range(k):
        u = rng.standard_normal((k, n_restarts))
        u /= np.linalg.norm(u, axis=0)
        for _ in range(n_iter + 1):
            tu, tuuu = _pass(oracle, u, position, size, chunk)
            position = (position + size) % oracle.n
            if i:
                xi = vectors[:, :i].T @ u  # (i, L)
                tu = tu - vectors[:, :i] @ (values[:i, None] * xi**2)
                tuuu = tuuu - (values[:i, None] * xi**3).sum(axis=0)
            if _ == n_iter:  # the last pass only evaluates lambda at u_R
                break
            norms = np.linalg.norm(tu, axis=0)
            u = np.where(norms > 0, tu / np.where(norms > 0, norms, 1.0), u)
        best = int(np.argmax(tuuu))
        v, lam = u[:, best], float(tuuu[best])
        if lam < 0:
            v, lam = -v, -lam
        values[i], vectors[:, i] = lam, v
    return PowerResult(values, vectors)


def streaming_whitening(matvec: Callable[[np.ndarray], np.ndarray], dim: int, k: int) -> Whitening:
    """W = U Sigma^{-1/2} from the K largest eigenpairs of a symmetric operator given only by products
    (Lanczos, ARPACK eigsh with a fixed start; a dense eigensolve of the D x D matrix built column by column when
    D <= 2K + 1): memory O(D K) besides what ``matvec`` holds. Non-positive eigenvalues raise WhiteningError."""
    dim = check_positive_int(dim, "D", minimum=2)
    k = check_rank(k, dim)
    if dim <= 2 * k + 1:
        dense = matvec(np.eye(dim))
        vals, vecs = np.linalg.eigh((dense + dense.T) / 2.0)
        vals, vecs = vals[::-1][:k], vecs[:, ::-1][:, :k]
    else:
        op = LinearOperator((dim, dim), matvec=matvec, matmat=matvec, dtype=np.float64)
        start = np.random.default_rng(0).standard_normal(dim)  # fixed Lanczos start; not a privacy draw
        vals, vecs = eigsh(op, k=k, which="LA", v0=start, tol=1e-10, maxiter=50 * dim)
        order = np.argsort(vals)[::-1]
        vals, vecs = vals[order], vecs[:, order]
    floor = 1e-12 * max(float(np.max(np.abs(vals))), 1e-300)
    if np.any(vals <= floor):
        bad = int(np.sum(vals <= floor))
        raise WhiteningError(f"whitening failed: {bad} of the top K = {k} eigenvalues of the second moment are <= 0 "
                             f"(the smallest is {vals[-1]:.3g}); choose a smaller K", vals, k)
    return Whitening(vecs / np.sqrt(vals), vecs, vals)


def lda_streaming_whitening(counts: object, k: int, alpha0: float) -> Whitening:
    """:func:`streaming_whitening` of the LDA M2_hat through :func:`dpcore.lda.moments.lda_m2_matvec`."""
    c = prepare_counts(counts)
    return streaming_whitening(lda_m2_matvec(c, alpha0), c.shape[1], k)

