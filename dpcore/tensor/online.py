"""Online robust tensor power method (paper 001, Algorithm 2; docs/math/capeagn.md, "Online tensor power method"):
power iterations computed from the samples as they stream, never forming the third-moment tensor.

The tensor to decompose is a whitened empirical moment T = M3(W, W, W) = (1/N) sum_n t_n (plus, for LDA, terms
built from K-dimensional corpus summaries: :mod:`dpcore.lda.online`). Algorithm 2 replaces the power step
T(I, u, u) by a "data association" pass that accumulates each sample's contribution t_n(I, u, u) and t_n(u, u, u)
for the L current vectors at once, then deflates by the components already found,
v <- v - sum_j lambda_j (v_j . u)^2 v_j, and normalises. Memory: W (D x K), the L vectors and their accumulators
(K x L), one chunk of samples: O(D K + K L) besides the data (paper 001 states O(D (K + L)) for unwhitened
vectors); time O(nnz K L) per pass.

Models (one oracle each; ``contract(rows, U)`` returns the sums over the rows of (t_n(I, u, u), t_n(u, u, u)) for
the columns u of U, and ``finish`` adds the non-per-sample terms):

* **MOG**: t_n = y^(x)3 - sigma^2 Sym3(y x G), y = W^T x_n, G = W^T W (the unbiased per-sample form of
  :meth:`dpcore.tensor.MogSite.m3` with the sigma^2 correction);
* **STM**, estimator "all": t_n = P3_n(W, W, W), the ordered distinct-position triples of document n; estimator
  "first": t_n = Sym(w_a x w_b x w_c) for the first three words a, b, c.

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

from ..linalg import top_eigenpairs_operator
from ..validation import check_positive_int, check_rank
from .power import DEFAULT_ITERATIONS, DEFAULT_RESTARTS, PowerResult, check_iterations, check_power_work
from .whitening import Whitening, WhiteningError

__all__ = [
    "OnlineOracle",
    "doc_lengths",
    "doc_pieces",
    "mog_oracle",
    "online_memory_estimate",
    "mean_finish",
    "online_tensor_power_method",
    "p3_contractions",
    "stm_first_oracle",
    "stm_oracle",
    "streamed_pass",
    "streaming_whitening",
    "weighted_q_u",
]

Contract = Callable[[object, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True, eq=False)
class OnlineOracle:
    """Per-sample contractions of a whitened moment over a data set held as rows (dense, CSR or word indices).

    ``contract(rows, U)`` sums the samples' contributions (K x L, L); ``finish(U, tu, tuuu, n)`` turns the sums
    over n samples into T(I, u, u), T(u, u, u) (dividing by n and adding corpus-level terms)."""

    data: object
    k: int
    contract: Contract
    finish: Callable[[np.ndarray, np.ndarray, np.ndarray, int], tuple[np.ndarray, np.ndarray]]

    @property
    def n(self) -> int:
        return int(self.data.shape[0])


def mean_finish(_u: np.ndarray, tu: np.ndarray, tuuu: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The finish of a plain sample mean: divide the sums by n."""
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

    return OnlineOracle(np.asarray(x, dtype=float), w.shape[1], contract, mean_finish)


def doc_pieces(c: sp.csr_matrix, w: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
    """Per-document contractions with Q_n = W^T Diag(c_n) W and y_n = W^T c_n, for the columns u of U:
    y (n x K), yu = y.u (n x L), uqu = u^T Q_n u (n x L), and the D-space weights wu = W U (D x L)."""
    y = np.asarray(c @ w)
    wu = w @ u
    return {"y": y, "yu": y @ u, "uqu": np.asarray(c @ (wu**2)), "wu": wu}


def weighted_q_u(c: sp.csr_matrix, w: np.ndarray, wu: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """sum_n weights_nl Q_n u_l = W^T Diag(W u_l) C^T weights_l for every column l (K x L)."""
    return w.T @ (wu * np.asarray(c.T @ weights))


def p3_contractions(c: sp.csr_matrix, w: np.ndarray, u: np.ndarray, beta3: np.ndarray,
                    pieces: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """sum_n beta3_n P3_n(W,W,W)(I, u, u) and (u, u, u) with P3_n the unnormalised ordered distinct triples:
    l(l-1)(l-2) P3(I,u,u) = y (y.u)^2 - y (u^T Q u) - 2 (Q u)(y.u) + 2 sum_d c_d (w_d.u)^2 w_d."""
    y, yu, uqu, wu = pieces["y"], pieces["yu"], pieces["uqu"], pieces["wu"]
    b = beta3[:, None]
    tu = (y.T @ (b * yu**2) - y.T @ (b * uqu) - 2.0 * weighted_q_u(c, w, wu, b * yu)
          + 2.0 * w.T @ (wu**2 * np.asarray(c.T @ beta3)[:, None]))
    tuuu = ((b * yu**3).sum(axis=0) - 3.0 * (b * yu * uqu).sum(axis=0)
            + 2.0 * np.asarray(c.T @ beta3) @ (wu**3))
    return tu, tuuu


def doc_lengths(c: sp.csr_matrix) -> np.ndarray:
    """Words per document (row sums of the counts)."""
    return np.asarray(c.sum(axis=1)).ravel()


def stm_oracle(counts: sp.csr_matrix, w: np.ndarray) -> OnlineOracle:
    """Single topic model, estimator "all": t_n = P3_n(W, W, W) (:class:`dpcore.tensor.StmSite`); ``counts`` is a
    validated CSR count matrix (every document with at least 3 words)."""

    def contract(rows: sp.csr_matrix, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ell = doc_lengths(rows)
        return p3_contractions(rows, w, u, 1.0 / (ell * (ell - 1.0) * (ell - 2.0)), doc_pieces(rows, w, u))

    return OnlineOracle(counts, w.shape[1], contract, mean_finish)


def stm_first_oracle(first: np.ndarray, w: np.ndarray) -> OnlineOracle:
    """Single topic model, estimator "first": t_n = Sym(w_a x w_b x w_c) for the first three word indices (a, b, c)
    of document n (rows of ``first``): t(I, u, u) = (w_a (w_b.u)(w_c.u) + w_b (w_a.u)(w_c.u) + w_c (w_a.u)(w_b.u)) / 3
    and t(u, u, u) = (w_a.u)(w_b.u)(w_c.u)."""

    def contract(rows: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ya, yb, yc = w[rows[:, 0]], w[rows[:, 1]], w[rows[:, 2]]
        au, bu, cu = ya @ u, yb @ u, yc @ u
        tu = (ya.T @ (bu * cu) + yb.T @ (au * cu) + yc.T @ (au * bu)) / 3.0
        return tu, (au * bu * cu).sum(axis=0)

    return OnlineOracle(np.asarray(first), w.shape[1], contract, mean_finish)


def streamed_pass(oracle: OnlineOracle, u: np.ndarray, start: int, size: int, chunk: int
                  ) -> tuple[np.ndarray, np.ndarray]:
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


def _row_width(data: object) -> float:
    """Numbers per sample a pass contracts: non-zeros per document of a sparse count matrix, else the columns."""
    if sp.issparse(data):
        return data.nnz / max(data.shape[0], 1)
    shape = np.shape(data)
    return float(shape[1]) if len(shape) > 1 else 1.0


def online_tensor_power_method(
    oracle: OnlineOracle, rng: np.random.Generator, *, n_restarts: int = DEFAULT_RESTARTS,
    n_iter: int = DEFAULT_ITERATIONS, batch_size: int | None = None, chunk: int = 4096,
) -> PowerResult:
    """Algorithm 2 of paper 001: for each of the K components, L random unit starts (K-dimensional, in the
    whitened space), R passes of data association (each reads ``batch_size`` samples, all when None, in chunks
    of ``chunk``), deflation by the components found so far and normalisation; the start with the largest
    lambda wins. Returns eigenvalues (>= 0) and unit eigenvectors like :func:`dpcore.tensor.tensor_power_method`."""
    n_restarts, n_iter = check_iterations(n_restarts, n_iter)
    size = oracle.n if batch_size is None else check_positive_int(batch_size, "batch size")
    chunk = check_positive_int(chunk, "chunk")
    k = oracle.k
    check_power_work(k, n_restarts, n_iter, samples=size, width=_row_width(oracle.data))
    values, vectors = np.empty(k), np.empty((k, k))
    position = 0
    for i in range(k):
        u = rng.standard_normal((k, n_restarts))
        u /= np.linalg.norm(u, axis=0)
        for step in range(n_iter + 1):
            tu, tuuu = streamed_pass(oracle, u, position, size, chunk)
            position = (position + size) % oracle.n
            if i:
                xi = vectors[:, :i].T @ u  # (i, L)
                tu = tu - vectors[:, :i] @ (values[:i, None] * xi**2)
                tuuu = tuuu - (values[:i, None] * xi**3).sum(axis=0)
            if step == n_iter:  # the last pass only evaluates lambda at u_R
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
    (:func:`dpcore.linalg.top_eigenpairs_operator`): memory O(D K) besides what ``matvec`` holds. Non-positive
    eigenvalues raise WhiteningError."""
    dim = check_positive_int(dim, "D", minimum=2)
    k = check_rank(k, dim)
    vals, vecs = top_eigenpairs_operator(matvec, dim, k)
    floor = 1e-12 * max(float(np.max(np.abs(vals))), 1e-300)
    if np.any(vals <= floor):
        bad = int(np.sum(vals <= floor))
        raise WhiteningError(f"whitening failed: {bad} of the top K = {k} eigenvalues of the second moment are <= 0 "
                             f"(the smallest is {vals[-1]:.3g}); the data do not support {k} components: choose a "
                             "smaller K", vals, k)
    return Whitening(vecs / np.sqrt(vals), vecs, vals)


def online_memory_estimate(dim: int, k: int, n_restarts: int, chunk: int = 4096) -> int:
    """Bytes of the arrays of the online path besides the data: W, U and W U (3 D K doubles), the Lanczos basis
    (ARPACK's ncv = max(2K + 1, 20) vectors of D), the L vectors and their accumulators (3 K L) and the
    contractions of one chunk (about 4 chunk (K + L) doubles)."""
    return int(8 * (dim * (3 * k + max(2 * k + 1, 20)) + 3 * k * n_restarts + 4 * chunk * (k + n_restarts)))
