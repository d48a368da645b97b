"""One run of one PCA algorithm: the result type and the shared last step, the top-K eigen-decomposition of the
aggregated matrix (through :func:`dpcore.linalg.top_eigenpairs`, looked up at call time so that the
benchmarks can time it)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .. import linalg
from ..privacy.symmetric import symmetric_matrix
from ..validation import check_choice
from .metrics import METRICS, captured_energy, subspace_distance
from .problem import PcaProblem

__all__ = ["PcaResult", "decompose", "lower_matrix", "make_result"]


@dataclass(frozen=True, kw_only=True)
class PcaResult:
    """One run of one algorithm: the subspace V (D x K), the top-K eigenvalues of the matrix it decomposed,
    the metrics, the numbers sent, and the std of the noise per unique entry of the decomposed matrix
    (None when the noise is not additive, as in DPdisPCA). ``matrix`` is kept only on request."""

    algorithm: str
    subspace: np.ndarray
    eigenvalues: np.ndarray
    captured_energy: float
    captured_energy_ratio: float
    subspace_distance: float
    communication: int
    noise_std: float | None
    matrix: np.ndarray | None = None

    def metric(self, name: str) -> float:
        """The metric ``name`` (:data:`~dpcore.pca.metrics.METRICS`)."""
        return float(getattr(self, check_choice(name, "metric", tuple(METRICS))))


def make_result(algorithm: str, problem: PcaProblem, values: np.ndarray, vectors: np.ndarray, communication: int,
                noise_std: float | None, matrix: np.ndarray | None) -> PcaResult:
    """The :class:`PcaResult` of a subspace: its metrics against the pooled non-private A."""
    energy = captured_energy(problem.pooled, vectors)
    optimum = problem.optimal_energy
    ratio = energy / optimum if optimum > 0 else float("nan")
    return PcaResult(algorithm=algorithm, subspace=vectors, eigenvalues=values, captured_energy=energy,
                     captured_energy_ratio=ratio, subspace_distance=subspace_distance(problem.top_vectors, vectors),
                     communication=communication, noise_std=noise_std, matrix=matrix)


@lru_cache(maxsize=4)
def _lower_positions(dim: int) -> np.ndarray:
    """Flat positions of the lower triangle in row-major order, which is the colex order of the unique entries
    (entry (i, j), i <= j, sits at j(j+1)/2 + i, row j of the lower triangle)."""
    rows, cols = np.tril_indices(dim)
    positions = rows * dim + cols
    positions.setflags(write=False)
    return positions


def lower_matrix(unique: np.ndarray, dim: int, dtype: str = "float64") -> np.ndarray:
    """The symmetric matrix with these unique entries, stored in its lower triangle only (the upper triangle is
    left unset): what LAPACK's symmetric eigensolvers read. Three times faster than mirroring."""
    matrix = np.empty((dim, dim), dtype=dtype)
    matrix.ravel()[_lower_positions(dim)] = unique
    return matrix


def decompose(algorithm: str, problem: PcaProblem, unique: np.ndarray, communication: int,
              noise_std: float | None, keep_matrix: bool) -> PcaResult:
    """Top-K of the symmetric matrix with unique entries ``unique`` (in ``problem.solver_dtype``)."""
    if keep_matrix:
        matrix = symmetric_matrix(unique, problem.dim)
        values, vectors = linalg.top_eigenpairs(matrix, problem.k)
    else:
        matrix = None
        values, vectors = linalg.top_eigenpairs(lower_matrix(unique, problem.dim, problem.solver_dtype), problem.k,
                                         overwrite=True)
    return make_result(algorithm, problem, values, vectors, communication, noise_std, matrix)
