"""The faster computations of the large runs against the formulas they replaced (docs/experiments.md, "Speed"):
exact where the same floating-point operations are done, to rounding where the order of a sum changed."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import LinearOperator, eigsh

from dpcore import linalg

FLOAT32_EPS = float(np.finfo(np.float32).eps)


def _symmetric(rng: np.random.Generator, dim: int) -> np.ndarray:
    a = rng.standard_normal((dim, dim))
    return ((a + a.T) / 2).astype(np.float32)


def test_symmetric_product_is_the_matrix_product_to_float32_rounding():
    rng = np.random.default_rng(5)
    larger = _symmetric(rng, 320)
    single = np.ascontiguousarray(larger[:301, :301])
    v = rng.standard_normal(301)
    exact = single.astype(np.float64) @ v.astype(np.float32).astype(np.float64)
    # a float32 dot product of length D errs by at most D eps |A| |v| (entry-wise absolute values)
    bound = 301 * FLOAT32_EPS * (np.abs(single).astype(np.float64) @ np.abs(v))
    for matrix in (single, np.asfortranarray(single), larger[:301, :301]):  # C, Fortran, neither
        product = linalg._symmetric_product(matrix)(v)
        assert product.dtype == np.float64
        assert np.all(np.abs(product - exact) <= bound)


def _general_product_lanczos(matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The former solver: the same Lanczos with a general float32 product (sgemv) instead of ssymv."""
    d = matrix.shape[0]
    operator = LinearOperator((d, d), matvec=lambda v: (matrix @ v.astype(np.float32)).astype(np.float64),
                              dtype=np.float64)
    _, vecs = eigsh(operator, k=k, which="LA", v0=np.random.default_rng(0).standard_normal(d), ncv=max(4 * k, 20),
                    tol=1e-6, maxiter=20 * d)
    basis, _ = np.linalg.qr(vecs)
    small = basis.T @ linalg._times(matrix, basis)
    vals, rotation = scipy.linalg.eigh((small + small.T) / 2)
    return vals, basis @ rotation


def test_lanczos_with_the_symmetric_product_finds_the_former_eigenpairs():
    # a noisy second moment like capeAGN's at large D: a rank-5 signal under a Wigner-like noise bulk
    rng = np.random.default_rng(11)
    dim, k = 900, 5
    basis, _ = np.linalg.qr(rng.standard_normal((dim, k)))
    signal = basis @ np.diag([5.0, 4.0, 3.5, 3.0, 2.5]) @ basis.T
    matrix = (signal + _symmetric(rng, dim) / np.sqrt(dim)).astype(np.float32)
    before_values, before_vectors = _general_product_lanczos(matrix, k)
    values, vectors = linalg._lanczos(matrix, k)
    exact_values, exact_vectors = scipy.linalg.eigh(matrix.astype(np.float64), subset_by_index=[dim - k, dim - 1])
    np.testing.assert_allclose(values, before_values, rtol=1e-9)
    np.testing.assert_allclose(values, exact_values, rtol=1e-9)
    np.testing.assert_allclose(np.abs(vectors.T @ before_vectors), np.eye(k), atol=1e-6)
    np.testing.assert_allclose(np.abs(vectors.T @ exact_vectors), np.eye(k), atol=1e-6)
