"""The numbers each CAPE party computes in one stage, independent of how its messages travel and of what the noise
is shaped into (journal paper, Algorithms 1-3 and generalized CAPE, docs/math/cape.md; the message flow with real
processes: docs/federated.md).

Three kinds of party, one stage of a round:

* the **helper** draws e_1..e_S jointly as e = M z with the design's mixing M = ``design.e_mixing`` (S x m) and
  z ~ N(0, I), so sum_s mu_s e_s = 0 and the joint law is exactly the one the audit checked
  (:func:`helper_noise`);
* the **aggregator** draws f_s for each site from that site's stream (:func:`aggregator_noise`), then removes it
  again and combines a = sum_s mu_s (a_hat_s - f_s) (:func:`combine`);
* every **site** s draws its own g_s (:func:`site_noise`) and releases a_hat_s = a_s + e_s + f_s + g_s
  (:func:`site_release`).

Each term is drawn as rows of i.i.d. normals with the design's variance per entry: one row per site, ``size``
numbers long. For a symmetric matrix the row is its unique entries (colex order of :mod:`dpcore.privacy.symmetric`);
a third-moment law maps its row to a tensor (:func:`dpcore.tensor.m3_noise_tensor`, above this layer), which is linear,
so the helper's rows still cancel after it.

Each party draws from its own generator (in a simulation :func:`dpcore.seeding.party_rng`, keyed by names). All
arithmetic that combines several arrays is written as element-wise sums in a fixed order (no BLAS reductions),
so a result does not depend on the number of threads, and the same draws give byte-identical results in one
process or across several. The round itself (plan, site statistics, outputs, the whole round in one process)
is :mod:`dpcore.federation`, above pca and otd.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .protocol import AGGREGATOR, HELPER

__all__ = [
    "AGGREGATOR",
    "HELPER",
    "NOISE_BLOCK",
    "SITE",
    "aggregator_noise",
    "combine",
    "helper_noise",
    "mixing_problem",
    "site_noise",
    "site_release",
]

SITE = "site"
"""The role name of a site (the helper's and the aggregator's are those of :mod:`dpcore.cape.protocol`)."""

NOISE_BLOCK = 1 << 16
"""Columns of standard normals the helper draws at a time: its temporaries are m x NOISE_BLOCK numbers (m the
columns of the mixing, at most S + 1), whatever the size of the object."""


def helper_noise(e_mixing: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """The helper's rows e (S x ``size``): e = M z with M = ``e_mixing`` (S x m, the design's) and z ~ N(0, I)
    (m x size), drawn block by block of :data:`NOISE_BLOCK` columns, so sum_s mu_s e_s = 0 (to rounding) and
    cov(e_s, e_t) = (M M^T)_st, the law the audit checked."""
    mixing = np.asarray(e_mixing, dtype=float)
    n_sites, m = mixing.shape
    e = np.zeros((n_sites, int(size)))
    for start in range(0, int(size), NOISE_BLOCK):
        stop = min(start + NOISE_BLOCK, int(size))
        z = rng.standard_normal((m, stop - start))
        for s in range(n_sites):
            for j in range(m):
                if mixing[s, j] != 0.0:
                    e[s, start:stop] += mixing[s, j] * z[j]
    return e


def mixing_problem(e_mixing: np.ndarray, weights: np.ndarray, var_e: np.ndarray, rtol: float = 1e-9) -> str | None:
    """Why ``e_mixing`` is not a helper law for these weights and variances, or None: it must be finite, have one
    row per site, cancel (|sum_s mu_s M_s| <= rtol sum_s |mu_s M_s|) and give var(e_s) = sum_j M_sj^2 = tau_e,s^2
    (relative ``rtol``). What the helper checks before drawing anything for an aggregator's design."""
    mixing = np.asarray(e_mixing, dtype=float)
    mu = np.asarray(weights, dtype=float)
    var = np.asarray(var_e, dtype=float)
    if mixing.ndim != 2 or mixing.shape[0] != mu.size or var.shape != mu.shape:
        return (f"the mixing must be S x m with S = {mu.size} rows, one weight and one helper variance per site "
                f"(got mixing {mixing.shape}, {mu.size} weights, {var.size} variances)")
    if not (np.all(np.isfinite(mixing)) and np.all(np.isfinite(mu)) and np.all(np.isfinite(var))):
        return "the mixing, weights and variances must be finite numbers"
    weighted = mu[:, None] * mixing
    residual = np.abs(weighted.sum(axis=0))
    scale = np.abs(weighted).sum(axis=0)
    if np.any(residual > rtol * np.maximum(scale, 1e-300)):
        return "the mixing does not cancel: sum_s mu_s e_s would not be 0"
    rows = np.sum(mixing**2, axis=1)
    if not np.allclose(rows, var, rtol=rtol, atol=0.0):
        worst = int(np.argmax(np.abs(rows - var)))
        return (f"the mixing gives site {worst + 1} variance {rows[worst]:.6g}, the design says "
                f"tau_e^2 = {var[worst]:.6g}")
    return None


def _independent(var: float, size: int, rng: np.random.Generator) -> np.ndarray:
    row = rng.standard_normal(int(size))
    row *= math.sqrt(max(float(var), 0.0))
    return row


def aggregator_noise(var_f: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """The aggregator's row f_s for one site (``size`` numbers, std tau_f,s); drawn from that site's stream."""
    return _independent(var_f, size, rng)


def site_noise(var_g: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """A site's own row g_s (``size`` numbers, std tau_g,s)."""
    return _independent(var_g, size, rng)


def site_release(statistic: np.ndarray, e: np.ndarray | None, f: np.ndarray | None,
                 g: np.ndarray | None) -> np.ndarray:
    """a_hat_s = a_s + e_s + f_s + g_s (unique entries of any symmetric statistic, or a tensor; added in this order;
    a term that is None is not drawn in this flow: the conventional scheme's release is a_s + g_s)."""
    release = np.array(statistic, dtype=float)
    for term in (e, f, g):
        if term is not None:
            release += term
    return release


def combine(releases: Sequence[np.ndarray] | np.ndarray, subtract: Sequence[np.ndarray | None] | np.ndarray | None,
            weights: np.ndarray, *, stacked: bool = False) -> np.ndarray:
    """a = sum_s mu_s (a_hat_s - f_s) (the helper noise cancels because sum_s mu_s e_s = 0); ``subtract`` None (or
    a None entry): nothing to remove, a = sum_s mu_s a_hat_s.

    By default summed site by site in the given order, element-wise (the parties of a round: the same bytes in one
    process or several). ``stacked``: the releases (and ``subtract``) are one (S, ...) array each, summed over sites
    by one BLAS contraction (the in-process tensor flows of :mod:`dpcore.tensor.release`, whose published numbers
    were made so; the same sum to rounding)."""
    if stacked:
        mu = np.asarray(weights, dtype=float)
        return np.tensordot(mu, releases if subtract is None else releases - subtract, axes=1)
    if subtract is None:  # nothing removed: the plain weighted sum, in the layout of its terms
        return sum(float(mu) * np.asarray(release, dtype=float) for mu, release in zip(weights, releases, strict=True))
    out = np.zeros(np.shape(releases[0]))  # C order whatever the releases' layout (later contractions follow it)
    for mu, release, f in zip(weights, releases, subtract, strict=True):
        out += float(mu) * (release if f is None else release - f)
    return out
