"""Latent-variable models for orthogonal tensor decomposition: ground truth and sampling (docs/math/capeagn.md,
models MOG/STM; appendix D of the preprint; Anandkumar et al. 2014).

* **MOG**, mixture of spherical Gaussians: t = a_h + z, P(h = k) = w_k, z ~ N(0, sigma^2 I).
* **STM**, single topic model: a document's topic h ~ w, its L >= 3 words i.i.d. from a_h (a probability
  vector over D words), words one-hot.

The sites' moments are in :mod:`dpcore.otd.moments`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from ..validation import check_choice, check_positive, check_positive_int, check_rank
from .multilinear import third_moment

__all__ = [
    "DEFAULT_SIGMA2",
    "DEFAULT_TOPIC_CONCENTRATION",
    "DEFAULT_WEIGHT_CONCENTRATION",
    "MODELS",
    "OTD_PRESETS",
    "MixtureModel",
    "Model",
    "make_model",
    "mog_norm_bound",
    "random_components",
    "sample_mog",
    "sample_stm",
]

Model = Literal["mog", "stm"]
MODELS: tuple[Model, ...] = get_args(Model)
DEFAULT_SIGMA2 = 0.05
DEFAULT_TOPIC_CONCENTRATION = 0.5
DEFAULT_WEIGHT_CONCENTRATION = 5.0
# The paper's experiment sizes (Figs. 3-5): (D, K).
OTD_PRESETS = {"paper (D=10, K=5)": (10, 5), "paper (D=50, K=10)": (50, 10)}


@dataclass(frozen=True, eq=False, kw_only=True)
class MixtureModel:
    """Ground truth: components a_k (rows, K x D, original units), weights w_k, MOG sigma^2, STM L."""

    kind: str
    components: np.ndarray
    weights: np.ndarray
    sigma2: float = 0.0
    doc_length: int = 3

    @property
    def dim(self) -> int:
        return int(self.components.shape[1])

    @property
    def k(self) -> int:
        return int(self.components.shape[0])

    def m2(self) -> np.ndarray:
        """Population M2 = sum_k w_k a_k a_k^T."""
        a = self.components
        return (a.T * self.weights) @ a

    def m3(self) -> np.ndarray:
        """Population M3 = sum_k w_k a_k^(x)3 (dense; small D only)."""
        return third_moment(self.components, self.weights)


def _model_sizes(kind: str, dim: object, k: object) -> tuple[str, int, int]:
    kind = check_choice(kind, "model", MODELS)
    dim = check_positive_int(dim, "D", minimum=2)
    k = check_rank(k, dim)
    return kind, dim, k


def make_model(
    kind: str,
    dim: int,
    k: int,
    rng: np.random.Generator,
    *,
    sigma2: float = DEFAULT_SIGMA2,
    doc_length: int = 3,
    topic_concentration: float = DEFAULT_TOPIC_CONCENTRATION,
    weight_concentration: float = DEFAULT_WEIGHT_CONCENTRATION,
) -> MixtureModel:
    """A random ground truth: weights w ~ Dirichlet(weight_concentration 1_K); MOG components are
    uniform random unit vectors (||a_k|| = 1), STM topics a_k ~ Dirichlet(topic_concentration 1_D).
    Draw order: weights, then components."""
    kind, dim, k = _model_sizes(kind, dim, k)
    sigma2 = check_positive(sigma2, "sigma^2", allow_zero=True)
    doc_length = check_positive_int(doc_length, "document length L", minimum=3)
    check_positive(topic_concentration, "topic concentration")
    check_positive(weight_concentration, "weight concentration")
    weights = rng.dirichlet(np.full(k, float(weight_concentration)))
    components = random_components(kind, dim, k, rng, topic_concentration=topic_concentration)
    return MixtureModel(kind=kind, components=components, weights=weights,
                        sigma2=float(sigma2) if kind == "mog" else 0.0, doc_length=doc_length)


def random_components(
    kind: str, dim: int, k: int, rng: np.random.Generator, *, norm: float = 1.0,
    topic_concentration: float = DEFAULT_TOPIC_CONCENTRATION,
) -> np.ndarray:
    """K random components from the models' prior (the "random vectors" reference): MOG uniform
    directions of length ``norm``; STM Dirichlet(topic_concentration 1_D) probability vectors."""
    if kind == "mog":
        a = rng.standard_normal((k, dim))
        return norm * a / np.linalg.norm(a, axis=1, keepdims=True)
    return rng.dirichlet(np.full(dim, float(topic_concentration)), size=k)


def sample_mog(model: MixtureModel, n: int, rng: np.random.Generator) -> np.ndarray:
    """n samples t = a_h + z (n x D, original units). Draws h, then z."""
    n = check_positive_int(n, "N")
    h = rng.choice(model.k, size=n, p=model.weights)
    z = rng.standard_normal((n, model.dim))
    return model.components[h] + math.sqrt(model.sigma2) * z


def sample_stm(model: MixtureModel, n: int, rng: np.random.Generator) -> np.ndarray:
    """n documents of ``model.doc_length`` word indices (n x L): topic h ~ w, words i.i.d. ~ a_h."""
    n = check_positive_int(n, "N")
    h = rng.choice(model.k, size=n, p=model.weights)
    u = rng.random((n, model.doc_length))
    cdf = np.cumsum(model.components, axis=1)
    cdf /= cdf[:, -1:]
    words = np.empty((n, model.doc_length), dtype=np.int64)
    for topic in range(model.k):
        rows = h == topic
        words[rows] = np.searchsorted(cdf[topic], u[rows], side="right")
    return np.minimum(words, model.dim - 1)


def mog_norm_bound(dim: int, sigma2: float) -> float:
    """Public bound zeta = 1 + sigma (sqrt(D) + 4) on ||a_h + z|| when ||a_k|| <= 1.

    ||z|| <= sigma (sqrt(D) + t) with probability >= 1 - exp(-t^2/2) (Gaussian concentration of a
    1-Lipschitz function), so at t = 4 fewer than 1 sample in 2,900 is clipped (in practice none: the
    triangle inequality is loose)."""
    return 1.0 + math.sqrt(sigma2) * (math.sqrt(dim) + 4.0)

