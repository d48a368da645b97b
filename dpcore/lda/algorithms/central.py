"""The single-party LDA baselines (docs/math/lda.md, "capeLDA"): one trusted curator holding every document (pooled
Gaussian moments with the strictest site budget), one site alone with its own budget (local), and the non-private
method of moments. Each runs the same two-stage flow as capeLDA on one party's documents."""

from __future__ import annotations

import numpy as np

from ...cape.guarantee import Guarantee, calibrated_stage, curator_guarantees
from ...family import Algorithm, GuaranteeContext, RunContext
from ...privacy.calibration import multiplier
from ...privacy.sensitivity import lda_sensitivity_unchecked
from ...tensor.release import STAGES, StageNoise
from ...textio import site_label
from ...validation import InputError
from ..algorithm import two_stage
from ..problem import LdaResult

__all__ = ["ENTRIES"]


def _gaussian(ctx: RunContext, alone: bool) -> LdaResult:
    """Gaussian noise on the party's M2 (budget a eps, a delta) and projected M3 (the rest) at the global Delta2,
    Delta3 of its N documents."""
    problem, scenario = ctx.problem, ctx.scenario
    if alone:
        index = int(np.argmax(problem.sizes)) if ctx.settings.local_site is None else int(ctx.settings.local_site)
        if not 0 <= index < problem.n_sites:
            raise InputError(f"local site must be in 0..{problem.n_sites - 1} (got {index})", "local_site")
        site = problem.sites[index]
        eps, delta = float(scenario.eps[index]), float(scenario.delta[index])
    else:
        site = problem.pooled
        eps, delta = float(scenario.eps.min()), float(scenario.delta.min())
    a = ctx.settings.eps_split
    tau2 = lda_sensitivity_unchecked("lda-m2", site.n, problem.alpha0) * multiplier(a * eps, a * delta,
                                                                                    scenario.calibration)
    tau3 = lda_sensitivity_unchecked("lda-m3", site.n, problem.alpha0) * multiplier((1 - a) * eps, (1 - a) * delta,
                                                                                    scenario.calibration)
    return two_stage(ctx, [site], np.ones(1), StageNoise("independent", stds=np.array([tau2])),
                     StageNoise("independent", stds=np.array([tau3])))


def _nonpriv(ctx: RunContext) -> LdaResult:
    return two_stage(ctx, [ctx.problem.pooled], np.ones(1), StageNoise("none"), StageNoise("none"))


def _curator_guarantees(ctx: GuaranteeContext, alone: bool) -> tuple[Guarantee, ...]:
    """One site alone with its own budget (local), or every document at one trusted curator with the strictest site
    budget (pooled): each stage calibrated to its share."""
    scenario, problem, settings = ctx.scenario, ctx.problem, ctx.settings
    a, cal = settings.eps_split, scenario.calibration
    shares = (a, 1.0 - a)
    if alone:
        s = int(np.argmax(problem.sizes)) if settings.local_site is None else int(settings.local_site)
        eps, delta, names = scenario.eps[s:s + 1], scenario.delta[s:s + 1], [scenario.names[s]]
        who, trusted = f"{site_label(scenario.names[s])} alone, on its own documents", False
    else:
        eps, delta, names = float(scenario.eps.min()), float(scenario.delta.min()), ["every site"]
        who, trusted = ("Gaussian moments of every document at one trusted curator, the strictest site budget",
                        True)
    one_eps, one_delta = float(np.min(eps)), float(np.min(delta))
    stages = [calibrated_stage(n, [share * one_eps], [share * one_delta], cal)
              for n, share in zip(STAGES, shares, strict=True)]
    return curator_guarantees(stages, eps=eps, delta=delta, names=names, calibration=cal, shares=shares, who=who,
                              trusted=trusted)


ENTRIES = (
    Algorithm(
        name="pooled", title="pooled (trusted curator)", position=30, colour="#9467bd", guarantee="dp",
        description="one trusted curator holds every document and adds Gaussian noise to M2 and the projected M3 "
        "(the strictest site budget): what capeLDA matches without pooling",
        run=lambda ctx: _gaussian(ctx, alone=False), guarantees=lambda ctx: _curator_guarantees(ctx, alone=False),
    ),
    Algorithm(
        name="local", title="local", position=40, default=True, colour="#8c564b", guarantee="dp", distributed=True,
        description="one site alone (the largest unless chosen) with its own budget and documents",
        run=lambda ctx: _gaussian(ctx, alone=True), guarantees=lambda ctx: _curator_guarantees(ctx, alone=True),
    ),
    Algorithm(
        name="nonpriv", title="non-private", position=50, default=True, colour="#2ca02c", guarantee="none",
        private=False, description="the non-private method of moments on every document",
        run=_nonpriv,
    ),
)
