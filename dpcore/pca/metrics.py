"""PCA metrics (docs/math/capepca.md): captured energy q = tr(V^T A V) with the pooled non-private A, its ratio to
the optimum tr(V_K^T A V_K), and the subspace distance ||V_K V_K^T - V V^T||_2; pictures' helpers."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..family import Metric, metric_table
from ..validation import InputError, check_positive_int
from .problem import PcaProblem

__all__ = ["METRICS", "align_signs", "captured_energy", "metric_values", "noise_spectral_norm", "scree",
           "subspace_distance"]


def captured_energy(pooled: np.ndarray, subspace: np.ndarray) -> float:
    """q_CE = tr(V^T A V)."""
    return float(np.sum((pooled @ subspace) * subspace))


def subspace_distance(v1: np.ndarray, v2: np.ndarray) -> float:
    """||V1 V1^T - V2 V2^T||_2 for orthonormal D x K bases: the sine of the largest principal angle, computed
    as the largest singular value of (I - V1 V1^T) V2 (accurate for small angles too)."""
    if v1.shape != v2.shape:
        raise InputError(f"subspaces of different shapes {v1.shape} and {v2.shape}")
    residual = v2 - v1 @ (v1.T @ v2)
    return min(1.0, float(np.linalg.svd(residual, compute_uv=False).max()))


def align_signs(reference: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Flip each column of ``vectors`` so that it has a non-negative inner product with the same column of
    ``reference`` (eigenvectors are defined up to sign; for pictures of true vs private components)."""
    count = min(reference.shape[1], vectors.shape[1])
    signs = np.sign(np.sum(reference[:, :count] * vectors[:, :count], axis=0))
    signs[signs == 0] = 1.0
    out = np.array(vectors[:, :count], dtype=float)
    return out * signs[None, :]


def scree(problem: PcaProblem, matrix: np.ndarray, count: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` (default: all) largest eigenvalues of the true A and of a noisy estimate, descending."""
    count = problem.dim if count is None else min(check_positive_int(count, "count"), problem.dim)
    noisy = np.sort(scipy.linalg.eigvalsh(matrix, check_finite=False))[::-1]
    return problem.eigenvalues[:count].copy(), noisy[:count]


def noise_spectral_norm(dim: int, std: float) -> float:
    """About 2 sqrt(D) std: the spectral norm of a D x D symmetric matrix with i.i.d. N(0, std^2) unique
    entries (the edge of Wigner's semicircle), for large D."""
    return 2.0 * float(np.sqrt(dim)) * float(std)


def _ratio(problem: PcaProblem, energy: float) -> float:
    optimum = problem.optimal_energy
    return energy / optimum if optimum > 0 else float("nan")


def _energy_ratio(problem: PcaProblem, subspace: np.ndarray) -> float:
    """q_CE / q_CE(V_K): the share of the optimal captured energy (NaN when the optimum is 0)."""
    return _ratio(problem, captured_energy(problem.pooled, subspace))


METRICS: dict[str, Metric] = metric_table((
    Metric(name="captured_energy", label="captured energy q_CE", words="captured energy", higher_is_better=True,
           description="captured energy q_CE = tr(V^T A V) (higher is better)",
           compute=lambda problem, subspace: captured_energy(problem.pooled, subspace)),
    Metric(name="captured_energy_ratio", label="q_CE / q_CE(non-dp pool)", higher_is_better=True,
           words="share of the non-private captured energy", description="q_CE / q_CE(non-dp pool) (1 is optimal)",
           compute=_energy_ratio),
    Metric(name="subspace_distance", label="subspace distance", words="subspace distance", higher_is_better=False,
           description="subspace distance ||V_K V_K^T - V V^T||_2 (lower is better)",
           compute=lambda problem, subspace: subspace_distance(problem.top_vectors, subspace)),
))
"""The PCA metrics of a subspace V, each ``compute(problem, V)``: A is the pooled non-private second-moment matrix,
V_K its top-K eigenvectors; the subspace distance is 0 for the true subspace, 1 for an orthogonal direction.
Every result carries each of them (:attr:`dpcore.pca.PcaResult.metrics`)."""


def metric_values(problem: PcaProblem, subspace: np.ndarray) -> dict[str, float]:
    """Every metric of :data:`METRICS` of one subspace, by name: the same numbers as each metric's ``compute``, with
    the captured energy tr(V^T A V) (its D x D by D x K product, the costliest part) computed once for it and its
    ratio to the optimum."""
    energy = captured_energy(problem.pooled, subspace)
    shared = {"captured_energy": energy, "captured_energy_ratio": _ratio(problem, energy)}
    return {name: shared[name] if name in shared else metric.compute(problem, subspace)
            for name, metric in METRICS.items()}
