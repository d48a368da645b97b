"""The aggregator's views of the privacy audit in closed form, and the worst coalition of c colluders
(docs/math/audit.md, "Fast and exact: the aggregator's views in closed form").

Every design of :mod:`dpcore.cape` gives the helper's terms in factored form (:class:`~dpcore.privacy.zero_sum.
ZeroSumLaw`): on the weighted sites u_t = mu_t e_t = w_t - c_t W with independent w_t ~ N(0, d_t^2), W = sum w_t.
Write gamma_t = mu_t^2 tau_g,t^2. The aggregator with a coalition C (site s not in C) sees u_t + mu_t g_t outside
C and u_t itself in C, so its view of a_s (signal beta = mu_s at t = s) has the noise covariance
Cov(u) + diag(gamma_t [t not in C]), and its sigma_eff^2 is min over w with w_s = 1/beta of w^T Cov w:

    sigma^2(C) = min_{w, m: c.w = m, w_s = 1/beta} sum_t d_t^2 (w_t - m)^2 + sum_{t not in C} gamma_t w_t^2 .

With one multiplier lambda for c.w = m the problem separates over t; eliminating (m, lambda) gives the exact
closed form of :func:`_sigma2` in three sums over the sites outside and inside C,

    R = sum_{t not in C, t != s} d_t^2 gamma_t / a_t,   a_t = d_t^2 + gamma_t,
    E = sum_{t not in C, t != s} c_t^2 / a_t + sum_{t in C} c_t^2 / d_t^2,
    B - c_s = (1 - sum_t c_t) + sum_{t not in C, t != s} c_t gamma_t / a_t,

sigma^2 = {E [d_s^2 (R + gamma_s) + gamma_s R] + d_s^2 (B - c_s)^2 + gamma_s B^2 + R c_s^2}
          / (beta^2 [(R + d_s^2) E + B^2]),

every term non-negative (no cancellation at large helper noise; the limit is sum_{t not in C} gamma_t / mu_s^2).
A site t with d_t = 0 and c_t != 0 ("revealing": u_t is a multiple of W) makes E infinite once it is in C.

**The worst coalition.** Moving t into C changes the Lagrangian Phi_C(m, lambda) by -(eta . v_t)^2 / 4 with
eta = (lambda, 2m) and v_t = sqrt(gamma_t / a_t) (c_t / d_t, d_t): for a fixed (m, lambda) the best coalition
is the c sites with the largest (eta . v_t)^2. Sweeping the direction of eta over the half circle gives at
most S(S-1) orderings (they change only where eta is orthogonal to v_i - v_j or v_i + v_j); their top-c sets
are the candidates, and the smallest sigma^2 among them is attained by a real coalition (an upper bound on the
worst case). The lower bound is Lagrangian duality: for every lambda,

    min_C sigma^2(C) = min_C max_lambda' psi_C(lambda') >= min_C psi_C(lambda),  psi_C = min_m Phi_C(., lambda),

and min_C psi_C(lambda) is attained by a candidate (the top-c set of some (m, lambda)), so it is a minimum over
the candidates alone. Each psi_C is a concave parabola with vertex (lambda_C, sigma^2(C)), so the bound is
cheap; evaluated at the best candidate's lambda, it equals the upper bound unless the optimum switches between
coalitions there (a duality gap). Then the lower envelope is maximised over lambda, and if a gap remains, the
coalitions are enumerated up to :data:`~dpcore.limits.MAX_ENUMERATED_COALITIONS`; beyond that the result says it
is a bound, with both numbers. Coalitions that contain a revealing site force lambda = 0, where sigma^2
increases with R alone: the worst of them holds one revealing site and the c - 1 largest d_t^2 gamma_t / a_t
(exact). Tests compare every number with the direct observation model and brute-force enumeration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations, islice

import numpy as np

from ..limits import MAX_ENUMERATED_COALITIONS, MAX_SWEEP_ENTRIES, MAX_SWEEP_SITES
from ..validation import InputError
from .design import NoiseDesign

__all__ = ["SiteTerms", "WorstCoalition", "aggregator_sigma2", "site_terms", "worst_coalitions"]

LAW_RTOL = 1e-9
"""The factored law is used when its covariance equals e_mixing's to this relative accuracy."""
EXACT_RTOL = 1e-9
"""A worst coalition is exact when the proven lower bound on sigma^2 is within this relative distance."""
GOLDEN_STEPS = 100
"""Steps of the golden-section search of the Lagrangian bound over lambda (shrinks the bracket by 1e-21)."""


@dataclass(frozen=True)
class SiteTerms:
    """Per-site quantities of a design's factored law, in units of u = mu e (docs/math/audit.md).

    ``active``: mu_s > 0. ``revealing``: d_s = 0 and c_s != 0 (u_s is a multiple of W). ``regular``: active and not
    revealing. ``rmm``, ``e_out``, ``e_in``, ``b``: site t's terms of R, E, B outside / inside a coalition;
    ``de`` = e_in - e_out; ``v``: the sweep vectors (zero for sites whose membership changes nothing)."""

    weights: np.ndarray
    var_free: np.ndarray
    active: np.ndarray
    revealing: np.ndarray
    regular: np.ndarray
    c: np.ndarray
    d2: np.ndarray
    g: np.ndarray
    rmm: np.ndarray
    e_out: np.ndarray
    e_in: np.ndarray
    de: np.ndarray
    b: np.ndarray
    slack: float
    v: np.ndarray
    var_g: np.ndarray

    @property
    def n_sites(self) -> int:
        return int(self.weights.size)


@dataclass(frozen=True)
class WorstCoalition:
    """The worst coalition of ``size`` other sites for ``site``: ``sigma2`` is attained by ``coalition`` (so the
    worst case is at most that); every coalition of that size leaves at least ``lower2``; ``exact`` when the two
    agree to :data:`EXACT_RTOL`."""

    site: int
    coalition: tuple[int, ...]
    sigma2: float
    lower2: float
    exact: bool


def _ratio(num: np.ndarray, den: np.ndarray, where: np.ndarray, fill: float = 0.0) -> np.ndarray:
    safe = np.where(where, den, 1.0)
    return np.where(where, num / safe, fill)


def site_terms(design: NoiseDesign) -> SiteTerms | None:
    """The terms of :func:`_sigma2` for a feasible design, or None when it has no factored law or the law does not
    reproduce its e_mixing (then the audit takes the general path)."""
    law = design.e_law
    if law is None or design.e_mixing is None:
        return None
    mu = np.asarray(design.weights, dtype=float)
    cov = design.e_mixing @ design.e_mixing.T
    scale = max(float(np.max(np.abs(cov))), 1e-300)
    if np.max(np.abs(law.covariance(mu) - cov)) > LAW_RTOL * scale:
        return None
    active = mu > 0
    c = np.where(active, law.common, 0.0)
    d2 = np.where(active, law.var_w, 0.0)
    g = mu**2 * np.clip(design.var_g, 0.0, None)
    a = d2 + g
    rmm = _ratio(d2 * g, a, a > 0)
    e_out = np.where(c == 0, 0.0, _ratio(c**2, a, a > 0, math.inf))
    e_in = np.where(c == 0, 0.0, _ratio(c**2, d2, d2 > 0, math.inf))
    de = np.where(c == 0, 0.0, _ratio(c**2 * g, d2 * a, d2 > 0, math.inf))  # e_in - e_out without cancellation
    b = c * _ratio(g, a, g > 0)
    revealing = active & (d2 == 0) & (c != 0)
    regular = active & ~revealing
    root = np.sqrt(_ratio(g, a, a > 0))
    v = np.column_stack([root * _ratio(c, np.sqrt(d2), d2 > 0), root * np.sqrt(d2)])
    v[~regular] = 0.0
    slack = 1.0 - float(np.sum(c))
    slack = 0.0 if abs(slack) < 1e-12 else slack
    return SiteTerms(weights=mu, var_free=np.where(active, 0.0, np.clip(law.var_w, 0.0, None)), active=active,
                     revealing=revealing, regular=regular, c=c, d2=d2, g=g, rmm=rmm, e_out=e_out, e_in=e_in, de=de,
                     b=b, slack=slack, v=v, var_g=np.clip(design.var_g, 0.0, None))


@dataclass(frozen=True)
class _Closed:
    """sigma^2(C) with what the certificate needs: the vertex lambda_C of psi_C, and den, q of :func:`_psi`."""

    sigma2: np.ndarray
    lam: np.ndarray
    den: np.ndarray
    q: np.ndarray
    e: np.ndarray


def _sigma2(t: SiteTerms, s: np.ndarray, r: np.ndarray, e: np.ndarray, bmc: np.ndarray) -> _Closed:
    """The closed form of the module docstring for target sites ``s`` and sums R, E, B - c_s (broadcast).

    E = inf (a revealing member) forces lambda = 0: sigma^2 = [d_s^2 (R + gamma_s) + gamma_s R] / (R + d_s^2).
    den = (R + d_s^2) E + B^2 = 0 only if B = 0 and E (R + d_s^2) = 0; then the saddle is solved directly."""
    cs, d2s, gs, beta = t.c[s], t.d2[s], t.g[s], t.weights[s]
    bb = bmc + cs
    q = r + d2s
    finite = np.isfinite(e)
    ef = np.where(finite, e, 0.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        num = ef * (d2s * (r + gs) + gs * r) + d2s * bmc**2 + gs * bb**2 + r * cs**2
        den = q * ef + bb**2
        regular = _ratio(num, den, den > 0)
        degenerate = np.where(q > 0, _ratio(d2s * r + gs * q, q, q > 0), gs + _ratio(cs**2, ef, ef > 0))
        forced = np.where(q > 0, _ratio(d2s * (r + gs) + gs * r, q, q > 0), gs)
        sigma2 = np.where(finite, np.where(den > 0, regular, degenerate), forced) / beta**2
        lam = np.where(den > 0, _ratio(2.0 * (d2s * bmc - r * cs), beta * den, den > 0),
                       np.where(q > 0, 0.0, _ratio(-2.0 * cs, beta * ef, ef > 0)))
    return _Closed(sigma2=np.maximum(sigma2, 0.0), lam=np.where(finite, lam, 0.0), den=np.where(finite, den, math.inf),
                   q=q, e=ef)


def _psi(closed: _Closed, lam: np.ndarray | float) -> np.ndarray:
    """psi_C(lambda) = min_m Phi_C(m, lambda), a concave parabola with vertex (lambda_C, sigma^2(C)); -inf where
    it is unbounded below (q = 0, lambda != lambda_C). Valid as a lower bound everywhere."""
    x, c = closed, np.asarray(lam, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        curv = np.where(x.q > 0, _ratio(x.den, 4.0 * x.q, (x.q > 0) & (x.den > 0)),
                        np.where(x.den > 0, math.inf, x.e / 4.0))
        gap = (c - x.lam) ** 2
        drop = np.where(gap > 0, curv * gap, 0.0)
        out = x.sigma2 - drop
    return np.where(np.isfinite(x.den) & ~np.isnan(out), out, -math.inf)


def _sum_others(x: np.ndarray) -> np.ndarray:
    """sum over t != s of x_t, for every s; +inf where another site's term is infinite."""
    inf = np.isinf(x)
    finite = np.where(inf, 0.0, x)
    count = int(np.sum(inf)) - inf.astype(int)
    return np.where(count > 0, math.inf, np.sum(finite) - finite)


def aggregator_sigma2(t: SiteTerms) -> np.ndarray:
    """sigma_eff^2 of every site for the aggregator without colluders (C empty). A site with mu_s = 0 draws
    its e_s independently of everything, so its release shows it behind var_e + var_g."""
    sites = np.arange(t.n_sites)
    closed = _sigma2(t, sites, _sum_others(t.rmm), _sum_others(t.e_out), t.slack + _sum_others(t.b))
    return np.where(t.active, closed.sigma2, t.var_free + t.var_g)


def _coalition_sigma2(t: SiteTerms, s: int, members: np.ndarray) -> float:
    """sigma^2 of site s for one coalition, from sums over its members and non-members directly."""
    inside = np.zeros((1, t.n_sites), dtype=bool)
    inside[0, np.asarray(members, dtype=np.int64)] = True
    return float(_masks_sigma2(t, np.array([s]), inside)[0])


def _masks_sigma2(t: SiteTerms, sites: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """sigma^2 of each site ``sites[i]`` for the coalition ``inside[i]`` (a boolean row over all sites), by direct
    sums over members and non-members (no differences of large sums)."""
    outside = ~inside
    outside[np.arange(sites.size), sites] = False
    e_out_inf, e_in_inf = np.isinf(t.e_out), np.isinf(t.e_in)
    e = outside @ np.where(e_out_inf, 0.0, t.e_out) + inside @ np.where(e_in_inf, 0.0, t.e_in)
    e = np.where(np.any(outside & e_out_inf, axis=1) | np.any(inside & e_in_inf, axis=1), math.inf, e)
    return _sigma2(t, sites, outside @ t.rmm, e, t.slack + outside @ t.b).sigma2


def _first(ordered: np.ndarray, skip: np.ndarray, count: np.ndarray, n_sites: int) -> np.ndarray:
    """Row i: a boolean mask of the first ``count[i]`` entries of ``ordered[i]`` that are not ``skip``-ped."""
    keep = ~skip
    take = keep & (np.cumsum(keep, axis=1) <= np.asarray(count)[:, None])
    inside = np.zeros((ordered.shape[0], n_sites), dtype=bool)
    rows = np.broadcast_to(np.arange(ordered.shape[0])[:, None], ordered.shape)
    inside[rows[take], ordered[take]] = True
    return inside


def _directions(w: np.ndarray) -> np.ndarray:
    """Unit vectors (A x 2), one inside every arc of the half circle on which the order of (eta . w_t)^2 is
    constant: the order changes only where eta is orthogonal to w_i - w_j or w_i + w_j (A <= m (m - 1))."""
    i, j = np.triu_indices(w.shape[0], 1)
    normals = np.concatenate([w[i] - w[j], w[i] + w[j]])
    normals = normals[np.any(normals != 0.0, axis=1)]
    if normals.shape[0] == 0:
        angles = np.array([math.pi / 4])
    else:
        crit = np.unique(np.mod(np.arctan2(normals[:, 0], -normals[:, 1]), math.pi))
        angles = np.concatenate([(crit[:-1] + crit[1:]) / 2, [(crit[-1] + crit[0] + math.pi) / 2]])
    return np.column_stack([np.cos(angles), np.sin(angles)])


@dataclass(frozen=True)
class _Sweep:
    """The distinct candidates of the sweep (rows) and their sigma^2 for every target site (columns)."""

    tops: np.ndarray  # (U, K) sites: the first k of a row (any order) and then the (k+1)-th
    k: np.ndarray  # regular members per target site
    closed: _Closed  # (U, S) arrays


def _tops(w: np.ndarray, count: int, head: int) -> np.ndarray:
    """The first ``count`` positions of the orders of (eta . w_t)^2 over all sweep directions, with the first
    ``head`` of each row sorted (only their set matters), in chunks of MAX_SWEEP_ENTRIES. The directions go round
    the half circle in order, so equal rows come in runs: a row equal to the one before it is dropped."""
    directions = _directions(w)
    chunk = max(1, MAX_SWEEP_ENTRIES // max(w.shape[0], 1))
    rows = []
    for lo in range(0, directions.shape[0], chunk):
        scores = (directions[lo : lo + chunk] @ w.T) ** 2
        if count < w.shape[0]:  # the top ``count`` by a partition, then in order (ties: equal contributions)
            top = np.argpartition(-scores, count - 1, axis=1)[:, :count]
            order = np.take_along_axis(top, np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1), axis=1)
        else:
            order = np.argsort(-scores, axis=1)
        order[:, :head].sort(axis=1)
        rows.append(order)
    order = np.concatenate(rows)
    return order[np.concatenate([[True], np.any(order[1:] != order[:-1], axis=1)])]


def _sweep(t: SiteTerms, size: int, base: tuple[np.ndarray, np.ndarray, np.ndarray]) -> _Sweep:
    """sigma^2 of every distinct candidate coalition of every site (module docstring)."""
    pool = np.flatnonzero(t.regular)
    m, n = pool.size, t.n_sites
    if m > MAX_SWEEP_SITES:
        raise InputError(f"the coalition audit handles at most {MAX_SWEEP_SITES} weighted sites (got {m})")
    in_pool = t.regular
    k = np.minimum(size, m - in_pool.astype(int))
    width = min(size + 1, m)
    if m:
        scale = np.sqrt(np.mean(t.v[pool] ** 2, axis=0))
        tops = pool[_tops(t.v[pool] / np.where(scale > 0, scale, 1.0), width, min(size, m))]
    else:
        tops = np.zeros((1, 0), dtype=np.int64)
    rank = np.full((tops.shape[0], n), width)
    np.put_along_axis(rank, tops, np.broadcast_to(np.arange(width), tops.shape), axis=1)
    use_next = in_pool[None, :] & (rank < k[None, :])
    idx = k[None, :] + use_next
    r0, e0, b0 = base
    sums = []
    for x in (t.rmm, t.de, t.b):
        prefix = np.concatenate([np.zeros((tops.shape[0], 1)), np.cumsum(x[tops], axis=1)], axis=1)
        sums.append(np.take_along_axis(prefix, idx, axis=1) - np.where(use_next, x[None, :], 0.0))
    closed = _sigma2(t, np.arange(n)[None, :], r0[None, :] - sums[0], e0[None, :] + sums[1], b0[None, :] - sums[2])
    return _Sweep(tops=tops, k=k, closed=closed)


def _column(closed: _Closed, s: int) -> _Closed:
    return _Closed(*(getattr(closed, f)[:, s] for f in ("sigma2", "lam", "den", "q", "e")))


def _envelope_bound(col: _Closed, start: float, upper: float) -> float:
    """max over lambda of min_C psi_C(lambda) over the candidates (a proven lower bound on the worst sigma^2):
    first at ``start`` (the best candidate's lambda); if that does not reach ``upper``, by golden section between
    the smallest and largest vertex lambda_C, outside of which the lower envelope of the concave parabolas is
    monotone."""
    def envelope(lam: float) -> float:
        return float(np.min(_psi(col, lam)))

    best = envelope(start)
    finite = np.isfinite(col.lam) & np.isfinite(col.sigma2)
    if best >= upper * (1.0 - EXACT_RTOL) or not np.any(finite):
        return best
    lo, hi = float(np.min(col.lam[finite])), float(np.max(col.lam[finite]))
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1, f2 = envelope(x1), envelope(x2)
    for _ in range(GOLDEN_STEPS):
        if hi - lo <= 0.0 or max(f1, f2) >= upper * (1.0 - EXACT_RTOL):
            break
        if f1 < f2:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + ratio * (hi - lo)
            f2 = envelope(x2)
        else:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - ratio * (hi - lo)
            f1 = envelope(x1)
    return max(best, f1, f2)


def _enumerate(t: SiteTerms, s: int, k: int, base: tuple[np.ndarray, ...]) -> tuple[float, np.ndarray] | None:
    """The exact worst coalition of k regular sites by enumeration, or None beyond MAX_ENUMERATED_COALITIONS.
    Sites whose sweep vector is zero change nothing and only fill the coalition."""
    others = np.flatnonzero(t.regular)
    others = others[others != s]
    moving = others[np.any(t.v[others] != 0.0, axis=1)]
    kk = min(k, moving.size)
    if math.comb(moving.size, kk) > MAX_ENUMERATED_COALITIONS:
        return None
    r0, e0, b0 = (x[s] for x in base)
    best, best_members = math.inf, moving[:kk]
    combos = combinations(moving.tolist(), kk)
    for _ in range(math.ceil(math.comb(moving.size, kk) / 4096)):
        idx = np.array(list(islice(combos, 4096)), dtype=np.int64).reshape(-1, kk)
        closed = _sigma2(t, np.array(s), r0 - t.rmm[idx].sum(axis=1), e0 + t.de[idx].sum(axis=1),
                         b0 - t.b[idx].sum(axis=1))
        j = int(np.argmin(closed.sigma2))
        if closed.sigma2[j] < best:
            best, best_members = float(closed.sigma2[j]), idx[j]
    still = np.setdiff1d(others, best_members)
    members = np.concatenate([best_members, still[np.all(t.v[still] == 0.0, axis=1)][: k - kk]])
    return _coalition_sigma2(t, s, members), members


def _revealing_branch(t: SiteTerms, size: int, forced: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every site, the worst coalition among those that see W exactly (lambda = 0) and its sigma^2 (inf when
    there is none). Exact: with E infinite, beta^2 sigma^2 = [d_s^2 (R + gamma_s) + gamma_s R] / (R + d_s^2), whose
    derivative in R is d_s^4 / (R + d_s^2)^2 >= 0, and R = sum over non-members of d_t^2 gamma_t / a_t; a revealing
    site has d_t = 0, so which one joins does not matter, and the worst holds one of them and the c - 1 largest
    terms. Where ``forced`` (a revealing site without g noise is seen by every view) every coalition is of this
    kind and the worst holds the c largest terms."""
    n = t.n_sites
    sites = np.arange(n)
    revealing = np.flatnonzero(t.revealing)
    fixed = np.full(n, -1)  # the revealing member of site s's coalition: the first revealing site other than s
    if revealing.size:
        fixed[:] = revealing[0]
        fixed[revealing[0]] = revealing[1] if revealing.size > 1 else -1
    fixed[forced] = -1
    has = forced | ((fixed >= 0) & (size >= 1))
    ordered = np.broadcast_to(np.argsort(-t.rmm, kind="stable"), (n, n))
    skip = (ordered == sites[:, None]) | (ordered == fixed[:, None])
    inside = _first(ordered, skip, np.where(forced, size, size - 1), n)
    inside[sites[fixed >= 0], fixed[fixed >= 0]] = True
    value = np.where(has, _masks_sigma2(t, sites, inside), math.inf)
    return value, inside


def worst_coalitions(t: SiteTerms, size: int, threshold: np.ndarray | None = None) -> list[WorstCoalition]:
    """The worst coalition of ``size`` >= 1 other sites for every site (module docstring), each with the sigma^2 it
    leaves, a proven lower bound for all coalitions of that size, and whether they agree.

    With ``threshold`` (a sigma^2 per site) only the question "is the worst sigma^2 at least the threshold?" must
    be settled: a site whose bounds already answer it is not refined further (and may come back inexact)."""
    n = t.n_sites
    sites = np.arange(n)
    base = (_sum_others(t.rmm), _sum_others(t.e_out), t.slack + _sum_others(t.b))
    forced = ~np.isfinite(base[1])
    value_a, inside_a = _revealing_branch(t, size, forced)
    sweep = _sweep(t, size, base) if np.any(t.active & ~forced) else None
    free = np.flatnonzero(~t.active)
    use_b = t.active & ~forced & (sweep is not None)
    if sweep is not None:
        use_b &= size - sweep.k <= free.size
    value_b, lower_b, inside_b = np.full(n, math.inf), np.full(n, math.inf), np.zeros((n, n), dtype=bool)
    if np.any(use_b):
        value_b, lower_b, inside_b = _branch_b(t, sweep, size, free, use_b)
    upper = np.minimum(value_a, value_b)
    lower = np.minimum(value_a, np.maximum(lower_b, t.var_g))  # g_s is independent of everything any view knows
    inside = np.where((value_a <= value_b)[:, None], inside_a, inside_b)
    limits = np.full(n, math.nan) if threshold is None else np.asarray(threshold, dtype=float)
    for s in np.flatnonzero(use_b & (lower < upper * (1.0 - EXACT_RTOL)) & (value_a > lower_b)):
        if not _settled(float(lower[s]), float(upper[s]), float(limits[s])):
            upper[s], lower[s], inside[s] = _refine(t, sweep, int(s), base, free, size, float(upper[s]),
                                                    float(lower[s]), float(value_a[s]), inside[s])
    out = []
    for s in sites:
        if not t.active[s]:  # e_s is independent of everything: no coalition learns anything about it
            value = float(t.var_free[s] + t.var_g[s])
            out.append(WorstCoalition(int(s), tuple(int(x) for x in sites[sites != s][:size]), value, value, True))
        else:
            out.append(_result(int(s), np.flatnonzero(inside[s]), float(upper[s]), float(lower[s])))
    return out


def _branch_b(t: SiteTerms, sweep: _Sweep, size: int, free: np.ndarray,
              use: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coalitions without a revealing site: the best sweep candidate of every site (filled up with unweighted
    sites), the sigma^2 it leaves, and the Lagrangian bound at its lambda."""
    n = t.n_sites
    sites = np.arange(n)
    sigma2 = np.where(np.isnan(sweep.closed.sigma2), math.inf, sweep.closed.sigma2)
    row = np.argmin(sigma2, axis=0)
    ordered = sweep.tops[row]
    inside = _first(ordered, ordered == sites[:, None], sweep.k, n)
    if free.size:
        inside |= _first(np.broadcast_to(free, (n, free.size)), np.zeros((n, free.size), dtype=bool),
                         np.maximum(size - sweep.k, 0), n)
    value = np.where(use, _masks_sigma2(t, sites, inside), math.inf)
    lam = sweep.closed.lam[row, sites]
    lower = np.where(use, np.min(_psi(sweep.closed, lam[None, :]), axis=0), math.inf)
    return value, lower, inside


def _refine(t: SiteTerms, sweep: _Sweep, s: int, base: tuple[np.ndarray, ...], free: np.ndarray, size: int,
            upper: float, lower: float, value_a: float, inside: np.ndarray) -> tuple[float, float, np.ndarray]:
    """A site whose bounds disagree: maximise the Lagrangian bound over lambda, then enumerate if that is not
    enough and the enumeration is within MAX_ENUMERATED_COALITIONS."""
    col = _column(sweep.closed, s)
    row = int(np.argmin(np.where(np.isnan(col.sigma2), math.inf, col.sigma2)))
    lower = min(max(lower, _envelope_bound(col, float(col.lam[row]), upper)), value_a)
    if lower >= upper * (1.0 - EXACT_RTOL):
        return upper, lower, inside
    found = _enumerate(t, s, int(sweep.k[s]), base)
    if found is None or found[0] > value_a:
        return upper, lower, inside
    members = np.zeros(t.n_sites, dtype=bool)
    members[found[1]] = True
    members[free[: size - found[1].size]] = True
    return found[0], found[0], members


def _settled(lower: float, upper: float, threshold: float) -> bool:
    """Whether the bounds answer "worst sigma^2 >= threshold" (never for a NaN threshold)."""
    return lower >= threshold * (1.0 - EXACT_RTOL) or upper < threshold * (1.0 - EXACT_RTOL)


def _result(s: int, members: np.ndarray, upper: float, lower: float) -> WorstCoalition:
    lower = min(lower, upper)
    exact = lower >= upper * (1.0 - EXACT_RTOL)
    return WorstCoalition(s, tuple(sorted(int(x) for x in members)), float(upper), float(upper if exact else lower),
                          bool(exact))
