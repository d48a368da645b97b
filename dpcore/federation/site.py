"""What the parties of a federated round compute beyond :mod:`dpcore.cape.parties` (docs/federated.md): a site's
statistic (capePCA's A_s, capeAGN's M2_s and projected M3_s, from :mod:`dpcore.pca` and :mod:`dpcore.agn`), each
stage's noise object from rows of i.i.d. normals (third-moment laws from :mod:`dpcore.tensor.release`), a site's
release of a stage and what the aggregator subtracts again.

Stages: "A" (capePCA, D x D), "M2" (D x D), "M3" (dense: D x D x D noise, the site projects the sum on W;
projected: K x K x K noise already projected on W, the site adds it to M3_s(W, W, W)). Everything that travels is
the unique entries of a symmetric object.
"""

from __future__ import annotations

import numpy as np

from ..cape.parties import site_release
from ..pca.problem import site_moment
from ..privacy.symmetric import (
    symmetric_tensor,
    unique_count_matrix,
    unique_count_tensor,
    unique_entries_matrix,
    unique_entries_tensor,
)
from ..tensor.moments import MogSite, StmSite, mog_sites, stm_site_from_words
from ..tensor.multilinear import multilinear
from ..tensor.release import m3_noise_size, m3_noise_tensor

__all__ = ["aggregator_subtract", "dense_statistic", "mog_site", "noise_entries", "noise_shape", "noise_size",
           "noise_unique", "site_stage_release", "site_statistic", "stm_site"]


def noise_shape(stage: str, path: str, dim: int, k: int) -> tuple[int, ...]:
    """The noise object of a stage: D x D ("A", "M2"), D x D x D ("M3" dense) or K x K x K ("M3" projected)."""
    if stage != "M3":
        return (dim, dim)
    return (k, k, k) if path == "projected" else (dim, dim, dim)


def noise_unique(stage: str, path: str, dim: int, k: int) -> int:
    """Unique entries of the noise object that travel: D(D+1)/2, C(D+2, 3) or C(K+2, 3)."""
    shape = noise_shape(stage, path, dim, k)
    return unique_count_matrix(shape[0]) if len(shape) == 2 else unique_count_tensor(shape[0])


def noise_size(stage: str, law: str, path: str, dim: int, k: int) -> int:
    """Standard normals per site and noise term: the unique entries of a matrix; for "M3" what the third-moment
    law needs on the path (:func:`dpcore.tensor.release.m3_noise_size`)."""
    if stage != "M3":
        return unique_count_matrix(dim)
    return m3_noise_size(law, path, dim, k)


def stm_site(words: np.ndarray, dim: int) -> StmSite:
    """A site's single-topic-model documents (N_s x L word indices, L >= 3), with the paper's estimator (the
    first three words of each document)."""
    return stm_site_from_words(words, dim, "first")


def mog_site(samples: np.ndarray, sigma2: float, norm_bound: float) -> MogSite:
    """A site's Gaussian-mixture samples (N_s x D, original units) divided by the public norm bound zeta (a sample
    still longer than 1 is clipped), with sigma^2 / zeta^2 (:func:`dpcore.tensor.mog_sites`)."""
    sites, _, _ = mog_sites([samples], sigma2, norm_bound)
    return sites[0]


def site_statistic(stage: str, data: np.ndarray | MogSite | StmSite, w: np.ndarray | None = None) -> np.ndarray:
    """Unique entries of what a site releases before noise: A_s = X_s X_s^T / N_s for "A" (``data`` D x N_s,
    :func:`dpcore.pca.site_moment`), the model's M2_s for "M2", M3_s(W, W, W) for "M3" on the projected path."""
    if stage == "A":
        return site_moment(data)
    if stage == "M2":
        return unique_entries_matrix(data.m2())
    return unique_entries_tensor(data.m3_projected(w))


def dense_statistic(stage: str, data: np.ndarray | MogSite | StmSite) -> np.ndarray:
    """Unique entries of a site's dense statistic, never projected: A_s, M2_s, or the dense M3_s (what the integer
    variant encodes; the aggregator projects the decoded third moment itself, :mod:`dpcore.federation.ring`)."""
    if stage == "M3":
        return unique_entries_tensor(data.m3())
    return site_statistic(stage, data)


def noise_entries(rows: np.ndarray, stage: str, law: str, path: str, dim: int, w: np.ndarray | None = None
                  ) -> np.ndarray:
    """Unique entries of each row's noise object (rows: S x size or 1-d): unchanged for a matrix stage; for "M3"
    the third-moment law ``law`` on ``path`` (:func:`dpcore.tensor.release.m3_noise_tensor`): D x D x D dense,
    K x K x K projected on W. Linear, so the helper's rows still cancel."""
    rows = np.asarray(rows, dtype=float)
    if stage != "M3":
        return rows
    shape = m3_noise_tensor(law, path, dim, w if path == "projected" else None)
    if rows.ndim == 1:
        return unique_entries_tensor(shape(rows))
    return np.stack([unique_entries_tensor(shape(row)) for row in rows])


def site_stage_release(stage: str, path: str, data: np.ndarray | MogSite | StmSite, e: np.ndarray, f: np.ndarray,
                       g: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """A site's release of one stage (unique entries): a_s + e_s + f_s + g_s, except on the dense M3 path, where
    it is (M3_s + E3_s + F3_s + G3_s)(W, W, W) (Algorithm 3, step 3): e, f, g are unique entries of D x D x D
    tensors and the sum is projected."""
    if stage == "M3" and path == "dense":
        dim = w.shape[0]
        tensor = data.m3() + symmetric_tensor(e, dim)
        tensor += symmetric_tensor(f, dim)
        tensor += symmetric_tensor(g, dim)
        return unique_entries_tensor(multilinear(tensor, w))
    return site_release(site_statistic(stage, data, w), e, f, g)


def aggregator_subtract(stage: str, path: str, f: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """What the aggregator removes from a site's release: f_s, or F3_s(W, W, W) on the dense M3 path."""
    if stage == "M3" and path == "dense":
        return unique_entries_tensor(multilinear(symmetric_tensor(f, w.shape[0]), w))
    return f
