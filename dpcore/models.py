"""Latent-variable models for orthogonal tensor decomposition and their per-site moments (SPEC 7).

Two models (appendix D of the preprint; Anandkumar et al. 2014):

* **MOG**, mixture of spherical Gaussians: t = a_h + z, P(h = k) = w_k, z ~ N(0, sigma^2 I). After
  dividing every sample by a public bound zeta (so ||t|| <= 1; samples beyond it are clipped) and
  sigma^2 by zeta^2: M2 = mean t t^T - sigma^2 I and
  M3 = mean t^(x)3 - sigma^2 sum_d (m x e_d x e_d + e_d x m x e_d + e_d x e_d x m), m = mean t,
  so that M2 = sum_k w_k a_k a_k^T and M3 = sum_k w_k a_k^(x)3 (components scaled by 1/zeta).
* **STM**, single topic model: a document's topic h ~ w, its L >= 3 words i.i.d. from a_h (a probability
  vector over D words), words one-hot. M2 = E[t1 t2^T], M3 = E[t1 x t2 x t3]. Two estimators:

  - ``first`` (the paper's): the first two / three words of each document, symmetrised;
  - ``all``: per document, the average over all ordered pairs / triples of distinct word positions
    (a U-statistic, computable from word counts, lower variance for long documents).

  Both keep the published sensitivity sqrt(2)/N: each document contributes an entry-wise
  non-negative array of Frobenius norm <= 1, and for non-negative A, B with norms <= 1,
  ||A - B||_F^2 = ||A||^2 + ||B||^2 - 2 <A, B> <= 2. ``tests/test_tensor_models.py`` checks it by brute force.

Sites hold their samples in :class:`MogSite` / :class:`StmSite`, which compute the second moment
(whole, or a block of columns for large D), the dense third moment (small D only) and the projected
third moment M3(W, W, W) directly from the samples in O(N D K + N K^3), never forming a D^3 array.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from .validation import InputError, check_choice, check_positive, check_positive_int, check_rank

__all__ = [
    "DEFAULT_SIGMA2",
    "ESTIMATORS",
    "MODELS",
    "OTD_PRESETS",
    "MixtureModel",
    "MogSite",
    "StmSite",
    "make_model",
    "mog_norm_bound",
    "mog_sites",
    "pool_sites",
    "random_components",
    "sample_mog",
    "sample_stm",
    "stm_site_from_words",
    "symmetrize",
    "third_cross",
    "third_moment",
]

MODELS = ("mog", "stm")
ESTIMATORS = {
    "first": "first two / three words of each document, symmetrised (as in the paper)",
    "all": "average over all ordered pairs / triples of distinct word positions of each document "
    "(works from word counts)",
}
DEFAULT_SIGMA2 = 0.05
DEFAULT_TOPIC_CONCENTRATION = 0.5
DEFAULT_WEIGHT_CONCENTRATION = 5.0
# The paper's experiment sizes (Figs. 3-5): (D, K).
OTD_PRESETS = {"paper (D=10, K=5)": (10, 5), "paper (D=50, K=10)": (50, 10)}
_CHUNK_ENTRIES = 1 << 22  # rows x K^2 entries per chunk of a third-moment sum (32 MiB)


# ----------------------------------------------------------------------------------------------
# Small tensor helpers
# ----------------------------------------------------------------------------------------------

def symmetrize(tensor: np.ndarray) -> np.ndarray:
    """Sym(T) = (1/6) sum over the 6 permutations of the three axes."""
    t = tensor
    return (t + t.transpose(0, 2, 1) + t.transpose(1, 0, 2) + t.transpose(1, 2, 0) + t.transpose(2, 0, 1)
            + t.transpose(2, 1, 0)) / 6.0


def third_cross(a: np.ndarray, b: np.ndarray, c: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """sum_n w_n a_n x b_n x c_n for rows a_n, b_n, c_n (each n x K), in chunks of rows."""
    n, k = a.shape
    out = np.zeros((k, k * k))
    step = max(1, _CHUNK_ENTRIES // max(k * k, 1))
    for start in range(0, n, step):
        sl = slice(start, start + step)
        left = a[sl] if weights is None else a[sl] * weights[sl, None]
        right = (b[sl][:, :, None] * c[sl][:, None, :]).reshape(-1, k * k)
        out += left.T @ right
    return out.reshape(k, k, k)


def third_moment(y: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """sum_n w_n y_n^(x)3 for the rows y_n of ``y``."""
    return third_cross(y, y, y, weights)


def _outer_identity_sym(vector: np.ndarray, gram: np.ndarray) -> np.ndarray:
    """v_i G_jk + v_j G_ik + v_k G_ij (= 3 Sym(v x G) for symmetric G)."""
    return (np.einsum("i,jk->ijk", vector, gram) + np.einsum("j,ik->ijk", vector, gram)
            + np.einsum("k,ij->ijk", vector, gram))


# ----------------------------------------------------------------------------------------------
# Ground truth and sampling
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
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
    return MixtureModel(kind, components, weights, float(sigma2) if kind == "mog" else 0.0, doc_length)


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


# ----------------------------------------------------------------------------------------------
# Sites
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class MogSite:
    """One site's MOG samples, scaled so ||x_n|| <= 1; ``sigma2`` is the scaled component variance."""

    x: np.ndarray
    sigma2: float
    kind: str = field(default="mog", init=False)

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    @property
    def dim(self) -> int:
        return int(self.x.shape[1])

    @cached_property
    def mean(self) -> np.ndarray:
        return self.x.mean(axis=0)

    def m2(self) -> np.ndarray:
        """M2 = (1/N) X^T X - sigma^2 I."""
        return self.x.T @ self.x / self.n - self.sigma2 * np.eye(self.dim)

    def m2_block(self, j0: int, j1: int) -> np.ndarray:
        """Rows 0..j1-1, columns j0..j1-1 of M2 (the upper-triangle block the CAPE flow needs)."""
        block = self.x[:, :j1].T @ self.x[:, j0:j1] / self.n
        cols = np.arange(j1 - j0)
        block[j0 + cols, cols] -= self.sigma2
        return block

    def m3(self) -> np.ndarray:
        """Dense M3 = (1/N) sum x^(x)3 - sigma^2 sum_d (m x e_d x e_d + e_d x m x e_d + e_d x e_d x m)."""
        return third_moment(self.x) / self.n - self.sigma2 * _outer_identity_sym(self.mean, np.eye(self.dim))

    def m3_projected(self, w: np.ndarray) -> np.ndarray:
        """M3(W, W, W) from the samples: (1/N) sum (W^T x)^(x)3 - sigma^2 3 Sym(W^T m x W^T W), O(N D K + N K^3)."""
        y = self.x @ w
        return third_moment(y) / self.n - self.sigma2 * _outer_identity_sym(w.T @ self.mean, w.T @ w)


@dataclass(frozen=True, eq=False)
class StmSite:
    """One site's documents: word ``counts`` (sparse N x D) and, when word order is known, the
    ``first`` three word indices (N x 3). ``estimator`` picks the moment estimator (:data:`ESTIMATORS`)."""

    counts: sp.csr_matrix
    first: np.ndarray | None
    estimator: str = "first"
    kind: str = field(default="stm", init=False)

    def __post_init__(self) -> None:
        check_choice(self.estimator, "estimator", tuple(ESTIMATORS))
        if self.estimator == "first" and self.first is None:
            raise InputError("the 'first' estimator needs word order; word-count data needs the 'all' estimator",
                             "estimator")
        if np.any(self.lengths < 3):
            raise InputError("every document needs at least 3 words", "documents")

    @property
    def n(self) -> int:
        return int(self.counts.shape[0])

    @property
    def dim(self) -> int:
        return int(self.counts.shape[1])

    @cached_property
    def lengths(self) -> np.ndarray:
        return np.asarray(self.counts.sum(axis=1)).ravel()

    @cached_property
    def _m2_sparse(self) -> sp.csc_matrix:
        n, d = self.n, self.dim
        if self.estimator == "first":
            pairs = sp.coo_matrix((np.full(n, 0.5 / n), (self.first[:, 0], self.first[:, 1])), shape=(d, d))
            return (pairs + pairs.T).tocsc()
        alpha = 1.0 / (self.lengths * (self.lengths - 1.0))
        c = self.counts
        gram = (c.T @ sp.diags(alpha) @ c).tocsc()
        return ((gram - sp.diags(np.asarray(c.T @ alpha).ravel())) / n).tocsc()

    def m2(self) -> np.ndarray:
        """Dense M2 (D x D)."""
        return self._m2_sparse.toarray()

    def m2_block(self, j0: int, j1: int) -> np.ndarray:
        """Rows 0..j1-1, columns j0..j1-1 of M2."""
        return self._m2_sparse[:j1, j0:j1].toarray()

    def _alpha3(self) -> np.ndarray:
        ell = self.lengths
        return 1.0 / (ell * (ell - 1.0) * (ell - 2.0))

    def m3(self) -> np.ndarray:
        """Dense symmetric M3 (D^3 entries; small D only)."""
        n, d = self.n, self.dim
        if self.estimator == "first":
            f = self.first
            flat = (f[:, 0] * d + f[:, 1]) * d + f[:, 2]
            raw = np.bincount(flat, minlength=d**3).astype(float).reshape(d, d, d) / n
            return symmetrize(raw)
        alpha = self._alpha3()
        c = self.counts.toarray()
        cubes = third_moment(c, alpha)
        pair = c.T @ (c * alpha[:, None])  # Q_ik = sum_n alpha_n c_ni c_nk
        b = np.zeros((d, d, d))
        idx = np.arange(d)
        b[idx, idx, :] = pair
        diag = np.zeros((d, d, d))
        diag[idx, idx, idx] = c.T @ alpha
        return (cubes - 3.0 * symmetrize(b) + 2.0 * diag) / n

    def m3_projected(self, w: np.ndarray) -> np.ndarray:
        """M3(W, W, W) from the documents, never forming a D^3 array."""
        if self.estimator == "first":
            f = self.first
            return symmetrize(third_cross(w[f[:, 0]], w[f[:, 1]], w[f[:, 2]])) / self.n
        alpha = self._alpha3()
        y = np.asarray(self.counts @ w)
        cubes = third_moment(y, alpha)
        coo = self.counts.tocoo()
        vals = alpha[coo.row] * coo.data
        b = third_cross(w[coo.col], w[coo.col], y[coo.row], vals)  # sum alpha c_nd w_d x w_d x y_n
        diag = third_moment(w, np.asarray(self.counts.T @ alpha).ravel())
        return (cubes - 3.0 * symmetrize(b) + 2.0 * diag) / self.n


Site = MogSite | StmSite


def mog_sites(
    parts: list[np.ndarray], sigma2: float, norm_bound: float
) -> tuple[tuple[MogSite, ...], float, int]:
    """Scale raw MOG samples (one array per site, original units) by the public ``norm_bound`` zeta,
    clip the rare sample still longer than 1, scale sigma^2 by 1/zeta^2.
    Returns (sites, scaled sigma^2, number of clipped samples)."""
    zeta = check_positive(norm_bound, "norm bound")
    sigma2_scaled = float(sigma2) / zeta**2
    sites = []
    clipped = 0
    for x in parts:
        y = np.asarray(x, dtype=float) / zeta
        norms = np.linalg.norm(y, axis=1)
        over = norms > 1.0
        clipped += int(over.sum())
        if over.any():
            y[over] /= norms[over, None]
        sites.append(MogSite(y, sigma2_scaled))
    return tuple(sites), sigma2_scaled, clipped


def stm_site_from_words(words: np.ndarray, dim: int, estimator: str = "first") -> StmSite:
    """A site from equal-length documents given as word indices (N x L, L >= 3)."""
    words = np.asarray(words, dtype=np.int64)
    n, length = words.shape
    rows = np.repeat(np.arange(n), length)
    counts = sp.csr_matrix((np.ones(n * length), (rows, words.ravel())), shape=(n, dim))
    counts.sum_duplicates()
    return StmSite(counts, words[:, :3].copy(), estimator)


def pool_sites(sites: tuple[Site, ...] | list[Site]) -> Site:
    """All samples in one site (the pooled-data scenario)."""
    first = sites[0]
    if isinstance(first, MogSite):
        return MogSite(np.vstack([s.x for s in sites]), first.sigma2)
    firsts = None if any(s.first is None for s in sites) else np.vstack([s.first for s in sites])
    return StmSite(sp.vstack([s.counts for s in sites]).tocsr(), firsts, first.estimator)
