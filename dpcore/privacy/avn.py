"""AVN noise, appendix E of the preprint (docs/math/mechanisms.md, "AVN")."""

from __future__ import annotations

import numpy as np

from ..validation import check_positive, check_positive_int

__all__ = ["avn_noise"]


def avn_noise(rng: np.random.Generator, dim: int, beta: float) -> np.ndarray:
    """Vector b in R^dim with density proportional to exp(-beta ||b||_2): a uniform direction times a
    Gamma(shape = dim, scale = 1/beta) radius. With beta = eps / Delta this is pure eps-DP."""
    dim = check_positive_int(dim, "dim")
    beta = check_positive(beta, "beta")
    direction = rng.standard_normal(dim)
    direction /= np.linalg.norm(direction)
    return direction * rng.gamma(shape=dim, scale=1.0 / beta)
