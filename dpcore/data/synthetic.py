"""Synthetic PCA data: zero-mean Gaussian samples with a fixed covariance (the paper's Fig. 2a case;
docs/experiments.md)."""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np

from ..validation import check_choice, check_positive, check_positive_int
from .dataset import Dataset

__all__ = ["SPECTRA", "SYNTHETIC_COVARIANCE_SEED", "SYNTHETIC_PRESET", "Spectrum", "synthetic_covariance",
           "synthetic_dataset"]

Spectrum = Literal["power", "exponential"]
SPECTRA: tuple[Spectrum, ...] = get_args(Spectrum)
SYNTHETIC_COVARIANCE_SEED = 20180101
SYNTHETIC_PRESET = {"dim": 200, "k": 50, "spectrum": "power", "decay": 1.0}
"""The paper's synthetic case (Fig. 2a): D = 200, K = 50, zero-mean Gaussian, fixed covariance."""


def synthetic_covariance(dim: int = 200, spectrum: str = "power", decay: float = 1.0,
                         covariance_seed: int = SYNTHETIC_COVARIANCE_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending, largest 1) and orthonormal eigenvectors (D x D columns) of the covariance.

    power: lambda_d = d^(-decay), d = 1..D; exponential: lambda_d = exp(-decay (d - 1)).
    The eigenbasis is a fixed random rotation drawn from ``covariance_seed``, independent of the sampling
    generator, so the covariance stays the same across runs while the samples change.
    """
    dim = check_positive_int(dim, "D", minimum=2)
    spectrum = check_choice(spectrum, "spectrum", SPECTRA)
    decay = check_positive(decay, "decay")
    d = np.arange(1, dim + 1, dtype=float)
    eigenvalues = d**-decay if spectrum == "power" else np.exp(-decay * (d - 1))
    basis_rng = np.random.default_rng(covariance_seed)
    q, r = np.linalg.qr(basis_rng.standard_normal((dim, dim)))
    basis = q * np.sign(np.diag(r))[None, :]
    return eigenvalues, basis


def synthetic_dataset(n: int, rng: np.random.Generator, *, dim: int = 200, spectrum: str = "power",
                      decay: float = 1.0, covariance_seed: int = SYNTHETIC_COVARIANCE_SEED) -> Dataset:
    """``n`` zero-mean Gaussian samples (D x n) with the fixed covariance of :func:`synthetic_covariance`."""
    n = check_positive_int(n, "N")
    eigenvalues, basis = synthetic_covariance(dim, spectrum, decay, covariance_seed)
    z = rng.standard_normal((eigenvalues.size, n))
    x = basis @ (np.sqrt(eigenvalues)[:, None] * z)
    return Dataset(name="synthetic", x=x,
                   description=f"synthetic zero-mean Gaussian, D = {dim}, N = {n:,}, {spectrum} spectrum (decay "
                   f"{decay:g})")

