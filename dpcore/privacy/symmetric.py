"""Symmetric matrices and tensors from their unique entries (docs/math/mechanisms.md, "symmetric noise").

A symmetric D x D matrix has D(D+1)/2 unique entries (i <= j), a symmetric D x D x D tensor C(D+2, 3)
(i <= j <= k), both kept in colex order. Noise is drawn for the unique entries and mirrored, so every noise term
is symmetric by construction (docs/math/corrections.md, item 1).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..limits import MAX_DENSE_ENTRIES
from ..validation import InputError, check_positive_int

__all__ = [
    "symmetric_gaussian_matrix",
    "symmetric_gaussian_tensor",
    "symmetric_matrix",
    "symmetric_tensor",
    "symmetrize",
    "unique_count_matrix",
    "unique_count_tensor",
    "unique_entries_matrix",
    "unique_entries_tensor",
]


def unique_count_matrix(dim: int) -> int:
    """D(D+1)/2 unique entries of a symmetric D x D matrix."""
    return dim * (dim + 1) // 2


def unique_count_tensor(dim: int) -> int:
    """C(D+2, 3) unique entries of a symmetric D x D x D tensor."""
    return dim * (dim + 1) * (dim + 2) // 6


def _colex_position(*sorted_indices: np.ndarray) -> np.ndarray:
    """Position of a sorted index tuple i <= j (<= k) among all such tuples in colex order:
    pos(i, j) = C(j+1, 2) + i and pos(i, j, k) = C(k+2, 3) + C(j+1, 2) + i."""
    if len(sorted_indices) == 2:
        i, j = sorted_indices
        return j * (j + 1) // 2 + i
    i, j, k = sorted_indices
    return k * (k + 1) * (k + 2) // 6 + j * (j + 1) // 2 + i


@lru_cache(maxsize=8)
def _full_index(dim: int, order: int) -> np.ndarray:
    """Flat D^order array mapping every index tuple to the position of its unique entry.

    Built by broadcasting (one int64 array of D^order entries plus temporaries of the same size):
    the sorted tuple of (a, b) is (min, max); of (a, b, c) it is (min, a + b + c - min - max, max)."""
    r = np.arange(dim, dtype=np.int64)
    if order == 2:
        a, b = r[:, None], r[None, :]
        idx = _colex_position(np.minimum(a, b), np.maximum(a, b))
    else:
        a, b, c = r[:, None, None], r[None, :, None], r[None, None, :]
        lo = np.minimum(np.minimum(a, b), c)
        hi = np.maximum(np.maximum(a, b), c)
        idx = _colex_position(lo, a + b + c - lo - hi, hi)
    idx = idx.ravel()
    idx.setflags(write=False)
    return idx


def _pairs(count: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``count`` pairs i <= j in colex order: pos = j (j + 1) / 2 + i."""
    pos = np.arange(count, dtype=np.int64)
    j = ((np.sqrt(8.0 * pos + 1.0) - 1.0) // 2).astype(np.int64)
    j += (j + 1) * (j + 2) // 2 <= pos  # guard against floating-point rounding at block edges
    j -= j * (j + 1) // 2 > pos
    return pos - j * (j + 1) // 2, j


@lru_cache(maxsize=8)
def _unique_tuples(dim: int, order: int) -> np.ndarray:
    """(order, n_unique) sorted index tuples in colex order (the order of the unique entries)."""
    if order == 2:
        tuples = np.stack(_pairs(unique_count_matrix(dim)))
    else:
        # block k holds the C(k+2, 2) pairs (i <= j <= k), in pair colex order
        sizes = np.arange(1, dim + 1, dtype=np.int64) * np.arange(2, dim + 2, dtype=np.int64) // 2
        k = np.repeat(np.arange(dim, dtype=np.int64), sizes)
        offset = np.arange(k.size, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        i_all, j_all = _pairs(int(sizes[-1]))
        tuples = np.stack([i_all[offset], j_all[offset], k])
    tuples.setflags(write=False)
    return tuples


def _check_dense_dim(dim: int, order: int) -> int:
    dim = check_positive_int(dim, "D")
    if dim**order > MAX_DENSE_ENTRIES:
        raise InputError(
            f"a dense symmetric array with D = {dim} and order {order} has {dim**order:,} entries, "
            f"more than the {MAX_DENSE_ENTRIES:,} allowed in memory; use a smaller D or the projected path",
            "D",
        )
    return dim


def symmetrize(tensor: np.ndarray) -> np.ndarray:
    """Sym(T) = (1/6) sum over the 6 permutations of the three axes (the symmetrized third-moment noise law
    sqrt(6) tau Sym(Z) of docs/math/capeagn.md is built from it)."""
    t = tensor
    return (t + t.transpose(0, 2, 1) + t.transpose(1, 0, 2) + t.transpose(1, 2, 0) + t.transpose(2, 0, 1)
            + t.transpose(2, 1, 0)) / 6.0


def symmetric_matrix(unique: np.ndarray, dim: int) -> np.ndarray:
    """Mirror unique entries (last axis, colex order of i <= j) into (..., D, D) symmetric matrices."""
    dim = _check_dense_dim(dim, 2)
    unique = np.asarray(unique)
    if unique.shape[-1] != unique_count_matrix(dim):
        raise InputError(f"expected {unique_count_matrix(dim)} unique entries for D = {dim}, got {unique.shape[-1]}")
    return unique[..., _full_index(dim, 2)].reshape(*unique.shape[:-1], dim, dim)


def symmetric_tensor(unique: np.ndarray, dim: int) -> np.ndarray:
    """Copy each unique entry (i <= j <= k, colex order) to all index permutations: (..., D, D, D)."""
    dim = _check_dense_dim(dim, 3)
    unique = np.asarray(unique)
    if unique.shape[-1] != unique_count_tensor(dim):
        raise InputError(f"expected {unique_count_tensor(dim)} unique entries for D = {dim}, got {unique.shape[-1]}")
    return unique[..., _full_index(dim, 3)].reshape(*unique.shape[:-1], dim, dim, dim)


def unique_entries_matrix(matrix: np.ndarray) -> np.ndarray:
    """Entries (i <= j, colex order) of (..., D, D); inverse of :func:`symmetric_matrix`."""
    i, j = _unique_tuples(matrix.shape[-1], 2)
    return matrix[..., i, j]


def unique_entries_tensor(tensor: np.ndarray) -> np.ndarray:
    """Entries (i <= j <= k, colex order) of (..., D, D, D); inverse of :func:`symmetric_tensor`."""
    i, j, k = _unique_tuples(tensor.shape[-1], 3)
    return tensor[..., i, j, k]


def symmetric_gaussian_matrix(rng: np.random.Generator, dim: int, std: float) -> np.ndarray:
    """D x D symmetric matrix whose D(D+1)/2 unique entries are i.i.d. N(0, std^2)."""
    dim = _check_dense_dim(dim, 2)
    return symmetric_matrix(rng.normal(0.0, std, unique_count_matrix(dim)), dim)


def symmetric_gaussian_tensor(rng: np.random.Generator, dim: int, std: float) -> np.ndarray:
    """D x D x D symmetric tensor whose C(D+2, 3) unique entries are i.i.d. N(0, std^2)."""
    dim = _check_dense_dim(dim, 3)
    return symmetric_tensor(rng.normal(0.0, std, unique_count_tensor(dim)), dim)

