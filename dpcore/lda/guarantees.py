"""The privacy guarantee of every LDA algorithm's result, per view (:mod:`dpcore.cape.guarantee`; docs/math/audit.md,
"Guarantees of a run"): capeLDA's two stages composed exactly in every view (the aggregator's view can exceed the
promise: the collusion-robust design keeps it), the conventional scheme, one site alone, the trusted curator, paper
004's configurations (1 and 2ptr certified by their calibration; 2, 3 and 4 not DP: local sensitivity)."""

from __future__ import annotations

import numpy as np

from ..cape import default_collusion, stage_sensitivities, stage_taus
from ..cape.guarantee import (
    Guarantee,
    basic_guarantees,
    calibrated_stage,
    cape_guarantees,
    conventional_guarantees,
    curator_guarantees,
    no_data,
    no_privacy,
    not_dp,
)
from ..scenario import Scenario
from ..tensor.release import cape_stage_noise
from ..textio import site_label
from .algorithms.configurations import configuration_of
from .budget import LOCAL_GUARANTEE, edge_budgets
from .problem import LdaProblem, LdaSettings

__all__ = ["STAGES", "curve_guarantees", "lda_guarantees"]

STAGES = ("M2", "M3")


def lda_guarantees(name: str, scenario: Scenario, problem: LdaProblem, settings: LdaSettings,
                   ) -> tuple[Guarantee, ...]:  # long: one branch per kind of algorithm, read top to bottom
    """The guarantees of algorithm ``name`` (a key of :data:`dpcore.lda.ALGORITHMS`) on ``problem`` (its sites' document
    counts) with the budgets of ``scenario`` (eps, delta and calibration) and ``settings`` (split, collusion)."""
    scenario = scenario.with_sizes(problem.sizes)
    a = settings.eps_split
    shares = (a, 1.0 - a)
    eps, delta, names, cal = scenario.eps, scenario.delta, scenario.names, scenario.calibration
    common = {"eps": eps, "delta": delta, "names": names, "calibration": cal, "shares": shares}
    if name in ("cape", "conv"):
        sens = stage_sensitivities(scenario, "lda", dim=problem.dim, alpha0=problem.alpha0)
        tau2, tau3 = stage_taus(scenario, "lda", a, dim=problem.dim, alpha0=problem.alpha0)
        if name == "conv":
            return conventional_guarantees((tau2, tau3), sens, STAGES, **common)
        stage2, stage3, _ = cape_stage_noise(scenario, tau2, tau3, split=a, collusion=settings.collusion,
                                             relation="")
        n = scenario.n_sites
        c = min(int(settings.collusion), n - 1) if settings.collusion is not None else default_collusion(n)
        return cape_guarantees((stage2.design, stage3.design), sens, STAGES, collusion=c, **common)
    if name == "local":
        s = int(np.argmax(problem.sizes)) if settings.local_site is None else int(settings.local_site)
        stages = [calibrated_stage(n, [share * eps[s]], [share * delta[s]], cal)
                  for n, share in zip(STAGES, shares, strict=True)]
        return curator_guarantees(stages, eps=eps[s:s + 1], delta=delta[s:s + 1], names=[names[s]], calibration=cal,
                                  shares=shares, who=f"{site_label(names[s])} alone, on its own documents",
                                  trusted=False)
    strict_eps, strict_delta = float(eps.min()), float(delta.min())
    if name == "pooled":
        stages = [calibrated_stage(n, [share * strict_eps], [share * strict_delta], cal)
                  for n, share in zip(STAGES, shares, strict=True)]
        return curator_guarantees(stages, eps=strict_eps, delta=strict_delta, names=["every site"], calibration=cal,
                                  shares=shares, who="Gaussian moments of every document at one trusted curator, the "
                                  "strictest site budget")
    if name in ("1", "2", "2ptr", "3", "4"):
        number, privacy = configuration_of(name)
        if privacy == "local":
            if number != 1:
                return not_dp(strict_eps, strict_delta, f"paper 004's configuration {number}: {LOCAL_GUARANTEE}")
            edges = edge_budgets(1, strict_eps, strict_delta)
            stages = [calibrated_stage(e, [be], [bd], cal) for e, (be, bd) in edges.items()]
            return curator_guarantees(stages, eps=strict_eps, delta=strict_delta, names=["every site"],
                                      calibration=cal, shares=tuple(be / strict_eps for be, _ in edges.values()),
                                      who="paper 004's configuration 1 at one trusted curator (Gaussian noise at "
                                      "global sensitivities on e3, e4, e8)")
        edges = edge_budgets(number, strict_eps, strict_delta, None, privacy)
        valid = cal == "analytic" or max(be for be, _ in edges.values()) < 1.0
        return basic_guarantees([be for be, _ in edges.values()], eps=strict_eps, delta=strict_delta,
                                site="every site", valid=valid, trusted=True,
                                who="configuration 2 by propose-test-release at one trusted curator (a Laplace test, "
                                "then Gaussian noise at the proposed bound)")
    if name == "random":
        return no_data()
    return no_privacy()


def curve_guarantees(curve, eps: float, settings: LdaSettings | None = None,
                     scenario: Scenario | None = None) -> dict[str, tuple[Guarantee, ...]]:
    """The guarantees of every algorithm of an :class:`~dpcore.lda.curves.LdaCurve` at one eps of its grid (every
    site's eps set to it; delta, calibration and settings as the curve was run)."""
    base = curve.scenario if scenario is None else scenario
    settings = curve.settings if settings is None else settings
    at = base.with_sites(eps=float(eps))
    return {name: lda_guarantees(name, at, curve.problem, settings) for name in curve.algorithms}
