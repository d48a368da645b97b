"""The distributed flows (docs/math/capeagn.md, Algorithm 3 of the journal paper): every site releases its M2 and
its projected M3 with CAPE noise (capeAGN) or with its own full noise (the conventional scheme); the aggregator
whitens with the top-K eigenpairs of sum_s mu_s M2_hat_s and runs the tensor power method on the aggregate."""

from __future__ import annotations

import numpy as np

from ...cape import NoiseDesign, scenario_budgets, solve_collusion_robust, solve_general, stage_taus
from ...validation import InputError
from ..algorithm import OtdAlgorithm, RunContext
from ..problem import Decomposition
from ..release import StageNoise, release_m2, release_m3
from ..whitening import whiten

__all__ = ["ALGORITHMS"]


def _feasible(design: NoiseDesign, stage: str) -> NoiseDesign:
    if not design.feasible:
        raise InputError(f"no CAPE noise design for the {stage} stage: {design.reason}", "scenario")
    return design


def _cape_stages(ctx: RunContext, tau2: np.ndarray, tau3: np.ndarray) -> tuple[StageNoise, StageNoise, str]:
    """Both stages' CAPE designs (collusion-robust when the settings say so) and the privacy statement."""
    scenario, a, c = ctx.scenario, ctx.settings.eps_split, ctx.settings.collusion
    budgets2, budgets3 = scenario_budgets(scenario, tau2), scenario_budgets(scenario, tau3)
    if c is None:
        stage2 = StageNoise("cape", _feasible(solve_general(budgets2), "M2"))
        stage3 = StageNoise("cape", _feasible(solve_general(budgets3), "M3"))
        return stage2, stage3, (
            f"each site's M2 release is (a eps_s, a delta_s)-DP and its M3 release ((1-a) eps_s, (1-a) "
            f"delta_s)-DP on its own, a = {a:g}: (eps_s, delta_s) in total ({ctx.relation}); tau_c at the "
            "DP floor of each stage; what colluding parties see jointly is covered by the audit")
    if c > scenario.n_sites - 1:
        raise InputError(f"collusion must be an integer in 0..S-1 = {scenario.n_sites - 1} (got {c!r})", "collusion")
    stage2 = StageNoise("cape", _feasible(solve_collusion_robust(budgets2, c), "M2"))
    stage3 = StageNoise("cape", _feasible(solve_collusion_robust(budgets3, c), "M3"))
    return stage2, stage3, (
        f"each site's M2 release is (a eps_s, a delta_s)-DP and its M3 release ((1-a) eps_s, "
        f"(1-a) delta_s)-DP, a = {a:g} ({ctx.relation}), also against the aggregator with up to "
        f"{c} colluding site(s): collusion-robust design in both stages")


def _distributed(ctx: RunContext, correlated: bool) -> Decomposition:
    problem, scenario, rng = ctx.problem, ctx.scenario, ctx.rng
    law = ctx.m3_law()
    sigma2 = problem.sigma2 if problem.kind == "mog" else None
    tau2, tau3 = stage_taus(scenario, problem.kind, ctx.settings.eps_split, dim=problem.dim, sigma2=sigma2)
    if correlated:
        stage2, stage3, privacy = _cape_stages(ctx, tau2, tau3)
    else:
        stage2, stage3 = StageNoise("independent", stds=tau2), StageNoise("independent", stds=tau3)
        privacy = f"each site adds its own full noise: (eps_s, delta_s)-DP per site ({ctx.relation})"
    mu = scenario.weights()
    m2_hat, _ = release_m2(problem.sites, mu, stage2, rng)
    wh = whiten(m2_hat, problem.k)
    m3_tilde, _ = release_m3(problem.sites, mu, wh.w, stage3, rng, path=ctx.path, law=law)
    return ctx.decomposition(wh, ctx.tpm(m3_tilde), privacy)


def _third_moment_numbers(dim: int, k: int, path: str) -> int:
    return k**3 if path == "projected" else dim**3


def cape_communication(n_sites: int, dim: int, k: int, path: str) -> int:
    """3 S D^2 + S D K + 2 S T + S K^3 with T = D^3 (dense) or K^3 (projected)."""
    return 3 * n_sites * dim * dim + n_sites * dim * k + 2 * n_sites * _third_moment_numbers(dim, k, path) \
        + n_sites * k**3


def conv_communication(n_sites: int, dim: int, k: int, path: str) -> int:
    """S D^2 + S D K + S K^3: the releases and the broadcast of W."""
    return n_sites * dim * dim + n_sites * dim * k + n_sites * k**3


ALGORITHMS = (
    OtdAlgorithm(
        name="cape", title="capeAGN", position=10, default=True, paper_order=1, colour="#d62728",
        collusion_robust=True,
        description="capeAGN: CAPE correlated noise on every site's M2 and M3 releases (Algorithm 3)",
        communication_text="3 S D^2 + S D K + 2 S T + S K^3: E2_s, F2_s, M2_hat_s, W to every site, E3_s and F3_s "
        "(T = D^3 dense, K^3 projected), M3_tilde_s",
        communication=cape_communication,
        run=lambda ctx: _distributed(ctx, correlated=True),
    ),
    OtdAlgorithm(
        name="conv", title="conv", position=40, default=True, paper_order=2, colour="#1f77b4",
        description="conventional: every site adds its full AGN noise, the aggregator averages (no correlated noise)",
        communication_text="S D^2 + S D K + S K^3: M2_hat_s, W to every site, M3_tilde_s",
        communication=conv_communication,
        run=lambda ctx: _distributed(ctx, correlated=False),
    ),
)
