"""The eigen-solver every algorithm uses: the K largest eigenpairs of a symmetric matrix, largest first.

One helper for PCA (capePCA and its baselines decompose noisy D x D second-moment matrices) and OTD (the
whitening of the noisy second moment M2). The result is a deterministic function of the matrix, so privacy is
unaffected by how it is computed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg
from scipy.linalg.blas import ssymv as _SSYMV
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

__all__ = ["top_eigenpairs", "top_eigenpairs_operator"]


def top_eigenpairs(
    matrix: np.ndarray, k: int, *, overwrite: bool = False, lanczos_above: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The k largest (algebraic) eigenvalues, descending, and their eigenvectors (D x k columns).

    Exact by default: scipy.linalg.eigh(subset_by_index=[D-k, D-1]) reading the lower triangle only (the upper
    triangle may be left unset), so a matrix filled from its unique entries needs no mirroring; ``overwrite``
    lets LAPACK destroy ``matrix``. With ``lanczos_above`` and D > lanczos_above: Lanczos (ARPACK eigsh,
    which = "LA", fixed start vector) on a float32 copy (or the matrix itself when it is float32) - the
    matrix-vector products are memory-bound, so this halves their cost - then a Rayleigh-Ritz step in float64 on
    the Lanczos vectors, which makes the eigenvalues accurate to second order (the vectors to about 1e-6
    relative); the matrix must then be full.
    """
    d = matrix.shape[0]
    if lanczos_above is not None and d > lanczos_above:
        values, vectors = _lanczos(matrix, k)
    else:
        values, vectors = scipy.linalg.eigh(matrix, lower=True, subset_by_index=[d - k, d - 1], check_finite=False,
                                            overwrite_a=overwrite)
    return values[::-1], np.ascontiguousarray(vectors[:, ::-1])


_RITZ_ROWS = 1024  # rows of a float32 matrix upcast at a time in the Rayleigh-Ritz product


def _times(matrix: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """matrix @ basis in float64, a block of rows at a time when the matrix is float32 (no float64 copy of it)."""
    if matrix.dtype == np.float64:
        return matrix @ basis
    out = np.empty((matrix.shape[0], basis.shape[1]))
    for start in range(0, matrix.shape[0], _RITZ_ROWS):
        out[start:start + _RITZ_ROWS] = matrix[start:start + _RITZ_ROWS].astype(np.float64) @ basis
    return out


def _symmetric_product(single: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """v -> single @ v (float32 product, float64 result) by BLAS ssymv on one triangle of the symmetric float32
    ``single``: it reads half the matrix's memory of a general product (the products are memory-bound, so about half
    the time); the sum order differs from sgemv, so the products agree with ``single @ v`` to float32 rounding."""
    if single.flags.c_contiguous:  # the transpose is a Fortran-order view: no copy; its upper triangle is our lower
        view, lower = single.T, 0
    else:
        view, lower = np.asfortranarray(single), 1
    return lambda v: _SSYMV(1.0, view, v.astype(np.float32), lower=lower).astype(np.float64)


def _lanczos(matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Ascending top-k eigenpairs by float32 Lanczos and a float64 Rayleigh-Ritz step (see top_eigenpairs); a
    float32 matrix is used as it is (no copy)."""
    d = matrix.shape[0]
    operator = LinearOperator((d, d), matvec=_symmetric_product(np.asarray(matrix, dtype=np.float32)), dtype=np.float64)
    start = np.random.default_rng(0).standard_normal(d)  # fixed Lanczos start; not a privacy draw
    try:
        _, vecs = eigsh(operator, k=k, which="LA", v0=start, ncv=min(d - 1, max(4 * k, 20)), tol=1e-6,
                        maxiter=20 * d)
    except ArpackNoConvergence:  # pragma: no cover - fall back to the exact solver
        return scipy.linalg.eigh(np.asarray(matrix, dtype=np.float64), subset_by_index=[d - k, d - 1])
    basis, _ = np.linalg.qr(vecs)
    small = basis.T @ _times(matrix, basis)
    vals, rotation = scipy.linalg.eigh((small + small.T) / 2)
    return vals, basis @ rotation


def top_eigenpairs_operator(matvec: Callable[[np.ndarray], np.ndarray], dim: int, k: int
                            ) -> tuple[np.ndarray, np.ndarray]:
    """The k largest (algebraic) eigenpairs, descending, of a symmetric D x D operator given only by its products
    ``matvec(V)`` (a vector or a D x r block): Lanczos (ARPACK eigsh, which = "LA", fixed start vector, tolerance
    1e-10), memory O(D k) besides what ``matvec`` holds. When D <= 2k + 1 (too small for Lanczos) the matrix is
    built column by column (``matvec`` of the identity) and decomposed exactly."""
    if dim <= 2 * k + 1:
        dense = np.asarray(matvec(np.eye(dim)), dtype=float)
        vals, vecs = np.linalg.eigh((dense + dense.T) / 2.0)
        return vals[::-1][:k], np.ascontiguousarray(vecs[:, ::-1][:, :k])
    operator = LinearOperator((dim, dim), matvec=matvec, matmat=matvec, dtype=np.float64)
    start = np.random.default_rng(0).standard_normal(dim)  # fixed Lanczos start; not a privacy draw
    vals, vecs = eigsh(operator, k=k, which="LA", v0=start, tol=1e-10, maxiter=50 * dim)
    order = np.argsort(vals)[::-1]
    return vals[order], np.ascontiguousarray(vecs[:, order])
