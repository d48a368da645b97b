"""The collusion-robust calibration: a design that keeps sigma_eff >= tau_s in every audited view with up to c
colluding sites (docs/math/audit.md; docs/math/cape.md, "Generalized CAPE")."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...limits import MAX_HELPER_SCALES
from ...validation import InputError, check_positive
from ..audit import short_views
from ..design import NoiseDesign, Objective, SiteBudgets, check_objective, site_budgets
from ..solver import DesignRequest, DesignSolver
from .general import finish_design, solve_variances

__all__ = ["ENTRIES", "design_collusion_robust", "solve_collusion_robust"]


def design_collusion_robust(
    tau: Any, weights: Any, collusion: int, tau_c: float | None = None, *, objective: str = "balanced",
    margin: float = 0.01, names: Any = None, max_e_scale: float = 1e8,
) -> NoiseDesign:
    """Calibration keeping sigma_eff >= tau_s in every audited view with up to ``collusion`` colluders.

    In the limit of large helper noise, the aggregator with coalition C learns only the weighted sum of
    the other releases, so site s keeps sum_{t not in C} mu_t^2 tau_g,t^2 / mu_s^2 (docs/math/audit.md). The
    design requires that, with a relative ``margin``, for the worst C of size c, then raises the helper's
    noise (``e_scale``) until the exact audit passes. Equal sites: tau_g^2 = tau_s^2 / (S - c), gain S - c.
    With ``tau_c`` None the smallest admissible tau_c is used. Checks its arguments;
    :func:`solve_collusion_robust` is the calibration for validated ones.
    """
    budgets = site_budgets(tau, weights, names)
    objective = check_objective(objective)
    n = budgets.n_sites
    if isinstance(collusion, bool) or not isinstance(collusion, (int, np.integer)) or not 0 <= collusion <= n - 1:
        raise InputError(f"collusion must be an integer in 0..S-1 = {n - 1} (got {collusion!r})", "collusion")
    target = None if tau_c is None else check_positive(tau_c, "tau_c")
    return solve_collusion_robust(budgets, int(collusion), target, objective=objective, margin=margin,
                                  max_e_scale=max_e_scale)


def solve_collusion_robust(
    budgets: SiteBudgets, collusion: int, tau_c: float | None = None, *, objective: Objective = "balanced",
    margin: float = 0.01, max_e_scale: float = 1e8,
) -> NoiseDesign:
    """:func:`design_collusion_robust` for validated budgets, 0 <= collusion <= S - 1 and tau_c (None: the
    smallest admissible)."""
    tau = budgets.tau
    variances, tau_c_out, reason = solve_variances(tau, budgets.weights, budgets.names, tau_c, objective,
                                                   collusion, margin)

    def finish(variances: np.ndarray | None, reason: str | None, e_scale: float,
               notes: tuple[str, ...] = ()) -> NoiseDesign:
        return finish_design(budgets, variances, tau_c_out, method="collusion-robust", reason=reason,
                             objective=objective, e_scale=e_scale, collusion=collusion, notes=notes)

    if variances is None:
        return finish(None, reason, 1.0)
    # The outside and sites views do not depend on the helper noise and hold by the LP constraints. Every
    # aggregator view's sigma_eff grows with the helper noise (Cov grows in the Loewner order), so the first
    # passing scale is the smallest one on the grid 16, 64, 256, ...
    for e_scale in helper_scales(max_e_scale):
        design = finish(variances, None, e_scale)
        short = short_views(design, collusion, tau)
        if not short:
            note = (f"helper noise scaled by {e_scale:g} so that the aggregator cannot separate releases; "
                    f"every view with up to {collusion} colluder(s) keeps sigma_eff >= tau_s")
            return finish(variances, None, e_scale, (note,))
    return finish(None, _unreached(budgets, variances, collusion, margin, e_scale, short), e_scale)


def helper_scales(max_e_scale: float) -> list[float]:
    """16, 64, 256, ... up to the first value >= ``max_e_scale`` (13 values for 1e8), at most MAX_HELPER_SCALES."""
    scales = [16.0]
    while scales[-1] < max_e_scale and len(scales) < MAX_HELPER_SCALES:
        scales.append(scales[-1] * 4.0)
    return scales


def _unreached(budgets: SiteBudgets, variances: np.ndarray, collusion: int, margin: float, e_scale: float,
               short: list) -> str:
    """Why no helper scale works: a coalition constraint that the linear program's solution misses (weights far
    below the others put it under the solver's tolerance), or else the sites still short at the largest scale."""
    mu, tau = budgets.weights, budgets.tau
    loads = mu**2 * variances[2]
    for i in np.flatnonzero(mu > 0):
        others = np.sort(np.delete(loads, i))[::-1]
        kept = float(loads.sum() - others[:collusion].sum())
        need = (1.0 + margin) * mu[i] ** 2 * tau[i] ** 2
        if kept < need * (1.0 - 1e-6):
            return (f"could not reach sigma_eff >= tau_s: the linear program left site {budgets.names[i]} "
                    f"sum mu_t^2 tau_g,t^2 = {kept:.3g} outside its worst coalition of {collusion}, below the "
                    f"{need:.3g} it needs; its weight {mu[i]:.2g} is too small next to the others for the solver's "
                    "tolerance. Give it a larger weight or leave it out.")
    sites = sorted({budgets.names[v.site] for v in short})
    return (f"could not reach sigma_eff >= tau_s with the helper noise scaled up to {e_scale:g}: still short at "
            f"{', '.join(sites[:6])}{', ...' if len(sites) > 6 else ''} (with weights as small as "
            f"{float(np.min(mu[mu > 0])):.2g} the aggregator's views approach their limit slowly); raise the margin "
            "or give the smallest sites larger weights")


def _solve(budgets: SiteBudgets, request: DesignRequest) -> NoiseDesign:
    return solve_collusion_robust(budgets, request.collusion, request.tau_c, objective=request.objective)


ENTRIES = (DesignSolver(
    name="collusion-robust", title="Collusion-robust calibration", position=30, options=frozenset({"objective"}),
    collusion_robust=True, gain_name="collusion-robust gain G_c", solve=_solve,
    help="Collusion-robust: keeps every audited view with up to c colluders at sigma_eff >= tau_s, at the price of "
         "some gain.",
),)
