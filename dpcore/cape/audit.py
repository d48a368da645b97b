"""Privacy audit of a noise design against adversaries who see several releases (docs/math/audit.md).

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

from ..limits import MAX_COALITIONS, MAX_GREEDY_SITES
from ..privacy.calibration import exact_delta, exact_eps
from ..validation import InputError
from .coalition import aggregator_sigma2, site_terms, worst_coalitions
from .design import NoiseDesign

__all__ = [
    "AUDIT_VIEWS",
    "VIEWS",
    "AuditReport",
    "AuditRow",
    "AuditView",
    "ViewSigma",
    "audit_design",
    "default_collusion",
    "effective_sigma",
    "entry_pair_sigma",
    "view_sigmas",
]

@dataclass(frozen=True, kw_only=True)
class AuditView:
    """One view the audit computes (docs/math/audit.md): who has it (``party``), what it ``sees`` and ``knows``,
    and one sentence for help texts (``description``). The protocol walk-through, the Noise design page and the What
    eps means page read :data:`AUDIT_VIEWS`."""

    name: str
    party: str
    sees: str
    knows: str
    description: str


AUDIT_VIEWS: dict[str, AuditView] = {view.name: view for view in (
    AuditView(name="outside", party="outside observer", sees="the published aggregate", knows="nothing else",
              description="an outside observer of the published aggregate"),
    AuditView(name="aggregator", party="aggregator", sees="every site's release", knows="every f_s it drew",
              description="the aggregator, who sees every release and knows every f_s (the noise it handed out)"),
    AuditView(name="aggregator+coalition", party="aggregator + colluding sites", sees="every release",
              knows="every f_s, and e_t, f_t, g_t of the coalition",
              description="the aggregator together with the worst coalition of up to c other sites"),
    AuditView(name="sites", party="colluding sites (no aggregator)", sees="the published aggregate",
              knows="their own e_t, f_t, g_t",
              description="a coalition of up to c other sites, without the aggregator (they see the aggregate)"),
)}
"""Every view of the audit, the one table of them."""
VIEWS = tuple(AUDIT_VIEWS)


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
    in both triangles and symmetric G the aggregator averages them: var_g + var_e / 2 (docs/math/corrections.md,
    item 1)."""
    cov = np.full((2, 2), var_g) + (np.full((2, 2), var_e) if symmetric_e else var_e * np.eye(2))
    return effective_sigma(np.ones(2), cov)


@dataclass(frozen=True, kw_only=True)
class ViewSigma:
    """sigma_eff of one site in one view, attained by ``coalition``. ``exact`` is False when the worst coalition
    could not be certified; ``sigma_eff`` is then what the reported coalition leaves (the worst case is at most
    that) and ``sigma_bound`` a proven lower bound over every coalition of that size."""

    site: int
    view: str
    coalition: tuple[int, ...]
    sigma_eff: float
    exact: bool = True
    sigma_bound: float | None = None


def _check_auditable(design: NoiseDesign) -> None:
    if design.e_mixing is None or not design.feasible:
        raise InputError(f"cannot audit an infeasible design: {design.reason}")


def _batch_sigma_first(covs: np.ndarray, rtol: float = 1e-11) -> np.ndarray:
    """:func:`effective_sigma` with b = the first unit vector, for a stack of covariances (B, n, n)."""
    covs = 0.5 * (covs + covs.swapaxes(-1, -2))
    w, u = np.linalg.eigh(covs)
    top = np.maximum(w.max(axis=1), 0.0)
    coords2 = u[:, 0, :] ** 2
    keep = w > rtol * top[:, None]
    null_part = np.where(keep, 0.0, coords2).sum(axis=1)
    info = np.where(keep, coords2 / np.where(keep, w, 1.0), 0.0).sum(axis=1)
    with np.errstate(divide="ignore"):
        sigma = np.where(info > 0, 1.0 / np.sqrt(np.where(info > 0, info, 1.0)), math.inf)
    sigma[null_part > 1e-9] = 0.0
    return sigma


def _aggregator_sigmas(cov_e: np.ndarray, var_g: np.ndarray, site: int, coalitions: np.ndarray) -> np.ndarray:
    """sigma_eff of ``site`` for the aggregator with each coalition (rows of ``coalitions``, shape (B, k)).

    The aggregator knows every f, so it sees y_t = a_t [t = s] + e_t + g_t for every t; a coalition adds
    its e_t and g_t. Given e_C, the other e are Gaussian with the Schur complement covariance
    Sigma_RR - Sigma_RC Sigma_CC^+ Sigma_CR, and g_R is independent of everything known, so
    sigma_eff^2 = 1 / [(Sigma_R|C + diag(v_g,R))^+]_(ss).
    """
    n = cov_e.shape[0]
    batch, k = coalitions.shape
    out = np.empty(batch)
    for lo in range(0, batch, 256):  # bounded memory for large batches
        coal = coalitions[lo : lo + 256]
        b = coal.shape[0]
        mask = np.ones((b, n), dtype=bool)
        mask[np.arange(b)[:, None], coal] = False
        mask[:, site] = False
        rest = np.concatenate([np.full((b, 1), site), np.nonzero(mask)[1].reshape(b, n - k - 1)], axis=1)
        cond = cov_e[rest[:, :, None], rest[:, None, :]]
        if k:
            s_rc = cov_e[rest[:, :, None], coal[:, None, :]]
            s_cc = cov_e[coal[:, :, None], coal[:, None, :]]
            scale = max(float(np.abs(s_cc).max()), 1e-300)
            cond = cond - s_rc @ np.linalg.pinv(s_cc / scale, rtol=1e-10, hermitian=True) @ s_rc.swapaxes(1, 2) / scale
        idx = np.arange(n - k)
        cond[:, idx, idx] += var_g[rest]
        out[lo : lo + b] = _batch_sigma_first(cond)
    return out


def _worst_aggregator(cov_e: np.ndarray, var_g: np.ndarray, load: np.ndarray, site: int,
                      size: int) -> tuple[tuple[int, ...], float, bool]:
    """Coalition of ``size`` other sites minimising sigma_eff: exact enumeration, greedy, or one guess."""
    n = cov_e.shape[0]
    others = [t for t in range(n) if t != site]
    if math.comb(len(others), size) <= MAX_COALITIONS:
        coals = np.array(list(combinations(others, size)), dtype=np.int64).reshape(-1, size)
        sig = _aggregator_sigmas(cov_e, var_g, site, coals)
        best = int(np.argmin(sig))
        return tuple(int(t) for t in coals[best]), float(sig[best]), True
    if n <= MAX_GREEDY_SITES:
        chosen: list[int] = []
        sig_best = math.inf
        for _ in range(size):
            cands = [t for t in others if t not in chosen]
            coals = np.array([sorted(chosen + [t]) for t in cands], dtype=np.int64)
            sig = _aggregator_sigmas(cov_e, var_g, site, coals)
            best = int(np.argmin(sig))
            chosen.append(cands[best])
            sig_best = float(sig[best])
        return tuple(sorted(chosen)), sig_best, False
    guess = np.array([sorted(sorted(others, key=lambda t: -load[t])[:size])], dtype=np.int64)
    return tuple(int(t) for t in guess[0]), float(_aggregator_sigmas(cov_e, var_g, site, guess)[0]), False


def view_sigmas(design: NoiseDesign, collusion: int, views: tuple[str, ...] = VIEWS) -> list[ViewSigma]:
    """sigma_eff for every site and view in ``views``, with coalitions of up to ``collusion`` other sites.

    The sites view has a closed form: the aggregate carries sum_t mu_t g_t (e cancels), a coalition C
    knows its own g_t, so sigma_eff^2 = sum_{t not in C} mu_t^2 v_g,t / mu_s^2, worst for the C with the
    largest mu_t^2 v_g,t. The aggregator's views use the design's factored helper law
    (:mod:`dpcore.cape.coalition`: closed forms, the worst coalition exact or bounded with both numbers); a design
    without one (or whose law does not match its e_mixing) takes the general path: pseudo-inverses, exact
    enumeration up to MAX_COALITIONS coalitions, a greedy search up to MAX_GREEDY_SITES sites, one heuristic
    coalition beyond, with the proven bound sigma_eff >= tau_g,s.
    """
    _check_auditable(design)
    n = design.n_sites
    if isinstance(collusion, bool) or not isinstance(collusion, (int, np.integer)) or collusion < 0:
        raise InputError(f"collusion must be an integer >= 0 (got {collusion!r})", "collusion")
    size = min(int(collusion), n - 1)
    var_g = np.clip(design.var_g, 0.0, None)
    load = design.weights**2 * var_g
    aggregator = _aggregator_views(design, size, views)
    result = []
    for s in range(n):
        mu_s = design.weights[s]
        if "outside" in views:
            result.append(ViewSigma(site=s, view="outside", coalition=(),
                                    sigma_eff=math.inf if mu_s == 0 else design.output_std / mu_s))
        result.extend(v for v in aggregator if v.site == s and (v.view == "aggregator" or size > 0))
        if size > 0 and "sites" in views:
            others = sorted((t for t in range(n) if t != s), key=lambda t: -load[t])
            coal = tuple(sorted(others[:size]))
            remaining = float(load.sum() - load[list(coal)].sum())
            sig = math.inf if mu_s == 0 else math.sqrt(max(remaining, 0.0)) / mu_s
            result.append(ViewSigma(site=s, view="sites", coalition=coal, sigma_eff=sig))
    return result


def short_views(design: NoiseDesign, collusion: int, tau: np.ndarray, rtol: float = 1e-9) -> list[ViewSigma]:
    """The aggregator views (with and without up to ``collusion`` colluders) that are not proven to keep
    sigma_eff >= tau_s (1 - rtol): a view counts as kept on its exact sigma_eff or, when the worst coalition is
    not exact, on its proven lower bound. Refines a coalition search only as far as this question needs."""
    size = min(int(collusion), design.n_sites - 1)
    views = _aggregator_views(design, size, ("aggregator", "aggregator+coalition"),
                              threshold=(np.asarray(tau, dtype=float) * (1.0 - rtol)) ** 2)
    return [v for v in views if (v.sigma_eff if v.exact else v.sigma_bound) < tau[v.site] * (1.0 - rtol)]


def _aggregator_views(design: NoiseDesign, size: int, views: tuple[str, ...],
                      threshold: np.ndarray | None = None) -> list[ViewSigma]:
    """The aggregator and aggregator+coalition views of every site, fast path first."""
    terms = site_terms(design)
    out: list[ViewSigma] = []
    if terms is None:
        return _general_aggregator_views(design, size, views)
    if "aggregator" in views:
        sigma2 = aggregator_sigma2(terms)
        out.extend(ViewSigma(site=s, view="aggregator", coalition=(), sigma_eff=math.sqrt(float(sigma2[s])))
                   for s in range(design.n_sites))
    if size > 0 and "aggregator+coalition" in views:
        for w in worst_coalitions(terms, size, threshold):
            out.append(ViewSigma(site=w.site, view="aggregator+coalition", coalition=w.coalition,
                                 sigma_eff=math.sqrt(w.sigma2), exact=w.exact,
                                 sigma_bound=None if w.exact else math.sqrt(w.lower2)))
    return out


def _general_aggregator_views(design: NoiseDesign, size: int, views: tuple[str, ...]) -> list[ViewSigma]:
    """The aggregator's views from the covariance of e_mixing (designs without a factored law)."""
    var_g = np.clip(design.var_g, 0.0, None)
    cov_e = design.e_mixing @ design.e_mixing.T
    load = design.weights**2 * var_g
    out: list[ViewSigma] = []
    for s in range(design.n_sites):
        if "aggregator" in views:
            sig = _aggregator_sigmas(cov_e, var_g, s, np.zeros((1, 0), dtype=np.int64))[0]
            out.append(ViewSigma(site=s, view="aggregator", coalition=(), sigma_eff=float(sig)))
        if size > 0 and "aggregator+coalition" in views:
            coal, sig, exact = _worst_aggregator(cov_e, var_g, load, s, size)
            out.append(ViewSigma(site=s, view="aggregator+coalition", coalition=coal, sigma_eff=sig, exact=exact,
                                 sigma_bound=None if exact else math.sqrt(var_g[s])))
    return out


@dataclass(frozen=True, kw_only=True)
class AuditRow:
    """One site in one view: the promise (eps, delta), sigma_eff and the exact eps_eff at delta and delta_eff at
    eps it gives. ``ok``: the promise is kept; for a row that is not ``exact`` it is judged on the proven
    ``sigma_bound``, so "kept" is never claimed without proof."""

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

    ``sensitivities`` are the Delta_s the design's tau_s were calibrated for (positive), ``eps``, ``delta`` the
    promised budgets (from a validated scenario); ``collusion`` defaults to ceil(S/3) - 1.
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
        eps_eff = exact_eps(v.sigma_eff, float(sens[s]), float(delta[s]))
        delta_eff = exact_delta(v.sigma_eff, float(sens[s]), float(eps[s]))
        proven = v.sigma_eff if v.exact else float(v.sigma_bound)
        eps_proven = eps_eff if v.exact else exact_eps(proven, float(sens[s]), float(delta[s]))
        ok = bool(eps_proven <= eps[s] * (1 + 1e-9) + 1e-12)
        rows.append(AuditRow(site=design.names[s], view=v.view, colluders=len(v.coalition),
                             coalition=tuple(design.names[t] for t in v.coalition), sigma_eff=v.sigma_eff,
                             eps_eff=eps_eff, delta_eff=delta_eff, eps=float(eps[s]), delta=float(delta[s]), ok=ok,
                             exact=v.exact, sigma_bound=v.sigma_bound))
        if not v.exact:
            warnings.append(
                f"site {design.names[s]}, view {v.view}: the worst coalition of {len(v.coalition)} could not be "
                f"certified ({n} sites); the coalition shown leaves sigma_eff = {v.sigma_eff:.4g} and no coalition "
                f"leaves less than the proven bound {proven:.4g}; the promise counts as kept only if the bound keeps it"
            )
    return AuditReport(tuple(rows), int(collusion), tuple(warnings))
