"""The distributed flows (docs/math/capeagn.md, Algorithm 3 of the journal paper): every site releases its M2 and
its projected M3 with CAPE noise (capeAGN) or with its own full noise (the conventional scheme); the aggregator
whitens with the top-K eigenpairs of sum_s mu_s M2_hat_s and runs the tensor power method on the aggregate."""

from __future__ import annotations

import numpy as np

from ...cape import conventional_std, dp_floor, stage_sensitivities, stage_taus
from ...cape.guarantee import Guarantee, cape_guarantees, coalition_size, conventional_guarantees, promises
from ...family import Algorithm, GuaranteeContext, PlannerScheme, RunContext, Sizes
from ...scenario import Scenario
from ...tensor.release import STAGES, StageNoise, cape_stage_noise, release_m2, release_m3
from ...tensor.whitening import whiten
from ..algorithm import decomposition, m3_law, tpm
from ..problem import Decomposition

__all__ = ["ENTRIES", "planner_taus"]


def _distributed(ctx: RunContext, correlated: bool) -> Decomposition:
    problem, scenario, rng = ctx.problem, ctx.scenario, ctx.rng
    law = m3_law(ctx)
    sigma2 = problem.sigma2 if problem.kind == "mog" else None
    tau2, tau3 = stage_taus(scenario, problem.kind, ctx.settings.eps_split, dim=problem.dim, sigma2=sigma2)
    if correlated:
        stage2, stage3, _ = cape_stage_noise(scenario, tau2, tau3, split=ctx.settings.eps_split,
                                             collusion=ctx.settings.collusion, relation="")
    else:
        stage2, stage3 = StageNoise("independent", stds=tau2), StageNoise("independent", stds=tau3)
    mu = scenario.weights()
    m2_hat, _ = release_m2(problem.sites, mu, stage2, rng)
    wh = whiten(m2_hat, problem.k)
    m3_tilde, _ = release_m3(problem.sites, mu, wh.w, stage3, rng, path=ctx.path, law=law)
    return decomposition(ctx, wh, tpm(ctx, m3_tilde))


def _distributed_guarantees(ctx: GuaranteeContext, correlated: bool) -> tuple[Guarantee, ...]:
    """capeAGN's two stages composed exactly in every view of the audit, or each site's own noise in both stages."""
    scenario, problem, settings = ctx.scenario, ctx.problem, ctx.settings
    a = settings.eps_split
    sigma2 = problem.sigma2 if problem.kind == "mog" else None
    sens = stage_sensitivities(scenario, problem.kind, dim=problem.dim, sigma2=sigma2)
    tau2, tau3 = stage_taus(scenario, problem.kind, a, dim=problem.dim, sigma2=sigma2)
    if not correlated:
        return conventional_guarantees((tau2, tau3), sens, STAGES, **promises(scenario, (a, 1.0 - a)))
    stage2, stage3, _ = cape_stage_noise(scenario, tau2, tau3, split=a, collusion=settings.collusion, relation="")
    return cape_guarantees((stage2.design, stage3.design), sens, STAGES,
                           collusion=coalition_size(scenario.n_sites, settings.collusion),
                           **promises(scenario, (a, 1.0 - a)))


def planner_taus(scenario: Scenario, settings) -> tuple[np.ndarray, np.ndarray]:
    """(tau_2, tau_3) per site of the M2 and the M3 stage at ``scenario`` for the planner's data settings (model,
    D, the (scaled) sigma^2 of MOG, the budget split)."""
    sigma2 = settings.scaled_sigma2 if settings.model == "mog" else None
    return stage_taus(scenario, settings.model, settings.eps_split, dim=settings.dim, sigma2=sigma2)


def _planner_noise(scenario: Scenario, settings, correlated: bool) -> np.ndarray:
    """(sigma_2, sigma_3), the aggregate std of the M2 and the M3 stage in closed form: capeAGN's DP floor
    max_s mu_s tau_s of each stage, or the conventional sqrt(sum_s mu_s^2 tau_s^2) (the planner's noise)."""
    mu = scenario.weights()
    law = dp_floor if correlated else conventional_std
    return np.array([law(mu, tau) for tau in planner_taus(scenario, settings)])


def _third_moment_numbers(dim: int, k: int, path: str) -> int:
    return k**3 if path == "projected" else dim**3


def cape_communication(sizes: Sizes) -> int:
    """3 S D^2 + S D K + 2 S T + S K^3 with T = D^3 (dense) or K^3 (projected), plus D K on the projected path
    (W to the helper, which projects its noise on it)."""
    n_sites, dim, k, path = sizes.n_sites, sizes.dim, sizes.k, sizes.path
    helper_w = dim * k if path == "projected" else 0
    return 3 * n_sites * dim * dim + n_sites * dim * k + helper_w + 2 * n_sites * _third_moment_numbers(dim, k, path) \
        + n_sites * k**3


def conv_communication(sizes: Sizes) -> int:
    """S D^2 + S D K + S K^3: the releases and the broadcast of W."""
    n_sites, dim, k = sizes.n_sites, sizes.dim, sizes.k
    return n_sites * dim * dim + n_sites * dim * k + n_sites * k**3


ENTRIES = (
    Algorithm(
        name="cape", title="capeAGN", position=10, default=True, paper_order=1, colour="#d62728",
        collusion_robust=True,
        description="capeAGN: CAPE correlated noise on every site's M2 and M3 releases (Algorithm 3)",
        communication_text="3 S D^2 + S D K + 2 S T + S K^3: E2_s, F2_s, M2_hat_s, W to every site, E3_s and F3_s "
        "(T = D^3 dense, K^3 projected), M3_tilde_s; projected: + D K (W to the helper)",
        communication=cape_communication,
        run=lambda ctx: _distributed(ctx, correlated=True),
        guarantees=lambda ctx: _distributed_guarantees(ctx, correlated=True),
        planner=PlannerScheme(noise=lambda scenario, settings: _planner_noise(scenario, settings, True)),
    ),
    Algorithm(
        name="conv", title="conv", position=40, default=True, paper_order=2, colour="#1f77b4",
        description="conventional: every site adds its full AGN noise, the aggregator averages (no correlated noise)",
        communication_text="S D^2 + S D K + S K^3: M2_hat_s, W to every site, M3_tilde_s",
        communication=conv_communication,
        run=lambda ctx: _distributed(ctx, correlated=False),
        guarantees=lambda ctx: _distributed_guarantees(ctx, correlated=False),
        planner=PlannerScheme(noise=lambda scenario, settings: _planner_noise(scenario, settings, False),
                              words="the conventional scheme"),
    ),
)
