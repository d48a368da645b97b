"""Whitening (capeAGN stage 1, docs/math/capeagn.md): W = U D^{-1/2} from the top-K eigenpairs (U, D) of the noisy
second moment M2_hat; non-positive eigenvalues raise :class:`WhiteningError`, never NaN (docs/math/corrections.md,
item 4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .. import linalg
from ..limits import EIGH_MAX_DIM
from ..normals import draw_threads, map_chunks
from ..validation import InputError, check_rank

__all__ = ["KRYLOV_BLOCKS", "KRYLOV_OVERSAMPLE", "Whitening", "WhiteningError", "block_krylov", "whiten"]

KRYLOV_OVERSAMPLE = 10
"""Columns of a Krylov block beyond K (:func:`block_krylov`)."""
KRYLOV_BLOCKS = 12
"""Blocks of the whitening's block Krylov space above EIGH_MAX_DIM (:func:`block_krylov`; docs/math/capeagn.md,
"Large D: the whitening")."""


class WhiteningError(InputError):
    """The top-K eigenvalues of the (noisy) M2 are not all positive, so W = U D^{-1/2} does not exist."""

    def __init__(self, message: str, eigenvalues: np.ndarray, k: int):
        super().__init__(message, "K")
        self.eigenvalues = np.asarray(eigenvalues)
        self.k = k


@dataclass(frozen=True, eq=False)
class Whitening:
    """W = U D^{-1/2} (D x K) from the top-K eigenpairs (U, D) of M2_hat, largest first."""

    w: np.ndarray
    u: np.ndarray
    eigenvalues: np.ndarray


def _times(matrix: np.ndarray, block: np.ndarray) -> np.ndarray:
    """matrix @ block in the matrix's precision (float32 above EIGH_MAX_DIM: a BLAS-3 product), float64 result, the
    rows split over the drawing threads (:func:`dpcore.normals.map_chunks`; numpy releases the GIL)."""
    d = matrix.shape[0]
    right = block.astype(matrix.dtype)
    out = np.empty((d, block.shape[1]))
    parts = max(1, min(draw_threads(), d // 256))
    edges = np.linspace(0, d, parts + 1).astype(int)

    def part(i: int) -> None:
        out[edges[i]:edges[i + 1]] = matrix[edges[i]:edges[i + 1]] @ right

    map_chunks(part, range(parts))
    return out


def block_krylov(matrix: np.ndarray, k: int, *, blocks: int = KRYLOV_BLOCKS, oversample: int = KRYLOV_OVERSAMPLE
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The K largest Ritz pairs (descending) of the symmetric ``matrix`` on the block Krylov space
    span[Q, M Q, ..., M^(blocks-1) Q] of a fixed random start Q (D x (K + oversample); not a privacy draw): a fixed
    number of ``blocks`` BLAS-3 products with M (float32 when M is), the basis orthonormalised block by block in
    float64, then Rayleigh-Ritz on Q^T M Q from the products already made (Musco and Musco 2015, randomized block
    Krylov). Exact (full eigh) when the space would cover D. docs/math/capeagn.md, "Large D: the whitening": at
    D = 10,000 the top eigenvalues of the noisy M2 lie in the noise bulk, where no solver's eigenvectors carry the
    signal; the number of blocks is the one at which the recovery error's distribution is that of the exact
    eigenpairs (benchmarks/bench_whitening.py)."""
    d = matrix.shape[0]
    width = k + oversample
    if width * blocks >= d:
        vals, vecs = scipy.linalg.eigh(np.asarray(matrix, dtype=float), subset_by_index=[d - k, d - 1])
        return vals[::-1], np.ascontiguousarray(vecs[:, ::-1])
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((d, width)))  # fixed start; not a privacy draw
    basis = np.empty((d, width * blocks))
    products = np.empty((d, width * blocks))
    for j in range(blocks):
        lo, hi = j * width, (j + 1) * width
        basis[:, lo:hi] = q
        products[:, lo:hi] = _times(matrix, q)
        if j == blocks - 1:
            break
        done = basis[:, :hi]
        z = products[:, lo:hi] - done @ (done.T @ products[:, lo:hi])
        z -= done @ (done.T @ z)  # twice is enough (Giraud et al. 2005)
        q, _ = np.linalg.qr(z)
    small = basis.T @ products
    vals, rotation = scipy.linalg.eigh((small + small.T) / 2, subset_by_index=[small.shape[0] - k, small.shape[0] - 1])
    return vals[::-1], basis @ rotation[:, ::-1]


def whiten(m2: np.ndarray, k: int, *, noisy: bool = True) -> Whitening:
    """Top-K eigenpairs of the symmetric ``m2`` (:func:`dpcore.linalg.top_eigenpairs` up to
    :data:`~dpcore.limits.EIGH_MAX_DIM`, :func:`block_krylov` above) and W = U D^{-1/2}; raises
    :class:`WhiteningError` when any of the K largest eigenvalues is <= 0 (never returns NaN)."""
    d = m2.shape[0]
    k = check_rank(k, d)
    if d > EIGH_MAX_DIM:
        vals, vecs = block_krylov(m2, k)
    else:
        vals, vecs = linalg.top_eigenpairs(m2, k)
    floor = 1e-12 * max(float(np.max(np.abs(vals))), 1e-300)
    bad = int(np.sum(vals <= floor))
    if bad:
        if noisy:
            message = (
                f"whitening failed: {bad} of the top K = {k} eigenvalues of the noisy second moment M2_hat are "
                f"<= 0 (the smallest is {vals[-1]:.3g}), so W = U D^(-1/2) does not exist. The privacy noise on "
                f"M2 is larger than its K-th component. What would help: more samples per site, a larger eps "
                f"(or a larger share of eps for the first stage), or a smaller K."
            )
        else:
            message = (
                f"whitening failed: the data's second moment M2 has only {k - bad} positive eigenvalue(s) among "
                f"its top K = {k} (the smallest is {vals[-1]:.3g}); the data do not support {k} components. "
                f"Choose a smaller K (or check the MOG sigma^2, which is subtracted from M2)."
            )
        raise WhiteningError(message, vals, k)
    return Whitening(vecs / np.sqrt(vals), vecs, vals)


