"""One site's documents and the LDA moments it releases (docs/math/lda.md, "capeLDA").

A site holding N_s documents computes the unbiased estimators of :mod:`dpcore.lda.moments` from its own documents
only: M2_s and M3_s are U-statistics over pairs and triples of *its* distinct documents, so E[M2_s] = M2 and
E[M3_s] = M3 for every site (N_s >= 3), and the aggregate sum_s mu_s M2_s with weights summing to 1 is unbiased too.
Replacing one of the site's documents moves M2_s by at most Delta2(N_s) and M3_s by at most Delta3(N_s)
(:func:`dpcore.privacy.lda_sensitivity` at N = N_s): the sensitivity of a site's release is that of a corpus of
N_s documents, whatever the other sites hold.

:class:`LdaSite` offers what the message flows of :mod:`dpcore.tensor.release` need (:class:`dpcore.tensor.MomentSite`):
blocks of M2_s, the dense M3_s (small D) and the projected M3_s(W, W, W) straight from the sparse counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..tensor.moments import DocumentCounts, KeptM3
from .moments import (
    DocumentSums,
    document_sums,
    lda_m3_dense,
    m2_from_sums,
    m2_matvec_from_sums,
    m3_frobenius_bound,
    m3_projected_from_sums,
)

__all__ = ["LdaSite", "pool_lda_sites"]


@dataclass(frozen=True, eq=False)
class LdaSite(KeptM3, DocumentCounts):
    """A site's word counts (validated CSR, documents x words, every document with >= 3 words) and the Dirichlet
    concentration alpha_0 of the estimators."""

    counts: sp.csr_matrix
    alpha0: float

    @cached_property
    def sums(self) -> DocumentSums:
        return document_sums(self.counts)

    @cached_property
    def m2_dense(self) -> np.ndarray:
        """M2_s (D x D), computed once and kept (read-only)."""
        m2 = m2_from_sums(self.sums, self.alpha0)
        m2.setflags(write=False)
        return m2

    def m2(self) -> np.ndarray:
        return self.m2_dense

    def m2_block(self, j0: int, j1: int) -> np.ndarray:
        """Rows 0..j1-1, columns j0..j1-1 of M2_s (the block the CAPE flow releases)."""
        return self.m2_dense[:j1, j0:j1]

    def m2_matvec(self) -> Callable[[np.ndarray], np.ndarray]:
        """V -> M2_s V without forming M2_s (the online path)."""
        return m2_matvec_from_sums(self.sums, self.alpha0)

    def _dense_m3(self) -> np.ndarray:
        """The dense M3_s (D <= :data:`dpcore.limits.MAX_DENSE_M3_DIM`; :meth:`m3` keeps it)."""
        return lda_m3_dense(self.counts, self.alpha0)

    @cached_property
    def m3_norm_bound(self) -> float:
        """A computable upper bound on ||M3_s||_F (:func:`dpcore.lda.moments.m3_frobenius_bound`), kept."""
        return m3_frobenius_bound(self.counts, self.alpha0)

    def m3_projected(self, w: np.ndarray) -> np.ndarray:
        """M3_s(W, W, W) from the counts, never a D^3 array."""
        return m3_projected_from_sums(self.sums, self.alpha0, w)

    def head(self, n: int) -> LdaSite:
        """The site holding only its first ``n`` documents (nested samples of an N_s sweep)."""
        return LdaSite(self.counts[:n], self.alpha0)


def pool_lda_sites(sites: Sequence[LdaSite]) -> LdaSite:
    """All documents at one party (the pooled corpus: one U-statistic over every pair and triple of documents)."""
    if len(sites) == 1:
        return sites[0]
    return LdaSite(sp.vstack([s.counts for s in sites]).tocsr(), sites[0].alpha0)
