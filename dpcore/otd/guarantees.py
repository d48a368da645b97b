"""The privacy guarantee of every capeAGN algorithm's result, per view (:mod:`dpcore.cape.guarantee`;
docs/math/audit.md, "Guarantees of a run"): computed from the run's scenario, settings and data sizes, never written
by hand. capeAGN's two stages are composed exactly in every view; the one-party baselines give the published output's
guarantee and say that their curator sees the data."""

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
    independent_stage,
    no_data,
    no_privacy,
)
from ..privacy.calibration import exact_eps, multiplier
from ..scenario import Scenario
from ..tensor.power import noisy_tpm_budget
from ..tensor.release import cape_stage_noise
from ..textio import site_label
from .algorithms.pooled import local_site_index
from .problem import OtdProblem, OtdSettings

__all__ = ["STAGES", "comparison_guarantees", "otd_guarantees"]

STAGES = ("M2", "M3")


def _coalition_size(scenario: Scenario, settings: OtdSettings) -> int:
    """c of the coalition view: the collusion-robust design's c, else ceil(S/3) - 1."""
    n = scenario.n_sites
    return min(int(settings.collusion), n - 1) if settings.collusion is not None else default_collusion(n)


def _pooled_stages(scenario: Scenario, split: float, who_eps: np.ndarray, who_delta: np.ndarray) -> list:
    """A curator's M2 and M3 releases, noise multiplier max_s c(share eps_s, share delta_s) over the sites it
    covers, seen by every site."""
    cal = scenario.calibration
    out = []
    for name, share in zip(STAGES, (split, 1.0 - split), strict=True):
        c = max(multiplier(share * e, share * d, cal) for e, d in zip(who_eps, who_delta, strict=True))
        out.append(independent_stage(name, np.full(scenario.n_sites, c), np.ones(scenario.n_sites)))
    return out


def otd_guarantees(name: str, scenario: Scenario, problem: OtdProblem, settings: OtdSettings,
                   ) -> tuple[Guarantee, ...]:  # long: one branch per kind of algorithm, read top to bottom
    """The guarantees of algorithm ``name`` (a key of :data:`dpcore.otd.ALGORITHMS`) run on ``problem`` with the
    budgets of ``scenario`` and ``settings`` (its budget split and collusion bound)."""
    a = settings.eps_split
    shares = (a, 1.0 - a)
    eps, delta, names, cal = scenario.eps, scenario.delta, scenario.names, scenario.calibration
    sigma2 = problem.sigma2 if problem.kind == "mog" else None
    common = {"eps": eps, "delta": delta, "names": names, "calibration": cal, "shares": shares}
    if name in ("cape", "conv"):
        sens = stage_sensitivities(scenario, problem.kind, dim=problem.dim, sigma2=sigma2)
        tau2, tau3 = stage_taus(scenario, problem.kind, a, dim=problem.dim, sigma2=sigma2)
        if name == "conv":
            return conventional_guarantees((tau2, tau3), sens, STAGES, **common)
        stage2, stage3, _ = cape_stage_noise(scenario, tau2, tau3, split=a, collusion=settings.collusion,
                                             relation="")
        return cape_guarantees((stage2.design, stage3.design), sens, STAGES,
                               collusion=_coalition_size(scenario, settings), **common)
    if name == "local":
        s = local_site_index(problem, scenario, a) if settings.local_site is None else int(settings.local_site)
        stages = [calibrated_stage(n, [share * eps[s]], [share * delta[s]], cal) for n, share in zip(STAGES, shares,
                                                                                                     strict=True)]
        return curator_guarantees(stages, eps=eps[s:s + 1], delta=delta[s:s + 1], names=[names[s]], calibration=cal,
                                  shares=shares, who=f"{site_label(names[s])} alone, on its own data", trusted=False)
    if name == "agn":
        return curator_guarantees(_pooled_stages(scenario, a, eps, delta), **common,
                                  who="Analyze Gauss on the pooled data at one trusted party")
    if name == "noisy_tpm":
        stage2 = _pooled_stages(scenario, a, eps, delta)[0]
        mus = [noisy_tpm_budget((1 - a) * e, (1 - a) * d, problem.k, settings.n_restarts, settings.n_iter, cal,
                                1.0).mu for e, d in zip(eps, delta, strict=True)]
        power = independent_stage("power method", np.full(len(names), 1.0 / max(mus)), np.ones(len(names)))
        return curator_guarantees([stage2, power], **common,
                                  who="the noisy tensor power method on the pooled data at one trusted party")
    if name == "avn":
        # M2 by Analyze Gauss at (a eps_s, delta_s) (Gaussian), M3 pure ((1 - a) eps_s)-DP: basic composition.
        worst = int(np.argmin(eps))
        c = max(multiplier(a * e, d, cal) for e, d in zip(eps, delta, strict=True))
        m2_eps = exact_eps(c, 1.0, float(delta[worst]))
        valid = cal == "analytic" or a * float(eps.max()) < 1.0
        return basic_guarantees((m2_eps, (1 - a) * float(eps[worst])), eps=float(eps[worst]),
                                delta=float(delta[worst]), site=names[worst], valid=valid, trusted=True,
                                who="AVN on the pooled data at one trusted party (M3 pure DP by vector noise)")
    if name == "random":
        return no_data()
    return no_privacy()


def comparison_guarantees(result) -> dict[str, tuple[Guarantee, ...]]:
    """The guarantees of every algorithm of an :class:`~dpcore.otd.OtdComparison`."""
    return {name: otd_guarantees(name, result.scenario, result.problem, result.settings)
            for name in result.algorithms}
