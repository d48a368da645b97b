"""Pooled Analyze Gauss (docs/math/capepca.md): A + symmetric N(0, tau_pool^2) with tau_pool = Delta_pool
max_s c(eps_s, delta_s), Delta_pool the sensitivity at N (the strictest site's budget, so every site is covered)."""

from __future__ import annotations

import numpy as np

from ...family import Algorithm, Sizes
from ..problem import PcaPrivacy, PcaProblem, check_pair
from ..result import PcaResult, decompose

__all__ = ["ENTRIES", "pool_ag_pca"]


def communication(sizes: Sizes) -> int:
    """S D^2: every site gives its A_s to the curator."""
    return sizes.n_sites * sizes.dim * sizes.dim


def pool_ag_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
                keep_matrix: bool = False) -> PcaResult:
    """Analyze Gauss on pooled data: A + symmetric noise with std ``privacy.pooled_std`` per unique entry."""
    check_pair(problem, privacy)
    z = rng.standard_normal(problem.pooled_unique.size)
    return decompose("pool_ag", problem, problem.pooled_unique + privacy.pooled_std * z,
                     communication(Sizes(n_sites=problem.n_sites, dim=problem.dim)), privacy.pooled_std, keep_matrix)


ENTRIES = (Algorithm(
    name="pool_ag", default=True, title="pooled AG", position=20, colour="#9467bd",
    description="pooled Analyze Gauss: a trusted curator holds all data and adds one symmetric Gaussian",
    communication_text="S D^2: every site gives its A_s to a trusted curator",
    communication=communication,
    run=lambda ctx: pool_ag_pca(ctx.problem, ctx.privacy, ctx.rng, keep_matrix=ctx.settings.keep_matrix),
),)
