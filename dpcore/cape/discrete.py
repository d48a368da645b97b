"""Discrete CAPE: a noise design carried out on the integers (docs/math/discrete.md).

Site s encodes its statistic once, a~_s = round(gamma mu_s a_s) with gamma = 2^k (its weight inside, so the ring sum
is the weighted aggregate), and releases a~_s + E~_s + F~_s + G~_s on the ring of integers mod 2^b; every term is an
integer drawn by the exact discrete Gaussian sampler (:mod:`dpcore.privacy.discrete_gaussian`). The zero-sum terms are
E~_s = A w~_s - a_s W~ with integers a_s, A = sum_s a_s and W~ = sum_t w~_t (a secure sum on the ring: no helper), so
sum_s E~_s = A W~ - A W~ = 0 exactly. The aggregator's sum minus its own F~ is sum_s a~_s + sum_s G~_s exactly,
decoded once: divided by gamma.

:func:`discrete_design` turns a continuous :class:`~dpcore.cape.design.NoiseDesign` (statistic units) into the
integer design: the scale k, the integer sensitivity (the rounding's effect, docs/math/discrete.md "Encoding"), the
integer laws of every term (the continuous variances times (gamma mu_s kappa)^2 plus the smoothing s^2), the
continuous twin the audit reads (the integer law in statistic units, variances less s^2) and the ring's width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from ..kept import kept_by_content
from ..limits import MAX_KEPT_DISCRETE_DESIGNS, MAX_RING_BITS, MAX_SAMPLER_SIGMA2
from ..privacy.discrete_gaussian import DiscreteGaussianLaw, sampler_law
from ..privacy.zero_sum import ZeroSumLaw
from ..validation import InputError
from .audit import default_collusion, view_sigmas
from .design import NoiseDesign
from .helper_free import variant_view_sigmas
from .noise_variants import integer_variant

__all__ = [
    "EXCESS_SHARE",
    "HELPER_RESOLUTION",
    "ROUNDING_SHARE",
    "SMOOTHING",
    "TAIL_SIGMAS",
    "DiscreteDesign",
    "IntegerLaws",
    "discrete_design",
    "float_error",
    "output_std_bound",
]

SMOOTHING = 3
"""s of the smoothing lemma (docs/math/discrete.md, "Why the continuous audit carries over"): every discrete
Gaussian term of variance sigma^2 is, up to a factor exp(+-h) with h < 4e-77 in every probability, a discrete
Gaussian N_Z(x, s^2) centred at a continuous N(0, sigma^2 - s^2)."""
ROUNDING_SHARE = 1e-3
"""The rounding of the statistic may raise the sensitivity, hence every noise std, by at most this share."""
EXCESS_SHARE = 1e-3
"""The integer-shift excess may raise every view's m^2 by at most this share of its smallest value."""
TAIL_SIGMAS = 40
"""A site refuses to send a term beyond this many standard deviations (probability below 2 exp(-800)): the ring's
bound counts every term at most this large."""
HELPER_RESOLUTION = 16
"""When the helper law's shares c_s are not all equal, they are written as a_s / A with A about this many times S
(coarse on purpose: a share rounded up only adds helper noise, which cancels, while A sets the integer-shift
excess)."""
_MAX_SCALE_BITS = 62


@dataclass(frozen=True, kw_only=True)
class IntegerLaws:
    """The integer terms of one stage: E~_s = A w~_s - a_s W~ with ``shares`` a_s (A their sum), w~_s from
    ``w``, and F~_s, G~_s from ``f`` and ``g`` (None: the term is absent, its variance 0)."""

    shares: tuple[int, ...]
    w: tuple[DiscreteGaussianLaw, ...]
    f: tuple[DiscreteGaussianLaw | None, ...]
    g: tuple[DiscreteGaussianLaw, ...]

    @property
    def total_share(self) -> int:
        return sum(self.shares)


@dataclass(frozen=True, kw_only=True)
class DiscreteDesign:
    """A continuous design (``design``, statistic units) carried out on the integers.

    ``scale_bits`` k and ``scale`` gamma = 2^k: site s sends round(gamma mu_s a_s); ``entries`` n unique entries per
    release; ``sensitivities`` Delta_s (statistic units) and ``integer_sensitivities`` Delta~_s, their bound on the
    integers (rounding included); ``inflation`` kappa = max_s Delta~_s / (gamma mu_s Delta_s), by which every
    continuous variance's std was raised; ``laws`` the integer terms; ``twin`` the continuous design with the integer
    law in statistic units and every variance less s^2 (what the audit reads); ``excess`` the per-entry bound
    eps_r on the integer-shift excess; ``slack`` h per discrete term of the smoothing lemma; ``value_bound`` the
    bound on |a_s| per entry; ``ring_bits`` b of the release ring, ``sum_bits`` of the ring of the secure sum W~."""

    design: NoiseDesign
    scale_bits: int
    entries: int
    sensitivities: np.ndarray
    integer_sensitivities: np.ndarray
    inflation: float
    laws: IntegerLaws
    twin: NoiseDesign
    excess: float
    slack: float
    value_bound: float
    float_error: float
    ring_bits: int
    ring_bound: int
    sum_bits: int
    sum_bound: int

    @property
    def scale(self) -> int:
        return 1 << self.scale_bits

    @property
    def n_sites(self) -> int:
        return self.design.n_sites

    def site_scale(self, s: int) -> float:
        """gamma mu_s: what site s multiplies its statistic by before rounding."""
        return float(self.scale) * float(self.design.weights[s])

    def output_std(self) -> float:
        """The std of the decoded aggregate's noise per entry, sqrt(sum_s Var G~_s) / gamma (statistic units)."""
        return math.sqrt(sum(float(g.sigma2) for g in self.laws.g)) / self.scale


def output_std_bound(output_std: float, sensitivities: np.ndarray, weights: np.ndarray, entries: int) -> float:
    """A closed-form bound on the aggregate's error per entry of the discrete design of any continuous design whose
    aggregate noise std is ``output_std`` (statistic units; the planner's noise of discrete CAPE, docs/planner.md):
    its noise, :meth:`DiscreteDesign.output_std` = sqrt(kappa^2 output_std^2 + S s^2 / gamma^2), plus the sites'
    rounding, at most S / (2 gamma) per entry, taken as noise of that size: sqrt(kappa_max^2 output_std^2 +
    (S s^2 + S^2 / 4) / gamma_min^2), where kappa <= kappa_max = (1 + ROUNDING_SHARE) sqrt(1 + EXCESS_SHARE) and
    1 / gamma <= ROUNDING_SHARE min_s mu_s Delta_s / sqrt(n) (the scale's first condition: the rounding's sqrt(n)
    is at most that share of gamma mu_s Delta_s at every site). No search: a bisection can call it."""
    mu = np.asarray(weights, dtype=float)
    sens = np.broadcast_to(np.asarray(sensitivities, dtype=float), mu.shape)
    sites = mu.size
    kappa = (1.0 + ROUNDING_SHARE) * math.sqrt(1.0 + EXCESS_SHARE)
    inverse_gamma = ROUNDING_SHARE * float(np.min(mu * sens)) / math.sqrt(int(entries))
    return math.sqrt((kappa * float(output_std)) ** 2 + (sites * SMOOTHING**2 + sites**2 / 4.0) * inverse_gamma**2)


def float_error(terms: int, value_bound: float) -> float:
    """A bound on |fl(a) - a| per entry of a statistic computed in float64 as a mean or sum of ``terms`` products of
    magnitude at most ``value_bound`` (any summation order: (terms + 2) u sum|x|, u = 2^-53, times 4 for the
    products and the scaling)."""
    return 4.0 * (int(terms) + 2) * 2.0**-53 * float(value_bound)


def _check_design(design: NoiseDesign) -> None:
    if not design.feasible or design.e_law is None:
        raise InputError(f"the discrete design needs a feasible continuous design with a factored helper law "
                         f"({design.reason or 'none'})", "design")
    mu = np.asarray(design.weights, dtype=float)
    if np.any(mu <= 0):
        raise InputError("the discrete design needs every site's weight mu_s > 0 (a site with weight 0 would encode "
                         "nothing on the ring); drop that site or give it a weight", "weights")
    if np.any(design.var_g <= 0):
        raise InputError("the discrete design needs every site's own term g_s > 0 (the integer shift of each view "
                         "is absorbed by it, docs/math/discrete.md); use the balanced objective", "design")
    if np.any(design.var_e <= 0):
        raise InputError("the discrete design needs a helper term e_s > 0 at every site", "design")


def _shares(target_std: np.ndarray) -> tuple[int, ...]:
    """Integers a_s proportional to the helper stds mu_s tau_e,s, divided by their gcd: all 1 when they are equal
    (to the solver's tolerance, 1e-6), else about HELPER_RESOLUTION S c_s (at least 1: the law then gives every site
    at least its helper variance, some more); refused when one share is half of all or more (no zero-sum law)."""
    c = target_std / target_std.sum()
    if np.allclose(c, c[0], rtol=1e-6, atol=0.0):
        shares = [1] * c.size
    else:
        shares = [max(1, round(float(x) * HELPER_RESOLUTION * c.size)) for x in c]
    divisor = math.gcd(*shares)
    shares = [a // divisor for a in shares]
    if 2 * max(shares) >= sum(shares):
        raise InputError("the discrete design's helper law needs every site's share below half of all "
                         "(polygon inequality, strictly)", "design")
    return tuple(shares)


def _laws(design: NoiseDesign, k: int, kappa: float) -> IntegerLaws:
    """The integer laws for scale 2^k and inflation kappa (docs/math/discrete.md, "The terms")."""
    gamma = float(1 << k)
    mu = np.asarray(design.weights, dtype=float)
    s2 = SMOOTHING**2
    site = gamma * kappa * mu

    def law(variance: float) -> DiscreteGaussianLaw:
        target = variance + s2
        if target > MAX_SAMPLER_SIGMA2:
            raise InputError("the discrete design's noise exceeds the sampler's range (sigma^2 <= 2^60)", "design")
        return sampler_law(Fraction(target))

    alpha = site * np.sqrt(design.var_e)  # target std of E~_t
    shares = _shares(alpha)
    total = sum(shares)
    c = np.array(shares, dtype=float) / total
    x = float(np.max(alpha / c))
    q = float(np.sum(c**2 / (1.0 - 2.0 * c)))
    d2 = c**2 * x**2 / ((1.0 + q) * (1.0 - 2.0 * c))  # Var of A w~_t (Var E~_t = (c_t x)^2 >= alpha_t^2)
    w = tuple(law(float(v) / total**2) for v in d2)
    f = tuple(law(float(v)) if v > 0 else None for v in site**2 * design.var_f)
    g = tuple(law(float(v)) for v in site**2 * design.var_g)
    return IntegerLaws(shares=shares, w=w, f=f, g=g)


def _twin(design: NoiseDesign, laws: IntegerLaws, gamma: float) -> NoiseDesign:
    """The integer law seen in statistic units, every variance less s^2: e_t = E~_t / (gamma mu_t), etc."""
    mu = np.asarray(design.weights, dtype=float)
    s2 = SMOOTHING**2
    total = laws.total_share
    c = np.array(laws.shares, dtype=float) / total
    var_w = np.array([(float(w.sigma2) - s2) * total**2 for w in laws.w]) / gamma**2  # Var of u-form w_t
    var_u = var_w * (1.0 - 2.0 * c) + c**2 * var_w.sum()
    var_e = var_u / mu**2
    d = np.sqrt(var_w)
    mixing = np.diag(d / mu) + np.outer(-c / mu, d)
    var_f = np.array([0.0 if f is None else float(f.sigma2) - s2 for f in laws.f]) / (gamma * mu) ** 2
    var_g = np.array([float(g.sigma2) - s2 for g in laws.g]) / (gamma * mu) ** 2
    return replace(design, var_e=var_e, var_f=var_f, var_g=var_g, e_mixing=mixing,
                   e_law=ZeroSumLaw(common=c, var_w=var_w), method=f"{design.method} (discrete)",
                   e_construction="integer: E~_s = A w~_s - a_s W~, W~ by a secure sum",
                   tau_c=math.sqrt(float(np.sum(mu**2 * var_g))))


def _excess(laws: IntegerLaws) -> float:
    """eps_r: the largest excess r^T H r of an integer shift over the real optimum, per entry, over every view
    (docs/math/discrete.md, "The integer shift"), in integer units with the variances less s^2."""
    s2 = SMOOTHING**2
    total = laws.total_share
    inv_w = np.array([1.0 / (float(w.sigma2) - s2) for w in laws.w])
    inv_g = np.array([1.0 / (float(g.sigma2) - s2) for g in laws.g])
    inv_f = np.array([0.0 if f is None else 1.0 / (float(f.sigma2) - s2) for f in laws.f])
    sites = len(laws.shares)
    spread = np.array([(total - a) + (sites - 1) * a for a in laws.shares])  # sum_j |coefficient of w~_j in E~_t|
    helper = float(inv_w.sum() + np.sum(spread**2 * inv_g))
    release = float(np.max(inv_f + inv_g))
    aggregate = float(inv_g.sum())
    return max(helper, release, aggregate)


def _slack(laws: IntegerLaws) -> float:
    """h per discrete term: log((1 + eta) / (1 - eta)) with eta = 2 sum_k exp(-2 pi^2 s^2 k^2) <= 2 q / (1 - q),
    q = exp(-2 pi^2 s^2) (k^2 >= k), which bounds eta_sigma too (sigma >= s) (docs/math/discrete.md)."""
    smallest = min(float(law.sigma2) for law in (*laws.w, *laws.g, *(f for f in laws.f if f is not None)))
    if smallest < SMOOTHING**2:
        raise InputError("a discrete term narrower than the smoothing width s", "design")
    q = math.exp(-2.0 * math.pi**2 * SMOOTHING**2)
    eta = 2.0 * q / (1.0 - q)
    return math.log1p(eta) - math.log1p(-eta)


def _ring(design: NoiseDesign, laws: IntegerLaws, k: int, value_bound: float, err: float) -> tuple[int, int]:
    """(bits, bound) of the release ring: |sum_s a~_s + sum_s G~_s| <= sum_s (gamma mu_s (value_bound + err) + 1) +
    TAIL_SIGMAS sum_s sigma_g,s; b = bound.bit_length() + 1 (sign)."""
    gamma = 1 << k
    data = sum(math.floor(gamma * float(m) * (value_bound + err)) + 1 for m in design.weights)
    noise = sum(math.isqrt(math.ceil(g.sigma2)) + 1 for g in laws.g) * TAIL_SIGMAS
    bound = int(data + noise)
    return bound.bit_length() + 1, bound


def _sum_ring(laws: IntegerLaws) -> tuple[int, int]:
    bound = TAIL_SIGMAS * sum(math.isqrt(math.ceil(w.sigma2)) + 1 for w in laws.w)
    return bound.bit_length() + 1, bound


def _scaled_w(laws: IntegerLaws, factor: float) -> IntegerLaws:
    s2 = SMOOTHING**2
    return replace(laws, w=tuple(sampler_law(Fraction((float(w.sigma2) - s2) * factor + s2)) for w in laws.w))


def _view_m2(design: NoiseDesign, sens: np.ndarray, views: list) -> dict[tuple[int, str], float]:
    out = {}
    for v in views:
        sigma = v.sigma_eff if v.exact else float(v.sigma_bound)
        out[(v.site, v.view)] = math.inf if sigma <= 0 else (float(sens[v.site]) / sigma) ** 2
    return out


def _match_views(design: NoiseDesign, laws: IntegerLaws, k: int, kappa: float, int_sens: np.ndarray, n: int,
                 sens: np.ndarray) -> IntegerLaws:
    """The laws with the helper noise (every w~) scaled up, by the first factor of 1, 1.05, 1.25, 2, 4, 16, ... that
    leaves every audited view of the discrete design (the integer construction's, with its excess) at most as
    revealing as the same view of the continuous design with a helper, at the design's coalition bound (or
    ceil(S/3) - 1): the shares a_s / A only approximate the continuous law's, and the sites' construction lets
    colluders know W~ (docs/math/discrete.md, "The helper noise"). Helper noise cancels in the aggregate."""
    c = design.collusion if design.collusion is not None else default_collusion(design.n_sites)
    target = _view_m2(design, sens, view_sigmas(design, c))
    gamma = float(1 << k)
    mu = np.asarray(design.weights, dtype=float)
    shift = int_sens / (gamma * mu)  # Delta~_s in statistic units
    factor = 1.0
    for factor in (1.0, 1.05, 1.25, 2.0, *(4.0**j for j in range(1, 11))):
        trial = _scaled_w(laws, factor) if factor > 1 else laws
        twin = _twin(design, trial, gamma)
        got = _view_m2(twin, shift, variant_view_sigmas(twin, c, variant=integer_variant().name))
        excess = n * _excess(trial)
        if all(got[key] + excess <= target.get(key, math.inf) * (1 + 1e-12) for key in got):
            return trial
    return trial


@kept_by_content(MAX_KEPT_DISCRETE_DESIGNS)  # a sweep's or a comparison's runs ask for the same design run after run
def discrete_design(design: NoiseDesign, sensitivities: np.ndarray, entries: int, *, value_bound: float,
                    terms: int) -> DiscreteDesign:  # long: the scale search and the checks, read top to bottom
    """The integer design of ``design`` for a statistic of ``entries`` unique entries with sensitivities
    ``sensitivities`` (Delta_s), entries bounded by ``value_bound`` and computed from at most ``terms`` samples.

    k is the smallest scale with (i) max_s Delta~_s / (gamma mu_s Delta_s) - 1 <= ROUNDING_SHARE (the rounding's
    sqrt(n) against gamma mu_s Delta_s) and (ii) n eps_r <= EXCESS_SHARE min_s Delta~_s^2 / sigma_max^2, sigma_max
    bounding every view's sigma_eff in integer units; every continuous std is raised by kappa = that maximum times
    sqrt(1 + EXCESS_SHARE), so that every view's discrete m^2 is at most its continuous one (docs/math/discrete.md,
    "Choosing the scale"); the ring's width then follows. Refused, with the
    reason, when the ring would need more than MAX_RING_BITS bits or the noise leaves the sampler's range."""
    _check_design(design)
    n = int(entries)
    if n < 1:
        raise InputError(f"a statistic has at least one entry (got {entries!r})", "entries")
    mu = np.asarray(design.weights, dtype=float)
    sens = np.broadcast_to(np.asarray(sensitivities, dtype=float), mu.shape).copy()
    err = float_error(terms, value_bound)
    root = math.sqrt(n)
    for k in range(_MAX_SCALE_BITS):
        gamma = float(1 << k)
        base = gamma * mu * sens
        int_sens = base + 2.0 * root * gamma * mu * err + root  # docs/math/discrete.md, "Encoding"
        kappa = float(np.max(int_sens / base))
        if kappa - 1.0 > ROUNDING_SHARE:
            continue
        kappa *= math.sqrt(1.0 + EXCESS_SHARE)  # so that the excess, at most this share of m^2, is paid for
        try:
            laws = _laws(design, k, kappa)
        except InputError:
            break
        excess = _excess(laws)
        total = laws.total_share
        var_e = np.array([((total - a) ** 2 * float(w.sigma2) + a * a * sum(float(v.sigma2) for v in laws.w)
                           - a * a * float(w.sigma2)) for a, w in zip(laws.shares, laws.w, strict=True)])
        var_f = np.array([0.0 if f is None else float(f.sigma2) for f in laws.f])
        var_g = np.array([float(g.sigma2) for g in laws.g])
        sigma_max2 = max(float(var_g.sum()), float(np.max(var_e + var_f + var_g)))
        if n * excess > EXCESS_SHARE * float(np.min(int_sens**2)) / sigma_max2:
            continue
        laws = _match_views(design, laws, k, kappa, int_sens, n, sens)
        bits, bound = _ring(design, laws, k, value_bound, err)
        sum_bits, sum_bound = _sum_ring(laws)
        if max(bits, sum_bits) > MAX_RING_BITS:
            break
        return DiscreteDesign(design=design, scale_bits=k, entries=n, sensitivities=sens,
                              integer_sensitivities=int_sens, inflation=kappa, laws=laws,
                              twin=_twin(design, laws, gamma), excess=_excess(laws), slack=_slack(laws),
                              value_bound=float(value_bound), float_error=err, ring_bits=bits, ring_bound=bound,
                              sum_bits=sum_bits, sum_bound=sum_bound)
    raise InputError(f"no integer encoding of this design fits a {MAX_RING_BITS}-bit ring: {n:,} entries per "
                     f"release and {design.n_sites} sites need a scale whose aggregate exceeds 2^63 (fewer entries "
                     "or sites, or the continuous design)", "design")
