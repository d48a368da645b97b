"""What a release of a federated round may be, and how it travels masked (docs/federated.md, "Masked releases" and
"The range of a release").

**The range.** Site s's release of a stage is its statistic plus e_s + f_s + g_s, each entry N(0, v_s) with
v_s = var_e,s + var_f,s + var_g,s (a matrix stage; the terms are independent of each other for one site). The
statistic is bounded by the data's public bound: every sample has norm <= 1, so |A_s| <= 1 (capePCA), |M2_s| <= 1 +
sigma'^2 (capeAGN; sigma'^2 = sigma^2 / zeta^2 of a Gaussian mixture, 0 for the single topic model), and on the
third moment, projected on W = (w_1 .. w_K), |M3_s(W, W, W)_ijk| <= (1 + 3 sigma'^2) ||w_i|| ||w_j|| ||w_k||. A
projected noise entry sum_abc T_abc w_ai w_bj w_ck of symmetric noise whose unique entries have variance at most
c v (c = 1 for the published law, 6 for the symmetrized one) has variance at most 6 v prod ||w||^2 (each unique
entry enters at most 6 times; Cauchy-Schwarz). So every entry of an honest release lies within

    B_s = S_stage + z sigma_s,   z = Phi^-1(1 - RELEASE_TAIL / (2 n)),

(sigma_s = sqrt(v_s) on a matrix stage, sqrt(6 v_s) max_k ||w_k||^3 on M3; n the release's entries) except with
probability at most RELEASE_TAIL (a union bound over the entries). The aggregator refuses a release with an entry
outside +-B_s (the round stops, nothing is published); a site never sends one.

**The encoding.** A release travels as a fixed-point number in the ring of integers mod 2^64 (x -> round(x 2^b),
b = floor(62 - log2 B_s), so +-B_s fits with room to spare) plus the site's self-mask, uniform in the ring: the
masked release says nothing about the release until the self-mask seed is rebuilt. Unmasked, it is decoded to the
quantised release (step 2^-b, below 2^-60 B_s), which is what every party, and the in-process run, computes.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

from ..cape.helper_free import MAX_FIXED_POINT_STEP, FixedPoint, decode_sum, encode_fixed
from ..validation import InputError
from .plan import RoundPlan, RoundStage

__all__ = ["RELEASE_TAIL", "decode_release", "encode_release", "quantised_release", "release_bound",
           "release_encoding", "release_range_problem"]

RELEASE_TAIL = 1e-9
"""Probability that an honest site's release of one stage has an entry outside the range the aggregator accepts."""
_RING_BITS = 64
_PROJECTION_VARIANCE = 6.0
"""Largest ratio of a projected noise entry's variance to v prod ||w||^2 (module docstring)."""


def _statistic_bound(plan: RoundPlan, stage: RoundStage, w: np.ndarray | None) -> tuple[float, float]:
    """(bound on |statistic entry|, factor on the noise std) of a stage: (1, 1) for capePCA's A; M2 adds sigma'^2;
    M3 scales both by max ||w_k||^3 (and the noise by sqrt 6)."""
    s2 = plan.settings.scaled_sigma2 or 0.0
    if stage.stage == "A":
        return 1.0, 1.0
    if stage.stage == "M2":
        return 1.0 + s2, 1.0
    if w is None:
        raise InputError("the range of a third-moment release needs W")
    cube = float(np.max(np.linalg.norm(np.asarray(w, dtype=float), axis=0))) ** 3
    return (1.0 + 3.0 * s2) * cube, math.sqrt(_PROJECTION_VARIANCE) * cube


def _entries(plan: RoundPlan, stage: RoundStage) -> int:
    k = plan.settings.k
    return stage.unique if stage.stage != "M3" else k * (k + 1) * (k + 2) // 6


def release_bound(plan: RoundPlan, stage: RoundStage, index: int, w: np.ndarray | None = None) -> float:
    """B_s: the largest |entry| of site ``index``'s release of ``stage`` that the aggregator accepts (module
    docstring); ``w`` is W for the M3 stage."""
    d = stage.design
    statistic, factor = _statistic_bound(plan, stage, w)
    variance = float(d.var_e[index] + d.var_f[index] + d.var_g[index])
    z = -float(ndtri(RELEASE_TAIL / (2.0 * _entries(plan, stage))))  # the normal's upper quantile, norm.isf
    bound = statistic + z * factor * math.sqrt(max(variance, 0.0))
    if not math.isfinite(bound) or bound <= 0:
        raise InputError(f"stage {stage.stage}: the release range of site {plan.names[index]} is not a finite "
                         f"positive number ({bound!r})")
    return bound


def release_encoding(plan: RoundPlan, stage: RoundStage, index: int, w: np.ndarray | None = None) -> FixedPoint:
    """The fixed-point encoding of site ``index``'s release: +-B_s within +-2^62 of the ring. Raises InputError when
    its step would exceed MAX_FIXED_POINT_STEP of the release's noise std (a release the ring cannot carry)."""
    bound = release_bound(plan, stage, index, w)
    bits = math.floor(_RING_BITS - 2 - math.log2(bound))
    d = stage.design
    std = math.sqrt(max(float(d.var_e[index] + d.var_f[index] + d.var_g[index]), 0.0))
    step = 2.0**-bits
    if std > 0 and step > MAX_FIXED_POINT_STEP * std:
        raise InputError(f"stage {stage.stage}: a release of site {plan.names[index]} spans {bound:.3g} with noise std "
                         f"{std:.3g}; the ring's step {step:.2g} would exceed {MAX_FIXED_POINT_STEP:.2g} of it")
    return FixedPoint(bits=bits, bound=bound, step=step / std if std > 0 else 0.0)


def encode_release(values: np.ndarray, encoding: FixedPoint) -> np.ndarray:
    """round(x 2^bits) mod 2^64 (uint64) after checking |x| <= B_s (an InputError otherwise: the site sends nothing)."""
    problem = release_range_problem(values, encoding)
    if problem:
        raise InputError(f"the release is outside the range the aggregator accepts: {problem}")
    return encode_fixed(values, encoding)


def decode_release(ring: np.ndarray, encoding: FixedPoint) -> np.ndarray:
    """The release a ring element encodes (always finite, within +-2^63 2^-bits)."""
    return decode_sum(np.asarray(ring, dtype=np.uint64), encoding)


def quantised_release(values: np.ndarray, encoding: FixedPoint) -> np.ndarray:
    """The release as the aggregator decodes it: encoded, then decoded (what the in-process run combines)."""
    return decode_release(encode_release(values, encoding), encoding)


def release_range_problem(values: np.ndarray, encoding: FixedPoint) -> str | None:
    """Why a decoded release is outside +-B_s, or None."""
    values = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(values)):
        return "it holds non-finite numbers"
    largest = float(np.max(np.abs(values), initial=0.0))
    if largest > encoding.bound:
        return (f"an entry of {largest:.4g} lies outside +-{encoding.bound:.4g}, the range bounded data plus the "
                f"designed noise produce except with probability {RELEASE_TAIL:g}")
    return None
