"""Helper-free CAPE and rounds with sites that dropped out (docs/federated.md, "Two ways to make the zero-sum noise";
docs/math/audit.md).

**Helper-free.** Every design's helper law is factored (:class:`~dpcore.privacy.zero_sum.ZeroSumLaw`): on the
weighted sites u_s = mu_s e_s = w_s - c_s W with independent w_s ~ N(0, d_s^2) and W = sum_t w_t. Nothing in it
needs a helper: each site draws its own w_s, the sites compute W by a secure sum (each sends its w_s in a
fixed-point encoding plus pairwise masks that cancel in the sum, as secure aggregation does) and each sets
e_s = (w_s - c_s W) / mu_s. The joint law of e is exactly the helper's. What changes is what a coalition knows:
every site learns W, so a coalition holding at least one site knows (u_C, W) instead of u_C alone. W never
reaches the aggregator (the masked shares travel sealed from site to site), so the aggregator alone sees what it
sees with a helper.

**What knowing W costs.** Given W and u_C (so w_C), the other sites' terms are w_t - c_t W with independent w_t
constrained only by sum_{t not in C} w_t = W - sum_{t in C} w_t. With a_t = d_t^2 + gamma_t, gamma_t =
mu_t^2 tau_g,t^2 and r_t = d_t^2 gamma_t / a_t, site s keeps (Sherman-Morrison on the constrained covariance)

    sigma_eff^2 = 1 / (mu_s^2 [1 / a_s + (d_s^2 / a_s)^2 / (r_s + sum_{t not in C, t != s} r_t)]),

and the worst coalition is the c sites with the largest r_t (exact, no search). W is independent of u exactly when
d_s^2 is proportional to c_s (equal weights): then every view equals the helper's. With unequal weights it is not,
and the aggregator with a coalition learns more than with a helper; :func:`variant_audit` counts it.

**Drop-outs.** A site v that vanished after the noise was set up released nothing, but its term is missing from
the sum: sum_{s != v} mu_s e_s = -u_v. The aggregator removes it once it learns u_v (from the helper, or in the
helper-free variant from v's noise seed, which v secret-shared t-of-S among the sites, and W). Learning u_v is what
a coalition holding v knows, so the audit of what was released puts every dropped site into every coalition of the
aggregator (and, helper-free, counts W as known); the output carries the survivors' g only. A design for c
colluders and k drop-outs is made for c + k colluders, so that after k drop-outs every promise for c colluders
still holds. That u_v is revealed only for a site whose release is never unmasked - releases travel masked and one
survivor set signed by every survivor decides which are - is the federated run's protocol (docs/federated.md,
"Drop-outs: masked releases and one agreed survivor set").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

import numpy as np

from ..limits import MAX_DROPOUT_SETS
from ..privacy.calibration import exact_delta, exact_eps
from ..privacy.zero_sum import weighted_zero_sum_law, weighted_zero_sum_mixing
from ..validation import InputError
from .audit import AuditReport, AuditRow, ViewSigma, view_sigmas
from .design import NoiseDesign
from .noise_variants import NOISE_VARIANTS, noise_variant
from .variant import worst_extra
from .variants.secure_sum import joint_covariance

__all__ = [
    "FIXED_POINT_SIGMAS",
    "MAX_FIXED_POINT_STEP",
    "NOISE_VARIANTS",
    "DropoutCase",
    "VariantRow",
    "compare_variants",
    "FixedPoint",
    "decode_sum",
    "dropout_whatif",
    "encode_fixed",
    "fixed_point",
    "helper_free_terms",
    "joint_covariance",
    "mask_share",
    "scaled_for_variant",
    "variant_audit",
    "variant_view_sigmas",
]

FIXED_POINT_SIGMAS = 40.0
"""The secure sum's range covers every w_s within this many standard deviations (a draw beyond has probability
below 1e-300; a site refuses such a draw rather than wrap around)."""
MAX_FIXED_POINT_STEP = 2.0**-24
"""Largest quantisation step of the secure sum relative to the smallest std it carries: a design whose spread of
stds leaves a coarser step is refused (the law would no longer be the one audited)."""
_RING_BITS = 64


@dataclass(frozen=True, kw_only=True)
class FixedPoint:
    """The secure sum's encoding of one stage: x -> round(x 2^bits) in the ring of integers mod 2^64. ``bound`` is
    the largest |w_s| a site may encode; ``step`` = 2^-bits / (smallest std summed)."""

    bits: int
    bound: float
    step: float


def fixed_point(var_w: np.ndarray, n_sites: int) -> FixedPoint:
    """The encoding for w_s ~ N(0, var_w,s): as many fraction bits as keep S * bound below 2^62 (so the sum never
    wraps), bound = FIXED_POINT_SIGMAS * max std. Raises InputError when the step would exceed
    :data:`MAX_FIXED_POINT_STEP` of the smallest positive std."""
    stds = np.sqrt(np.clip(np.asarray(var_w, dtype=float), 0.0, None))
    positive = stds[stds > 0]
    if positive.size == 0:
        return FixedPoint(bits=0, bound=0.0, step=0.0)
    bound = FIXED_POINT_SIGMAS * float(positive.max())
    bits = math.floor(_RING_BITS - 2 - math.log2(max(n_sites, 1) * bound))
    step = 2.0**-bits / float(positive.min())
    if step > MAX_FIXED_POINT_STEP:
        raise InputError(f"the helper-free secure sum cannot carry this design: its noise stds span "
                         f"{float(positive.max() / positive.min()):.3g}x, which leaves a quantisation step of "
                         f"{step:.2g} of the smallest std (at most {MAX_FIXED_POINT_STEP:.2g} allowed); use the "
                         "helper variant")
    return FixedPoint(bits=bits, bound=bound, step=step)


def encode_fixed(values: np.ndarray, encoding: FixedPoint) -> np.ndarray:
    """round(x 2^bits) as uint64 (two's complement), after checking |x| <= bound."""
    values = np.asarray(values, dtype=float)
    if values.size and float(np.max(np.abs(values))) > encoding.bound:
        raise InputError(f"a noise draw of {float(np.max(np.abs(values))):.3g} exceeds the secure sum's range "
                         f"{encoding.bound:.3g}")
    return np.rint(np.ldexp(values, encoding.bits)).astype(np.int64).view(np.uint64)


def decode_sum(total: np.ndarray, encoding: FixedPoint) -> np.ndarray:
    """The float value of a ring element (uint64, read as a signed integer): k 2^-bits."""
    return np.ldexp(np.asarray(total, dtype=np.uint64).view(np.int64).astype(float), -encoding.bits)


def mask_share(encoded: np.ndarray, add: Sequence[np.ndarray], subtract: Sequence[np.ndarray]) -> np.ndarray:
    """A site's masked share y_s = q_s + sum_(t > s) m_st - sum_(t < s) m_ts (mod 2^64): the masks of every pair
    cancel in sum_s y_s, which is sum_s q_s exactly."""
    out = np.array(encoded, dtype=np.uint64, copy=True)
    for mask in add:
        out += np.asarray(mask, dtype=np.uint64)
    for mask in subtract:
        out -= np.asarray(mask, dtype=np.uint64)
    return out


def helper_free_terms(own: np.ndarray, total: np.ndarray, common: float, weight: float) -> np.ndarray:
    """A weighted site's e_s = (q_s - c_s W) / mu_s from its own decoded draw q_s and the secure sum W."""
    return (np.asarray(own, dtype=float) - float(common) * np.asarray(total, dtype=float)) / float(weight)


# -- views --------------------------------------------------------------------------------------------------------

def variant_view_sigmas(design: NoiseDesign, collusion: int, *, variant: str = "helper",
                        dropped: Sequence[int] = ()) -> list[ViewSigma]:
    """sigma_eff of every surviving site in every view (outside, aggregator, aggregator+coalition with up to
    ``collusion`` colluders besides the dropped sites, sites), for ``variant`` and the sites ``dropped`` (indices)
    forced into every coalition of the aggregator. Without drop-outs the helper variant is
    :func:`dpcore.cape.audit.view_sigmas`."""
    entry = noise_variant(variant)
    if not design.feasible or design.e_mixing is None:
        raise InputError(f"cannot audit an infeasible design: {design.reason}")
    n = design.n_sites
    dropped = tuple(sorted({int(t) for t in dropped}))
    if any(not 0 <= t < n for t in dropped) or len(dropped) >= n:
        raise InputError(f"dropped sites must be fewer than the {n} sites and name sites of the design")
    size = max(0, min(int(collusion), n - 1 - len(dropped)))
    if entry.audit_without_dropouts and not dropped:
        return view_sigmas(design, size)
    var_g = np.clip(design.var_g, 0.0, None)
    load = design.weights**2 * var_g
    out: list[ViewSigma] = []
    for s in range(n):
        if s in dropped:
            continue
        mu_s = float(design.weights[s])
        kept = float(load.sum() - load[list(dropped)].sum())
        out.append(ViewSigma(site=s, view="outside", coalition=tuple(dropped),
                             sigma_eff=math.inf if mu_s == 0 else math.sqrt(max(kept, 0.0)) / mu_s))
        views = entry.aggregator_views(design, size, dropped, s)
        out.extend(v for v in views if v.view == "aggregator" or size > 0)
        if size > 0:
            others = [t for t in range(n) if t != s and t not in dropped]
            coal = worst_extra(others, load, size)
            remaining = kept - float(load[list(coal)].sum())
            out.append(ViewSigma(site=s, view="sites", coalition=tuple(sorted(dropped + coal)),
                                 sigma_eff=math.inf if mu_s == 0 else math.sqrt(max(remaining, 0.0)) / mu_s))
    return out


def variant_audit(design: NoiseDesign, sensitivities: Any, eps: Any, delta: Any, collusion: int, *,
                  variant: str = "helper", dropped: Sequence[int] = ()) -> AuditReport:
    """:func:`dpcore.cape.audit.audit_design` for ``variant`` and with the ``dropped`` sites (indices) in every
    coalition: one row per surviving site and view, the promise judged on the exact sigma_eff (or its proven bound
    where a coalition could not be certified)."""
    n = design.n_sites
    sens = np.broadcast_to(np.asarray(sensitivities, dtype=float), (n,))
    eps = np.broadcast_to(np.asarray(eps, dtype=float), (n,))
    delta = np.broadcast_to(np.asarray(delta, dtype=float), (n,))
    rows, warnings = [], []
    for v in variant_view_sigmas(design, collusion, variant=variant, dropped=dropped):
        s = v.site
        proven = v.sigma_eff if v.exact else float(v.sigma_bound)
        eps_eff = exact_eps(v.sigma_eff, float(sens[s]), float(delta[s]))
        eps_proven = eps_eff if v.exact else exact_eps(proven, float(sens[s]), float(delta[s]))
        rows.append(AuditRow(site=design.names[s], view=v.view, colluders=len(v.coalition),
                             coalition=tuple(design.names[t] for t in v.coalition), sigma_eff=v.sigma_eff,
                             eps_eff=eps_eff, delta_eff=exact_delta(v.sigma_eff, float(sens[s]), float(eps[s])),
                             eps=float(eps[s]), delta=float(delta[s]),
                             ok=bool(eps_proven <= eps[s] * (1 + 1e-9) + 1e-12), exact=v.exact,
                             sigma_bound=v.sigma_bound))
        if not v.exact:
            warnings.append(f"site {design.names[s]}, view {v.view}: worst coalition not certified; judged on the "
                            f"proven bound {proven:.4g}")
    return AuditReport(tuple(rows), int(collusion), tuple(warnings))


def scaled_for_variant(design: NoiseDesign, sensitivities: Any, eps: Any, delta: Any, collusion: int,
                       variant: str, max_factor: float = 1e6) -> NoiseDesign:
    """The design with its helper variances multiplied by 4, 16, ... until :func:`variant_audit` passes for
    ``variant`` (the design itself when it already does). Every aggregator view grows with the helper noise and its
    limit is the same in both variants (module docstring), so a design the collusion-robust calibration made for
    the helper variant passes the helper-free audit at some larger scale; the outside and sites views do not
    depend on it. Returns the last design tried if ``max_factor`` is not enough (its audit says what fails)."""
    factor = 1.0
    current = design
    while True:
        if variant_audit(current, sensitivities, eps, delta, collusion, variant=variant).all_ok or factor >= max_factor:
            return current
        factor *= 4.0
        var_e = design.var_e * factor
        current = replace(design, var_e=var_e, e_scale=design.e_scale * factor,
                          e_mixing=weighted_zero_sum_mixing(design.weights, var_e),
                          e_law=weighted_zero_sum_law(design.weights, var_e),
                          notes=design.notes + (f"helper noise scaled by {factor:g} more for the {variant} variant, "
                                                "whose colluders also know the secure sum W",))


# -- what if k sites drop out ---------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class DropoutCase:
    """The worst drop-out set of size ``k`` for one variant: the sites that drop, the noise std of the survivors'
    renormalised aggregate (per entry; ``tau_c`` of the full round for comparison), the smallest sigma_eff / tau_s
    of any survivor in any audited view with up to ``collusion`` colluders besides them, and the sites whose promise
    then fails. ``sets`` counts the drop-out sets examined (all of them up to MAX_DROPOUT_SETS, else the k sites
    with the largest weights)."""

    variant: str
    k: int
    dropped: tuple[str, ...]
    output_std: float
    tau_c: float
    worst_ratio: float
    worst_site: str | None
    failing: tuple[str, ...]
    sets: int
    exhaustive: bool


def dropout_whatif(design: NoiseDesign, sensitivities: Any, eps: Any, delta: Any, collusion: int, k: int,
                   variant: str = "helper") -> DropoutCase:
    """If ``k`` sites drop out after the noise was set up: the accuracy of the survivors' aggregate
    sqrt(sum_(t not in D) mu_t^2 tau_g,t^2) / sum_(t not in D) mu_t and the audit of what was released
    (:func:`variant_audit` with D in every coalition), for the drop-out set D of size k that leaves the smallest
    sigma_eff / tau_s."""
    n = design.n_sites
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= n - 2:
        raise InputError(f"the number of sites that drop out must be an integer in 0..S-2 = {n - 2} (got {k!r})", "k")
    tau = np.asarray(design.tau, dtype=float)
    mu = np.asarray(design.weights, dtype=float)
    if math.comb(n, int(k)) <= MAX_DROPOUT_SETS:
        sets, exhaustive = list(combinations(range(n), int(k))), True
    else:
        sets, exhaustive = [tuple(sorted(np.argsort(-mu, kind="stable")[: int(k)].tolist()))], False
    best: DropoutCase | None = None
    for dropped in sets:
        report = variant_audit(design, sensitivities, eps, delta, collusion, variant=variant, dropped=dropped)
        index = {name: i for i, name in enumerate(design.names)}
        ratios = [(r.sigma_eff / tau[index[r.site]], r.site) for r in report.rows if tau[index[r.site]] > 0]
        ratio, site = min(ratios) if ratios else (math.inf, None)
        keep = np.ones(n, dtype=bool)
        keep[list(dropped)] = False
        total = float(mu[keep].sum())
        std = math.sqrt(float(np.sum(mu[keep] ** 2 * np.clip(design.var_g[keep], 0, None)))) / total
        case = DropoutCase(variant=variant, k=int(k), dropped=tuple(design.names[t] for t in dropped), output_std=std,
                           tau_c=design.output_std, worst_ratio=float(ratio), worst_site=site,
                           failing=tuple(sorted({r.site for r in report.failing()})), sets=len(sets),
                           exhaustive=exhaustive)
        if best is None or (case.worst_ratio, -case.output_std) < (best.worst_ratio, -best.output_std):
            best = case
    return best


@dataclass(frozen=True, kw_only=True)
class VariantRow:
    """One audited view in both variants: the worst site's sigma_eff / tau_s with a helper and helper-free, and the
    site and its coalition in the helper-free variant."""

    view: str
    helper: float
    helper_free: float
    site: str
    coalition: tuple[str, ...]

    @property
    def cost(self) -> float:
        """1 - (helper-free / helper): the share of the margin the revealed sum costs in this view (0: none)."""
        return 0.0 if not math.isfinite(self.helper) or self.helper == 0 else 1.0 - self.helper_free / self.helper


def compare_variants(design: NoiseDesign, collusion: int) -> list[VariantRow]:
    """Every view's worst sigma_eff / tau_s with a helper and helper-free (:func:`variant_view_sigmas`), in the
    order of :data:`dpcore.cape.audit.VIEWS`."""
    tau = np.asarray(design.tau, dtype=float)
    out = []
    worst: dict[str, dict[str, Any]] = {}
    for variant in NOISE_VARIANTS:
        for v in variant_view_sigmas(design, collusion, variant=variant):
            ratio = v.sigma_eff / tau[v.site] if tau[v.site] > 0 else math.inf
            best = worst.setdefault(v.view, {}).get(variant)
            if best is None or ratio < best[0]:
                worst[v.view][variant] = (ratio, v)
    for view, by in worst.items():
        ratio, v = by["helper-free"]
        out.append(VariantRow(view=view, helper=by["helper"][0], helper_free=ratio, site=design.names[v.site],
                              coalition=tuple(design.names[t] for t in v.coalition)))
    return out
