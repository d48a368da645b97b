"""Pooled Analyze Gauss (docs/math/capepca.md): A + symmetric N(0, tau_pool^2) with tau_pool = Delta_pool
max_s c(eps_s, delta_s), Delta_pool the sensitivity at N (the strictest site's budget, so every site is covered)."""

from __future__ import annotations

import numpy as np

from ..algorithm import PcaAlgorithm
from ..problem import PcaPrivacy, PcaProblem, check_pair
from ..result import PcaResult, decompose

__all__ = ["ALGORITHM", "pool_ag_pca"]


def communication(n_sites: int, dim: int, rank: int | None = None) -> int:
    """S D^2: every site gives its A_s to the curator."""
    return n_sites * dim * dim


def pool_ag_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
                keep_matrix: bool = False) -> PcaResult:
    """Analyze Gauss on pooled data: A + symmetric noise with std ``privacy.pooled_std`` per unique entry."""
    check_pair(problem, privacy)
    z = rng.standard_normal(problem.pooled_unique.size)
    return decompose("pool_ag", problem, problem.pooled_unique + privacy.pooled_std * z,
                     communication(problem.n_sites, problem.dim), privacy.pooled_std, keep_matrix)


ALGORITHM = PcaAlgorithm(
    name="pool_ag", title="pooled AG", position=20, colour="#9467bd",
    description="pooled Analyze Gauss: a trusted curator holds all data and adds one symmetric Gaussian",
    communication_text="S D^2: every site gives its A_s to a trusted curator",
    communication=communication,
    run=lambda problem, privacy, rng, options: pool_ag_pca(problem, privacy, rng, keep_matrix=options.keep_matrix),
)
