"""The collusion-robust calibration: a design that keeps sigma_eff >= tau_s in every audited view with up to c
colluding sites (docs/math/audit.md; docs/math/cape.md, "Generalized CAPE")."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import InputError, check_positive
from .audit import view_sigmas
from .design import NoiseDesign, Objective, SiteBudgets, check_objective, site_budgets
from .general import finish_design, solve_variances

__all__ = ["design_collusion_robust", "solve_collusion_robust"]


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
    e_scale = 16.0
    # The outside and sites views do not depend on the helper noise and hold by the LP constraints.
    aggregator_views = ("aggregator", "aggregator+coalition")
    while True:
        design = finish(variances, None, e_scale)
        short = [v for v in view_sigmas(design, collusion, aggregator_views)
                 if v.sigma_eff < tau[v.site] * (1 - 1e-9)]
        if not short:
            note = (f"helper noise scaled by {e_scale:g} so that the aggregator cannot separate releases; "
                    f"every view with up to {collusion} colluder(s) keeps sigma_eff >= tau_s")
            return finish(variances, None, e_scale, (note,))
        if e_scale >= max_e_scale:  # pragma: no cover - the margin makes this unreachable in practice
            reason = "could not reach sigma_eff >= tau_s with helper noise up to 1e8 tau^2; raise the margin"
            return finish(None, reason, e_scale)
        e_scale *= 4.0
