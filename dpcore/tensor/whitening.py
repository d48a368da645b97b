"""Whitening (capeAGN stage 1, docs/math/capeagn.md): W = U D^{-1/2} from the top-K eigenpairs (U, D) of the noisy
second moment M2_hat; non-positive eigenvalues raise :class:`WhiteningError`, never NaN (docs/math/corrections.md,
item 4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import linalg
from ..limits import EIGH_MAX_DIM
from ..validation import InputError, check_rank

__all__ = ["Whitening", "WhiteningError", "whiten"]


class WhiteningError(InputError):
    """The top-K eigenvalues of the (noisy) M2 are not all positive, so W = U D^{-1/2} does not exist."""

    def __init__(self, message: str, eigenvalues: np.ndarray, k: int):
        super().__init__(message, "K")
        self.eigenvalues = np.asarray(eigenvalues)
        self.k = k


@dataclass(frozen=True, eq=False)
class Whitening:
    """W = U D^{-1/2} (D x K) from the top-K eigenpairs (U, D) of M2_hat, largest first."""

    w: np.ndarray
    u: np.ndarray
    eigenvalues: np.ndarray


def whiten(m2: np.ndarray, k: int, *, noisy: bool = True) -> Whitening:
    """Top-K eigenpairs of the symmetric ``m2`` (:func:`dpcore.linalg.top_eigenpairs`, Lanczos above
    :data:`~dpcore.limits.EIGH_MAX_DIM`) and W = U D^{-1/2}; raises :class:`WhiteningError` when any of the K
    largest eigenvalues is <= 0 (never returns NaN)."""
    d = m2.shape[0]
    k = check_rank(k, d)
    vals, vecs = linalg.top_eigenpairs(m2, k, lanczos_above=EIGH_MAX_DIM)
    floor = 1e-12 * max(float(np.max(np.abs(vals))), 1e-300)
    bad = int(np.sum(vals <= floor))
    if bad:
        if noisy:
            message = (
                f"whitening failed: {bad} of the top K = {k} eigenvalues of the noisy second moment M2_hat are "
                f"<= 0 (the smallest is {vals[-1]:.3g}), so W = U D^(-1/2) does not exist. The privacy noise on "
                f"M2 is larger than its K-th component. What would help: more samples per site, a larger eps "
                f"(or a larger share of eps for the first stage), or a smaller K."
            )
        else:
            message = (
                f"whitening failed: the data's second moment M2 has only {k - bad} positive eigenvalue(s) among "
                f"its top K = {k} (the smallest is {vals[-1]:.3g}); the data do not support {k} components. "
                f"Choose a smaller K (or check the MOG sigma^2, which is subtracted from M2)."
            )
        raise WhiteningError(message, vals, k)
    return Whitening(vecs / np.sqrt(vals), vecs, vals)


