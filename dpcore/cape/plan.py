"""Design and audit a scenario in one call: what ``python -m dpcore design`` and the dashboard show (the designs:
docs/math/cape.md; the audit: docs/math/audit.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..scenario import Scenario
from ..validation import InputError, shown
from .audit import AuditReport, audit_design, default_collusion
from .design import NoiseDesign, Objective, check_e_scale, check_objective, scenario_budgets
from .noise_designs import solver as solver_entry
from .solver import DesignRequest
from .solvers.robust import solve_collusion_robust

__all__ = ["Plan", "plan_scenario"]


@dataclass(frozen=True, kw_only=True)
class Plan:
    """A scenario's noise design for one statistic, its audit, and the collusion-robust alternative."""

    scenario: Scenario
    statistic: str
    sensitivities: np.ndarray
    design: NoiseDesign
    audit: AuditReport | None
    robust: NoiseDesign | None
    collusion: int
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        out = self.design.to_dict()
        out["calibration"] = self.scenario.calibration
        out["neighbouring"] = self.scenario.neighbouring
        out["statistic"] = self.statistic
        for row, s, delta_s in zip(out["sites"], self.scenario.sites, self.sensitivities, strict=True):
            row.update({"n": s.n, "eps": s.eps, "delta": s.delta, "sensitivity": float(delta_s)})
        out["audit"] = self.audit.to_records() if self.audit else []
        out["collusion"] = self.collusion
        out["robust"] = None if self.robust is None else {
            "collusion": self.robust.collusion, "feasible": self.robust.feasible, "reason": self.robust.reason,
            "tau_c": self.robust.tau_c, "gain": self.robust.gain if self.robust.feasible else None,
            "e_scale": self.robust.e_scale,
        }
        out["warnings"] = list(self.warnings)
        return out


def _sensitivities(values: object, n_sites: int) -> np.ndarray:
    """Delta_s given by the caller: one finite number above 0 per site."""
    try:
        sens = np.asarray(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        sens = np.full(1, np.nan)
    if sens.shape != (n_sites,) or not np.all(np.isfinite(sens)) or np.any(sens <= 0):
        raise InputError(f"sensitivities must be {n_sites} finite numbers above 0, one per site (got "
                         f"{shown(values)})", "sensitivities")
    return sens


def plan_scenario(
    scenario: Scenario,
    statistic: str = "mean",
    *,
    solver: str = "general",
    objective: Objective = "balanced",
    last: str | None = None,
    collusion: int | None = None,
    e_scale: float = 1.0,
    dim: int | None = None,
    sigma2: float | None = None,
    sensitivities: np.ndarray | None = None,
) -> Plan:
    """tau_s from the scenario, the design by ``solver`` (a name of the noise-design table
    :data:`~dpcore.cape.noise_designs.SOLVERS`), its
    audit with up to ``collusion`` colluders (default ceil(S/3) - 1) and the collusion-robust calibration for the same
    bound (the design itself when the solver is collusion-robust).

    The scenario is valid by construction; the statistic is checked where it enters
    (:meth:`Scenario.sensitivities`), the settings (solver, objective, collusion, and the solver's own options:
    ``last``, ``e_scale``) here, once. Below,
    the design kernels and the audit trust their inputs. ``sensitivities`` (Delta_s per site, computed by the
    caller for a statistic the scenario does not know, such as the LDA moments of :func:`stage_sensitivities`)
    replaces the scenario's."""
    n = scenario.n_sites
    sens = (scenario.sensitivities(statistic, dim=dim, sigma2=sigma2) if sensitivities is None
            else _sensitivities(sensitivities, n))
    entry = solver_entry(solver)
    objective = check_objective(objective)
    collusion = default_collusion(n) if collusion is None else collusion
    valid = isinstance(collusion, (int, np.integer)) and not isinstance(collusion, bool)
    if not valid or not 0 <= collusion <= max(n - 1, 0):
        raise InputError(f"collusion must be an integer in 0..S-1 = {n - 1} (got {collusion!r})", "collusion")
    collusion = int(collusion)
    budgets = scenario_budgets(scenario, sens * scenario.multipliers())
    names = scenario.names
    if "last" in entry.options and last is not None and last not in names:
        raise InputError(f"--last must name a site ({', '.join(names)}); got {last!r}", "last")
    e_scale = check_e_scale(e_scale) if "e_scale" in entry.options else 1.0
    request = DesignRequest(tau_c=scenario.tau_c, objective=objective, e_scale=e_scale, collusion=collusion,
                            last=n - 1 if last is None or last not in names else names.index(last))
    design = entry.solve(budgets, request)
    audit = audit_design(design, sens, scenario.eps, scenario.delta, collusion) if design.feasible else None
    robust = design if entry.collusion_robust else (
        solve_collusion_robust(budgets, collusion, None, objective=objective) if n > 1 else None
    )
    warnings = tuple(scenario.caveats()) + design.notes + (audit.warnings if audit else ())
    return Plan(scenario=scenario, statistic=statistic, sensitivities=sens, design=design,
                audit=audit, robust=robust, collusion=collusion, warnings=warnings)
