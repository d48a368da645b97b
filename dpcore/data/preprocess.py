"""Preprocessing: centre the samples, then make every norm <= 1 (docs/math/setting.md; docs/data.md).

Both methods use the data themselves (the mean, and for "max-norm" the largest norm) and are therefore **not
differentially private** (docs/math/corrections.md, item 6); clipping to a public bound after dividing by a
public scale only leaks through the centring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..validation import InputError, check_choice, check_positive

__all__ = ["PREPROCESSING", "Preprocessed", "Preprocessing", "preprocess"]

Preprocessing = Literal["max-norm", "clip"]


PREPROCESSING: dict[Preprocessing, str] = {
    "max-norm": "centre, then divide every sample by the largest sample norm (the papers' choice; NOT private: "
    "the scale is read from the data)",
    "clip": "centre, divide by a public scale, then shrink every sample with norm > 1 to norm 1 (only the "
    "centring uses the data)",
}


@dataclass(frozen=True, kw_only=True)
class Preprocessed:
    """Preprocessed samples (D x N, every norm <= 1) and what was done to them."""

    x: np.ndarray
    method: str
    mean: np.ndarray
    scale: float
    n_clipped: int
    note: str


def preprocess(x: np.ndarray, method: str = "max-norm", *, scale: float = 1.0) -> Preprocessed:
    """Centre the samples (columns) of ``x``, then enforce ||x_n|| <= 1 (docs/data.md; docs/math/corrections.md,
    item 6).

    * ``max-norm``: x_n <- (x_n - m) / max_n ||x_n - m|| (the papers' preprocessing).
    * ``clip``: x_n <- (x_n - m) / scale, then x_n <- x_n / max(1, ||x_n||), with ``scale`` a public constant.

    Neither is differentially private: the mean m (and for max-norm the largest norm) come from the data.
    Centring comes first because centring after scaling can push norms above 1.
    """
    method = check_choice(method, "preprocessing", tuple(PREPROCESSING))
    scale = check_positive(scale, "scale")
    x = np.asarray(x, dtype=float)
    if x.ndim != 2 or x.shape[1] < 1:
        raise InputError("data must be a D x N matrix with at least one sample", "data")
    mean = x.mean(axis=1)
    centred = x - mean[:, None]
    norms = np.linalg.norm(centred, axis=0)
    if method == "max-norm":
        largest = float(norms.max())
        if largest == 0.0:
            raise InputError("all samples are identical, so the centred data are zero; nothing to analyse", "data")
        return Preprocessed(x=centred / largest, method=method, mean=mean, scale=largest, n_clipped=0,
                            note=f"centred and divided by the largest sample norm {largest:.4g} (not private: "
                            "both the mean and the norm are read from the data)")
    scaled = centred / scale
    norms = norms / scale
    over = norms > 1.0
    scaled[:, over] /= norms[over][None, :]
    n_clipped = int(over.sum())
    return Preprocessed(x=scaled, method=method, mean=mean, scale=scale, n_clipped=n_clipped,
                        note=f"centred, divided by the public scale {scale:g} and clipped to norm 1 "
                        f"({n_clipped:,} of {x.shape[1]:,} samples clipped; the centring is not private)")
