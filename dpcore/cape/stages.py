"""The two stages of capeAGN as CAPE designs: each stage's statistic, budget share, tau_s, design and audit
(docs/math/capeagn.md). Stage 1 releases the second moment M2 with the share ``split`` of every site's (eps_s,
delta_s); stage 2 the third moment M3 with the rest. capeLDA (docs/math/lda.md) runs the same two stages on the
LDA moments ("lda": their sensitivities need the Dirichlet concentration alpha_0)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..privacy.sensitivity import Statistic, lda_sensitivity_unchecked
from ..scenario import Scenario
from ..validation import InputError, check_choice, check_split
from .audit import AuditReport
from .design import NoiseDesign, Objective
from .plan import plan_scenario

__all__ = ["AGN_MODELS", "STAGE_MODELS", "StagePlan", "agn_stage_designs", "agn_stage_plans", "agn_stage_taus",
           "stage_scenario", "stage_sensitivities", "stage_taus"]

AGN_MODELS: dict[str, tuple[Statistic, Statistic]] = {"mog": ("mog-m2", "mog-m3"), "stm": ("stm-m2", "stm-m3")}
"""The statistics (M2, M3) each latent-variable model of capeAGN releases."""
STAGE_MODELS: dict[str, tuple[str, str]] = {**AGN_MODELS, "lda": ("lda-m2", "lda-m3")}
"""Every model with two CAPE stages: capeAGN's and capeLDA's (LDA moments, docs/math/lda.md)."""


def agn_stage_taus(
    scenario: Scenario, model: str, split: float, *, dim: int, sigma2: float | None = None,
    alpha0: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """tau_s of the two capeAGN stages: M2 with budget (split eps_s, split delta_s), M3 with the rest.

    ``model`` is "mog", "stm" or "lda" (:data:`STAGE_MODELS`); ``sigma2`` is the MOG component variance (M3 only),
    ``alpha0`` the LDA Dirichlet concentration. Checks its arguments; :func:`stage_taus` is the formula for validated
    ones."""
    model = check_choice(model, "model", tuple(STAGE_MODELS))
    split = check_split(split, "the budget split")
    if model == "mog" and sigma2 is None:
        raise InputError("the MOG model needs the component variance sigma^2", "sigma2")
    if model == "lda" and (alpha0 is None or not alpha0 > 0):
        raise InputError(f"the LDA moments need a Dirichlet concentration alpha_0 > 0 (got {alpha0!r})", "alpha0")
    return stage_taus(scenario, model, split, dim=dim, sigma2=sigma2, alpha0=alpha0)


def stage_sensitivities(scenario: Scenario, model: str, *, dim: int, sigma2: float | None = None,
                        alpha0: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Delta_s of the M2 and the M3 release at every site (N_s documents or samples) for a model of
    :data:`STAGE_MODELS` (validated: sigma2 given for MOG, alpha0 for LDA)."""
    stat2, stat3 = STAGE_MODELS[model]
    if model == "lda":
        return tuple(np.array([lda_sensitivity_unchecked(stat, int(n), float(alpha0)) for n in scenario.sizes])
                     for stat in (stat2, stat3))
    return (scenario.sensitivities(stat2, dim=dim, sigma2=sigma2),
            scenario.sensitivities(stat3, dim=dim, sigma2=sigma2))


def stage_taus(scenario: Scenario, model: str, split: float, *, dim: int, sigma2: float | None = None,
               alpha0: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`agn_stage_taus` for a model of :data:`STAGE_MODELS`, 0 < split < 1, sigma2 given for MOG and alpha0
    for LDA: tau_s = Delta_s c(share eps_s, share delta_s) per stage."""
    sens2, sens3 = stage_sensitivities(scenario, model, dim=dim, sigma2=sigma2, alpha0=alpha0)
    return (sens2 * scenario.multipliers(split, split),
            sens3 * scenario.multipliers(1.0 - split, 1.0 - split))


def stage_scenario(scenario: Scenario, share: float) -> Scenario:
    """The scenario of one stage: every site's (eps_s, delta_s) scaled by ``share`` in (0, 1), tau_c at the DP floor
    (the scenario's tau_c is for one statistic). Still valid: share eps_s > 0 and 0 < share delta_s < 1."""
    sites = tuple(replace(site, eps=site.eps * share, delta=site.delta * share) for site in scenario.sites)
    return replace(scenario, sites=sites, tau_c=None)


@dataclass(frozen=True, kw_only=True)
class StagePlan:
    """One capeAGN stage: its statistic, budget (the stage's eps_s, delta_s), design, audit and the plan's
    warnings."""

    statistic: str
    sensitivities: np.ndarray
    eps: np.ndarray
    delta: np.ndarray
    design: NoiseDesign
    audit: AuditReport | None
    warnings: tuple[str, ...] = ()


def agn_stage_plans(
    scenario: Scenario, model: str, split: float, *, dim: int, sigma2: float | None = None,
    solver: str = "general", objective: Objective = "balanced", collusion: int | None = None,
    alpha0: float | None = None,
) -> tuple[StagePlan, StagePlan]:
    """Design and audit both stages of capeAGN (or capeLDA, ``model`` "lda" with ``alpha0``):
    :func:`~dpcore.cape.plan_scenario` with ``solver`` (a name of :data:`~dpcore.cape.SOLVERS`) on the stage scenarios
    (:func:`stage_scenario`), M2 at (split eps_s, split delta_s) and M3 at ((1 - split) eps_s, (1 - split) delta_s),
    each with tau_c at its DP floor and its audit at the stage's budget with up to ``collusion`` colluders (default
    ceil(S/3) - 1). The one route for every two-stage design: the Protocol page, the federated round
    (:mod:`dpcore.federation`), capeLDA (:mod:`dpcore.lda`)."""
    agn_stage_taus(scenario, model, split, dim=dim, sigma2=sigma2, alpha0=alpha0)  # checks model, split, sigma2, alpha0
    sensitivities = stage_sensitivities(scenario, model, dim=dim, sigma2=sigma2, alpha0=alpha0)
    plans = []
    for statistic, sens, share in zip(STAGE_MODELS[model], sensitivities, (float(split), 1.0 - float(split)),
                                      strict=True):
        stage = stage_scenario(scenario, share)
        plan = plan_scenario(stage, statistic, solver=solver, objective=objective, collusion=collusion,
                             sensitivities=sens)
        plans.append(StagePlan(statistic=statistic, sensitivities=plan.sensitivities, eps=stage.eps,
                               delta=stage.delta, design=plan.design, audit=plan.audit, warnings=plan.warnings))
    return plans[0], plans[1]


def agn_stage_designs(
    scenario: Scenario, model: str, split: float, *, dim: int, sigma2: float | None = None,
    objective: Objective = "balanced", alpha0: float | None = None,
) -> tuple[NoiseDesign, NoiseDesign]:
    """General-solver designs of both capeAGN (or capeLDA) stages (:func:`agn_stage_plans`), each with tau_c at its
    DP floor."""
    stage1, stage2 = agn_stage_plans(scenario, model, split, dim=dim, sigma2=sigma2, objective=objective,
                                     alpha0=alpha0)
    return stage1.design, stage2.design
