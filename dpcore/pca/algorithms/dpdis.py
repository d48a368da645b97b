"""DPdisPCA (Imtiaz & Sarwate 2018): each site sends P_s = V_R Lambda_R^(1/2) of its A_s + G_s (top-R eigenpairs,
negative eigenvalues clipped at 0); the aggregator takes the top-K of sum_s mu_s P_s P_s^T (docs/math/capepca.md),
from the S R x S R Gram matrix when S R < D (:func:`top_of_outer`)."""

from __future__ import annotations

import numpy as np

from ... import linalg
from ...family import Algorithm, Sizes
from ...validation import InputError, check_positive_int
from ..problem import PcaPrivacy, PcaProblem, check_pair
from ..result import PcaResult, lower_matrix, make_result
from .conv import conventional_release, own_noise_guarantees

__all__ = ["ENTRIES", "check_dpdis_rank", "dpdis_pca", "top_of_outer"]


def check_dpdis_rank(rank: int, k: int, dim: int) -> int:
    """R with K <= R <= D."""
    rank = check_positive_int(rank, "R")
    if not k <= rank <= dim:
        raise InputError(f"DPdisPCA rank R must satisfy K = {k} <= R <= D = {dim} (got {rank})", "R")
    return rank


def communication(sizes: Sizes) -> int:
    """S D R: every site sends its D x R partial square root (0 when R is not given)."""
    return sizes.n_sites * sizes.dim * (sizes.rank if sizes.rank is not None else 0)


def dpdis_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *, rank: int | None = None,
              keep_matrix: bool = False) -> PcaResult:
    """DPdisPCA: P_s = V_R(A_hat_s) Lambda_R^(1/2) (negative eigenvalues clipped), top-K of sum mu_s P_s P_s^T.
    ``rank`` R defaults to K and must satisfy K <= R <= D."""
    check_pair(problem, privacy)
    rank = problem.k if rank is None else check_dpdis_rank(rank, problem.k, problem.dim)
    parts = []
    for s in range(problem.n_sites):  # one site's noisy matrix at a time: memory O(D^2) whatever S
        release = conventional_release(problem, privacy, rng, s)
        values, vectors = linalg.top_eigenpairs(lower_matrix(release, problem.dim, problem.solver_dtype), rank,
                                                overwrite=True)
        parts.append(vectors * np.sqrt(np.clip(values, 0.0, None) * privacy.weights[s])[None, :])
    stacked = np.concatenate(parts, axis=1)
    values, vectors = top_of_outer(stacked, problem.k)
    if values is None:
        values, vectors = linalg.top_eigenpairs(stacked @ stacked.T, problem.k, overwrite=True)
    matrix = (stacked @ stacked.T).astype(float) if keep_matrix else None
    sent = communication(Sizes(n_sites=problem.n_sites, dim=problem.dim, rank=rank))
    return make_result("dpdis", problem, values, vectors, sent, None, matrix)


def top_of_outer(stacked: np.ndarray, k: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Top-k eigenpairs of P P^T (P = ``stacked``, D x S R) from the smaller S R x S R Gram matrix P^T P when
    S R < D: P^T P = U L U^T gives P P^T = (P U L^(-1/2)) L (P U L^(-1/2))^T, the same nonzero eigenvalues and the
    eigenvectors v_j = P u_j / sqrt(l_j). (None, None) when S R >= D, or when l_k is too small for the division
    (below 1e-4 of l_1 in the solver's precision: the D x D route is then used)."""
    dim, width = stacked.shape
    if width >= dim:
        return None, None
    values, small = linalg.top_eigenpairs(stacked.T @ stacked, k)
    if not values[-1] > 1e-4 * max(float(values[0]), 0.0):
        return None, None
    vectors = (stacked @ small) / np.sqrt(values)[None, :]
    return values, vectors


ENTRIES = (Algorithm(
    name="dpdis", default=True, title="DPdisPCA", position=60, paper_order=2, colour="#ff7f0e",
    description="DPdisPCA: every site sends the top-R partial square root of its noisy A_s",
    communication_text="S D R: site -> aggregator P_s (D x R)",
    communication=communication,
    run=lambda ctx: dpdis_pca(ctx.problem, ctx.privacy, ctx.rng, rank=ctx.settings.rank,
                              keep_matrix=ctx.settings.keep_matrix),
    guarantees=own_noise_guarantees,
),)
