"""The conventional scheme: each site sends A_s + G_s with G_s ~ N(0, tau_s^2) per unique entry; the aggregator
averages with the weights mu_s (docs/math/capepca.md)."""

from __future__ import annotations

import numpy as np

from ...cape import conventional_std
from ...cape.guarantee import Guarantee, conventional_guarantees, promises
from ...family import Algorithm, GuaranteeContext, PlannerScheme, Sizes
from ...scenario import Scenario
from ..algorithm import STAGE
from ..problem import PcaPrivacy, PcaProblem, check_pair
from ..result import PcaResult, decompose

__all__ = ["ENTRIES", "conv_pca", "conventional_release", "own_noise_guarantees", "planner_noise"]


def conventional_release(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, site: int) -> np.ndarray:
    """A_s + G_s of one site (unique entries): D(D+1)/2 standard normals, scaled by tau_s. Drawn site by site, in
    order, these are the same numbers as one (S, D(D+1)/2) draw (numpy fills it row by row). Scaled in place when
    the draw is writable; a read-only draw (a sweep's replayed normals) is left as it is."""
    z = rng.standard_normal(problem.site_moments.shape[1])
    out = z if z.flags.writeable else np.empty_like(z)
    np.multiply(z, privacy.tau[site], out=out)
    out += problem.site_moments[site]
    return out


def communication(sizes: Sizes) -> int:
    """S D^2: every site sends its noisy A_s."""
    return sizes.n_sites * sizes.dim * sizes.dim


def conv_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
             keep_matrix: bool = False) -> PcaResult:
    """Conventional scheme: site releases A_s + G_s with std tau_s, aggregator sum_s mu_s (A_s + G_s)."""
    check_pair(problem, privacy)
    estimate = np.zeros(problem.site_moments.shape[1])
    for s in range(problem.n_sites):  # one site's release at a time: memory O(D^2) whatever S
        estimate += privacy.weights[s] * conventional_release(problem, privacy, rng, s)
    return decompose("conv", problem, estimate, communication(Sizes(n_sites=problem.n_sites, dim=problem.dim)),
                     privacy.conventional_std, keep_matrix)


def own_noise_guarantees(ctx: GuaranteeContext) -> tuple[Guarantee, ...]:
    """Each site's own noise tau_s on its release (the conventional scheme and DPdisPCA): every view sees each site
    behind tau_s."""
    return conventional_guarantees((ctx.privacy.tau,), (ctx.scenario.sensitivities("pca"),), STAGE,
                                   **promises(ctx.scenario, (1.0,)))


def planner_noise(scenario: Scenario, settings: object = None) -> np.ndarray:
    """The std of the conventional scheme's aggregate noise per unique entry, sqrt(sum_s mu_s^2 tau_s^2), in closed
    form (docs/math/capepca.md; the planner's noise of the conventional scheme)."""
    return np.array([conventional_std(scenario.weights(), scenario.taus("pca"))])


ENTRIES = (Algorithm(
    name="conv", default=True, title="conv", position=50, paper_order=3, colour="#1f77b4",
    description="conventional: every site adds its full noise tau_s, the aggregator averages",
    communication_text="S D^2: site -> aggregator A_s + G_s",
    communication=communication,
    run=lambda ctx: conv_pca(ctx.problem, ctx.privacy, ctx.rng, keep_matrix=ctx.settings.keep_matrix),
    guarantees=own_noise_guarantees,
    planner=PlannerScheme(noise=planner_noise, words="the conventional scheme"),
),)
