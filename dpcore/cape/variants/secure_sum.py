"""The helper-free variant: the sites make the zero-sum noise among themselves by a secure sum (docs/federated.md,
"Two ways to make the zero-sum noise"; the mathematics in :mod:`dpcore.cape.helper_free`). Every site learns the sum
W, so a coalition holding at least one site knows (u_C, W); W never reaches the aggregator, whose own view is the
helper's. :func:`joint_covariance` is the law of (e, W)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...validation import InputError
from ..audit import ViewSigma, view_sigmas
from ..design import NoiseDesign
from ..variant import NoiseVariant, worst_extra

__all__ = ["ENTRIES", "joint_covariance"]


def joint_covariance(design: NoiseDesign) -> np.ndarray:
    """Cov of (e_1, ..., e_S, W) for the helper-free construction from the design's factored law: e_s =
    (w_s - c_s W) / mu_s on the weighted sites, e_s = w_s (independent) on the others, W = sum of the weighted w.
    Its top-left S x S block is the helper's law; the last row is what the revealed sum adds."""
    law = _law(design)
    mu = np.asarray(design.weights, dtype=float)
    n = mu.size
    weighted = mu > 0
    # rows: e_1..e_S, W; columns: w_1..w_S (independent, variance var_w)
    a = np.zeros((n + 1, n))
    for s in range(n):
        if weighted[s]:
            a[s, weighted] = -law.common[s] / mu[s]
            a[s, s] += 1.0 / mu[s]
        else:
            a[s, s] = 1.0
    a[n, weighted] = 1.0
    return a @ np.diag(law.var_w) @ a.T


def _law(design: NoiseDesign):
    if design.e_law is None or not design.feasible:
        raise InputError("the helper-free variant needs a feasible design with a factored helper law")
    return design.e_law


def _law(design: NoiseDesign):
    if design.e_law is None or not design.feasible:
        raise InputError("the helper-free variant needs a feasible design with a factored helper law")
    return design.e_law


def _helper_free_sigma2(s: int, known: Sequence[int], mu: np.ndarray, d2: np.ndarray, gamma: np.ndarray) -> float:
    """sigma_eff^2 of weighted site s for the aggregator knowing W and u_t of the sites in ``known`` (module
    docstring)."""
    a_s = d2[s] + gamma[s]
    if a_s <= 0.0:
        return 0.0
    rest = np.ones(mu.size, dtype=bool)
    rest[list(known)] = False
    rest &= mu > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(d2 + gamma > 0, d2 * gamma / np.where(d2 + gamma > 0, d2 + gamma, 1.0), 0.0)
    total = float(np.sum(r[rest]))
    extra = 0.0 if d2[s] == 0.0 else (math.inf if total <= 0.0 else (d2[s] / a_s) ** 2 / total)
    info = 1.0 / a_s + extra
    return 0.0 if math.isinf(info) else 1.0 / (mu[s] ** 2 * info)


def _helper_free_views(design: NoiseDesign, size: int, dropped: tuple[int, ...], s: int) -> list[ViewSigma]:
    law = _law(design)
    mu = np.asarray(design.weights, dtype=float)
    var_g = np.clip(design.var_g, 0.0, None)
    if mu[s] <= 0:  # independent of everything: the release alone
        sigma = math.sqrt(float(law.var_w[s] + var_g[s]))
        views = [ViewSigma(site=s, view="aggregator", coalition=tuple(sorted(dropped)), sigma_eff=sigma)]
        if size > 0:
            views.append(ViewSigma(site=s, view="aggregator+coalition", coalition=tuple(sorted(dropped)),
                                   sigma_eff=sigma))
        return views
    d2 = np.asarray(law.var_w, dtype=float)
    gamma = mu**2 * var_g
    if dropped:
        first = ViewSigma(site=s, view="aggregator", coalition=tuple(sorted(dropped)),
                          sigma_eff=math.sqrt(_helper_free_sigma2(s, dropped, mu, d2, gamma)))
    else:  # W never reaches the aggregator: its view is the helper's
        first = next(v for v in view_sigmas(design, 0, ("aggregator",)) if v.site == s)
    views = [first]
    survivors = [t for t in range(mu.size) if t != s and t not in dropped]
    extra = min(size, len(survivors))
    if extra > 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(d2 + gamma > 0, d2 * gamma / np.where(d2 + gamma > 0, d2 + gamma, 1.0), 0.0)
        coalition = tuple(sorted(dropped + worst_extra(survivors, r, extra)))
        views.append(ViewSigma(site=s, view="aggregator+coalition", coalition=coalition,
                               sigma_eff=math.sqrt(_helper_free_sigma2(s, coalition, mu, d2, gamma))))
    return views


ENTRIES = (NoiseVariant(
    name="helper-free", title="the sites, by a secure sum", position=20, helper=False,
    aggregator_views=_helper_free_views,
    help="No helper: each site draws its own w_s, the sites compute W = sum w_s by a secure sum, e_s = (w_s - c_s W) "
    "/ mu_s; every site learns W.",
),)
