"""The general solver of the generalized CAPE problem: a linear program in the variances that finds a feasible
design whenever one exists, for any site order, with a stated objective (docs/math/cape.md, "Generalized CAPE",
general solver). The collusion-robust calibration (:mod:`dpcore.cape.solvers.robust`) adds constraints to the same
program (docs/math/audit.md)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_array

from ...kept import kept_by_content
from ...limits import MAX_KEPT_NOISE_DESIGNS, TAU_C_FLOOR_RATIO
from ...privacy.zero_sum import weighted_zero_sum_law, weighted_zero_sum_mixing
from ...validation import check_positive
from ..design import (
    NoiseDesign,
    Objective,
    SiteBudgets,
    check_e_scale,
    check_objective,
    dp_floor,
    floor_note,
    site_budgets,
)
from ..solver import DesignSolver

__all__ = ["ENTRIES", "design_general", "finish_design", "solve_general", "solve_variances"]


_Block = tuple[np.ndarray, np.ndarray, np.ndarray, int]  # row offsets in the block, columns, values, rows


class _Program:
    """Rows of a linear program, each with a sentence saying what it protects.

    Rows are kept sparse (coordinates and values): the collusion constraints add S^2 auxiliary variables and
    rows of three entries each, which a dense matrix would hold as S^4 numbers (3.4 GB at S = 100)."""

    def __init__(self, n_vars: int):
        self.n_vars = n_vars
        self._ub: list[_Block] = []
        self.b_ub: list[float] = []
        self.ub_text: list[str] = []
        self._eq: list[_Block] = []
        self.b_eq: list[float] = []
        self.eq_text: list[str] = []

    @staticmethod
    def _row(coefs: dict[int, float]) -> _Block:
        cols = np.fromiter(coefs.keys(), dtype=np.int64, count=len(coefs))
        vals = np.fromiter(coefs.values(), dtype=float, count=len(coefs))
        return np.zeros(cols.size, dtype=np.int64), cols, vals, 1

    def at_most(self, coefs: dict[int, float], bound: float, text: str) -> None:
        self._ub.append(self._row(coefs))
        self.b_ub.append(bound)
        self.ub_text.append(text)

    def at_least(self, coefs: dict[int, float], bound: float, text: str) -> None:
        self.at_most({j: -c for j, c in coefs.items()}, -bound, text)

    def at_most_block(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, bounds: np.ndarray,
                      text: str) -> None:
        """Many rows at once: entry k is in row ``rows[k]`` (0-based within the block) and column ``cols[k]``."""
        self._ub.append((np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64),
                         np.asarray(vals, dtype=float), len(bounds)))
        self.b_ub.extend(float(b) for b in bounds)
        self.ub_text.extend([text] * len(bounds))

    def equal(self, coefs: dict[int, float], bound: float, text: str) -> None:
        self._eq.append(self._row(coefs))
        self.b_eq.append(bound)
        self.eq_text.append(text)

    def _matrix(self, blocks: list[_Block], n_rows: int) -> csr_array | None:
        """The rows as a CSR matrix, built directly: blocks are row-major and a row never repeats a column."""
        if not blocks:
            return None
        rows = np.concatenate([r + offset for (r, _, _, _), offset in
                               zip(blocks, np.cumsum([0] + [b[3] for b in blocks[:-1]]), strict=True)])
        cols = np.concatenate([b[1] for b in blocks])
        vals = np.concatenate([b[2] for b in blocks])
        keep = vals != 0.0  # as a dense matrix would: explicit zeros are not constraint entries
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
        order = np.lexsort((cols, rows))
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n_rows))])
        return csr_array((vals[order], cols[order], indptr), shape=(n_rows, self.n_vars))

    def solve(self, cost: np.ndarray, bounds: list[tuple[float | None, float | None]]):
        """HiGHS; once more without presolve if it ends without a status (seen when the aggregate's equality sits
        exactly on the smallest achievable tau_c and some weights are below 1e-4: presolve then declares the
        problem's status unknown)."""
        problem = {"A_ub": self._matrix(self._ub, len(self.b_ub)), "b_ub": np.array(self.b_ub) if self.b_ub else None,
                   "A_eq": self._matrix(self._eq, len(self.b_eq)), "b_eq": np.array(self.b_eq) if self.b_eq else None,
                   "bounds": bounds, "method": "highs"}
        result = linprog(cost, **problem)
        if result.status == 4:
            result = linprog(cost, **problem, options={"presolve": False})
        return result


def _base_program(w2: np.ndarray, mu: np.ndarray, names: tuple[str, ...], coalition: int | None, margin: float):
    """Variables [e (S), f (S), g (S), share t, theta, p (S)]. Site s's e, f, g are in units of its own tau_s^2, so
    that its privacy constraints read e + g >= 1 whatever the spread of tau between sites; weighted sums (zero-sum,
    tau_c, coalitions; theta and p) are in units of max_s mu_s^2 tau_s^2, ``w2`` = mu_s^2 tau_s^2 in those units (at
    most 1, so that no coefficient falls under the solver's threshold for zero).

    With a coalition bound k, site i's constraint is sum_t L_t - top_k(L_-i) >= (1 + margin) w2_i with loads
    L_t = w2_t g_t and top_k(L_-i) the sum of the k largest loads of the other sites. It is written with one
    threshold theta and one p_j >= max(L_j - theta, 0) per site, shared by all i:
    sum_t L_t - k theta - sum_(j != i) p_j >= (1 + margin) w2_i. This is exact, not a restriction: for every theta,
    k theta + sum_(j != i) (L_j - theta)_+ >= top_k(L_-i), so any feasible point keeps the original constraints;
    conversely theta = L_(k+1), the (k+1)-th largest load of all sites, makes it an equality for every i at once
    (if i is among the k largest, the k-th largest of L_-i is L_(k+1); otherwise L_(k+1) lies between the k-th and
    (k+1)-th largest of L_-i), so every L that keeps the original constraints is feasible. S + 2 extra variables
    instead of the S^2 + S of one threshold per site."""
    n = w2.size
    e, f, g = (lambda i: i), (lambda i: n + i), (lambda i: 2 * n + i)
    share = 3 * n
    use_collusion = coalition is not None
    n_vars = 3 * n + 1 + (1 + n if use_collusion else 0)
    prog = _Program(n_vars)
    for i in range(n):
        prog.at_least({e(i): 1, g(i): 1}, 1.0,
                      f"site {names[i]}: e + g noise must cover tau^2 "
                      "(its release seen by the aggregator, who knows f)")
        prog.at_least({f(i): 1, g(i): 1}, 1.0,
                      f"site {names[i]}: f + g noise must cover tau^2 (its release seen by the helper, who knows e)")
    active = [i for i in range(n) if mu[i] > 0]
    for i in active:
        coefs = {e(i): w2[i]}
        for j in active:
            if j != i:
                coefs[e(j)] = -w2[j]
        prog.at_most(coefs, 0.0,
                     f"zero-sum: site {names[i]}'s weighted helper-noise variance may not exceed the others' "
                     "together (so that sum mu_s e_s = 0 can hold)")
    if use_collusion:
        _add_collusion_rows(prog, w2, names, min(int(coalition), n - 1), margin, active)
    bounds: list[tuple[float | None, float | None]] = [(0.0, None)] * n_vars
    if use_collusion:
        # Collusion-robust designs rely on helper noise in every weighted release: a release without
        # e exposes that site's g to the aggregator, as if the site colluded. Give every weighted site
        # helper noise of at least _ROBUST_E_SHARE tau_s^2 before it is scaled up.
        for i in active:
            bounds[e(i)] = (_ROBUST_E_SHARE, None)
    return prog, bounds, (e, f, g, share)


_ROBUST_E_SHARE = 0.1


def _add_collusion_rows(prog: _Program, w2: np.ndarray, names: tuple[str, ...], k: int, margin: float,
                        active: list[int]) -> None:
    """sum_t L_t - k theta - sum_(j != i) p_j >= (1 + margin) w2_i for every weighted site i, with
    p_j >= L_j - theta, p_j >= 0 (L_t = w2_t g_t; :func:`_base_program` proves it exact)."""
    n = w2.size
    g = 2 * n + np.arange(n)
    theta, p = 3 * n + 1, 3 * n + 2 + np.arange(n)
    if k > 0:  # p_j >= w2_j g_j - theta for every site j, one row each
        rows = np.repeat(np.arange(n), 3)
        cols = np.column_stack([p, g, np.full(n, theta)]).ravel()
        vals = np.column_stack([np.full(n, -1.0), w2, np.full(n, -1.0)]).ravel()
        prog.at_most_block(rows, cols, vals, np.zeros(n), _AUX)
    who = "the outside observer" if k == 0 else f"the aggregator or sites with {k} colluding site(s)"
    for i in active:
        coefs = {int(g[j]): float(w2[j]) for j in range(n)}
        if k > 0:
            coefs[theta] = -float(k)
            coefs.update({int(p[j]): -1.0 for j in range(n) if j != i})
        prog.at_least(coefs, (1 + margin) * w2[i],
                      f"site {names[i]} against {who}: the site noise g outside the worst coalition must "
                      "give sum mu_t^2 tau_g,t^2 >= mu_s^2 tau_s^2")


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

    The program holds each site's variances in units of its own tau_s^2 and sums in units of max tau_s^2, so that
    the solver's tolerances are meaningful for every site; the result is checked against every constraint, and a
    result that misses one by more than :data:`CHECK_TOLERANCE` (relative) is refused with a reason."""
    n = tau.size
    ref = float(np.max(tau))
    t2 = (tau / ref) ** 2
    weighted = mu**2 * t2
    unit = float(np.max(weighted))  # sums in units of ref^2 * unit = max_s mu_s^2 tau_s^2
    w2 = weighted / unit
    scale = ref * math.sqrt(unit)  # tau_c = scale * sqrt(tc2); scale is the DP floor max_s mu_s tau_s
    if tau_c is not None and not TAU_C_FLOOR_RATIO[0] <= tau_c / scale <= TAU_C_FLOOR_RATIO[1]:
        return None, tau_c, _ratio_reason(tau_c, scale)
    prog, bounds, (e, f, g, share) = _base_program(w2, mu, names, coalition, margin)
    g_cost = np.zeros(prog.n_vars)
    for i in range(n):
        g_cost[g(i)] = w2[i]
    # Smallest achievable tau_c^2 under these constraints (used for defaults and for reasons).
    lowest = prog.solve(g_cost, bounds)
    if lowest.status != 0:
        return None, float("nan"), _solver_failure(lowest, tau)
    tc2_min = float(lowest.fun)
    if tau_c is None:
        tc2 = max(tc2_min, 1.0)
    else:
        tc2 = (tau_c / scale) ** 2
        if tc2 < tc2_min * (1 - 1e-9):
            binding = _explain(prog, lowest)
            reason = (f"infeasible: tau_c = {tau_c:.4g} is below the smallest achievable "
                      f"{scale * math.sqrt(tc2_min):.4g} under these constraints. Binding: " + "; ".join(binding))
            return None, tau_c, reason
    prog.equal({g(i): w2[i] for i in range(n)}, tc2, "sum_s mu_s^2 tau_g,s^2 = tau_c^2")
    if objective == "balanced":
        # Maximise the share t with v_g,s >= t tau_s^2 for every weighted site ...
        for i in range(n):
            if mu[i] > 0:
                prog.at_most({share: 1.0, g(i): -1.0}, 0.0, "balanced share")
        cost = np.zeros(prog.n_vars)
        cost[share] = -1.0
        res = prog.solve(cost, bounds)
        if res.status != 0:
            return None, scale * math.sqrt(tc2), _solver_failure(res, tau)
        bounds[share] = (float(res.x[share]) * (1 - 1e-9), None)
    # ... then the least total noise variance.
    noise_cost = np.zeros(prog.n_vars)
    noise_cost[: 3 * n] = np.tile(t2, 3)
    res = prog.solve(noise_cost, bounds)
    if res.status != 0:
        return None, scale * math.sqrt(tc2), _solver_failure(res, tau)
    units = _polish(np.clip(res.x[: 3 * n], 0.0, None).reshape(3, n), w2, mu)
    problem = _violation(units, w2, mu, tc2, names)
    if problem is not None:
        return None, scale * math.sqrt(tc2), _spread_reason(tau, problem)
    return units * t2 * ref**2, scale * math.sqrt(tc2), None


def _polish(units: np.ndarray, w2: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The solver meets its constraints up to absolute tolerances. Raise e and f so that every release covers
    tau_s^2 exactly, then, if one site's weighted helper variance exceeds the others' together (the zero-sum
    polygon condition), raise the others' helper variances to match it. Raising e or f only protects a release
    more; neither reaches the aggregate, so tau_c and the gain are unchanged."""
    ve, vf, vg = units
    ve, vf = np.maximum(ve, 1.0 - vg), np.maximum(vf, 1.0 - vg)
    active = np.flatnonzero(mu > 0)
    if active.size > 1:
        weighted = w2 * ve
        top = int(active[np.argmax(weighted[active])])
        others = active[active != top]
        deficit = weighted[top] - float(weighted[others].sum())
        if deficit > 0:
            ve = ve.copy()
            ve[others] += deficit * (1 + 1e-9) / (others.size * w2[others])
    return np.array([ve, vf, vg])


CHECK_TOLERANCE = 1e-6
"""Largest relative miss of a constraint accepted from the solver (its own tolerances are absolute)."""


def _violation(units: np.ndarray, w2: np.ndarray, mu: np.ndarray, tc2: float, names: tuple[str, ...]) -> str | None:
    """The first constraint the solution misses by more than CHECK_TOLERANCE (relative), in words; None if none.
    ``units``: (3, S) variances in units of each site's tau_s^2."""
    ve, vf, vg = units
    low = 1.0 - CHECK_TOLERANCE
    for i, name in enumerate(names):
        if ve[i] + vg[i] < low or vf[i] + vg[i] < low:
            return f"site {name}'s noise falls short of tau_s^2"
    total = float(np.sum(w2 * vg))
    if abs(total - tc2) > CHECK_TOLERANCE * tc2:
        return "the aggregate's noise misses tau_c^2"
    weighted_e = w2 * ve
    if np.any(weighted_e > (weighted_e.sum() - weighted_e) * (1 + CHECK_TOLERANCE) + 1e-300):
        active = int(np.count_nonzero(mu > 0))
        if active > 1:
            return "the helper's noise cannot sum to zero"
    return None


def _ratio_reason(tau_c: float, floor: float) -> str:
    low, high = TAU_C_FLOOR_RATIO
    return (f"tau_c = {tau_c:.4g} is {tau_c / floor:.3g} times the DP floor {floor:.4g} of these sites; the design "
            f"allows tau_c from {low:g} to {high:g} times the floor")


def _spread_reason(tau: np.ndarray, problem: str) -> str:
    spread = float(np.max(tau) / np.min(tau))
    return (f"the design cannot be computed to the precision it needs ({problem}): the sites' noise levels tau_s "
            f"span a factor of {spread:.3g}. Bring the sites' sizes and budgets closer together.")


def _solver_failure(res: Any, tau: np.ndarray) -> str:
    """A failed solve in words (the solver's own status text only as a detail)."""
    spread = float(np.max(tau) / np.min(tau))
    detail = str(getattr(res, "message", "")).split(" (HiGHS", 1)[0].strip().rstrip(".")
    return (f"the linear program of the design could not be solved ({detail.lower() or 'no solution'}); the sites' "
            f"noise levels tau_s span a factor of {spread:.3g}. Bring the sites' sizes and budgets closer together.")


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
        objective=objective, e_mixing=weighted_zero_sum_mixing(mu, ve), e_law=weighted_zero_sum_law(mu, ve),
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
    e_scale = check_e_scale(e_scale)
    target = None if tau_c is None else check_positive(tau_c, "tau_c")
    return solve_general(budgets, target, objective, e_scale)


@kept_by_content(MAX_KEPT_NOISE_DESIGNS)
def solve_general(budgets: SiteBudgets, tau_c: float | None = None, objective: Objective = "balanced",
                  e_scale: float = 1.0) -> NoiseDesign:
    """:func:`design_general` for validated budgets, tau_c > 0 (None: the DP floor), objective and e_scale >= 1. Kept
    for its inputs (:func:`dpcore.kept.kept_by_content`): a planner asks for the same scenario's design hundreds of
    times (capePCA's exported-script test solved 656 linear programs)."""
    target = dp_floor(budgets.weights, budgets.tau) if tau_c is None else tau_c
    variances, tau_c_out, reason = solve_variances(budgets.tau, budgets.weights, budgets.names, target, objective,
                                                   None, 0.0)
    return finish_design(budgets, variances, tau_c_out, method="general", reason=reason, objective=objective,
                         e_scale=e_scale, collusion=None)


ENTRIES = (DesignSolver(
    name="general", title="General solver (linear program)", position=10,
    options=frozenset({"objective", "e_scale"}),
    help="General: a linear program that finds feasible variances whenever they exist, for any site order.",
    solve=lambda budgets, request: solve_general(budgets, request.tau_c, request.objective, request.e_scale),
),)
