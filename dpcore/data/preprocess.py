"""Preprocessing (docs/data.md, "Preprocessing"): shift and scale the features, then make every sample's norm <= 1,
which the PCA sensitivity assumes (docs/math/setting.md).

Two choices, in this order:

* the features (:data:`FEATURE_SCALINGS`): ``none`` (raw values), ``centre`` (subtract each feature's mean; the
  default) or ``standardise`` (subtract each feature's mean and divide by its standard deviation, so that features
  in different units weigh the same; the sensible choice for a table of measurements);
* the norm bound (:data:`PREPROCESSING`): ``max-norm`` (divide by the largest sample norm: the papers' choice) or
  ``clip`` (divide by a public scale, then shrink every sample with norm > 1 to norm 1).

Everything read from the data (means, standard deviations, the largest norm) is **not differentially private**
(docs/math/corrections.md, item 6); ``none`` with ``clip`` and a public scale reads nothing from the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..validation import InputError, check_choice, check_positive

__all__ = ["FEATURE_SCALINGS", "PREPROCESSING", "FeatureScaling", "Preprocessed", "Preprocessing", "preprocess"]

Preprocessing = Literal["max-norm", "clip"]
FeatureScaling = Literal["none", "centre", "standardise"]

PREPROCESSING: dict[Preprocessing, str] = {
    "max-norm": "divide every sample by the largest sample norm (the papers' choice; NOT private: the scale is read "
    "from the data)",
    "clip": "divide by a public scale, then shrink every sample with norm > 1 to norm 1",
}
FEATURE_SCALINGS: dict[FeatureScaling, str] = {
    "none": "the raw values",
    "centre": "subtract each feature's mean (the mean is read from the data)",
    "standardise": "subtract each feature's mean and divide by its standard deviation, so features in different "
    "units weigh the same (both read from the data); constant features become 0",
}


@dataclass(frozen=True, kw_only=True)
class Preprocessed:
    """Preprocessed samples (D x N, every norm <= 1) and what was done to them: the feature scaling, the bound, the
    mean subtracted (zeros for ``none``), the per-feature scale divided out (ones unless standardised), the norm scale,
    the number of clipped samples and a sentence."""

    x: np.ndarray
    method: str
    features: str
    mean: np.ndarray
    feature_scale: np.ndarray
    scale: float
    n_clipped: int
    note: str


def _scaled_features(x: np.ndarray, features: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """x with its features shifted and scaled, the mean and per-feature scale used, and what was done in words."""
    dim = x.shape[0]
    if features == "none":
        return x.copy(), np.zeros(dim), np.ones(dim), "raw features"
    mean = x.mean(axis=1)
    centred = x - mean[:, None]
    if features == "centre":
        return centred, mean, np.ones(dim), "centred"
    std = centred.std(axis=1)
    constant = std == 0.0
    scale = np.where(constant, 1.0, std)
    extra = f" ({int(constant.sum()):,} constant feature(s) left at 0)" if constant.any() else ""
    return centred / scale[:, None], mean, scale, f"standardised{extra}"


def preprocess(x: np.ndarray, method: str = "max-norm", *, scale: float = 1.0,
               features: str = "centre") -> Preprocessed:
    """Scale the features of ``x`` (D x N, samples as columns), then enforce ||x_n|| <= 1 (module docstring).

    * ``features``: none (x), centre (x_n - m) or standardise ((x_n - m) / s per feature, s the population standard
      deviation; constant features give 0);
    * ``method``: max-norm (z_n / max_n ||z_n||) or clip (z_n / scale, then z_n / max(1, ||z_n||)), ``scale`` public.

    Only ``none`` with ``clip`` reads nothing from the data; the note says what was read. Scaling comes first because
    scaling after the bound can push norms above 1.
    """
    method = check_choice(method, "preprocessing", tuple(PREPROCESSING))
    features = check_choice(features, "features", tuple(FEATURE_SCALINGS))
    scale = check_positive(scale, "scale")
    x = np.asarray(x, dtype=float)
    if x.ndim != 2 or x.shape[1] < 1:
        raise InputError("data must be a D x N matrix with at least one sample", "data")
    shifted, mean, feature_scale, done = _scaled_features(x, features)
    norms = np.linalg.norm(shifted, axis=0)
    read = {"none": "", "centre": "the mean", "standardise": "the means and standard deviations"}[features]
    if method == "max-norm":
        largest = float(norms.max())
        if largest == 0.0:
            raise InputError("all samples are identical after the feature scaling, so the data are zero; nothing to "
                             "analyse", "data")
        read = f"{read} and the largest norm are" if read else "the largest norm is"
        return Preprocessed(x=shifted / largest, method=method, features=features, mean=mean,
                            feature_scale=feature_scale, scale=largest, n_clipped=0,
                            note=f"{done} and divided by the largest sample norm {largest:.4g} (not private: {read} "
                            "read from the data)")
    scaled = shifted / scale
    norms = norms / scale
    over = norms > 1.0
    scaled[:, over] /= norms[over][None, :]
    n_clipped = int(over.sum())
    privacy = f"; not private: {read} read from the data" if read else "; nothing is read from the data"
    return Preprocessed(x=scaled, method=method, features=features, mean=mean, feature_scale=feature_scale,
                        scale=scale, n_clipped=n_clipped,
                        note=f"{done}, divided by the public scale {scale:g} and clipped to norm 1 ({n_clipped:,} of "
                        f"{x.shape[1]:,} samples clipped{privacy})")
