"""Noise designs in words: why a design is (in)feasible, which constraint binds, what to change.

Used by the dashboard's Noise design page; everything here is plain computation on
:class:`~dpcore.cape.design.NoiseDesign` and :class:`~dpcore.cape.audit.AuditReport`, so it is tested directly.

* :func:`closed_form_tau_c_range`, :func:`closed_form_orders` - where the published closed form is feasible
  (defined with the closed form, :mod:`dpcore.cape.solvers.closed_form`);
* :func:`explain_design` - sentences for a design: feasibility, the binding constraints, the DP floor.
* :func:`robust_gain_curve` - the gain the collusion-robust calibration keeps for c = 0, 1, ...
* :func:`audit_summary` - the worst site per view of an audit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validation import InputError
from .audit import VIEWS, AuditReport
from .design import NoiseDesign, SiteBudgets, check_objective, check_tau_weights
from .noise_designs import SOLVERS
from .solvers.closed_form import ClosedFormOrder, closed_form_orders, closed_form_tau_c_range
from .solvers.robust import solve_collusion_robust

__all__ = [
    "ClosedFormOrder",
    "RobustPoint",
    "ViewSummary",
    "audit_summary",
    "closed_form_orders",
    "closed_form_tau_c_range",
    "explain_design",
    "floor_site",
    "robust_gain_curve",
    "tight_constraints",
]

_REL = 1e-7


def tight_constraints(design: NoiseDesign, rtol: float = 1e-6) -> list[str]:
    """The privacy constraints a feasible design meets with equality (no slack): they bind."""
    if not design.feasible:
        return []
    t2 = design.tau**2
    out = []
    for i, name in enumerate(design.names):
        if abs(design.var_e[i] + design.var_g[i] - t2[i]) <= rtol * t2[i]:
            out.append(f"site {name}: e + g = tau^2 (the aggregator, who knows f, sees exactly tau_s)")
        if abs(design.var_f[i] + design.var_g[i] - t2[i]) <= rtol * t2[i]:
            out.append(f"site {name}: f + g = tau^2 (the helper, who knows e, would see exactly tau_s)")
    return out


def _sites_text(names: list[str], limit: int = 8) -> str:
    if len(names) > limit:
        return f"{len(names)} sites ({', '.join(names[:limit])}, ...)"
    return ("site " if len(names) == 1 else "sites ") + ", ".join(names)


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _infeasible_lines(design: NoiseDesign) -> list[str]:
    """Why a design is infeasible and, where its solver can say (the closed form: which order of sites, or which
    tau_c, would work), what would make it work (:attr:`~dpcore.cape.solver.DesignSolver.explain_infeasible`)."""
    lines = [design.reason or "The design is infeasible."]
    entry = SOLVERS.get(design.method)
    if entry is not None and entry.explain_infeasible is not None:
        lines.extend(entry.explain_infeasible(design))
    return lines


def explain_design(design: NoiseDesign, *, gain: bool = True) -> list[str]:
    """Plain sentences about a design: feasibility and why, the DP floor, tight constraints and (with ``gain``) the
    gain in the words of the headline (docs/math/cape.md, "Gains"; the dashboard shows the headline separately)."""
    if not design.feasible:
        return _infeasible_lines(design)
    lines: list[str] = []
    floor = design.tau_floor
    setter = floor_site(design)
    lines.append(
        f"Feasible: every site's release carries at least tau_s of noise against the helper (f + g) and "
        f"against the aggregator (e + g), the helper's terms cancel (sum mu_s e_s = 0), and the aggregate "
        f"carries tau_c = {_fmt(design.tau_c)}."
    )
    if design.below_floor:
        lines.append(
            f"tau_c = {_fmt(design.tau_c)} is below the DP floor max_s mu_s tau_s = {_fmt(floor)} (set by site "
            f"{setter}): the released aggregate alone breaks that site's budget; the audit's outside view shows it."
        )
    elif design.tau_c <= floor * (1 + 1e-9):
        lines.append(
            f"tau_c sits at the DP floor max_s mu_s tau_s = {_fmt(floor)}, set by site {setter}: an outside observer "
            f"of the aggregate sees site {setter} with exactly the noise its budget needs."
        )
    else:
        lines.append(f"tau_c is {design.tau_c / floor:.3g} times the DP floor {_fmt(floor)} (set by site {setter}).")
    t2 = design.tau**2
    e_tight = [n for i, n in enumerate(design.names)
               if abs(design.var_e[i] + design.var_g[i] - t2[i]) <= 1e-6 * t2[i]]
    f_tight = [n for i, n in enumerate(design.names)
               if abs(design.var_f[i] + design.var_g[i] - t2[i]) <= 1e-6 * t2[i]]
    parts = []
    if e_tight:
        parts.append(f"e + g = tau_s^2 (the aggregator's view) at {_sites_text(e_tight)}")
    if f_tight:
        parts.append(f"f + g = tau_s^2 (the helper's view) at {_sites_text(f_tight)}")
    if parts:
        lines.append("Binding, no slack: " + "; ".join(parts) + ".")
    if gain:
        entry = SOLVERS.get(design.method)
        name = entry.gain_name if entry is not None else "CAPE gain G"
        lines.append(f"{name} = sum mu_s^2 tau_s^2 / tau_c^2 = {design.gain:.3g}: the aggregate carries "
                     f"{design.gain:.3g} times less noise variance than if each site added its own.")
    return lines


@dataclass(frozen=True, kw_only=True)
class RobustPoint:
    """The collusion-robust calibration for one coalition bound c."""

    collusion: int
    feasible: bool
    gain: float | None
    tau_c: float
    e_scale: float
    reason: str | None


def robust_gain_curve(
    tau: Any, weights: Any, *, names: Any = None, objective: str = "balanced", max_collusion: int | None = None
) -> list[RobustPoint]:
    """design_collusion_robust for c = 0 .. max_collusion (default S - 1): the gain kept against c
    colluders. Equal sites keep S - c (docs/math/audit.md)."""
    tau, mu = check_tau_weights(tau, weights)
    objective = check_objective(objective)
    n = tau.size
    names = tuple(f"s{i + 1}" for i in range(n)) if names is None else tuple(str(x) for x in names)
    if len(names) != n:
        raise InputError(f"got {len(names)} names for {n} sites")
    budgets = SiteBudgets(names, tau, mu)
    top = n - 1 if max_collusion is None else min(int(max_collusion), n - 1)
    points = []
    for c in range(top + 1):
        d = solve_collusion_robust(budgets, c, objective=objective)
        points.append(RobustPoint(collusion=c, feasible=d.feasible, gain=d.gain if d.feasible else None,
                                  tau_c=float(d.tau_c), e_scale=float(d.e_scale), reason=d.reason))
    return points


@dataclass(frozen=True, kw_only=True)
class ViewSummary:
    """The worst site of one audited view."""

    view: str
    worst_site: str
    sigma_ratio: float  # sigma_eff / tau_s of that site (1 = exactly its budget)
    eps_eff: float
    eps: float
    failing: int  # number of sites whose promise fails in this view
    sites: int


def audit_summary(report: AuditReport, tau: Any, names: Any) -> list[ViewSummary]:
    """Per view (in :data:`dpcore.cape.audit.VIEWS` order): the site with the largest eps_eff / eps_s."""
    tau = np.asarray(tau, dtype=float)
    index = {str(n): i for i, n in enumerate(names)}
    out = []
    for view in VIEWS:
        rows = [r for r in report.rows if r.view == view]
        if not rows:
            continue
        worst = max(rows, key=lambda r: (r.eps_eff / r.eps, -r.sigma_eff))
        ratio = worst.sigma_eff / tau[index[worst.site]]
        out.append(ViewSummary(view=view, worst_site=worst.site, sigma_ratio=float(ratio),
                               eps_eff=float(worst.eps_eff), eps=float(worst.eps), failing=sum(not r.ok for r in rows),
                               sites=len(rows)))
    return out


def floor_site(design: NoiseDesign) -> str:
    """The site that sets the DP floor (largest mu_s tau_s)."""
    return design.names[int(np.argmax(design.weights * design.tau))]

