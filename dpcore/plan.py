"""Design and audit a scenario in one call: what ``python -m dpcore design`` and the dashboard show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .audit import AuditReport, audit_design, default_collusion
from .cape import NoiseDesign, design_closed_form, design_collusion_robust, design_general
from .scenario import Scenario
from .sensitivity import STATISTICS
from .validation import InputError, check_choice

__all__ = ["SOLVERS", "Plan", "plan_scenario"]

SOLVERS = ("general", "closed-form", "collusion-robust")


@dataclass(frozen=True)
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


def plan_scenario(
    scenario: Scenario,
    statistic: str = "mean",
    *,
    solver: str = "general",
    objective: str = "balanced",
    last: str | None = None,
    collusion: int | None = None,
    e_scale: float = 1.0,
    dim: int | None = None,
    sigma2: float | None = None,
) -> Plan:
    """tau_s from the scenario, the design by ``solver``, its audit with up to ``collusion`` colluders
    (default ceil(S/3) - 1) and the collusion-robust calibration for the same bound."""
    statistic = check_choice(statistic, "statistic", STATISTICS)
    solver = check_choice(solver, "solver", SOLVERS)
    n = scenario.n_sites
    collusion = default_collusion(n) if collusion is None else collusion
    valid = isinstance(collusion, (int, np.integer)) and not isinstance(collusion, bool)
    if not valid or not 0 <= collusion <= max(n - 1, 0):
        raise InputError(f"collusion must be an integer in 0..S-1 = {n - 1} (got {collusion!r})", "collusion")
    sens = scenario.sensitivities(statistic, dim=dim, sigma2=sigma2)
    tau = sens * scenario.multipliers()
    mu = scenario.weights()
    names = scenario.names
    if solver == "closed-form":
        index = None
        if last is not None:
            if last not in names:
                raise InputError(f"--last must name a site ({', '.join(names)}); got {last!r}", "last")
            index = names.index(last)
        design = design_closed_form(tau, mu, scenario.tau_c, last=index, names=names)
    elif solver == "general":
        design = design_general(tau, mu, scenario.tau_c, objective=objective, e_scale=e_scale, names=names)
    else:
        design = design_collusion_robust(tau, mu, int(collusion), scenario.tau_c, objective=objective, names=names)
    audit = audit_design(design, sens, scenario.eps, scenario.delta, collusion) if design.feasible else None
    robust = design if solver == "collusion-robust" else (
        design_collusion_robust(tau, mu, int(collusion), None, objective=objective, names=names) if n > 1 else None
    )
    warnings = tuple(scenario.caveats()) + design.notes + (audit.warnings if audit else ())
    return Plan(scenario, statistic, sens, design, audit, robust, int(collusion), warnings)
