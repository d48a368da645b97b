"""The online tensor power method of paper 001 (Algorithm 2) for the LDA moments (docs/math/capeagn.md, "Online
tensor power method"; docs/math/lda.md): the streamed contractions of M3_hat(W, W, W) and the whitening of M2_hat
from products, so a large vocabulary never needs a D x D or D x D x D array.

The estimator is that of :mod:`dpcore.lda.moments`: per document P3_n, P2_n x q_n and q_n^(x)3, plus terms in the
corpus summaries S1(W), S2(W, W), Q1(W, W) computed in one pass before the power iterations
(:func:`dpcore.tensor.online_tensor_power_method` runs the passes).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..tensor.online import (
    OnlineOracle,
    doc_lengths,
    doc_pieces,
    p3_contractions,
    streaming_whitening,
    weighted_q_u,
)
from ..tensor.whitening import Whitening
from .moments import coefficients, lda_m2_matvec, prepare_counts

__all__ = ["lda_oracle", "lda_streaming_whitening"]


def lda_oracle(counts: object, w: np.ndarray, alpha0: float) -> OnlineOracle:  # long: the oracle and its finish
    """LDA (:mod:`dpcore.lda.moments`). A first pass computes the K-dimensional summaries S1w = sum q_n,
    S2w = sum P2_n(W, W) and Q1w = sum q_n q_n^T (q_n = W^T c_n / l_n). Per document the pass accumulates
    P3_n, the placements of P2_n x q_n and q_n^(x)3 contracted with u; ``finish`` combines them with the
    summaries using A x s placements: (I,u,u) -> 2 (A u)(s.u) + s (u^T A u), (u,u,u) -> 3 (u^T A u)(s.u)."""
    c = prepare_counts(counts)
    n_total = c.shape[0]
    co = coefficients(alpha0)
    ell = doc_lengths(c)
    y = np.asarray(c @ w)
    q = y / ell[:, None]
    beta2 = 1.0 / (ell * (ell - 1.0))
    s1w = q.sum(axis=0)
    s2w = y.T @ (y * beta2[:, None]) - w.T @ (w * np.asarray(c.T @ beta2).ravel()[:, None])
    q1w = q.T @ q
    del y, q

    def contract(rows: sp.csr_matrix, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        el = doc_lengths(rows)
        b2, b3 = 1.0 / (el * (el - 1.0)), 1.0 / (el * (el - 1.0) * (el - 2.0))
        pieces = doc_pieces(rows, w, u)
        e3_u, e3_uuu = p3_contractions(rows, w, u, b3, pieces)
        y, yu, uqu, wu = pieces["y"], pieces["yu"], pieces["uqu"], pieces["wu"]
        qv, qu = y / el[:, None], yu / el[:, None]
        # P2_n u = b2 (y (y.u) - Q_n u), u^T P2_n u = b2 ((y.u)^2 - u^T Q_n u)
        p2u_qu = y.T @ (b2[:, None] * yu * qu) - weighted_q_u(rows, w, wu, b2[:, None] * qu)
        up2u = b2[:, None] * (yu**2 - uqu)
        x_u = 2.0 * p2u_qu + qv.T @ up2u
        x_uuu = 3.0 * (up2u * qu).sum(axis=0)
        c_u = qv.T @ (qu**2)
        c_uuu = (qu**3).sum(axis=0)
        stacked_u = np.concatenate([e3_u, x_u, c_u], axis=0)
        return stacked_u, np.stack([e3_uuu, x_uuu, c_uuu])

    def finish(u: np.ndarray, tu: np.ndarray, tuuu: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        k = w.shape[1]
        scale = n_total / n  # a batch of n documents stands for the whole corpus
        e3_u, x_u, c_u = tu[:k] * scale, tu[k:2 * k] * scale, tu[2 * k:] * scale
        e3_uuu, x_uuu, c_uuu = tuuu * scale
        s2u, q1u = s2w @ u, q1w @ u
        s1u = s1w @ u
        u_s2_u, u_q1_u = np.einsum("kl,kl->l", u, s2u), np.einsum("kl,kl->l", u, q1u)
        cross_u = 2.0 * s2u * s1u + np.outer(s1w, u_s2_u) - x_u
        cross_uuu = 3.0 * u_s2_u * s1u - x_uuu
        trip_u = np.outer(s1w, s1u**2) - (2.0 * q1u * s1u + np.outer(s1w, u_q1_u)) + 2.0 * c_u
        trip_uuu = s1u**3 - 3.0 * u_q1_u * s1u + 2.0 * c_uuu
        nn = float(n_total)
        t_u = e3_u / nn - co.a3 * cross_u / (nn * (nn - 1)) + co.b3 * trip_u / (nn * (nn - 1) * (nn - 2))
        t_uuu = e3_uuu / nn - co.a3 * cross_uuu / (nn * (nn - 1)) + co.b3 * trip_uuu / (nn * (nn - 1) * (nn - 2))
        return t_u, t_uuu

    return OnlineOracle(c, w.shape[1], contract, finish)



def lda_streaming_whitening(counts: object, k: int, alpha0: float) -> Whitening:
    """:func:`dpcore.tensor.streaming_whitening` of the LDA M2_hat through :func:`dpcore.lda.moments.lda_m2_matvec`."""
    c = prepare_counts(counts)
    return streaming_whitening(lda_m2_matvec(c, alpha0), c.shape[1], k)


