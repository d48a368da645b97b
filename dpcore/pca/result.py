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
from .metrics import METRICS, metric_values
from .problem import PcaProblem

__all__ = ["PcaResult", "decompose", "lower_matrix", "make_result", "top_subspace"]


@dataclass(frozen=True, kw_only=True)
class PcaResult:
    """One run of one algorithm: the subspace V (D x K), the top-K eigenvalues of the matrix it decomposed,
    every metric of :data:`~dpcore.pca.metrics.METRICS` (``metrics``, by name), the numbers sent, and the std of the
    noise per unique entry of the decomposed matrix (None when the noise is not additive, as in DPdisPCA).
    ``matrix`` is kept only on request."""

    algorithm: str
    subspace: np.ndarray
    eigenvalues: np.ndarray
    metrics: dict[str, float]
    communication: int
    noise_std: float | None
    matrix: np.ndarray | None = None
    bits_per_value: int | None = None
    """Width of the ring every value travels on (the discrete design: docs/math/discrete.md); None: float64."""

    def metric(self, name: str) -> float:
        """The metric ``name`` (:data:`~dpcore.pca.metrics.METRICS`)."""
        return self.metrics[check_choice(name, "metric", tuple(METRICS))]

    @property
    def captured_energy(self) -> float:
        return self.metrics["captured_energy"]

    @property
    def captured_energy_ratio(self) -> float:
        return self.metrics["captured_energy_ratio"]

    @property
    def subspace_distance(self) -> float:
        return self.metrics["subspace_distance"]


def make_result(algorithm: str, problem: PcaProblem, values: np.ndarray, vectors: np.ndarray, communication: int,
                noise_std: float | None, matrix: np.ndarray | None) -> PcaResult:
    """The :class:`PcaResult` of a subspace: every metric of the table against the pooled non-private A."""
    return PcaResult(algorithm=algorithm, subspace=vectors, eigenvalues=values,
                     metrics=metric_values(problem, vectors),
                     communication=communication, noise_std=noise_std, matrix=matrix)


@lru_cache(maxsize=4)
def _lower_positions(dim: int) -> np.ndarray:
    """Flat positions, in a column-major (Fortran-order) D x D array, of the lower triangle's entries listed row by
    row, which is the colex order of the unique entries (entry (i, j), i <= j, sits at j(j+1)/2 + i, row j of the
    lower triangle; (row r, column c) of the lower triangle lives at c D + r in column-major memory)."""
    rows, cols = np.tril_indices(dim)
    positions = cols * dim + rows
    positions.setflags(write=False)
    return positions


def lower_matrix(unique: np.ndarray, dim: int, dtype: str = "float64") -> np.ndarray:
    """The symmetric matrix with these unique entries, stored in its lower triangle only (the upper triangle is
    left unset) and in Fortran order: what LAPACK's symmetric eigensolvers read, as they read it (a C-order matrix
    would be copied to Fortran order by scipy's wrapper on every call: about 1 ms of a 27 ms float32 solve at
    D = 784, measured, against 0.2 ms more for this fill). Three times faster than mirroring. The entries are cast
    to ``dtype`` before the scatter (the same rounding as casting inside it; a float32 scatter moves half the
    bytes)."""
    flat = np.empty(dim * dim, dtype=dtype)
    flat[_lower_positions(dim)] = np.asarray(unique, dtype=dtype)
    return flat.reshape((dim, dim), order="F")


def top_subspace(unique: np.ndarray, dim: int, k: int, dtype: str = "float64") -> tuple[np.ndarray, np.ndarray]:
    """The top-K eigenvalues (descending) and eigenvectors (D x K) of the symmetric matrix with unique entries
    ``unique``: capePCA's published subspace V_K of the aggregate (``dtype``: precision of the eigensolver)."""
    return linalg.top_eigenpairs(lower_matrix(unique, dim, dtype), k, overwrite=True)


def decompose(algorithm: str, problem: PcaProblem, unique: np.ndarray, communication: int,
              noise_std: float | None, keep_matrix: bool) -> PcaResult:
    """Top-K of the symmetric matrix with unique entries ``unique`` (in ``problem.solver_dtype``; the same whether or
    not the float64 matrix is kept for the scree plot)."""
    matrix = symmetric_matrix(unique, problem.dim) if keep_matrix else None
    values, vectors = top_subspace(unique, problem.dim, problem.k, problem.solver_dtype)
    return make_result(algorithm, problem, values, vectors, communication, noise_std, matrix)
