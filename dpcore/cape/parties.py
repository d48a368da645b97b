"""The numbers each CAPE party computes in one stage, independent of how its messages travel (journal paper,
Algorithms 1-3 and generalized CAPE, docs/math/cape.md; the message flow with real processes: docs/federated.md).

Three kinds of party, one stage of a round:

* the **helper** draws e_1..e_S jointly with sum_s mu_s e_s = 0 (:func:`helper_noise`);
* the **aggregator** draws f_s for each site from that site's stream (:func:`aggregator_noise`), then removes it
  again and combines a = sum_s mu_s (a_hat_s - f_s) (:func:`combine`);
* every **site** s draws its own g_s (:func:`site_noise`) and releases a_hat_s = a_s + e_s + f_s + g_s
  (:func:`site_release`).

Every symmetric object travels as its unique entries (colex order of :mod:`dpcore.privacy.symmetric`): D(D+1)/2
for a D x D matrix, C(D+2, 3) for a D x D x D tensor. Matrix noise is i.i.d. per unique entry; tensor noise
follows the "symmetrized" law sqrt(6) tau Sym(Z) of docs/math/capeagn.md (unique-entry variances tau^2, 2 tau^2,
6 tau^2 for 3, 2, 1 distinct indices).

Each party draws from its own generator (in a simulation :func:`dpcore.seeding.party_rng`, keyed by names). All
arithmetic that combines several arrays is written as element-wise sums in a fixed order (no BLAS reductions),
so a result does not depend on the number of threads, and the same draws give byte-identical results in one
process or across several. The round itself (plan, site statistics, outputs, the whole round in one process)
is :mod:`dpcore.federation`, above pca and otd.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np

from ..privacy.symmetric import symmetrize, unique_count_matrix, unique_count_tensor, unique_entries_tensor
from ..privacy.zero_sum import weighted_zero_sum_mixing
from .protocol import AGGREGATOR, HELPER

__all__ = [
    "AGGREGATOR",
    "HELPER",
    "NOISE_KINDS",
    "SITE",
    "NoiseKind",
    "aggregator_noise",
    "combine",
    "helper_noise",
    "noise_size",
    "site_noise",
    "site_release",
    "unique_count",
]

SITE = "site"
"""The role name of a site (the helper's and the aggregator's are those of :mod:`dpcore.cape.protocol`)."""

NoiseKind = Literal["matrix", "tensor"]
NOISE_KINDS: tuple[NoiseKind, ...] = get_args(NoiseKind)


def unique_count(kind: NoiseKind, dim: int) -> int:
    """Unique entries of the symmetric object that travels: D(D+1)/2 (matrix) or C(D+2, 3) (tensor)."""
    return unique_count_matrix(dim) if kind == "matrix" else unique_count_tensor(dim)


def noise_size(kind: NoiseKind, dim: int) -> int:
    """Standard normals drawn per site and term: one per unique entry (matrix), D^3 (tensor, symmetrized law)."""
    return unique_count_matrix(dim) if kind == "matrix" else dim**3


def _shape(rows: np.ndarray, kind: NoiseKind, dim: int) -> np.ndarray:
    """Map i.i.d. rows (variance v) to the unique entries of the noise object: unchanged for a matrix;
    sqrt(6) Sym(Z) for a tensor (unique-entry variances v, 2 v, 6 v for 3, 2, 1 distinct indices)."""
    if kind == "matrix":
        return rows
    out = np.empty((rows.shape[0], unique_count_tensor(dim)))
    for s in range(rows.shape[0]):
        out[s] = unique_entries_tensor(math.sqrt(6.0) * symmetrize(rows[s].reshape(dim, dim, dim)))
    return out


def helper_noise(weights: np.ndarray, var_e: np.ndarray, kind: NoiseKind, dim: int, rng: np.random.Generator
                 ) -> np.ndarray:
    """The helper's e_s for every site (S, unique entries): e = M z with z ~ N(0, I) (m x size) and M the
    weighted zero-sum mixing of the design's weights mu_s and helper variances tau_e,s^2, so
    sum_s mu_s e_s = 0 (to rounding) and var(e_s) = tau_e,s^2 (:func:`dpcore.privacy.weighted_zero_sum_mixing`,
    which raises InputError when no such law exists)."""
    mixing = weighted_zero_sum_mixing(np.asarray(weights, dtype=float), np.asarray(var_e, dtype=float))
    z = rng.standard_normal((mixing.shape[1], noise_size(kind, dim)))
    e = np.zeros((mixing.shape[0], z.shape[1]))
    for s in range(mixing.shape[0]):
        for j in range(mixing.shape[1]):
            if mixing[s, j] != 0.0:
                e[s] += mixing[s, j] * z[j]
    return _shape(e, kind, dim)


def _independent(var: float, kind: NoiseKind, dim: int, rng: np.random.Generator) -> np.ndarray:
    z = rng.standard_normal(noise_size(kind, dim))
    return _shape((math.sqrt(max(float(var), 0.0)) * z)[None, :], kind, dim)[0]


def aggregator_noise(var_f: float, kind: NoiseKind, dim: int, rng: np.random.Generator) -> np.ndarray:
    """The aggregator's f_s for one site (unique entries), std tau_f,s; drawn from that site's stream."""
    return _independent(var_f, kind, dim, rng)


def site_noise(var_g: float, kind: NoiseKind, dim: int, rng: np.random.Generator) -> np.ndarray:
    """A site's own g_s (unique entries), std tau_g,s."""
    return _independent(var_g, kind, dim, rng)


def site_release(statistic: np.ndarray, e: np.ndarray, f: np.ndarray, g: np.ndarray) -> np.ndarray:
    """a_hat_s = a_s + e_s + f_s + g_s (unique entries of any symmetric statistic, added in this order)."""
    release = statistic + e
    release += f
    release += g
    return release


def combine(releases: Sequence[np.ndarray], subtract: Sequence[np.ndarray], weights: np.ndarray) -> np.ndarray:
    """a = sum_s mu_s (a_hat_s - f_s), summed site by site in the given order (the helper noise cancels because
    sum_s mu_s e_s = 0)."""
    out = np.zeros_like(np.asarray(releases[0], dtype=float))
    for mu, release, f in zip(weights, releases, subtract, strict=True):
        out += float(mu) * (release - f)
    return out
