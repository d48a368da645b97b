"""Central noise, the scheme of paper 002 (DPDPCA; docs/math/capepca.md): exact sums X_s X_s^T reach a proxy through
secure aggregation (additively homomorphic encryption), which adds one symmetric Gaussian draw to the pooled sum;
same noise level as pooled Analyze Gauss, different trust assumptions (a proxy that does not collude with the data
user). Data are centred in preprocessing, so the mean-vector share of paper 002 is omitted."""

from __future__ import annotations

import numpy as np

from ...family import Algorithm, Sizes
from ..problem import PcaPrivacy, PcaProblem, check_pair
from ..result import PcaResult, decompose
from .pool_ag import curator_rule

__all__ = ["ENTRIES", "central_pca"]


def communication(sizes: Sizes) -> int:
    """S (D^2 + D + 1) + D^2 + D: encrypted shares to the proxy, the noisy sums to the data user."""
    dim = sizes.dim
    return sizes.n_sites * (dim * dim + dim + 1) + dim * dim + dim


def central_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
                keep_matrix: bool = False) -> PcaResult:
    """Central noise (paper 002): sum_s X_s X_s^T through secure aggregation, one symmetric Gaussian with std
    N tau_pool added to the sum by the proxy, divided by N by the data user."""
    check_pair(problem, privacy)
    total = problem.total_n
    secure_sum = problem.sizes.astype(float) @ problem.site_moments  # sum_s X_s X_s^T, unique entries
    z = rng.standard_normal(secure_sum.size)
    noisy_sum = secure_sum + (total * privacy.pooled_std) * z
    sent = communication(Sizes(n_sites=problem.n_sites, dim=problem.dim))
    return decompose("central", problem, noisy_sum / total, sent, privacy.pooled_std, keep_matrix)


ENTRIES = (Algorithm(
    name="central", default=True, title="central (DPDPCA)", position=70, colour="#e377c2",
    description="central noise (paper 002): exact sums via secure aggregation, one Gaussian draw at the pooled level",
    communication_text="S (D^2 + D + 1) + D^2 + D: encrypted shares (sum, mean vector, count) to the proxy, noisy "
    "sums to the data user",
    communication=communication,
    run=lambda ctx: central_pca(ctx.problem, ctx.privacy, ctx.rng, keep_matrix=ctx.settings.keep_matrix),
    guarantees=curator_rule("central noise: a proxy adds one Gaussian to the securely aggregated sums",
                            trusted=False),
),)
