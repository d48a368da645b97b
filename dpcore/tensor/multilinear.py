"""Small multilinear algebra for third-order tensors (docs/math/capeagn.md): symmetrisation (defined in
:mod:`dpcore.privacy.symmetric`, which the CAPE party functions below otd also use), sums of outer products
computed in chunks, and the multilinear map T(A, B, C)."""

from __future__ import annotations

import numpy as np

from ..privacy.symmetric import symmetrize  # lives with the symmetric noise it shapes

__all__ = ["multilinear", "outer_identity_sym", "symmetrize", "third_cross", "third_moment"]

_CHUNK_ENTRIES = 1 << 22  # rows x K^2 entries per chunk of a third-moment sum (32 MiB)


def third_cross(a: np.ndarray, b: np.ndarray, c: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """sum_n w_n a_n x b_n x c_n for rows a_n, b_n, c_n (each n x K), in chunks of rows."""
    n, k = a.shape
    out = np.zeros((k, k * k))
    step = max(1, _CHUNK_ENTRIES // max(k * k, 1))
    for start in range(0, n, step):
        sl = slice(start, start + step)
        left = a[sl] if weights is None else a[sl] * weights[sl, None]
        right = (b[sl][:, :, None] * c[sl][:, None, :]).reshape(-1, k * k)
        out += left.T @ right
    return out.reshape(k, k, k)


def third_moment(y: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """sum_n w_n y_n^(x)3 for the rows y_n of ``y``."""
    return third_cross(y, y, y, weights)


def outer_identity_sym(vector: np.ndarray, gram: np.ndarray) -> np.ndarray:
    """v_i G_jk + v_j G_ik + v_k G_ij (= 3 Sym(v x G) for symmetric G)."""
    return (np.einsum("i,jk->ijk", vector, gram) + np.einsum("j,ik->ijk", vector, gram)
            + np.einsum("k,ij->ijk", vector, gram))


def multilinear(
    tensor: np.ndarray, a: np.ndarray, b: np.ndarray | None = None, c: np.ndarray | None = None
) -> np.ndarray:
    """T(A, B, C)_pqr = sum_abc T_abc A_ap B_bq C_cr (B, C default to A)."""
    b = a if b is None else b
    c = a if c is None else c
    out = np.tensordot(tensor, c, axes=([2], [0]))  # (D, D, r)
    out = np.tensordot(out, b, axes=([1], [0]))  # (D, r, q)
    out = np.tensordot(out, a, axes=([0], [0]))  # (r, q, p)
    return out.transpose(2, 1, 0)
