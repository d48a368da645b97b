"""Non-private PCA of the pooled second-moment matrix A: the optimum every private algorithm is compared with."""

from __future__ import annotations

import numpy as np

from ..algorithm import PcaAlgorithm
from ..problem import PcaPrivacy, PcaProblem
from ..result import PcaResult, make_result

__all__ = ["ALGORITHM", "nondp_pca"]


def communication(n_sites: int, dim: int, rank: int | None = None) -> int:
    """S D^2: every site gives its A_s to the curator."""
    return n_sites * dim * dim


def nondp_pca(problem: PcaProblem, privacy: PcaPrivacy | None = None, rng: np.random.Generator | None = None, *,
              keep_matrix: bool = False) -> PcaResult:
    """Non-private top-K of the pooled A (draws nothing)."""
    return make_result("nondp", problem, problem.eigenvalues[: problem.k].copy(), problem.top_vectors.copy(),
                       communication(problem.n_sites, problem.dim), 0.0,
                       problem.pooled.copy() if keep_matrix else None)


ALGORITHM = PcaAlgorithm(
    name="nondp", title="non-dp pool", position=30, paper_order=5, colour="#2ca02c", private=False,
    description="non-private PCA of the pooled second-moment matrix (the optimum)",
    communication_text="S D^2: every site gives its A_s to a trusted curator",
    communication=communication,
    run=lambda problem, privacy, rng, options: nondp_pca(problem, privacy, rng, keep_matrix=options.keep_matrix),
)
