"""DPdisPCA (Imtiaz & Sarwate 2018): each site sends P_s = V_R Lambda_R^(1/2) of its A_s + G_s (top-R eigenpairs,
negative eigenvalues clipped at 0); the aggregator takes the top-K of sum_s mu_s P_s P_s^T (docs/math/capepca.md)."""

from __future__ import annotations

import numpy as np

from ... import linalg
from ...validation import InputError, check_positive_int
from ..algorithm import PcaAlgorithm
from ..problem import PcaPrivacy, PcaProblem, check_pair
from ..result import PcaResult, lower_matrix, make_result
from .conv import conventional_releases

__all__ = ["ALGORITHM", "check_dpdis_rank", "dpdis_pca"]


def check_dpdis_rank(rank: int, k: int, dim: int) -> int:
    """R with K <= R <= D."""
    rank = check_positive_int(rank, "R")
    if not k <= rank <= dim:
        raise InputError(f"DPdisPCA rank R must satisfy K = {k} <= R <= D = {dim} (got {rank})", "R")
    return rank


def communication(n_sites: int, dim: int, rank: int | None = None) -> int:
    """S D R: every site sends its D x R partial square root (0 when R is not given)."""
    return n_sites * dim * (rank if rank is not None else 0)


def dpdis_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *, rank: int | None = None,
              keep_matrix: bool = False) -> PcaResult:
    """DPdisPCA: P_s = V_R(A_hat_s) Lambda_R^(1/2) (negative eigenvalues clipped), top-K of sum mu_s P_s P_s^T.
    ``rank`` R defaults to K and must satisfy K <= R <= D."""
    check_pair(problem, privacy)
    rank = problem.k if rank is None else check_dpdis_rank(rank, problem.k, problem.dim)
    releases = conventional_releases(problem, privacy, rng)
    parts = []
    for s in range(problem.n_sites):
        values, vectors = linalg.top_eigenpairs(lower_matrix(releases[s], problem.dim, problem.solver_dtype), rank,
                                         overwrite=True)
        parts.append(vectors * np.sqrt(np.clip(values, 0.0, None) * privacy.weights[s])[None, :])
    stacked = np.concatenate(parts, axis=1)
    matrix = stacked @ stacked.T
    values, vectors = linalg.top_eigenpairs(matrix, problem.k)
    return make_result("dpdis", problem, values, vectors, communication(problem.n_sites, problem.dim, rank), None,
                       matrix if keep_matrix else None)


ALGORITHM = PcaAlgorithm(
    name="dpdis", title="DPdisPCA", position=60, paper_order=2, colour="#ff7f0e",
    description="DPdisPCA: every site sends the top-R partial square root of its noisy A_s",
    communication_text="S D R: site -> aggregator P_s (D x R)",
    communication=communication,
    run=lambda problem, privacy, rng, options: dpdis_pca(problem, privacy, rng, rank=options.rank,
                                                         keep_matrix=options.keep_matrix),
)
