"""The journal paper's closed-form solution of the generalized CAPE problem (docs/math/cape.md, "Generalized
CAPE", closed form). It can give negative variances and depends on which site is last; both are reported, never
clipped (docs/math/corrections.md)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import InputError, check_positive
from .design import NoiseDesign, SiteBudgets, design_target, floor_note, site_budgets

__all__ = ["design_closed_form", "solve_closed_form"]

_VAR_TOL = 1e-12


def design_closed_form(
    tau: Any, weights: Any, tau_c: float | None = None, *, last: int | None = None, names: Any = None
) -> NoiseDesign:
    """The journal paper's closed-form solution with site ``last`` (default: the last one) as site S.

    With R = tau_c^2 - sum_{s != S} mu_s^2 tau_s^2:
    tau_eS^2 = tau_fS^2 = tau_S^2/2 - R/(2 mu_S^2), tau_gS^2 = tau_S^2/2 + R/(2 mu_S^2);
    s != S: tau_es^2 = tau_fs^2 = (mu_S^2 tau_S^2/2 - R/2) / (mu_s^2 (S - 1)), tau_gs^2 = tau_s^2 - tau_es^2.
    e_s independent for s != S, e_S = -(1/mu_S) sum_{s != S} mu_s e_s.
    Negative variances are kept and reported with the constraint they break.
    """
    budgets = site_budgets(tau, weights, names)
    tau_c = None if tau_c is None else check_positive(tau_c, "tau_c")
    n = budgets.n_sites
    last = n - 1 if last is None else int(last)
    if not 0 <= last < n:
        raise InputError(f"last must be a site index in 0..{n - 1} (got {last})")
    return solve_closed_form(budgets, tau_c, last)


def solve_closed_form(budgets: SiteBudgets, tau_c: float | None, last: int) -> NoiseDesign:
    """:func:`design_closed_form` for validated budgets, tau_c (None: the DP floor) and 0 <= last < S."""
    names, mu, tau = budgets.names, budgets.weights, budgets.tau
    n = tau.size
    tau_c = design_target(tau_c, budgets)
    nan = np.full(n, np.nan)

    def failed(reason: str) -> NoiseDesign:
        return NoiseDesign(names=names, weights=mu, tau=tau, var_e=nan, var_f=nan, var_g=nan, tau_c=tau_c,
                           method="closed-form", feasible=False, reason=reason)

    if n < 2:
        return failed("the closed form needs at least two sites (with one site nothing can cancel)")
    others = np.array([i for i in range(n) if i != last])
    if mu[last] == 0 or np.any(mu[others] == 0):
        zero = names[last] if mu[last] == 0 else names[int(others[np.argmin(mu[others])])]
        return failed(f"the closed form divides by mu_s^2 and site {zero} has weight 0; use the general solver")
    v = tau**2
    r = tau_c**2 - np.sum(mu[others] ** 2 * v[others])
    ve = np.empty(n)
    ve[last] = v[last] / 2 - r / (2 * mu[last] ** 2)
    ve[others] = (mu[last] ** 2 * v[last] / 2 - r / 2) / (mu[others] ** 2 * (n - 1))
    vg = np.empty(n)
    vg[last] = v[last] / 2 + r / (2 * mu[last] ** 2)
    vg[others] = v[others] - ve[others]
    reason = _infeasible_reason(budgets, tau_c, last, others, ve, vg, r)
    feasible = reason is None
    return NoiseDesign(
        names=names, weights=mu, tau=tau, var_e=ve, var_f=ve.copy(), var_g=vg, tau_c=tau_c, method="closed-form",
        feasible=feasible, reason=reason, e_mixing=_mixing(mu, ve, last, others) if feasible else None,
        e_construction=f"published: e_s independent for s != {names[last]}, e_{names[last]} = -(1/mu) sum mu_s e_s",
        notes=floor_note(tau_c, mu, tau),
    )


def _infeasible_reason(budgets: SiteBudgets, tau_c: float, last: int, others: np.ndarray, ve: np.ndarray,
                       vg: np.ndarray, r: float) -> str | None:
    """None when no variance is negative; else which ones are and which constraint makes them so."""
    names, mu, v = budgets.names, budgets.weights, budgets.tau**2
    scale = float(np.max(v))
    problems = [f"site {names[i]}: tau_{label}^2 = {arr[i]:.4g} < 0"
                for i in range(v.size) for label, arr in (("e", ve), ("g", vg)) if arr[i] < -_VAR_TOL * scale]
    if not problems:
        return None
    conv = float(np.sum(mu**2 * v))
    if ve[last] < 0:
        why = (f"tau_c^2 = {tau_c**2:.4g} exceeds the conventional variance sum mu_s^2 tau_s^2 = {conv:.4g}, "
               "so the helper's noise would need a negative variance")
    elif vg[last] < 0:
        why = (f"tau_c^2 = {tau_c**2:.4g} is too small for this order: the last site "
               f"({names[last]}) would need tau_g^2 = tau_S^2/2 + R/(2 mu_S^2) < 0 with "
               f"R = tau_c^2 - sum_(s != S) mu_s^2 tau_s^2 = {r:.4g}")
    else:
        bad = [names[i] for i in others if vg[i] < -_VAR_TOL * scale]
        why = (f"the share tau_es^2 = (mu_S^2 tau_S^2/2 - R/2)/(mu_s^2 (S-1)) exceeds tau_s^2 for "
               f"{', '.join(bad)}, leaving a negative tau_g^2")
    return ("published closed form infeasible: " + "; ".join(problems) + ". " + why +
            ". The closed form depends on which site is last; the general solver finds a design "
            "whenever one exists.")


def _mixing(mu: np.ndarray, ve: np.ndarray, last: int, others: np.ndarray) -> np.ndarray:
    """e = M z: independent e_s for s != last, e_last = -(1/mu_last) sum_s mu_s e_s."""
    n = mu.size
    mixing = np.zeros((n, n - 1))
    std_others = np.sqrt(np.clip(ve[others], 0, None))
    for col, i in enumerate(others):
        mixing[i, col] = std_others[col]
    mixing[last, :] = -(mu[others] * std_others) / mu[last]
    return mixing
