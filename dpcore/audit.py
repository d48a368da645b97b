"""Privacy audit of a noise design against adversaries who see several releases (SPEC section 5).

The papers prove each site's release private on its own and invoke post-processing; the releases are
correlated (sum_s mu_s e_s = 0), so that does not cover an aggregator who sees all of them, nor sites
that collude. Everything is linear and Gaussian, so the exact answer is short: per coordinate, an
adversary sees y = b a_s + L z with z ~ N(0, I) (the other sites' data known, as DP requires). Its
best unbiased estimate of a_s has variance sigma_eff^2 = 1 / (b^T Cov^+ b), Cov = L L^T, and is
exposed exactly (sigma_eff = 0) when b has a component outside the range of Cov. The view is then
exactly a Gaussian mechanism with noise sigma_eff and sensitivity Delta_s; its privacy profile gives
eps_eff at delta_s and delta_eff at eps_s.

Views, for every site s:
  outside               the released aggregate sum_t mu_t (a_t + g_t) only;
  aggregator            every release a_t + e_t + f_t + g_t, knowing every f_t;
  aggregator+coalition  the same plus e_t, f_t, g_t of the worst coalition of up to c other sites;
  sites                 a coalition of up to c other sites without the aggregator: the aggregate and
                        their own noise.
For matrix and tensor releases with independent symmetric noise per unique entry the same scalar
analysis holds entry-wise (the Mahalanobis distance of a shift d is ||d||^2 b^T Cov^+ b).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from .cape import NoiseDesign
from .mechanisms import delta_for_sigma, eps_for_sigma
from .validation import InputError

__all__ = [
    "VIEWS",
    "AuditReport",
    "AuditRow",
    "ViewSigma",
    "audit_design",
    "default_collusion",
    "effective_sigma",
    "entry_pair_sigma",
    "view_sigmas",
]

VIEWS = ("outside", "aggregator", "aggregator+coalition", "sites")
MAX_COALITIONS = 500  # exact enumeration up to this many coalitions per site
MAX_GREEDY_SITES = 30  # greedy search up to this many sites, one heuristic coalition beyond


def default_collusion(n_sites: int) -> int:
    """ceil(S/3) - 1, the bound of the authors' later CAPE analysis (never negative)."""
    return max(math.ceil(n_sites / 3) - 1, 0)


def effective_sigma(b: np.ndarray, cov: np.ndarray, rtol: float = 1e-11) -> float:
    """sigma_eff = (b^T Cov^+ b)^(-1/2) for observations y = b a + noise with covariance Cov.

    Returns 0 when b has a component outside the range of Cov (a exposed exactly) and inf when b = 0.
    """
    b = np.asarray(b, dtype=float)
    if not np.any(b):
        return math.inf
    cov = 0.5 * (np.asarray(cov, dtype=float) + np.asarray(cov, dtype=float).T)
    w, u = np.linalg.eigh(cov)
    top = max(float(w.max()), 0.0)
    coords = u.T @ b
    keep = w > rtol * top if top > 0 else np.zeros_like(w, dtype=bool)
    null_part = float(np.sum(coords[~keep] ** 2))
    if null_part > 1e-9 * float(b @ b):
        return 0.0
    info = float(np.sum(coords[keep] ** 2 / w[keep]))
    return math.inf if info <= 0 else 1.0 / math.sqrt(info)


def entry_pair_sigma(var_e: float, var_g: float, *, symmetric_e: bool) -> float:
    """sigma_eff of one site's off-diagonal pair (i, j), (j, i) of A_hat_s - F_s seen by the aggregator.

    With symmetric E both entries carry the same e: sigma_eff^2 = var_e + var_g. With E drawn i.i.d.
    in both triangles and symmetric G the aggregator averages them: var_g + var_e / 2 (SPEC 9.1)."""
    cov = np.full((2, 2), var_g) + (np.full((2, 2), var_e) if symmetric_e else var_e * np.eye(2))
    return effective_sigma(np.ones(2), cov)


@dataclass(frozen=True)
class ViewSigma:
    """sigma_eff of one site in one view. ``exact`` is False when the worst coalition was searched
    heuristically; ``sigma_bound`` is then a proven lower bound (the site's own noise g_s)."""

    site: int
    view: str
    coalition: tuple[int, ...]
    sigma_eff: float
    exact: bool = True
    sigma_bound: float | None = None


def _noise_blocks(design: NoiseDesign) -> tuple[np.ndarray, np.ndarray]:
    if design.e_mixing is None or not design.feasible:
        raise InputError(f"cannot audit an infeasible design: {design.reason}")
    return design.e_mixing, np.sqrt(np.clip(design.var_g, 0.0, None))


def _aggregator_sigma(design: NoiseDesign, site: int, coalition: tuple[int, ...]) -> float:
    """All releases minus f (the aggregator knows f), plus e_t and g_t of the coalition."""
    mix, std_g = _noise_blocks(design)
    n, m = design.n_sites, mix.shape[1]
    rows = [np.hstack([mix, np.diag(std_g)])]
    for t in coalition:
        rows.append(np.hstack([mix[t], np.zeros(n)])[None, :])
        g_row = np.zeros(m + n)
        g_row[m + t] = std_g[t]
        rows.append(g_row[None, :])
    lin = np.vstack(rows)
    b = np.zeros(lin.shape[0])
    b[site] = 1.0
    return effective_sigma(b, lin @ lin.T)


def _sites_sigma(design: NoiseDesign, site: int, coalition: tuple[int, ...]) -> float:
    """The aggregate sum_t mu_t (a_t + e_t + g_t) plus e_t and g_t of the coalition."""
    mix, std_g = _noise_blocks(design)
    n, m = design.n_sites, mix.shape[1]
    mu = design.weights
    rows = [np.hstack([mu @ mix, mu * std_g])[None, :]]
    for t in coalition:
        rows.append(np.hstack([mix[t], np.zeros(n)])[None, :])
        g_row = np.zeros(m + n)
        g_row[m + t] = std_g[t]
        rows.append(g_row[None, :])
    lin = np.vstack(rows)
    b = np.zeros(lin.shape[0])
    b[0] = mu[site]
    return effective_sigma(b, lin @ lin.T)


def _worst(design: NoiseDesign, site: int, size: int, sigma_of) -> tuple[tuple[int, ...], float, bool]:
    """Coalition of ``size`` other sites minimising sigma_eff: exact, greedy, or one heuristic guess."""
    others = [t for t in range(design.n_sites) if t != site]
    if size == 0:
        return (), sigma_of(design, site, ()), True
    if math.comb(len(others), size) <= MAX_COALITIONS:
        best = min(((c, sigma_of(design, site, c)) for c in combinations(others, size)), key=lambda x: x[1])
        return best[0], best[1], True
    if design.n_sites <= MAX_GREEDY_SITES:
        chosen: list[int] = []
        for _ in range(size):
            cand = min((t for t in others if t not in chosen),
                       key=lambda t: sigma_of(design, site, tuple(sorted(chosen + [t]))))
            chosen.append(cand)
        coal = tuple(sorted(chosen))
        return coal, sigma_of(design, site, coal), False
    load = design.weights**2 * np.clip(design.var_g, 0, None)
    coal = tuple(sorted(sorted(others, key=lambda t: -load[t])[:size]))
    return coal, sigma_of(design, site, coal), False


def view_sigmas(design: NoiseDesign, collusion: int) -> list[ViewSigma]:
    """sigma_eff for every site and view, with coalitions of up to ``collusion`` other sites."""
    n = design.n_sites
    if isinstance(collusion, bool) or not isinstance(collusion, (int, np.integer)) or collusion < 0:
        raise InputError(f"collusion must be an integer >= 0 (got {collusion!r})", "collusion")
    size = min(int(collusion), n - 1)
    out_std = design.output_std
    std_g = np.sqrt(np.clip(design.var_g, 0, None))
    result = []
    for s in range(n):
        mu_s = design.weights[s]
        outside = math.inf if mu_s == 0 else out_std / mu_s
        result.append(ViewSigma(s, "outside", (), outside))
        result.append(ViewSigma(s, "aggregator", (), _aggregator_sigma(design, s, ())))
        if size > 0:
            coal, sig, exact = _worst(design, s, size, _aggregator_sigma)
            result.append(ViewSigma(s, "aggregator+coalition", coal, sig, exact, None if exact else std_g[s]))
            coal, sig, exact = _worst(design, s, size, _sites_sigma)
            result.append(ViewSigma(s, "sites", coal, sig, exact, None if exact else std_g[s]))
    return result


@dataclass(frozen=True)
class AuditRow:
    site: str
    view: str
    colluders: int
    coalition: tuple[str, ...]
    sigma_eff: float
    eps_eff: float
    delta_eff: float
    eps: float
    delta: float
    ok: bool
    exact: bool = True
    sigma_bound: float | None = None

    def to_dict(self) -> dict[str, Any]:
        def num(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            "site": self.site, "view": self.view, "colluders": self.colluders, "coalition": list(self.coalition),
            "sigma_eff": num(self.sigma_eff), "eps_eff": num(self.eps_eff), "delta_eff": float(self.delta_eff),
            "eps": self.eps, "delta": self.delta, "ok": self.ok, "exact": self.exact,
            "sigma_bound": num(self.sigma_bound),
        }


@dataclass(frozen=True)
class AuditReport:
    rows: tuple[AuditRow, ...]
    collusion: int
    warnings: tuple[str, ...]

    @property
    def all_ok(self) -> bool:
        return all(r.ok for r in self.rows)

    def failing(self) -> list[AuditRow]:
        return [r for r in self.rows if not r.ok]

    def to_records(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rows]


def audit_design(
    design: NoiseDesign, sensitivities: Any, eps: Any, delta: Any, collusion: int | None = None
) -> AuditReport:
    """Promised (eps_s, delta_s) against the exact eps at delta_s and delta at eps_s, per site and view.

    ``sensitivities`` are the Delta_s the design's tau_s were calibrated for; ``collusion`` defaults to
    ceil(S/3) - 1.
    """
    n = design.n_sites
    sens = np.broadcast_to(np.asarray(sensitivities, dtype=float), (n,))
    eps = np.broadcast_to(np.asarray(eps, dtype=float), (n,))
    delta = np.broadcast_to(np.asarray(delta, dtype=float), (n,))
    collusion = default_collusion(n) if collusion is None else collusion
    rows = []
    warnings = []
    for v in view_sigmas(design, collusion):
        s = v.site
        eps_eff = eps_for_sigma(v.sigma_eff, sens[s], delta[s])
        delta_eff = delta_for_sigma(v.sigma_eff, sens[s], eps[s])
        ok = bool(eps_eff <= eps[s] * (1 + 1e-9) + 1e-12)
        rows.append(AuditRow(design.names[s], v.view, len(v.coalition), tuple(design.names[t] for t in v.coalition),
                             v.sigma_eff, eps_eff, delta_eff, float(eps[s]), float(delta[s]), ok, v.exact,
                             v.sigma_bound))
        if not v.exact:
            warnings.append(
                f"site {design.names[s]}, view {v.view}: the worst coalition of {len(v.coalition)} was searched "
                f"heuristically ({n} sites); the proven lower bound is sigma_eff >= tau_g = {v.sigma_bound:.4g}"
            )
    return AuditReport(tuple(rows), int(collusion), tuple(warnings))
