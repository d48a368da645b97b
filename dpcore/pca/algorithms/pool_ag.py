"""Pooled Analyze Gauss (docs/math/capepca.md): A + symmetric N(0, tau_pool^2) with tau_pool = Delta_pool
max_s c(eps_s, delta_s), Delta_pool the sensitivity at N (the strictest site's budget, so every site is covered)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...cape.guarantee import Guarantee, curator_guarantees, independent_stage, promises
from ...family import Algorithm, GuaranteeContext, Sizes
from ..problem import PcaPrivacy, PcaProblem, check_pair
from ..result import PcaResult, decompose

__all__ = ["ENTRIES", "curator_rule", "pool_ag_pca"]


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


def curator_rule(who: str, *, trusted: bool) -> Callable[[GuaranteeContext], tuple[Guarantee, ...]]:
    """The guarantee of one party that adds a single Gaussian at the pooled level, multiplier max_s c(eps_s,
    delta_s) for every site (a trusted curator of the data, or a proxy that sees only the sums: ``trusted``)."""
    def rule(ctx: GuaranteeContext) -> tuple[Guarantee, ...]:
        n = ctx.scenario.n_sites
        stage = independent_stage("A", np.full(n, float(ctx.scenario.multipliers().max())), np.ones(n))
        return curator_guarantees([stage], **promises(ctx.scenario, (1.0,)), who=who, trusted=trusted)
    return rule


ENTRIES = (Algorithm(
    name="pool_ag", default=True, title="pooled AG", position=20, colour="#9467bd",
    description="pooled Analyze Gauss: a trusted curator holds all data and adds one symmetric Gaussian",
    communication_text="S D^2: every site gives its A_s to a trusted curator",
    communication=communication,
    run=lambda ctx: pool_ag_pca(ctx.problem, ctx.privacy, ctx.rng, keep_matrix=ctx.settings.keep_matrix),
    guarantees=curator_rule("Analyze Gauss on the pooled data at one trusted curator", trusted=True),
),)
