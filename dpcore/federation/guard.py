"""What a party checks before it draws or releases anything, and the audit of what a round actually released
(docs/federated.md, "Sites protect themselves").

Every party recomputes the round's plan itself from the sites' signed budgets and the public settings
(:func:`dpcore.federation.plan_round` is deterministic), so nothing the aggregator claims about the design is
trusted. A site then checks its own promise in that plan (:func:`site_plan_problem`): the plan's values for it are
its own, its tau_s is the one its own N_s, eps_s and delta_s give, the plan covers at least the colluders it requires,
and every audited view of its own release keeps its (eps_s, delta_s) with the design's colluders (the promise's c
plus the drop-outs the round survives) in the round's noise variant. :func:`release_entry` is what its ledger
records for a release; :func:`dropout_audit` the audit of a round after drop-outs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..cape.audit import AuditReport
from ..cape.helper_free import variant_audit
from ..scenario import scenario_from_dict
from ..validation import InputError
from .accounts import LedgerEntry
from .plan import RoundPlan, RoundStage, SiteBudget, budget_digest

__all__ = ["design_matches", "dropout_audit", "release_entry", "site_plan_problem"]

_RTOL = 1e-9


def _own_tau(plan: RoundPlan, stage: RoundStage, budget: SiteBudget) -> float:
    """tau_s of this site alone: its stage sensitivity times the calibration multiplier of its own stage budget."""
    index = plan.names.index(budget.name)
    share = float(stage.eps[index]) / float(budget.site.eps)
    single = scenario_from_dict({"sites": [{"name": budget.name, "n": budget.site.n, "eps": budget.site.eps * share,
                                            "delta": budget.site.delta * share}],
                                 "neighbouring": plan.settings.neighbouring,
                                 "calibration": plan.settings.calibration})
    return float(stage.sensitivities[index] * single.multipliers()[0])


def site_plan_problem(plan: RoundPlan, budget: SiteBudget, *, min_collusion: int = 0,
                      max_dropouts: int | None = None) -> str | None:
    """Why site ``budget.name`` refuses ``plan`` (the plan it computed itself), naming the failed check, or None.
    ``min_collusion`` and ``max_dropouts`` are the site's own limits: the colluders it requires protection against
    and the drop-outs it tolerates (None: any the plan survives)."""
    name = budget.name
    if plan.refusal:
        return f"the plan is refused: {plan.refusal}"
    if name not in plan.names:
        return f"the plan has no site {name}"
    index = plan.names.index(name)
    if plan.digests[index] != budget_digest(budget):
        return "the plan was made for other values than this site's own (N_s, eps_s, delta_s, weight, D)"
    if plan.collusion < min_collusion:
        return (f"the plan protects against up to {plan.collusion} colluder(s); this site requires at least "
                f"{min_collusion}")
    if max_dropouts is not None and plan.settings.dropouts > max_dropouts:
        return (f"the plan survives {plan.settings.dropouts} drop-out(s); this site tolerates at most {max_dropouts} "
                "(each drop-out reveals that site's noise term to the aggregator)")
    for stage in plan.stages:
        design = stage.design
        own = _own_tau(plan, stage, budget)
        if not design.tau[index] >= own * (1 - _RTOL):
            return (f"stage {stage.stage}: the design's tau_s = {design.tau[index]:.6g} is below the {own:.6g} this "
                    f"site's own N_s, eps_s and delta_s need")
        if design.var_e[index] + design.var_g[index] < own**2 * (1 - _RTOL):
            return (f"stage {stage.stage}: against the aggregator its release would carry variance "
                    f"{design.var_e[index] + design.var_g[index]:.6g} < tau_s^2 = {own**2:.6g}")
        report = variant_audit(design, stage.sensitivities, stage.eps, stage.delta, plan.design_collusion,
                               variant=plan.settings.noise)
        failing = [r for r in report.rows if r.site == name and not r.ok]
        if failing:
            r = failing[0]
            who = f" with {', '.join(r.coalition)}" if r.coalition else ""
            return (f"stage {stage.stage}: the {r.view} view{who} leaves eps_eff = {r.eps_eff:.4g} > promised "
                    f"{r.eps:.4g} ({plan.settings.noise} variant, up to {plan.design_collusion} colluders or "
                    "drop-outs)")
    return None


def release_entry(plan: RoundPlan, stage: RoundStage, name: str, round_id: str) -> LedgerEntry:
    """What site ``name``'s ledger records for its release of ``stage`` (before the masked release is sent): the
    stage's promised (eps, delta) and the worst view its release and its seeds' shares can expose, mu = Delta_s /
    sigma_eff there. Its release is unmasked only if it is in the signed survivor set, and then its own noise seed is
    never rebuilt; the other sites' terms revealed (the dropped sites, at most ``dropouts``) are what colluders would
    know. So the worst view is the design's audit with c + dropouts colluders (plan.design_collusion) in the round's
    noise variant, which holds every drop-out set the site accepts besides c colluders (docs/federated.md, "Ledger")."""
    index = plan.names.index(name)
    report = variant_audit(stage.design, stage.sensitivities, stage.eps, stage.delta, plan.design_collusion,
                           variant=plan.settings.noise)
    rows = [r for r in report.rows if r.site == name]
    worst = min(rows, key=lambda r: r.sigma_eff if r.exact else float(r.sigma_bound))
    sigma = worst.sigma_eff if worst.exact else float(worst.sigma_bound)
    sens = float(stage.sensitivities[index])
    mu = math.inf if sigma == 0 else sens / sigma
    return LedgerEntry(round=round_id, algorithm=plan.settings.algorithm, stage=stage.stage,
                       eps=float(stage.eps[index]), delta=float(stage.delta[index]), view=worst.view, mu=mu)


def dropout_audit(plan: RoundPlan, stage: RoundStage, dropped: Sequence[str]) -> AuditReport:
    """The audit of what the survivors of ``stage`` released when the sites ``dropped`` vanished after the noise was
    set up and their terms were recovered: every dropped site in every coalition of the aggregator, up to the
    promise's c colluders besides them (helper-free: with the secure sum W known to the aggregator)."""
    unknown = [n for n in dropped if n not in plan.names]
    if unknown:
        raise InputError(f"no such site in the plan: {', '.join(unknown)}")
    indices = [plan.names.index(n) for n in dropped]
    return variant_audit(stage.design, stage.sensitivities, stage.eps, stage.delta,
                         plan.collusion, variant=plan.settings.noise, dropped=indices)


def design_matches(a: np.ndarray, b: np.ndarray) -> bool:
    """Two arrays of a design agree (shape, and values to a relative 1e-9)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all(np.isfinite(a))) and bool(
        np.allclose(a, b, rtol=_RTOL, atol=_RTOL * float(np.max(np.abs(b), initial=0.0))))
