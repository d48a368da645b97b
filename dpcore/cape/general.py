"""The general solver of the generalized CAPE problem: a linear program in the variances that finds a feasible
design whenever one exists, for any site order, with a stated objective (docs/math/cape.md, "Generalized CAPE",
general solver). The collusion-robust calibration (:mod:`dpcore.cape.robust`) adds constraints to the same
program (docs/math/audit.md)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import linprog

from ..privacy.zero_sum import weighted_zero_sum_mixing
from ..validation import InputError, check_positive
from .design import NoiseDesign, Objective, SiteBudgets, check_objective, dp_floor, floor_note, site_budgets

__all__ = ["design_general", "finish_design", "solve_general", "solve_variances"]


class _Program:
    """Rows of a linear program, each with a sentence saying what it protects."""

    def __init__(self, n_vars: int):
        self.n_vars = n_vars
        self.a_ub: list[np.ndarray] = []
        self.b_ub: list[float] = []
        self.ub_text: list[str] = []
        self.a_eq: list[np.ndarray] = []
        self.b_eq: list[float] = []
        self.eq_text: list[str] = []

    def at_most(self, coefs: dict[int, float], bound: float, text: str) -> None:
        row = np.zeros(self.n_vars)
        for j, c in coefs.items():
            row[j] += c
        self.a_ub.append(row)
        self.b_ub.append(bound)
        self.ub_text.append(text)

    def at_least(self, coefs: dict[int, float], bound: float, text: str) -> None:
        self.at_most({j: -c for j, c in coefs.items()}, -bound, text)

    def equal(self, coefs: dict[int, float], bound: float, text: str) -> None:
        row = np.zeros(self.n_vars)
        for j, c in coefs.items():
            row[j] += c
        self.a_eq.append(row)
        self.b_eq.append(bound)
        self.eq_text.append(text)

    def solve(self, cost: np.ndarray, bounds: list[tuple[float | None, float | None]]):
        return linprog(
            cost,
            A_ub=np.array(self.a_ub) if self.a_ub else None,
            b_ub=np.array(self.b_ub) if self.b_ub else None,
            A_eq=np.array(self.a_eq) if self.a_eq else None,
            b_eq=np.array(self.b_eq) if self.b_eq else None,
            bounds=bounds,
            method="highs",
        )


def _base_program(t2: np.ndarray, mu: np.ndarray, names: tuple[str, ...], coalition: int | None, margin: float):
    """Variables [v_e (S), v_f (S), v_g (S), share t, theta (S), p (S*S)] in units of max tau_s^2.

    theta and p express "sum of the k largest mu_t^2 v_g,t" linearly (only with a coalition bound)."""
    n = t2.size
    e, f, g = (lambda i: i), (lambda i: n + i), (lambda i: 2 * n + i)
    share = 3 * n
    use_collusion = coalition is not None
    n_vars = 3 * n + 1 + (n + n * n if use_collusion else 0)
    prog = _Program(n_vars)
    for i in range(n):
        prog.at_least({e(i): 1, g(i): 1}, t2[i],
                      f"site {names[i]}: e + g noise must cover tau^2 "
                      "(its release seen by the aggregator, who knows f)")
        prog.at_least({f(i): 1, g(i): 1}, t2[i],
                      f"site {names[i]}: f + g noise must cover tau^2 (its release seen by the helper, who knows e)")
    active = [i for i in range(n) if mu[i] > 0]
    for i in active:
        coefs = {e(i): mu[i] ** 2}
        for j in active:
            if j != i:
                coefs[e(j)] = -mu[j] ** 2
        prog.at_most(coefs, 0.0,
                     f"zero-sum: site {names[i]}'s weighted helper-noise variance may not exceed the others' "
                     "together (so that sum mu_s e_s = 0 can hold)")
    if use_collusion:
        k = min(int(coalition), n - 1)
        theta = lambda i: 3 * n + 1 + i  # noqa: E731
        p = lambda i, j: 4 * n + 1 + i * n + j  # noqa: E731
        for i in active:
            coefs = {g(j): mu[j] ** 2 for j in range(n)}
            if k > 0:
                coefs[theta(i)] = -float(k)
                for j in range(n):
                    if j != i:
                        coefs[p(i, j)] = -1.0
                        prog.at_least({p(i, j): 1, g(j): -mu[j] ** 2, theta(i): 1}, 0.0, _AUX)
            who = "the outside observer" if k == 0 else f"the aggregator or sites with {k} colluding site(s)"
            prog.at_least(coefs, (1 + margin) * mu[i] ** 2 * t2[i],
                          f"site {names[i]} against {who}: the site noise g outside the worst coalition must "
                          "give sum mu_t^2 tau_g,t^2 >= mu_s^2 tau_s^2")
    bounds: list[tuple[float | None, float | None]] = [(0.0, None)] * n_vars
    if use_collusion:
        # Collusion-robust designs rely on helper noise in every weighted release: a release without
        # e exposes that site's g to the aggregator, as if the site colluded. Give every weighted site
        # helper noise of at least _ROBUST_E_SHARE tau_s^2 before it is scaled up.
        for i in active:
            bounds[e(i)] = (_ROBUST_E_SHARE * t2[i], None)
    return prog, bounds, (e, f, g, share)


_ROBUST_E_SHARE = 0.1


_AUX = "auxiliary"


def _explain(prog: _Program, res: Any, limit: int = 3) -> list[str]:
    """The constraints with the largest dual values: the ones that bind at the optimum."""
    marg = getattr(getattr(res, "ineqlin", None), "marginals", None)
    if marg is None:
        return []
    texts: list[str] = []
    for j in np.argsort(np.abs(marg))[::-1]:
        text = prog.ub_text[j]
        if abs(marg[j]) > 1e-9 and text not in (_AUX, "balanced share") and text not in texts:
            texts.append(text)
        if len(texts) == limit:
            break
    return texts


def solve_variances(
    tau: np.ndarray, mu: np.ndarray, names: tuple[str, ...], tau_c: float | None, objective: Objective,
    coalition: int | None, margin: float,
) -> tuple[np.ndarray | None, float, str | None]:
    """Solve for (v_e, v_f, v_g) in absolute units. Returns (variances (3, S) or None, tau_c, reason).

    The program works in units of max tau_s^2 so that the solver's tolerances are meaningful."""
    n = tau.size
    ref = float(np.max(tau))
    t2 = (tau / ref) ** 2
    prog, bounds, (e, f, g, share) = _base_program(t2, mu, names, coalition, margin)
    g_cost = np.zeros(prog.n_vars)
    for i in range(n):
        g_cost[g(i)] = mu[i] ** 2
    # Smallest achievable tau_c^2 under these constraints (used for defaults and for reasons).
    lowest = prog.solve(g_cost, bounds)
    if lowest.status != 0:  # pragma: no cover - the lower program is always feasible
        return None, float("nan"), f"the solver failed: {lowest.message}"
    tc2_min = float(lowest.fun)
    if tau_c is None:
        tc2 = max(tc2_min, float(np.max(mu**2 * t2)))
    else:
        tc2 = (tau_c / ref) ** 2
        if tc2 < tc2_min * (1 - 1e-9):
            binding = _explain(prog, lowest)
            reason = (f"infeasible: tau_c = {tau_c:.4g} is below the smallest achievable "
                      f"{ref * math.sqrt(tc2_min):.4g} under these constraints. Binding: " + "; ".join(binding))
            return None, tau_c, reason
    prog.equal({g(i): mu[i] ** 2 for i in range(n)}, tc2, "sum_s mu_s^2 tau_g,s^2 = tau_c^2")
    if objective == "balanced":
        # Maximise the share t with v_g,s >= t tau_s^2 for every weighted site ...
        for i in range(n):
            if mu[i] > 0:
                prog.at_most({share: t2[i], g(i): -1.0}, 0.0, "balanced share")
        cost = np.zeros(prog.n_vars)
        cost[share] = -1.0
        res = prog.solve(cost, bounds)
        if res.status != 0:  # pragma: no cover
            return None, ref * math.sqrt(tc2), f"the solver failed: {res.message}"
        bounds[share] = (float(res.x[share]) * (1 - 1e-9), None)
    # ... then the least total noise variance.
    noise_cost = np.zeros(prog.n_vars)
    noise_cost[: 3 * n] = 1.0
    res = prog.solve(noise_cost, bounds)
    if res.status != 0:  # pragma: no cover
        return None, ref * math.sqrt(tc2), f"the solver failed: {res.message}"
    x = np.clip(res.x[: 3 * n], 0.0, None).reshape(3, n) * ref**2
    return x, ref * math.sqrt(tc2), None


def finish_design(
    budgets: SiteBudgets, variances: np.ndarray | None, tau_c: float, *, method: str, reason: str | None,
    objective: Objective, e_scale: float, collusion: int | None, notes: tuple[str, ...] = (),
) -> NoiseDesign:
    """The :class:`NoiseDesign` of solved variances (3, S) (helper variances times ``e_scale``, an explicit
    zero-sum law for e), or a failed one when ``variances`` is None."""
    names, mu, tau = budgets.names, budgets.weights, budgets.tau
    if variances is None:
        nan = np.full(tau.size, np.nan)
        return NoiseDesign(names=names, weights=mu, tau=tau, var_e=nan, var_f=nan, var_g=nan, tau_c=tau_c,
                           method=method, feasible=False, reason=reason, objective=objective, collusion=collusion,
                           notes=notes)
    ve, vf, vg = variances
    ve = ve * e_scale
    return NoiseDesign(
        names=names, weights=mu, tau=tau, var_e=ve, var_f=vf, var_g=vg, tau_c=tau_c, method=method, feasible=True,
        objective=objective, e_mixing=weighted_zero_sum_mixing(mu, ve),
        e_construction="balanced full-rank: mu*e = (I - c 1^T) diag(d) z with c proportional to mu_s tau_e,s",
        e_scale=e_scale, collusion=collusion, notes=notes + floor_note(tau_c, mu, tau),
    )


def design_general(
    tau: Any, weights: Any, tau_c: float | None = None, *, objective: str = "balanced",
    e_scale: float = 1.0, names: Any = None,
) -> NoiseDesign:
    """Feasible variances for the generalized problem by linear programming (any site order).

    The zero-sum requirement is imposed as mu_s^2 v_e,s <= sum_{t != s} mu_t^2 v_e,t, which implies
    the polygon inequality (so e can be sampled) and loses no feasibility, since helper noise can
    always be raised. ``e_scale`` >= 1 multiplies the helper's variances afterwards (more protection
    against the aggregator, nothing changes in the output). Objectives: :data:`~dpcore.cape.design.OBJECTIVES`.
    Checks its arguments; :func:`solve_general` is the solver for validated ones.
    """
    budgets = site_budgets(tau, weights, names)
    objective = check_objective(objective)
    e_scale = check_positive(e_scale, "e_scale")
    if e_scale < 1:
        raise InputError(f"e_scale must be >= 1 (got {e_scale:g}); smaller helper noise breaks the e + g constraint")
    target = None if tau_c is None else check_positive(tau_c, "tau_c")
    return solve_general(budgets, target, objective, e_scale)


def solve_general(budgets: SiteBudgets, tau_c: float | None = None, objective: Objective = "balanced",
                  e_scale: float = 1.0) -> NoiseDesign:
    """:func:`design_general` for validated budgets, tau_c > 0 (None: the DP floor), objective and e_scale >= 1."""
    target = dp_floor(budgets.weights, budgets.tau) if tau_c is None else tau_c
    variances, tau_c_out, reason = solve_variances(budgets.tau, budgets.weights, budgets.names, target, objective,
                                                   None, 0.0)
    return finish_design(budgets, variances, tau_c_out, method="general", reason=reason, objective=objective,
                         e_scale=e_scale, collusion=None)
