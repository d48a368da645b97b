"""The conventional scheme: each site sends A_s + G_s with G_s ~ N(0, tau_s^2) per unique entry; the aggregator
averages with the weights mu_s (docs/math/capepca.md)."""

from __future__ import annotations

import numpy as np

from ..algorithm import PcaAlgorithm
from ..problem import PcaPrivacy, PcaProblem, check_pair
from ..result import PcaResult, decompose

__all__ = ["ALGORITHM", "conv_pca", "conventional_releases"]


def conventional_releases(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator) -> np.ndarray:
    """A_s + G_s for every site, (S, D(D+1)/2): standard normals drawn site by site, scaled by tau_s."""
    z = rng.standard_normal(problem.site_moments.shape)
    z *= privacy.tau[:, None]
    z += problem.site_moments
    return z


def communication(n_sites: int, dim: int, rank: int | None = None) -> int:
    """S D^2: every site sends its noisy A_s."""
    return n_sites * dim * dim


def conv_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
             keep_matrix: bool = False) -> PcaResult:
    """Conventional scheme: site releases A_s + G_s with std tau_s, aggregator sum_s mu_s (A_s + G_s)."""
    check_pair(problem, privacy)
    releases = conventional_releases(problem, privacy, rng)
    return decompose("conv", problem, privacy.weights @ releases, communication(problem.n_sites, problem.dim),
                     privacy.conventional_std, keep_matrix)


ALGORITHM = PcaAlgorithm(
    name="conv", title="conv", position=50, paper_order=3, colour="#1f77b4",
    description="conventional: every site adds its full noise tau_s, the aggregator averages",
    communication_text="S D^2: site -> aggregator A_s + G_s",
    communication=communication,
    run=lambda problem, privacy, rng, options: conv_pca(problem, privacy, rng, keep_matrix=options.keep_matrix),
)
