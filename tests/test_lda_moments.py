"""LDA corpora and moment estimators (paper 004, Definition 3.1, Lemma 3.2, Appendix B).

The estimators are checked against formulas written out here independently (sums over pairs and triples of
distinct documents), and their unbiasedness by exact enumeration of every corpus of three short documents.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpcore.lda import moments
from dpcore.lda.corpus import LdaModel, make_lda_model, sample_lda_corpus
from dpcore.lda.moments import (
    coefficients,
    doc_count_tensor_p3,
    lda_m1,
    lda_m2,
    lda_m2_matvec,
    lda_m3_dense,
    lda_m3_projected,
    m3_frobenius_bound,
    prepare_counts,
)
from dpcore.tensor import multilinear
from dpcore.validation import InputError

# ----------------------------------------------------------------------------------------------
# Independent reference implementation (plain loops over documents)
# ----------------------------------------------------------------------------------------------


def _p2(c: np.ndarray) -> np.ndarray:
    ell = c.sum()
    return (np.outer(c, c) - np.diag(c)) / (ell * (ell - 1))


def _p3_by_positions(c: np.ndarray) -> np.ndarray:
    """Empirical distribution of ordered triples of distinct word positions (by listing the positions)."""
    words = np.repeat(np.arange(c.size), c.astype(int))
    out = np.zeros((c.size,) * 3)
    for i, j, k in itertools.permutations(range(words.size), 3):
        out[words[i], words[j], words[k]] += 1
    return out / out.sum()


def _placements(t: np.ndarray) -> np.ndarray:
    """Sum of the three placements of the last (single) slot of a tensor symmetric in its first two axes."""
    return t + t.transpose(0, 2, 1) + t.transpose(2, 1, 0)


def reference_moments(counts: np.ndarray, alpha0: float) -> tuple[np.ndarray, np.ndarray]:
    n, dim = counts.shape
    co = coefficients(alpha0)
    p = counts / counts.sum(axis=1, keepdims=True)
    p2 = [_p2(c) for c in counts]
    p3 = [_p3_by_positions(c) for c in counts]
    pairs = sum(np.outer(p[a], p[b]) for a in range(n) for b in range(n) if a != b) / (n * (n - 1))
    m2 = sum(p2) / n - co.a2 * pairs
    cross = sum(np.einsum("ab,c->abc", p2[a], p[b]) for a in range(n) for b in range(n) if a != b) / (n * (n - 1))
    triple = sum(np.einsum("a,b,c->abc", p[a], p[b], p[e])
                 for a, b, e in itertools.permutations(range(n), 3)) / (n * (n - 1) * (n - 2))
    m3 = sum(p3) / n - co.a3 * _placements(cross) + co.b3 * triple
    return m2, m3


@pytest.fixture
def tiny_corpus() -> np.ndarray:
    return np.array([[3, 0, 1, 0], [0, 2, 2, 1], [1, 1, 1, 0], [0, 0, 0, 4], [2, 1, 0, 3]], dtype=float)


@pytest.mark.parametrize("ratio", [0.0, math.inf], ids=["sparse-products", "dense-products"])
def test_estimators_equal_the_written_out_u_statistics(tiny_corpus, monkeypatch, ratio):
    """Both ways M2_hat's sums are computed (sparse or dense products, moments.DENSE_PAIRS_RATIO) give the
    written-out U-statistics."""
    monkeypatch.setattr(moments, "DENSE_PAIRS_RATIO", ratio)
    for alpha0 in (0.3, 1.0, 7.0):
        m2_ref, m3_ref = reference_moments(tiny_corpus, alpha0)
        c = sp.csr_matrix(tiny_corpus)
        np.testing.assert_allclose(lda_m2(c, alpha0), m2_ref, atol=1e-15)
        np.testing.assert_allclose(lda_m3_dense(c, alpha0), m3_ref, atol=1e-15)
        np.testing.assert_allclose(lda_m1(c), (tiny_corpus / tiny_corpus.sum(1, keepdims=True)).mean(0), atol=1e-15)


def test_document_p3_is_the_distribution_of_distinct_position_triples():
    for c in ([3, 0, 1, 0], [1, 1, 1, 1], [0, 5, 0, 0], [2, 2, 0, 1]):
        c = np.array(c, dtype=float)
        t = doc_count_tensor_p3(c)
        np.testing.assert_allclose(t, _p3_by_positions(c), atol=1e-15)
        assert math.isclose(t.sum(), 1.0) and t.min() >= 0


def test_projected_third_moment_is_the_dense_moment_projected(rng):
    model = make_lda_model(9, 3, rng, alpha0=2.0)
    counts = sample_lda_corpus(model, 300, rng, doc_length=(3, 12))
    dense = lda_m3_dense(counts, 2.0)
    for cols in (1, 3, 5):
        w = rng.standard_normal((9, cols))
        np.testing.assert_allclose(lda_m3_projected(counts, 2.0, w), multilinear(dense, w), atol=1e-14)
    block = rng.standard_normal((9, 4))
    m2 = lda_m2(counts, 2.0)
    np.testing.assert_allclose(lda_m2_matvec(counts, 2.0)(block), m2 @ block, atol=1e-15)
    np.testing.assert_allclose(lda_m2_matvec(counts, 2.0)(block[:, 0]), m2 @ block[:, 0], atol=1e-15)


def test_frobenius_bound_is_an_upper_bound(rng):
    """An upper bound always; within a factor 20 when alpha_0 is small (for large alpha_0 the three parts of
    the estimator cancel and the triangle inequality is loose)."""
    for alpha0 in (0.1, 1.0, 10.0):
        model = make_lda_model(8, 3, rng, alpha0=alpha0)
        counts = sample_lda_corpus(model, 200, rng, doc_length=(3, 20))
        exact = float(np.linalg.norm(lda_m3_dense(counts, alpha0)))
        bound = m3_frobenius_bound(counts, alpha0)
        assert exact <= bound
        if alpha0 <= 1.0:
            assert bound <= 20 * exact


# ----------------------------------------------------------------------------------------------
# Unbiasedness by exact enumeration
# ----------------------------------------------------------------------------------------------


def _rising(a: float, n: int) -> float:
    return math.prod(a + j for j in range(n))


def _count_distribution(model: LdaModel, length: int) -> dict[tuple[int, ...], float]:
    """Exact law of one document's counts: P(words) = E_theta prod_j (mu theta)_{w_j}, expanded over the word
    topics z with the Dirichlet moments E[prod theta_i^{n_i}] = prod_i alpha_i^(n_i) / alpha_0^(l) (rising)."""
    dim, k = model.dim, model.k
    law: dict[tuple[int, ...], float] = {}
    for words in itertools.product(range(dim), repeat=length):
        total = 0.0
        for z in itertools.product(range(k), repeat=length):
            nz = np.bincount(z, minlength=k)
            prior = math.prod(_rising(model.alpha[i], int(nz[i])) for i in range(k)) / _rising(model.alpha0, length)
            total += prior * math.prod(model.topics[zj, wj] for zj, wj in zip(z, words, strict=True))
        key = tuple(int(v) for v in np.bincount(words, minlength=dim))
        law[key] = law.get(key, 0.0) + total
    return law


def test_estimators_are_exactly_unbiased_by_enumeration():
    """Every corpus of three documents of lengths 3, 4, 3 (1,500 corpora): E[M_hat] equals the closed forms of
    Lemma 3.2, M2 = sum alpha_i/(alpha_0 (alpha_0+1)) mu_i^(x)2, M3 = sum 2 alpha_i/(alpha_0 (alpha_0+1)(alpha_0+2))
    mu_i^(x)3, to rounding. The laws sum to 1 (the enumeration is complete)."""
    model = LdaModel(np.array([[0.6, 0.3, 0.1], [0.1, 0.2, 0.7]]), np.array([0.4, 0.9]))
    laws = [_count_distribution(model, length) for length in (3, 4, 3)]
    for law in laws:
        assert math.isclose(sum(law.values()), 1.0, rel_tol=1e-12)
    e1, e2, e3 = np.zeros(3), np.zeros((3, 3)), np.zeros((3, 3, 3))
    for combo in itertools.product(*[list(law.items()) for law in laws]):
        prob = math.prod(pr for _, pr in combo)
        counts = sp.csr_matrix(np.array([c for c, _ in combo], dtype=float))
        e1 += prob * lda_m1(counts)
        e2 += prob * lda_m2(counts, model.alpha0)
        e3 += prob * lda_m3_dense(counts, model.alpha0)
    np.testing.assert_allclose(e1, model.m1(), atol=1e-14)
    np.testing.assert_allclose(e2, model.m2(), atol=1e-14)
    np.testing.assert_allclose(e3, model.m3(), atol=1e-14)
    assert np.abs(model.m3()).max() > 1e-2  # the comparison is not between zeros


def test_population_moments_match_the_dirichlet_moments():
    """M2 = E[x1 x x2] - a2 M1 x M1 with E[x1 x x2] = mu E[theta theta^T] mu^T (Lemma C.1, C.2)."""
    model = LdaModel(np.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.2, 0.3, 0.5], [0.25, 0.25, 0.25, 0.25]]),
                     np.array([0.2, 0.5, 1.1]))
    a, a0, mu = model.alpha, model.alpha0, model.topics.T
    e_tt = (np.outer(a, a) + np.diag(a)) / (a0 * (a0 + 1))
    np.testing.assert_allclose(mu @ e_tt @ mu.T - a0 / (a0 + 1) * np.outer(model.m1(), model.m1()), model.m2(),
                               atol=1e-15)
    lam = model.whitened_eigenvalues()
    np.testing.assert_allclose(lam, 2 / (a0 + 2) * np.sqrt(a0 * (a0 + 1) / a))


# ----------------------------------------------------------------------------------------------
# Generator and input checks
# ----------------------------------------------------------------------------------------------


def test_generator_shapes_and_reproducibility():
    a = make_lda_model(40, 4, np.random.default_rng(3), alpha0=2.0)
    b = make_lda_model(40, 4, np.random.default_rng(3), alpha0=2.0)
    np.testing.assert_array_equal(a.topics, b.topics)
    np.testing.assert_allclose(a.topics.sum(axis=1), 1.0)
    assert math.isclose(a.alpha0, 2.0) and a.alpha.shape == (4,)
    sym = make_lda_model(40, 4, np.random.default_rng(3), alpha0=2.0, alpha_shape="symmetric")
    np.testing.assert_allclose(sym.alpha, 0.5)
    c1 = sample_lda_corpus(a, 500, np.random.default_rng(1), doc_length=(5, 9))
    c2 = sample_lda_corpus(a, 500, np.random.default_rng(1), doc_length=(5, 9))
    assert (c1 != c2).nnz == 0
    lengths = np.asarray(c1.sum(axis=1)).ravel()
    assert lengths.min() >= 5 and lengths.max() <= 9 and c1.shape == (500, 40)


def test_word_frequencies_follow_the_model():
    """Mean of p_n = c_n / l_n estimates M1; every coordinate within 5 standard errors (standard errors from
    the sample itself). Over 8 independent models and corpora the largest of the 12 |z| was 1.1-2.4."""
    model = make_lda_model(12, 3, np.random.default_rng(11), alpha0=1.0, topic_concentration=0.5)
    counts = sample_lda_corpus(model, 20_000, np.random.default_rng(12), doc_length=10)
    p = (counts.multiply(1.0 / counts.sum(axis=1))).toarray()
    se = p.std(axis=0, ddof=1) / math.sqrt(p.shape[0])
    assert np.all(np.abs(p.mean(axis=0) - model.m1()) <= 5 * se)


def test_prepare_counts_rejects_bad_input():
    with pytest.raises(InputError, match="at least 3 documents"):
        prepare_counts(np.ones((2, 4)) * 3)
    with pytest.raises(InputError, match="fewer than 3 words"):
        prepare_counts(np.array([[1, 1, 0], [3, 0, 0], [2, 2, 2]]))
    with pytest.raises(InputError, match="whole numbers"):
        prepare_counts(np.array([[1.5, 2, 0], [3, 0, 0], [2, 2, 2]]))
    with pytest.raises(InputError, match="dense third moment"):
        lda_m3_dense(sp.csr_matrix(np.full((3, 61), 1.0)), 1.0)
    with pytest.raises(InputError, match="document length"):
        sample_lda_corpus(make_lda_model(5, 2, np.random.default_rng(0)), 3, np.random.default_rng(0), doc_length=2)
