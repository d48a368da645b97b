"""The journal paper's closed-form solution of the generalized CAPE problem (docs/math/cape.md, "Generalized
CAPE", closed form). It can give negative variances and depends on which site is last; both are reported, never
clipped (docs/math/corrections.md).

Where it is feasible (:func:`closed_form_tau_c_range`): with m_s = mu_s^2 tau_s^2, M = sum_s m_s and S the last site,
tau_eS^2 >= 0  <=>  tau_c^2 <= M;  tau_gS^2 >= 0  <=>  tau_c^2 >= M - 2 m_S;
tau_es^2 <= tau_s^2 (s != S)  <=>  tau_c^2 >= M - 2 (S-1) m_s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...privacy.zero_sum import ZeroSumLaw
from ...validation import InputError, check_positive
from ..design import NoiseDesign, SiteBudgets, check_tau_weights, design_target, floor_note, site_budgets
from ..solver import DesignRequest, DesignSolver, FeasibleSettings

__all__ = ["ENTRIES", "ClosedFormOrder", "closed_form_orders", "closed_form_tau_c_range", "design_closed_form",
           "solve_closed_form"]

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
        e_law=_law(mu, ve, last, others) if feasible else None,
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


def _law(mu: np.ndarray, ve: np.ndarray, last: int, others: np.ndarray) -> ZeroSumLaw:
    """The published construction in factored form: u_s = mu_s e_s = w_s for s != S, u_S = -sum_s w_s, i.e.
    c = the last site's unit vector and var_w = mu_s^2 tau_e,s^2 (0 for the last site)."""
    common = np.zeros(mu.size)
    common[last] = 1.0
    var_w = np.zeros(mu.size)
    var_w[others] = mu[others] ** 2 * np.clip(ve[others], 0.0, None)
    return ZeroSumLaw(common=common, var_w=var_w)


_REL = 1e-7


def closed_form_tau_c_range(tau: Any, weights: Any, last: int) -> tuple[float, float] | None:
    """[low, high] of tau_c for which the published closed form with site ``last`` as site S has no
    negative variance (module docstring); None when the interval is empty or weights are zero."""
    tau, mu = check_tau_weights(tau, weights)
    n = tau.size
    if not 0 <= int(last) < n:
        raise InputError(f"last must be a site index in 0..{n - 1} (got {last})")
    if n < 2 or np.any(mu == 0):
        return None
    m = mu**2 * tau**2
    total = float(m.sum())
    others = np.array([i for i in range(n) if i != last])
    low2 = max(total - 2.0 * m[last], float(np.max(total - 2.0 * (n - 1) * m[others])), 0.0)
    if low2 > total * (1 + 1e-12):
        return None
    return math.sqrt(low2), math.sqrt(total)


@dataclass(frozen=True)
class ClosedFormOrder:
    """The closed form with one choice of last site: its feasible tau_c interval (None if empty)."""

    last: int
    name: str
    tau_c_range: tuple[float, float] | None
    feasible_at: bool  # feasible at the tau_c asked about


def closed_form_orders(tau: Any, weights: Any, tau_c: float, names: Any = None) -> list[ClosedFormOrder]:
    """For every choice of last site: the closed form's feasible tau_c range and whether ``tau_c`` is in it."""
    tau, mu = check_tau_weights(tau, weights)
    names = [f"s{i + 1}" for i in range(tau.size)] if names is None else [str(x) for x in names]
    out = []
    for i in range(tau.size):
        rng = closed_form_tau_c_range(tau, mu, i)
        ok = rng is not None and rng[0] * (1 - _REL) <= tau_c <= rng[1] * (1 + _REL)
        out.append(ClosedFormOrder(i, names[i], rng, ok))
    return out


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _explain_infeasible(design: NoiseDesign) -> list[str]:
    """Which order of sites (or which tau_c) would make the closed form feasible."""
    if design.n_sites < 2 or not np.all(design.weights > 0):
        return []
    orders = closed_form_orders(design.tau, design.weights, design.tau_c, design.names)
    good = [o.name for o in orders if o.feasible_at]
    if good:
        return [f"At tau_c = {_fmt(design.tau_c)} the closed form works with last site: {', '.join(good)}."]
    ranges = [o.tau_c_range for o in orders if o.tau_c_range is not None]
    if not ranges:
        return ["No choice of last site gives a feasible closed form; use the general solver."]
    low = min(r[0] for r in ranges)
    return [f"No choice of last site works at tau_c = {_fmt(design.tau_c)}: the closed form needs "
            f"tau_c >= {_fmt(low)} for its best order (CAPE gain at most "
            f"{design.tau_conv**2 / low**2:.3g} instead of {design.tau_conv**2 / design.tau_floor**2:.3g} at the "
            "DP floor). The general solver reaches the floor."]


def _feasible_settings(design: NoiseDesign) -> FeasibleSettings | None:
    """For every choice of the last site: its feasible tau_c interval and whether the design's tau_c is in it."""
    if design.n_sites < 2 or not np.all(design.weights > 0):
        return None
    orders = closed_form_orders(design.tau, design.weights, design.tau_c, design.names)
    rows = [{"last site": o.name, "tau_c from": o.tau_c_range[0] if o.tau_c_range else None,
             "tau_c up to": o.tau_c_range[1] if o.tau_c_range else None,
             f"works at tau_c = {design.tau_c:.3g}": "yes" if o.feasible_at else "no"} for o in orders]
    return FeasibleSettings(
        caption="Where the closed form works, for each choice of the last site:", rows=rows,
        conditions_latex=r"\begin{gathered}m_s=\mu_s^2\tau_s^2,\quad M=\textstyle\sum_s m_s:\\ \tau_c^2\le M,\quad "
                         r"\tau_c^2\ge M-2m_S,\quad \tau_c^2\ge M-2(S-1)m_s\ (s\ne S)\end{gathered}")


def _solve(budgets: SiteBudgets, request: DesignRequest) -> NoiseDesign:
    return solve_closed_form(budgets, request.tau_c, request.last)


ENTRIES = (DesignSolver(
    name="closed-form", title="Published closed form", position=20, options=frozenset({"last"}), solve=_solve,
    help="Published closed form: the journal paper's formulas; they depend on which site is last and can give "
         "negative variances (shown, never clipped).",
    explain_infeasible=_explain_infeasible, feasible_settings=_feasible_settings,
),)
