"""The planner's simulated studies of capePCA's synthetic Gaussian (docs/planner.md, "The method"): study r of N
samples is the first N samples of one endless stream of samples (its seed's), drawn in the covariance's eigenbasis a
block at a time, centred (or not) and divided by its own largest norm as a run's preprocessing does, its scatter
turned back into the covariance's basis.

Nested and resumable: a study of N samples holds the first samples of the same study at a larger N, and what the
full blocks of a study add up to (:class:`StudyDraw`: their scatter, their sum and their samples of largest norm) is
kept, so that a study at a larger N draws only the blocks it adds. The sums run block by block in one order whatever
the start, so a study resumed from a smaller one is the same, bit for bit, as one drawn from its first sample; the
planner's rounds at the answer's N (docs/planner.md) then cost the samples they add, not all of them again.

The largest centred norm is exact: it is taken over the :data:`CANDIDATES` samples of largest raw norm, and every
other sample's centred norm is at most its raw norm plus the norm of the mean (triangle inequality), so when the
largest candidate beats that bound no other sample can be larger; when it does not (never seen), every sample is drawn
again and measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..data import synthetic_covariance
from ..seeding import PCA_SYNTHETIC_STREAM

__all__ = ["CANDIDATES", "STUDY_BLOCK", "STUDY_WORD", "StudyDraw", "covariance", "study_block", "synthetic_study"]

STUDY_BLOCK = 8192
"""Samples per block of a synthetic study (memory: one block at a time)."""
STUDY_WORD = 0x57D
"""Fourth word of a synthetic study's stream (apart from :func:`dpcore.pca.planning.planner_dataset`'s blocks)."""
CANDIDATES = 64
"""Samples of largest raw norm a study keeps for its largest centred norm."""


@lru_cache(maxsize=8)
def covariance(dim: int, spectrum: str, decay: float) -> tuple[np.ndarray, np.ndarray]:
    """sqrt of the eigenvalues and the eigenbasis of the synthetic covariance (:func:`dpcore.data.synthetic_covariance`;
    kept, read-only: a study would otherwise spend a QR of D x D on it)."""
    values, basis = synthetic_covariance(dim, spectrum, decay)
    root = np.sqrt(values)
    for array in (root, basis):
        array.setflags(write=False)
    return root, basis


def study_block(root: np.ndarray, seed: int, block: int, rows: int) -> np.ndarray:
    """The first ``rows`` samples (columns, D x rows) of block ``block`` of study ``seed``: sqrt(lambda) z in the
    eigenbasis, z from SFC64(SeedSequence([seed, PCA_SYNTHETIC_STREAM, STUDY_WORD, block])) sample by sample (numpy
    fills the rows x D array in order, so a sample does not depend on how many of its block are drawn)."""
    generator = np.random.Generator(np.random.SFC64(np.random.SeedSequence(
        [int(seed), PCA_SYNTHETIC_STREAM, STUDY_WORD, int(block)])))
    z = generator.standard_normal((int(rows), root.size))
    return (z * root).T


@dataclass(frozen=True, eq=False)
class StudyDraw:
    """What the first ``blocks`` full blocks of a study add up to: their scatter (float64, the float32 scatter of each
    block summed in block order), their sum, and their :data:`CANDIDATES` samples of largest raw norm (``tops``,
    D x C) with those squared norms. ``seed``: the study's."""

    seed: int
    blocks: int
    scatter: np.ndarray
    total: np.ndarray
    tops: np.ndarray
    norms: np.ndarray

    @property
    def size(self) -> int:
        """Samples it holds."""
        return self.blocks * STUDY_BLOCK

    @property
    def nbytes(self) -> int:
        return int(self.scatter.nbytes + self.total.nbytes + self.tops.nbytes + self.norms.nbytes)


def _largest(norms: np.ndarray, count: int) -> np.ndarray:
    """Indices of the ``count`` largest ``norms`` (all of them when there are fewer)."""
    if norms.size <= count:
        return np.arange(norms.size)
    return np.argpartition(norms, norms.size - count)[norms.size - count:]


def _add(draw: StudyDraw | None, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(scatter, total, tops, norms) of ``draw`` plus the samples ``x`` (float32 scatter, summed into float64)."""
    dim = x.shape[0]
    single = x.astype(np.float32)
    norms = np.einsum("ij,ij->j", x, x)
    keep = _largest(norms, CANDIDATES)
    if draw is None:
        scatter, total = np.zeros((dim, dim)), np.zeros(dim)
        tops, top_norms = x[:, keep], norms[keep]
    else:
        scatter, total = draw.scatter.copy(), draw.total.copy()
        tops = np.concatenate([draw.tops, x[:, keep]], axis=1)
        top_norms = np.concatenate([draw.norms, norms[keep]])
        best = _largest(top_norms, CANDIDATES)
        tops, top_norms = tops[:, best], top_norms[best]
    scatter += (single @ single.T).astype(np.float64)
    total += x.sum(axis=1)
    return scatter, total, tops, top_norms


def _extend(root: np.ndarray, seed: int, blocks: int, start: StudyDraw | None) -> StudyDraw | None:
    """The draw of the first ``blocks`` full blocks, continuing ``start`` (a draw of the same study with at most that
    many blocks) or from the first sample."""
    draw = start if start is not None and start.seed == seed and start.blocks <= blocks else None
    for b in range(0 if draw is None else draw.blocks, blocks):
        scatter, total, tops, norms = _add(draw, study_block(root, seed, b, STUDY_BLOCK))
        draw = StudyDraw(seed=seed, blocks=b + 1, scatter=scatter, total=total, tops=tops, norms=norms)
    return draw


def _exact_largest(root: np.ndarray, seed: int, n: int, mean: np.ndarray) -> float:
    """The largest squared centred norm of all ``n`` samples, every one drawn again (the fallback)."""
    largest = 0.0
    for b in range(-(-n // STUDY_BLOCK)):
        x = study_block(root, seed, b, min(STUDY_BLOCK, n - b * STUDY_BLOCK)) - mean[:, None]
        largest = max(largest, float(np.einsum("ij,ij->j", x, x).max()))
    return largest


def synthetic_study(dim: int, spectrum: str, decay: float, centre: bool, n: int, seed: int,
                    start: StudyDraw | None = None) -> tuple[np.ndarray, float, StudyDraw | None]:
    """Study ``seed`` of ``n`` samples (module docstring): the scatter divided by N and by the squared largest
    (centred) norm, in the covariance's basis (B S B^T: a rotation keeps the norms and commutes with the centring),
    that largest norm, and the draw of its full blocks (what a larger study of this seed continues from). ``start``:
    a draw of this study to continue (ignored when it is of another study or larger)."""
    n = int(n)
    root, basis = covariance(dim, spectrum, decay)
    full, rest = divmod(n, STUDY_BLOCK)
    draw = _extend(root, seed, full, start)
    if rest:
        scatter, total, tops, norms = _add(draw, study_block(root, seed, full, rest))
    else:
        scatter, total, tops, norms = draw.scatter.copy(), draw.total.copy(), draw.tops, draw.norms
    mean = total / n if centre else np.zeros(dim)
    centred = tops - mean[:, None]
    largest = float(np.einsum("ij,ij->j", centred, centred).max())
    left_out = float(norms.min()) if n > tops.shape[1] else 0.0  # no sample outside the candidates is larger
    if n > tops.shape[1] and np.sqrt(largest) < np.sqrt(left_out) + float(np.linalg.norm(mean)):
        largest = _exact_largest(root, seed, n, mean)
    scatter -= n * np.outer(mean, mean)
    pooled = basis @ (scatter / (largest * n)) @ basis.T
    return pooled, float(np.sqrt(largest)), draw
