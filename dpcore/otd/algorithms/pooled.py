"""The single-party algorithms (docs/math/capeagn.md, baselines): one trusted party holds the pooled data (AGN and
AVN of appendix E of the preprint, the noisy tensor power method of paper 001, the non-private reference), or one
site works alone with its own budget (local)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...cape import AGN_MODELS
from ...privacy.calibration import multiplier
from ...privacy.sensitivity import sensitivity_unchecked
from ...validation import InputError
from ..algorithm import OtdAlgorithm, RunContext
from ..moments import Site, pool_sites
from ..power import noisy_tensor_power_method
from ..problem import Decomposition
from ..release import StageNoise, release_m2, release_m3
from ..whitening import Whitening, whiten

__all__ = ["ALGORITHMS"]


@dataclass(frozen=True, kw_only=True)
class _Party:
    """The data one party holds, the budget it spends, in words, and its M2 and M3 sensitivities."""

    site: Site
    eps: float
    delta: float
    who: str
    delta2: float
    delta3: float


def _party(ctx: RunContext, alone: bool) -> _Party:
    """One site alone (the largest unless the settings choose) with its own budget, or the pooled data with the
    strictest site budget."""
    problem, scenario = ctx.problem, ctx.scenario
    if alone:
        index = int(np.argmax(problem.sizes)) if ctx.settings.local_site is None else int(ctx.settings.local_site)
        if not 0 <= index < problem.n_sites:
            raise InputError(f"local site must be in 0..{problem.n_sites - 1} (got {index})", "local_site")
        site, who = problem.sites[index], f"site {scenario.names[index]}'s data only"
        eps, delta = float(scenario.eps[index]), float(scenario.delta[index])
    else:
        site, who = pool_sites(problem.sites), "pooled data at one trusted party, the strictest site budget"
        eps, delta = float(scenario.eps.min()), float(scenario.delta.min())
    m2_stat, m3_stat = AGN_MODELS[problem.kind]
    extra = {"dim": problem.dim, "sigma2": problem.sigma2} if problem.kind == "mog" else {}
    delta2 = sensitivity_unchecked(m2_stat, site.n, scenario.neighbouring, **extra)
    delta3 = sensitivity_unchecked(m3_stat, site.n, scenario.neighbouring, **extra)
    return _Party(site=site, eps=eps, delta=delta, who=who, delta2=delta2, delta3=delta3)


def _noisy_whitening(ctx: RunContext, party: _Party, delta_stage1: float) -> Whitening:
    """Stage 1 by Analyze Gauss on the party's M2 with budget (a eps, delta_stage1), then the whitening."""
    a = ctx.settings.eps_split
    tau2 = party.delta2 * multiplier(a * party.eps, delta_stage1, ctx.scenario.calibration)
    m2_hat, _ = release_m2([party.site], np.ones(1), StageNoise("independent", stds=np.array([tau2])), ctx.rng)
    return whiten(m2_hat, ctx.problem.k)


def _gaussian(ctx: RunContext, alone: bool) -> Decomposition:
    """AGN (pooled) and local: Analyze Gauss on M2 and on the projected M3, budget split a : (1 - a)."""
    law = ctx.m3_law()
    party = _party(ctx, alone)
    a = ctx.settings.eps_split
    wh = _noisy_whitening(ctx, party, a * party.delta)
    tau3 = party.delta3 * multiplier((1 - a) * party.eps, (1 - a) * party.delta, ctx.scenario.calibration)
    m3_tilde, _ = release_m3([party.site], np.ones(1), wh.w, StageNoise("independent", stds=np.array([tau3])),
                             ctx.rng, path=ctx.path, law=law)
    privacy = (f"{party.who}: (eps, delta) = ({party.eps:g}, {party.delta:g}) split a = {a:g} between M2 and M3 "
               f"({ctx.relation})")
    return ctx.decomposition(wh, ctx.tpm(m3_tilde), privacy)


def _avn(ctx: RunContext) -> Decomposition:
    """AVN: Analyze Gauss on M2 with the whole delta, vector noise with density ~ exp(-beta ||b||) on M3."""
    if ctx.path != "dense":
        raise InputError("AVN needs the dense path (its vector noise has no projected sampler); D = "
                         f"{ctx.problem.dim} runs on the projected path. Use a smaller D or drop avn.", "algorithms")
    ctx.m3_law("published")
    party = _party(ctx, alone=False)
    a = ctx.settings.eps_split
    wh = _noisy_whitening(ctx, party, party.delta)  # AVN's M3 is pure DP (appendix E.2)
    beta = (1 - a) * party.eps / party.delta3
    m3_tilde, _ = release_m3([party.site], np.ones(1), wh.w, StageNoise("avn", beta=beta), ctx.rng, path="dense",
                             law="published")
    privacy = (f"{party.who}: W is (a eps, delta)-DP by Analyze Gauss, M3 pure ((1-a) eps)-DP by vector noise "
               f"with beta = (1-a) eps / Delta3 = {beta:.3g}; (eps, delta) = ({party.eps:g}, {party.delta:g}) in "
               f"total ({ctx.relation})")
    return ctx.decomposition(wh, ctx.tpm(m3_tilde), privacy)


def _noisy_tpm(ctx: RunContext) -> Decomposition:
    """Paper 001, Alg. 3: Analyze Gauss whitening, then the power method with noise at every iteration."""
    law = ctx.m3_law()
    party = _party(ctx, alone=False)
    a = ctx.settings.eps_split
    wh = _noisy_whitening(ctx, party, a * party.delta)
    m3_tilde, _ = release_m3([party.site], np.ones(1), wh.w, StageNoise("none"), ctx.rng, path=ctx.path, law=law)
    spectral = float(wh.eigenvalues[-1]) ** -1.5  # ||W||_2^3
    power, budget = noisy_tensor_power_method(
        m3_tilde, ctx.problem.k, ctx.rng, eps=(1 - a) * party.eps, delta=(1 - a) * party.delta,
        sensitivity_value=party.delta3 * spectral, calibration=ctx.scenario.calibration,
        n_restarts=ctx.settings.n_restarts, n_iter=ctx.settings.n_iter)
    privacy = (f"{party.who}: W is (a eps, a delta)-DP by Analyze Gauss; the power method is "
               f"((1-a) eps, (1-a) delta)-DP by advanced composition over {budget.describe()} ({ctx.relation})")
    return ctx.decomposition(wh, power, privacy)


def _nonpriv(ctx: RunContext) -> Decomposition:
    """The non-private tensor power method on the pooled data."""
    law = ctx.m3_law()
    party = _party(ctx, alone=False)
    m2_hat, _ = release_m2([party.site], np.ones(1), StageNoise("none"), ctx.rng)
    wh = whiten(m2_hat, ctx.problem.k, noisy=False)
    m3_tilde, _ = release_m3([party.site], np.ones(1), wh.w, StageNoise("none"), ctx.rng, path=ctx.path, law=law)
    return ctx.decomposition(wh, ctx.tpm(m3_tilde), "no privacy")


def pooled_communication(n_sites: int, dim: int, k: int, path: str) -> int:
    """S (D^2 + D^3): every site hands its M2_s and M3_s to the trusted party."""
    return n_sites * (dim * dim + dim**3)


def local_communication(n_sites: int, dim: int, k: int, path: str) -> int:
    """0: one site works alone."""
    return 0


_POOLED_TEXT = "S (D^2 + D^3): every site hands its M2_s and M3_s to one trusted party"

ALGORITHMS = (
    OtdAlgorithm(
        name="agn", title="AGN (pooled)", position=20, colour="#9467bd",
        description="AGN on pooled data: one trusted party adds symmetric Gaussian noise to M2 and M3 (appendix E.1)",
        communication_text=_POOLED_TEXT, communication=pooled_communication,
        run=lambda ctx: _gaussian(ctx, alone=False),
    ),
    OtdAlgorithm(
        name="avn", title="AVN (pooled)", position=30, colour="#17becf", dense_only=True,
        description="AVN on pooled data: Gaussian M2, vector noise with density ~ exp(-beta ||b||) on M3 "
        "(appendix E.2)",
        communication_text=_POOLED_TEXT, communication=pooled_communication, run=_avn,
    ),
    OtdAlgorithm(
        name="local", title="local", position=50, default=True, paper_order=3, colour="#8c564b",
        description="AGN on one site's data only (the largest site unless chosen)",
        communication_text="0: one site works alone", communication=local_communication,
        run=lambda ctx: _gaussian(ctx, alone=True),
    ),
    OtdAlgorithm(
        name="nonpriv", title="non-private", position=60, default=True, paper_order=4, colour="#2ca02c",
        private=False,
        description="non-private tensor power method on pooled data",
        communication_text=_POOLED_TEXT, communication=pooled_communication, run=_nonpriv,
    ),
    OtdAlgorithm(
        name="noisy_tpm", title="noisy TPM", position=80, colour="#bcbd22",
        description="noisy tensor power method of paper 001 (Alg. 3) on pooled data, noise at every iteration",
        communication_text=_POOLED_TEXT, communication=pooled_communication, run=_noisy_tpm,
    ),
)
