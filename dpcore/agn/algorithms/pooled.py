"""The single-party algorithms (docs/math/capeagn.md, baselines): one trusted party holds the pooled data (AGN and
AVN of appendix E of the preprint, the noisy tensor power method of paper 001, the non-private reference), or one
site works alone with its own budget (local)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...cape import AGN_MODELS, stage_taus
from ...cape.guarantee import (
    Guarantee,
    basic_guarantees,
    calibrated_stage,
    curator_guarantees,
    independent_stage,
    promises,
)
from ...family import Algorithm, GuaranteeContext, RunContext, Sizes
from ...privacy.calibration import exact_eps, multiplier
from ...privacy.sensitivity import sensitivity_unchecked
from ...scenario import Scenario
from ...tensor.moments import Site, pool_sites
from ...tensor.power import noisy_tensor_power_method, noisy_tpm_budget
from ...tensor.release import STAGES, StageNoise, release_m2, release_m3
from ...tensor.whitening import Whitening, whiten
from ...textio import site_label
from ...validation import InputError
from ..algorithm import decomposition, m3_law, tpm
from ..problem import Decomposition, OtdProblem

__all__ = ["ENTRIES", "local_site_index"]


@dataclass(frozen=True, kw_only=True)
class _Party:
    """The data one party holds, the site budgets it must honour (one site's, or every site's for pooled data), in
    words, and its M2 and M3 sensitivities."""

    site: Site
    eps: np.ndarray
    delta: np.ndarray
    who: str
    delta2: float
    delta3: float
    calibration: str

    def multiplier(self, eps_share: float, delta_share: float) -> float:
        """max_s c(eps_share eps_s, delta_share delta_s): noise of this multiplier (times the sensitivity) gives
        every covered site its own (eps_share eps_s, delta_share delta_s) - the same rule as PCA's pooled AG
        (docs/math/capeagn.md, "Baselines")."""
        return max(multiplier(eps_share * e, delta_share * d, self.calibration)
                   for e, d in zip(self.eps, self.delta, strict=True))


def local_site_index(problem: OtdProblem, scenario: Scenario, split: float) -> int:
    """The site ``local`` uses by default: the one whose own releases are least noisy, the smallest M3-stage tau_s
    (then the smallest M2-stage tau_s, then the first) - with equal budgets, the largest site. The same rule as
    PCA's local (smallest tau_s)."""
    sigma2 = problem.sigma2 if problem.kind == "mog" else None
    tau2, tau3 = stage_taus(scenario, problem.kind, split, dim=problem.dim, sigma2=sigma2)
    return int(np.lexsort((np.arange(tau3.size), tau2, tau3))[0])


def _party(ctx: RunContext, alone: bool) -> _Party:
    """One site alone (the least noisy unless the settings choose) with its own budget, or the pooled data with
    every site's budget."""
    problem, scenario = ctx.problem, ctx.scenario
    if alone:
        index = (local_site_index(problem, scenario, ctx.settings.eps_split) if ctx.settings.local_site is None
                 else int(ctx.settings.local_site))
        if not 0 <= index < problem.n_sites:
            raise InputError(f"local site must be in 0..{problem.n_sites - 1} (got {index})", "local_site")
        site, who = problem.sites[index], f"{site_label(scenario.names[index])}'s data only"
        eps, delta = scenario.eps[index : index + 1], scenario.delta[index : index + 1]
    else:
        site, who = pool_sites(problem.sites), "pooled data at one trusted party, every site's budget honoured"
        eps, delta = scenario.eps, scenario.delta
    m2_stat, m3_stat = AGN_MODELS[problem.kind]
    extra = {"dim": problem.dim, "sigma2": problem.sigma2} if problem.kind == "mog" else {}
    delta2 = sensitivity_unchecked(m2_stat, site.n, scenario.neighbouring, **extra)
    delta3 = sensitivity_unchecked(m3_stat, site.n, scenario.neighbouring, **extra)
    return _Party(site=site, eps=np.asarray(eps, float), delta=np.asarray(delta, float), who=who, delta2=delta2,
                  delta3=delta3, calibration=scenario.calibration)


def _noisy_whitening(ctx: RunContext, party: _Party, delta_share: float) -> Whitening:
    """Stage 1 by Analyze Gauss on the party's M2 with the budget shares (a, delta_share), then the whitening."""
    tau2 = party.delta2 * party.multiplier(ctx.settings.eps_split, delta_share)
    m2_hat, _ = release_m2([party.site], np.ones(1), StageNoise("independent", stds=np.array([tau2])), ctx.rng)
    return whiten(m2_hat, ctx.problem.k)


def _gaussian(ctx: RunContext, alone: bool) -> Decomposition:
    """AGN (pooled) and local: Analyze Gauss on M2 and on the projected M3, budget split a : (1 - a)."""
    law = m3_law(ctx)
    party = _party(ctx, alone)
    a = ctx.settings.eps_split
    wh = _noisy_whitening(ctx, party, a)
    tau3 = party.delta3 * party.multiplier(1 - a, 1 - a)
    m3_tilde, _ = release_m3([party.site], np.ones(1), wh.w, StageNoise("independent", stds=np.array([tau3])),
                             ctx.rng, path=ctx.path, law=law)
    return decomposition(ctx, wh, tpm(ctx, m3_tilde))


def _avn(ctx: RunContext) -> Decomposition:
    """AVN: Analyze Gauss on M2 with the whole delta, vector noise with density ~ exp(-beta ||b||) on M3."""
    if ctx.path != "dense":
        raise InputError("AVN needs the dense path (its vector noise has no projected sampler); D = "
                         f"{ctx.problem.dim} runs on the projected path. Use a smaller D or drop avn.", "algorithms")
    m3_law(ctx, "published")
    party = _party(ctx, alone=False)
    a = ctx.settings.eps_split
    wh = _noisy_whitening(ctx, party, 1.0)  # AVN's M3 is pure DP (appendix E.2): all of delta for M2
    beta = (1 - a) * float(party.eps.min()) / party.delta3  # pure DP: the smallest eps_s covers every site
    m3_tilde, _ = release_m3([party.site], np.ones(1), wh.w, StageNoise("avn", beta=beta), ctx.rng, path="dense",
                             law="published")
    return decomposition(ctx, wh, tpm(ctx, m3_tilde))


def _noisy_tpm(ctx: RunContext) -> Decomposition:
    """Paper 001, Alg. 3: Analyze Gauss whitening, then the power method with noise at every iteration; for pooled
    data the strictest site's composed budget (the largest per-release noise) covers every site."""
    law = m3_law(ctx)
    party = _party(ctx, alone=False)
    a = ctx.settings.eps_split
    wh = _noisy_whitening(ctx, party, a)
    m3_tilde, _ = release_m3([party.site], np.ones(1), wh.w, StageNoise("none"), ctx.rng, path=ctx.path, law=law)
    spectral = float(wh.eigenvalues[-1]) ** -1.5  # ||W||_2^3
    strictest = max(range(party.eps.size), key=lambda s: noisy_tpm_budget(
        (1 - a) * party.eps[s], (1 - a) * party.delta[s], ctx.problem.k, ctx.settings.n_restarts,
        ctx.settings.n_iter, party.calibration, 1.0).sigma)
    power, _ = noisy_tensor_power_method(
        m3_tilde, ctx.problem.k, ctx.rng, eps=(1 - a) * float(party.eps[strictest]),
        delta=(1 - a) * float(party.delta[strictest]), sensitivity_value=party.delta3 * spectral,
        calibration=party.calibration, n_restarts=ctx.settings.n_restarts, n_iter=ctx.settings.n_iter)
    return decomposition(ctx, wh, power)


def _nonpriv(ctx: RunContext) -> Decomposition:
    """The non-private tensor power method on the pooled data."""
    law = m3_law(ctx)
    party = _party(ctx, alone=False)
    m2_hat, _ = release_m2([party.site], np.ones(1), StageNoise("none"), ctx.rng)
    wh = whiten(m2_hat, ctx.problem.k, noisy=False)
    m3_tilde, _ = release_m3([party.site], np.ones(1), wh.w, StageNoise("none"), ctx.rng, path=ctx.path, law=law)
    return decomposition(ctx, wh, tpm(ctx, m3_tilde))


def _pooled_stages(scenario: Scenario, split: float) -> list:
    """A curator's M2 and M3 releases, noise multiplier max_s c(share eps_s, share delta_s) over every site, seen by
    every site."""
    out = []
    for name, share in zip(STAGES, (split, 1.0 - split), strict=True):
        c = max(multiplier(share * e, share * d, scenario.calibration)
                for e, d in zip(scenario.eps, scenario.delta, strict=True))
        out.append(independent_stage(name, np.full(scenario.n_sites, c), np.ones(scenario.n_sites)))
    return out


def _local_guarantees(ctx: GuaranteeContext) -> tuple[Guarantee, ...]:
    """One site alone, each stage calibrated to its share of that site's own budget."""
    scenario, settings = ctx.scenario, ctx.settings
    a = settings.eps_split
    shares = (a, 1.0 - a)
    eps, delta, names, cal = scenario.eps, scenario.delta, scenario.names, scenario.calibration
    s = local_site_index(ctx.problem, scenario, a) if settings.local_site is None else int(settings.local_site)
    stages = [calibrated_stage(n, [share * eps[s]], [share * delta[s]], cal) for n, share in zip(STAGES, shares,
                                                                                                 strict=True)]
    return curator_guarantees(stages, eps=eps[s:s + 1], delta=delta[s:s + 1], names=[names[s]], calibration=cal,
                              shares=shares, who=f"{site_label(names[s])} alone, on its own data", trusted=False)


def _agn_guarantees(ctx: GuaranteeContext) -> tuple[Guarantee, ...]:
    a = ctx.settings.eps_split
    return curator_guarantees(_pooled_stages(ctx.scenario, a), **promises(ctx.scenario, (a, 1.0 - a)),
                              who="Analyze Gauss on the pooled data at one trusted party")


def _noisy_tpm_guarantees(ctx: GuaranteeContext) -> tuple[Guarantee, ...]:
    """Analyze Gauss on M2, then the power method's Gaussian releases (their composed multiplier mu), the strictest
    site's budget."""
    scenario, settings = ctx.scenario, ctx.settings
    a, names = settings.eps_split, scenario.names
    mus = [noisy_tpm_budget((1 - a) * e, (1 - a) * d, ctx.problem.k, settings.n_restarts, settings.n_iter,
                            scenario.calibration, 1.0).mu for e, d in zip(scenario.eps, scenario.delta, strict=True)]
    power = independent_stage("power method", np.full(len(names), 1.0 / max(mus)), np.ones(len(names)))
    return curator_guarantees([_pooled_stages(scenario, a)[0], power], **promises(scenario, (a, 1.0 - a)),
                              who="the noisy tensor power method on the pooled data at one trusted party")


def _avn_guarantees(ctx: GuaranteeContext) -> tuple[Guarantee, ...]:
    """M2 by Analyze Gauss at (a eps_s, delta_s) (Gaussian), M3 pure ((1 - a) eps_s)-DP: basic composition."""
    scenario, a = ctx.scenario, ctx.settings.eps_split
    eps, delta, cal = scenario.eps, scenario.delta, scenario.calibration
    worst = int(np.argmin(eps))
    c = max(multiplier(a * e, d, cal) for e, d in zip(eps, delta, strict=True))
    m2_eps = exact_eps(c, 1.0, float(delta[worst]))
    valid = cal == "analytic" or a * float(eps.max()) < 1.0
    return basic_guarantees((m2_eps, (1 - a) * float(eps[worst])), eps=float(eps[worst]), delta=float(delta[worst]),
                            site=scenario.names[worst], valid=valid, trusted=True,
                            who="AVN on the pooled data at one trusted party (M3 pure DP by vector noise)")


def pooled_communication(sizes: Sizes) -> int:
    """S (D^2 + D^3): every site hands its M2_s and M3_s to the trusted party."""
    return sizes.n_sites * (sizes.dim * sizes.dim + sizes.dim**3)


def local_communication(sizes: Sizes) -> int:
    """0: one site works alone."""
    return 0


_POOLED_TEXT = "S (D^2 + D^3): every site hands its M2_s and M3_s to one trusted party"

ENTRIES = (
    Algorithm(
        name="agn", title="AGN (pooled)", position=20, colour="#9467bd",
        description="AGN on pooled data: one trusted party adds symmetric Gaussian noise to M2 and M3 (appendix E.1)",
        communication_text=_POOLED_TEXT, communication=pooled_communication,
        run=lambda ctx: _gaussian(ctx, alone=False), guarantees=_agn_guarantees,
    ),
    Algorithm(
        name="avn", title="AVN (pooled)", position=30, colour="#17becf", dense_only=True,
        description="AVN on pooled data: Gaussian M2, vector noise with density ~ exp(-beta ||b||) on M3 "
        "(appendix E.2)",
        communication_text=_POOLED_TEXT, communication=pooled_communication, run=_avn, guarantees=_avn_guarantees,
    ),
    Algorithm(
        name="local", title="local", position=50, default=True, paper_order=3, colour="#8c564b",
        description="AGN on one site's data only (the least noisy site, the largest for equal budgets, unless chosen)",
        communication_text="0: one site works alone", communication=local_communication,
        run=lambda ctx: _gaussian(ctx, alone=True), guarantees=_local_guarantees,
    ),
    Algorithm(
        name="nonpriv", title="non-private", position=60, default=True, paper_order=4, colour="#2ca02c",
        private=False, guarantee="none",
        description="non-private tensor power method on pooled data",
        communication_text=_POOLED_TEXT, communication=pooled_communication, run=_nonpriv,
    ),
    Algorithm(
        name="noisy_tpm", title="noisy TPM", position=80, colour="#bcbd22",
        description="noisy tensor power method of paper 001 (Alg. 3) on pooled data, noise at every iteration",
        communication_text=_POOLED_TEXT, communication=pooled_communication, run=_noisy_tpm,
        guarantees=_noisy_tpm_guarantees,
    ),
)
