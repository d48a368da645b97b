"""Synthetic LDA corpora and the population moments of the model (paper 004, Appendix A and Lemma 3.2).

Latent Dirichlet allocation: K topics mu_1..mu_K, probability vectors over D words; a Dirichlet prior
alpha = (alpha_1..alpha_K) with concentration alpha_0 = sum alpha_i. Document n draws its topic
proportions theta_n ~ Dirichlet(alpha), then each of its l_n words independently: topic z ~ theta_n,
word ~ mu_z. Given theta, the words are i.i.d. with distribution mu theta (a D-vector), so a document's
word counts are Multinomial(l_n, mu theta_n); that is how they are drawn here.

Population moments (Anandkumar et al. 2012, "A spectral algorithm for latent Dirichlet allocation";
paper 004, Definition 3.1 and Lemma 3.2, whose printed coefficients are garbled - these are the ones the
tests verify by exact enumeration):

* M1 = E[x1] = sum_i (alpha_i / alpha_0) mu_i
* M2 = E[x1 x x2] - alpha_0/(alpha_0 + 1) M1 x M1 = sum_i alpha_i / (alpha_0 (alpha_0 + 1)) mu_i x mu_i
* M3 = E[x1 x x2 x x3] - alpha_0/(alpha_0 + 2) (E[x1 x x2 x M1] + E[x1 x M1 x x3] + E[M1 x x2 x x3])
  + 2 alpha_0^2 / ((alpha_0 + 1)(alpha_0 + 2)) M1 x M1 x M1
  = sum_i 2 alpha_i / (alpha_0 (alpha_0 + 1)(alpha_0 + 2)) mu_i x mu_i x mu_i.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..tensor.multilinear import third_moment
from ..validation import InputError, check_choice, check_positive, check_positive_int, check_rank

__all__ = [
    "ALPHA_SHAPES",
    "DEFAULT_ALPHA0",
    "DEFAULT_DOC_LENGTH",
    "DEFAULT_TOPIC_CONCENTRATION",
    "ISSUE_CORPUS",
    "MAX_SYNTHETIC_ENTRIES",
    "MIN_DOC_LENGTH",
    "LdaModel",
    "make_lda_model",
    "sample_lda_corpus",
]

MIN_DOC_LENGTH = 3  # the third-moment estimator needs three distinct word positions per document
DEFAULT_ALPHA0 = 1.0
DEFAULT_DOC_LENGTH = 50
DEFAULT_TOPIC_CONCENTRATION = 0.1  # topics ~ Dirichlet(0.1 * 1_D): a few dozen words carry most of the mass
DEFAULT_PROPORTION_CONCENTRATION = 5.0  # alpha / alpha_0 ~ Dirichlet(5 * 1_K) for the "dirichlet" shape
ALPHA_SHAPES = {
    "symmetric": "alpha_i = alpha_0 / K (all whitened eigenvalues equal: configurations 3 and 4 have no eigengap)",
    "dirichlet": "alpha / alpha_0 ~ Dirichlet(5 * 1_K), drawn once with the topics (distinct eigenvalues)",
}
# The synthetic corpus of issue 13: K = 5 topics over D = 100 words, alpha_0 = 1 (symmetric prior, the usual
# reading), 20,000 documents of 50 words.
ISSUE_CORPUS = {"dim": 100, "k": 5, "alpha0": 1.0, "alpha_shape": "symmetric", "n_docs": 20_000, "doc_length": 50}
MAX_SYNTHETIC_ENTRIES = 1 << 22  # documents x D entries of dense counts drawn at once (32 MiB of int64)


@dataclass(frozen=True, eq=False)
class LdaModel:
    """Ground truth: ``topics`` (K x D, rows are probability vectors) and the Dirichlet ``alpha`` (K)."""

    topics: np.ndarray
    alpha: np.ndarray

    @property
    def k(self) -> int:
        return int(self.topics.shape[0])

    @property
    def dim(self) -> int:
        return int(self.topics.shape[1])

    @property
    def alpha0(self) -> float:
        return float(self.alpha.sum())

    def m1(self) -> np.ndarray:
        """M1 = sum_i (alpha_i / alpha_0) mu_i (Lemma 3.2, eq. 4)."""
        return self.alpha @ self.topics / self.alpha0

    def m2_weights(self) -> np.ndarray:
        """alpha_i / (alpha_0 (alpha_0 + 1)): M2 = sum_i of these times mu_i x mu_i (eq. 5)."""
        a0 = self.alpha0
        return self.alpha / (a0 * (a0 + 1.0))

    def m3_weights(self) -> np.ndarray:
        """2 alpha_i / (alpha_0 (alpha_0 + 1)(alpha_0 + 2)): M3 = sum_i of these times mu_i^(x)3 (eq. 6)."""
        a0 = self.alpha0
        return 2.0 * self.alpha / (a0 * (a0 + 1.0) * (a0 + 2.0))

    def m2(self) -> np.ndarray:
        """Population M2 (D x D)."""
        return (self.topics.T * self.m2_weights()) @ self.topics

    def m3(self) -> np.ndarray:
        """Population M3 (D x D x D; small D only)."""
        return third_moment(self.topics, self.m3_weights())

    def whitened_eigenvalues(self) -> np.ndarray:
        """Eigenvalues of the population whitened tensor M3(W, W, W) when W whitens M2:
        lambda_i = (2 / (alpha_0 + 2)) sqrt(alpha_0 (alpha_0 + 1) / alpha_i)."""
        a0 = self.alpha0
        return 2.0 / (a0 + 2.0) * np.sqrt(a0 * (a0 + 1.0) / self.alpha)


def make_lda_model(
    dim: int, k: int, rng: np.random.Generator, *, alpha0: float = DEFAULT_ALPHA0, alpha_shape: str = "dirichlet",
    topic_concentration: float = DEFAULT_TOPIC_CONCENTRATION,
) -> LdaModel:
    """A random ground truth. Draw order: the proportions alpha/alpha_0 (``dirichlet`` shape only), then the
    topics mu_i ~ Dirichlet(topic_concentration 1_D). Topics are redrawn (up to 100 times) until they are
    linearly independent (smallest singular value of the K x D topic matrix > 1e-3), which the method of
    moments needs."""
    dim = check_positive_int(dim, "D", minimum=2)
    k = check_rank(k, dim)
    alpha0 = check_positive(alpha0, "alpha_0")
    check_choice(alpha_shape, "alpha shape", tuple(ALPHA_SHAPES))
    check_positive(topic_concentration, "topic concentration")
    if alpha_shape == "symmetric":
        proportions = np.full(k, 1.0 / k)
    else:
        proportions = rng.dirichlet(np.full(k, DEFAULT_PROPORTION_CONCENTRATION))
    for _ in range(100):
        topics = rng.dirichlet(np.full(dim, float(topic_concentration)), size=k)
        if np.linalg.svd(topics, compute_uv=False)[-1] > 1e-3:
            break
    else:  # pragma: no cover - only for absurd concentrations
        raise InputError("could not draw linearly independent topics; use a larger topic concentration or D",
                         "topic concentration")
    return LdaModel(topics, alpha0 * proportions)


def _lengths(doc_length: int | tuple[int, int], n_docs: int, rng: np.random.Generator) -> np.ndarray:
    if isinstance(doc_length, tuple):
        lo, hi = (check_positive_int(v, "document length", minimum=MIN_DOC_LENGTH) for v in doc_length)
        if hi < lo:
            raise InputError(f"document length range ({lo}, {hi}) is empty", "document length")
        return rng.integers(lo, hi + 1, size=n_docs)
    return np.full(n_docs, check_positive_int(doc_length, "document length", minimum=MIN_DOC_LENGTH))


def sample_lda_corpus(
    model: LdaModel, n_docs: int, rng: np.random.Generator, *, doc_length: int | tuple[int, int] = DEFAULT_DOC_LENGTH,
) -> sp.csr_matrix:
    """Word counts of ``n_docs`` documents (sparse N x D): theta_n ~ Dirichlet(alpha), counts ~
    Multinomial(l_n, mu theta_n). ``doc_length`` is a fixed length or an inclusive range (lo, hi) drawn
    uniformly per document. Draw order: lengths, then per chunk of documents theta and the counts."""
    n_docs = check_positive_int(n_docs, "number of documents")
    lengths = _lengths(doc_length, n_docs, rng)
    step = max(1, MAX_SYNTHETIC_ENTRIES // model.dim)
    blocks = []
    for start in range(0, n_docs, step):
        sl = slice(start, min(n_docs, start + step))
        theta = rng.dirichlet(model.alpha, size=sl.stop - sl.start)
        probs = theta @ model.topics
        probs /= probs.sum(axis=1, keepdims=True)
        blocks.append(sp.csr_matrix(rng.multinomial(lengths[sl], probs).astype(np.float64)))
    return sp.vstack(blocks).tocsr() if len(blocks) > 1 else blocks[0]
