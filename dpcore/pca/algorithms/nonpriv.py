"""Non-private PCA of the pooled second-moment matrix A: the optimum every private algorithm is compared with (the
non-private reference ``nonpriv`` of every family; its old name ``nondp`` is still accepted where names are typed)."""

from __future__ import annotations

import numpy as np

from ...family import Algorithm, Sizes
from ..problem import PcaPrivacy, PcaProblem
from ..result import PcaResult, make_result

__all__ = ["ENTRIES", "nonpriv_pca"]


def communication(sizes: Sizes) -> int:
    """S D^2: every site gives its A_s to the curator."""
    return sizes.n_sites * sizes.dim * sizes.dim


def nonpriv_pca(problem: PcaProblem, privacy: PcaPrivacy | None = None, rng: np.random.Generator | None = None, *,
                keep_matrix: bool = False) -> PcaResult:
    """Non-private top-K of the pooled A (draws nothing)."""
    return make_result("nonpriv", problem, problem.eigenvalues[: problem.k].copy(), problem.top_vectors.copy(),
                       communication(Sizes(n_sites=problem.n_sites, dim=problem.dim)), 0.0,
                       problem.pooled.copy() if keep_matrix else None)


ENTRIES = (Algorithm(
    name="nonpriv", default=True, title="non-dp pool", position=30, paper_order=5, colour="#2ca02c", private=False,
    guarantee="none",
    description="non-private PCA of the pooled second-moment matrix (the optimum)",
    communication_text="S D^2: every site gives its A_s to a trusted curator",
    communication=communication,
    run=lambda ctx: nonpriv_pca(ctx.problem, ctx.privacy, ctx.rng, keep_matrix=ctx.settings.keep_matrix),
),)
