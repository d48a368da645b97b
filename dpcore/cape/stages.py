"""The two stages of capeAGN as CAPE designs: each stage's statistic, budget share, tau_s, design and audit
(docs/math/capeagn.md). Stage 1 releases the second moment M2 with the share ``split`` of every site's (eps_s,
delta_s); stage 2 the third moment M3 with the rest."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..privacy.sensitivity import Statistic
from ..scenario import Scenario
from ..validation import InputError, check_choice
from .audit import AuditReport
from .design import NoiseDesign, Objective
from .plan import Solver, plan_scenario

__all__ = ["AGN_MODELS", "StagePlan", "agn_stage_designs", "agn_stage_plans", "agn_stage_taus", "stage_scenario",
           "stage_taus"]

AGN_MODELS: dict[str, tuple[Statistic, Statistic]] = {"mog": ("mog-m2", "mog-m3"), "stm": ("stm-m2", "stm-m3")}
"""The statistics (M2, M3) each latent-variable model releases."""


def agn_stage_taus(
    scenario: Scenario, model: str, split: float, *, dim: int, sigma2: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """tau_s of the two capeAGN stages: M2 with budget (split eps_s, split delta_s), M3 with the rest.

    ``model`` is "mog" or "stm" (:data:`AGN_MODELS`); ``sigma2`` is the MOG component variance (M3 only). Checks
    its arguments; :func:`stage_taus` is the formula for validated ones."""
    model = check_choice(model, "model", tuple(AGN_MODELS))
    split = float(split)
    if not 0.0 < split < 1.0:
        raise InputError(f"the budget split must be in (0, 1) (got {split!r})", "split")
    if model == "mog" and sigma2 is None:
        raise InputError("the MOG model needs the component variance sigma^2", "sigma2")
    return stage_taus(scenario, model, split, dim=dim, sigma2=sigma2)


def stage_taus(scenario: Scenario, model: str, split: float, *, dim: int, sigma2: float | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`agn_stage_taus` for a model of :data:`AGN_MODELS`, 0 < split < 1 and sigma2 given for MOG."""
    stat2, stat3 = AGN_MODELS[model]
    tau2 = scenario.sensitivities(stat2, dim=dim, sigma2=sigma2) * scenario.multipliers(split, split)
    tau3 = scenario.sensitivities(stat3, dim=dim, sigma2=sigma2) * scenario.multipliers(1.0 - split, 1.0 - split)
    return tau2, tau3


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
    solver: Solver = "general", objective: Objective = "balanced", collusion: int | None = None,
) -> tuple[StagePlan, StagePlan]:
    """Design and audit both capeAGN stages: :func:`~dpcore.cape.plan_scenario` with ``solver`` (any of
    :data:`~dpcore.cape.SOLVERS`) on the stage scenarios (:func:`stage_scenario`), M2 at (split eps_s,
    split delta_s) and M3 at ((1 - split) eps_s, (1 - split) delta_s), each with tau_c at its DP floor and its
    audit at the stage's budget with up to ``collusion`` colluders (default ceil(S/3) - 1). The one route for
    every capeAGN stage design: the Protocol page, the federated round (:mod:`dpcore.federation`)."""
    agn_stage_taus(scenario, model, split, dim=dim, sigma2=sigma2)  # checks model, split and sigma2
    plans = []
    for statistic, share in zip(AGN_MODELS[model], (float(split), 1.0 - float(split)), strict=True):
        stage = stage_scenario(scenario, share)
        plan = plan_scenario(stage, statistic, solver=solver, objective=objective, collusion=collusion, dim=dim,
                             sigma2=sigma2)
        plans.append(StagePlan(statistic=statistic, sensitivities=plan.sensitivities, eps=stage.eps,
                               delta=stage.delta, design=plan.design, audit=plan.audit, warnings=plan.warnings))
    return plans[0], plans[1]


def agn_stage_designs(
    scenario: Scenario, model: str, split: float, *, dim: int, sigma2: float | None = None,
    objective: Objective = "balanced",
) -> tuple[NoiseDesign, NoiseDesign]:
    """General-solver designs of both capeAGN stages (:func:`agn_stage_plans`), each with tau_c at its DP
    floor."""
    stage1, stage2 = agn_stage_plans(scenario, model, split, dim=dim, sigma2=sigma2, objective=objective)
    return stage1.design, stage2.design
