"""capeLDA and the conventional scheme (docs/math/lda.md, "capeLDA"): every site releases the LDA moments of its own
documents - M2_s, then M3_s(W, W, W) after the aggregator broadcasts W - with CAPE's correlated noise (both stages
designed by :func:`dpcore.cape.stage_taus` and the general solver, as capeAGN) or with its own full noise; the
aggregator combines sum_s mu_s (release_s - f_s), whitens, decomposes and recovers topics and alpha."""

from __future__ import annotations

import numpy as np

from ...cape import conventional_std, dp_floor, stage_sensitivities, stage_taus
from ...cape.guarantee import Guarantee, cape_guarantees, coalition_size, conventional_guarantees, promises
from ...family import Algorithm, GuaranteeContext, PlannerScheme, RunContext
from ...scenario import Scenario
from ...tensor.release import STAGES, StageNoise, cape_stage_noise
from ..algorithm import two_stage
from ..problem import LdaResult

__all__ = ["ENTRIES"]


def _distributed(ctx: RunContext, correlated: bool) -> LdaResult:
    problem, scenario = ctx.problem, ctx.scenario
    tau2, tau3 = stage_taus(scenario, "lda", ctx.settings.eps_split, dim=problem.dim, alpha0=problem.alpha0)
    if correlated:
        stage2, stage3, _ = cape_stage_noise(scenario, tau2, tau3, split=ctx.settings.eps_split,
                                             collusion=ctx.settings.collusion, relation="")
    else:
        stage2, stage3 = StageNoise("independent", stds=tau2), StageNoise("independent", stds=tau3)
    return two_stage(ctx, problem.sites, scenario.weights(), stage2, stage3)


def _distributed_guarantees(ctx: GuaranteeContext, correlated: bool) -> tuple[Guarantee, ...]:
    """capeLDA's two stages composed exactly in every view (the aggregator's view can exceed the promise: the
    collusion-robust design keeps it), or each site's own noise in both stages."""
    scenario, problem, settings = ctx.scenario, ctx.problem, ctx.settings
    a = settings.eps_split
    sens = stage_sensitivities(scenario, "lda", dim=problem.dim, alpha0=problem.alpha0)
    tau2, tau3 = stage_taus(scenario, "lda", a, dim=problem.dim, alpha0=problem.alpha0)
    if not correlated:
        return conventional_guarantees((tau2, tau3), sens, STAGES, **promises(scenario, (a, 1.0 - a)))
    stage2, stage3, _ = cape_stage_noise(scenario, tau2, tau3, split=a, collusion=settings.collusion, relation="")
    return cape_guarantees((stage2.design, stage3.design), sens, STAGES,
                           collusion=coalition_size(scenario.n_sites, settings.collusion),
                           **promises(scenario, (a, 1.0 - a)))


def _planner_noise(scenario: Scenario, settings, correlated: bool) -> np.ndarray:
    """(sigma_2, sigma_3) of capeLDA (the DP floor of each stage) or of the conventional scheme, in closed form, for
    the planner's data settings (D, alpha_0, the budget split)."""
    tau2, tau3 = stage_taus(scenario, "lda", settings.eps_split, dim=settings.dim, alpha0=settings.alpha0)
    law = dp_floor if correlated else conventional_std
    return np.array([law(scenario.weights(), tau2), law(scenario.weights(), tau3)])


ENTRIES = (
    Algorithm(
        name="cape", title="capeLDA", position=10, default=True, colour="#d62728", guarantee="dp",
        collusion_robust=True, distributed=True,
        description="capeLDA: every site releases its LDA moments M2_s and M3_s(W, W, W) with CAPE correlated noise; "
        "the aggregate carries only the noise pooled data would need",
        run=lambda ctx: _distributed(ctx, correlated=True),
        guarantees=lambda ctx: _distributed_guarantees(ctx, correlated=True),
        planner=PlannerScheme(noise=lambda scenario, settings: _planner_noise(scenario, settings, True)),
    ),
    Algorithm(
        name="conv", title="conventional", position=20, default=True, colour="#1f77b4", guarantee="dp",
        distributed=True,
        description="conventional: every site adds its own full Gaussian noise to its LDA moments, the aggregator "
        "averages (no correlated noise)",
        run=lambda ctx: _distributed(ctx, correlated=False),
        guarantees=lambda ctx: _distributed_guarantees(ctx, correlated=False),
        planner=PlannerScheme(noise=lambda scenario, settings: _planner_noise(scenario, settings, False),
                              words="the conventional scheme"),
    ),
)
