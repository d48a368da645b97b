"""What a site of a federated round computes from its own data (docs/federated.md): its statistic as unique
entries (capePCA's A_s, capeAGN's M2_s) and capeAGN's whitened third-moment release (Algorithm 3, step 3);
the noise terms and the release of a statistic are :mod:`dpcore.cape.parties`."""

from __future__ import annotations

import numpy as np

from ..otd.moments import StmSite, stm_site_from_words
from ..otd.multilinear import multilinear
from ..privacy.symmetric import symmetric_tensor, unique_entries_matrix, unique_entries_tensor

__all__ = ["project_tensor", "site_release_m3", "site_statistic_m2", "site_statistic_pca", "stm_site"]


def site_statistic_pca(x: np.ndarray) -> np.ndarray:
    """Unique entries of A_s = (1/N_s) X_s X_s^T for samples as columns of ``x`` (D x N_s, ||x|| <= 1)."""
    return unique_entries_matrix(x @ x.T / x.shape[1])


def site_statistic_m2(site: StmSite) -> np.ndarray:
    """Unique entries of a capeAGN site's second moment M2_s."""
    return unique_entries_matrix(site.m2())


def stm_site(words: np.ndarray, dim: int) -> StmSite:
    """A site's single-topic-model documents (N_s x L word indices, L >= 3), with the paper's estimator (the
    first three words of each document)."""
    return stm_site_from_words(words, dim, "first")


def project_tensor(unique: np.ndarray, dim: int, w: np.ndarray) -> np.ndarray:
    """Unique entries of T(W, W, W) (K x K x K) for the symmetric D x D x D tensor T with these unique entries
    (what the aggregator subtracts for its own F3_s)."""
    return unique_entries_tensor(multilinear(symmetric_tensor(unique, dim), w))


def site_release_m3(m3: np.ndarray, e: np.ndarray, f: np.ndarray, g: np.ndarray, w: np.ndarray) -> np.ndarray:
    """M3~_s = (M3_s + E3_s + F3_s + G3_s)(W, W, W), unique entries of the K x K x K result (Algorithm 3, step 3).
    ``m3`` is the dense D x D x D moment; e, f, g are unique entries."""
    dim = m3.shape[0]
    tensor = m3 + symmetric_tensor(e, dim)
    tensor += symmetric_tensor(f, dim)
    tensor += symmetric_tensor(g, dim)
    return unique_entries_tensor(multilinear(tensor, w))
