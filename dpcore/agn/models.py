"""Latent-variable models for orthogonal tensor decomposition: ground truth and sampling (docs/math/capeagn.md,
models MOG/STM; appendix D of the preprint; Anandkumar et al. 2014).

* **MOG**, mixture of spherical Gaussians: t = a_h + z, P(h = k) = w_k, z ~ N(0, sigma^2 I).
* **STM**, single topic model: a document's topic h ~ w, its L >= 3 words i.i.d. from a_h (a probability
  vector over D words), words one-hot.

The sites' moments are in :mod:`dpcore.tensor.moments`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from ..tensor.multilinear import third_moment
from ..validation import check_choice, check_positive, check_positive_int, check_rank

__all__ = [
    "DEFAULT_SIGMA2",
    "DEFAULT_TOPIC_CONCENTRATION",
    "DEFAULT_WEIGHT_CONCENTRATION",
    "MODELS",
    "TRUTHS",
    "OTD_PRESETS",
    "MixtureModel",
    "Model",
    "Truth",
    "authors_truth",
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
Truth = Literal["ours", "authors"]
TRUTHS: dict[Truth, str] = {
    "ours": "weights Dirichlet(5); MOG components uniform random unit vectors; STM topics Dirichlet(0.5)",
    "authors": "the authors' synthetic set-up: weights proportional to K evenly spaced values from 1 to 10K; MOG "
    "means a random orthonormal set; STM topics uniform on K disjoint blocks of words (orthogonal topics, our reading "
    "for STM, which the paper does not specify)",
}
assert tuple(TRUTHS) == get_args(Truth)
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
    notes: tuple[str, ...] = ()

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
    truth: str = "ours",
) -> MixtureModel:
    """A random ground truth (:data:`TRUTHS`). ``ours``: weights w ~ Dirichlet(weight_concentration 1_K); MOG
    components uniform random unit vectors (||a_k|| = 1), STM topics a_k ~ Dirichlet(topic_concentration 1_D); draw
    order weights, then components. ``authors``: :func:`authors_truth`."""
    kind, dim, k = _model_sizes(kind, dim, k)
    sigma2 = check_positive(sigma2, "sigma^2", allow_zero=True)
    doc_length = check_positive_int(doc_length, "document length L", minimum=3)
    check_positive(topic_concentration, "topic concentration")
    check_positive(weight_concentration, "weight concentration")
    truth = check_choice(truth, "truth", tuple(TRUTHS))
    if truth == "authors":
        weights, components = authors_truth(kind, dim, k, rng)
        notes = (f"ground truth: {TRUTHS['authors']}",)
    else:
        weights = rng.dirichlet(np.full(k, float(weight_concentration)))
        components = random_components(kind, dim, k, rng, topic_concentration=topic_concentration)
        notes = ()
    return MixtureModel(kind=kind, components=components, weights=weights,
                        sigma2=float(sigma2) if kind == "mog" else 0.0, doc_length=doc_length, notes=notes)


def authors_truth(kind: str, dim: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(weights, components) of the authors' synthetic set-up (docs/experiments.md, "The authors' set-up"):
    w_k proportional to the K evenly spaced values 1, 1 + (10K - 1)/(K - 1), ..., 10K (for K = 10: 1, 12, 23, ...,
    100); MOG means the K orthonormal columns of the Q factor of a D x K standard Gaussian matrix (``rng``); STM
    topic k uniform on the k-th of K contiguous blocks of words (block sizes differ by at most one), so the topics
    are orthogonal like the MOG means - our reading for STM, whose topics the paper does not specify."""
    steps = np.linspace(1.0, 10.0 * k, k)
    weights = steps / steps.sum()
    if kind == "mog":
        basis, _ = np.linalg.qr(rng.standard_normal((dim, k)))
        return weights, np.ascontiguousarray(basis.T)
    topics = np.zeros((k, dim))
    for topic, words in enumerate(np.array_split(np.arange(dim), k)):
        topics[topic, words] = 1.0 / words.size
    return weights, topics


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
    """Public bound zeta = sqrt(1 + D sigma^2) + 4 sigma on ||a_h + z|| when ||a_k|| <= 1 (docs/math/capeagn.md).

    f(z) = ||a + z|| with z = sigma g, g ~ N(0, I_D), is sigma-Lipschitz in g, and E f <= sqrt(E f^2)
    = sqrt(||a||^2 + D sigma^2) <= sqrt(1 + D sigma^2), so P(f > sqrt(1 + D sigma^2) + sigma t) <= exp(-t^2/2)
    (Gaussian concentration): at t = 4 fewer than 1 sample in 2,900 is clipped. It uses only the model's public
    D, sigma^2 and ||a_k|| <= 1. (The earlier bound 1 + sigma (sqrt(D) + 4) added the two norms by the triangle
    inequality: 3.48 instead of 2.76 at D = 50, sigma^2 = 0.05, which shrinks M2 by 1.6 and M3 by 2 times more.)"""
    return math.sqrt(1.0 + dim * sigma2) + 4.0 * math.sqrt(sigma2)
