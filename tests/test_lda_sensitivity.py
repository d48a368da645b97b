"""Sensitivities of paper 004's edges checked by brute force: random, exhaustive and adversarial (optimised)
neighbouring corpora (replace one document by any document of length >= 3) never exceed the bounds.

Neighbours are evaluated through sufficient statistics (sums over documents of p, p p^T, P2, P3, P2 x p, p^(x)3),
an implementation of the estimators independent of :mod:`dpcore.lda.moments` (and checked against it), so
that corpora of a million documents cost microseconds per neighbour.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np
import pytest
import scipy.sparse as sp

from dpcore.lda.corpus import LdaModel, sample_lda_corpus
from dpcore.lda.moments import coefficients, lda_m2, lda_m3_dense, m3_frobenius_bound
from dpcore.lda.recovery import sorted_power
from dpcore.lda.sensitivity import (
    basis_whitened_tensor_sensitivity,
    decomposition_sensitivity,
    eigen_whitened_tensor_sensitivity,
    eigengap,
    m2_sensitivity,
    m2_sensitivity_published,
    m3_sensitivity,
    m3_sensitivity_published,
    ptr_distance,
    sqrt_whitening_lipschitz,
    tensor_gap_condition,
    topic_sensitivities,
)
from dpcore.tensor import multilinear, tensor_power_method

# ----------------------------------------------------------------------------------------------
# Sufficient statistics of a corpus
# ----------------------------------------------------------------------------------------------


def _doc_terms(c: np.ndarray) -> tuple[np.ndarray, ...]:
    c = np.asarray(c, dtype=float)
    ell = c.sum()
    p = c / ell
    p2 = (np.outer(c, c) - np.diag(c)) / (ell * (ell - 1))
    raw = np.einsum("i,j,k->ijk", c, c, c)
    b = np.einsum("ab,c->abc", np.diag(c), c)
    diag = np.zeros_like(raw)
    diag[np.arange(c.size), np.arange(c.size), np.arange(c.size)] = c
    p3 = (raw - (b + b.transpose(0, 2, 1) + b.transpose(2, 1, 0)) + 2 * diag) / (ell * (ell - 1) * (ell - 2))
    return (p, np.outer(p, p), p2, p3, np.einsum("ab,c->abc", p2, p), np.einsum("a,b,c->abc", p, p, p))


@dataclass(frozen=True)
class Stats:
    n: int
    sums: tuple[np.ndarray, ...]  # sum p, sum p p^T, sum P2, sum P3, sum P2 x p, sum p^(x)3

    @classmethod
    def of(cls, docs: np.ndarray) -> Stats:
        rows, weights = np.unique(np.asarray(docs, dtype=float), axis=0, return_counts=True)
        sums = None
        for row, wgt in zip(rows, weights, strict=True):
            terms = [wgt * t for t in _doc_terms(row)]
            sums = terms if sums is None else [s + t for s, t in zip(sums, terms, strict=True)]
        return cls(len(docs), tuple(sums))

    def replaced(self, old: np.ndarray, new: np.ndarray) -> Stats:
        return replace(self, sums=tuple(s - a + b for s, a, b in zip(self.sums, _doc_terms(old), _doc_terms(new),
                                                                          strict=True)))

    def moments(self, alpha0: float) -> tuple[np.ndarray, np.ndarray]:
        n, co = self.n, coefficients(alpha0)
        s1, q1, s2, s3, x, t1 = self.sums
        m2 = s2 / n - co.a2 * (np.outer(s1, s1) - q1) / (n * (n - 1))

        def place(t: np.ndarray) -> np.ndarray:
            return t + t.transpose(0, 2, 1) + t.transpose(2, 1, 0)

        cross = place(np.einsum("ab,c->abc", s2, s1) - x)
        triple = np.einsum("a,b,c->abc", s1, s1, s1) - place(np.einsum("ab,c->abc", q1, s1)) + 2 * t1
        m3 = s3 / n - co.a3 * cross / (n * (n - 1)) + co.b3 * triple / (n * (n - 1) * (n - 2))
        return m2, m3


def _all_docs(dim: int, lengths: range) -> list[np.ndarray]:
    out = []
    for ell in lengths:
        for combo in itertools.combinations_with_replacement(range(dim), ell):
            out.append(np.bincount(combo, minlength=dim).astype(float))
    return out


def _random_doc(dim: int, rng: np.random.Generator, max_len: int = 8) -> np.ndarray:
    ell = int(rng.integers(3, max_len + 1))
    kind = rng.integers(3)
    if kind == 0:  # one word repeated: the most concentrated document
        c = np.zeros(dim)
        c[rng.integers(dim)] = ell
        return c
    if kind == 1:
        return np.bincount(rng.integers(dim, size=ell), minlength=dim).astype(float)
    return np.bincount(rng.integers(min(2, dim), size=ell), minlength=dim).astype(float)


def _hill_climb(objective, start: np.ndarray, rng: np.random.Generator, steps: int, max_len: int = 8) -> float:
    """Maximise objective(doc) over documents of length 3..max_len by single-word moves, additions, removals."""
    doc, best = start.copy(), objective(start)
    dim = doc.size
    for _ in range(steps):
        cand = doc.copy()
        move = rng.integers(3)
        a, b = rng.integers(dim, size=2)
        if move == 0 and cand[a] > 0:
            cand[a] -= 1
            cand[b] += 1
        elif move == 1 and cand.sum() < max_len:
            cand[b] += 1
        elif move == 2 and cand.sum() > 3 and cand[a] > 0:
            cand[a] -= 1
        value = objective(cand)
        if value >= best:
            doc, best = cand, value
    return best


def test_sufficient_statistics_reproduce_the_library_estimators(rng):
    docs = np.array([_random_doc(5, rng) for _ in range(40)])
    m2, m3 = Stats.of(docs).moments(1.7)
    np.testing.assert_allclose(m2, lda_m2(sp.csr_matrix(docs), 1.7), atol=1e-14)
    np.testing.assert_allclose(m3, lda_m3_dense(sp.csr_matrix(docs), 1.7), atol=1e-14)


# ----------------------------------------------------------------------------------------------
# Global sensitivities of M2_hat and M3_hat
# ----------------------------------------------------------------------------------------------

ALPHAS = (0.05, 1.0, 20.0)


def _ratios(docs: np.ndarray, index: int, new: np.ndarray, alpha0: float) -> tuple[float, float]:
    stats = Stats.of(docs)
    m2, m3 = stats.moments(alpha0)
    m2b, m3b = stats.replaced(docs[index], new).moments(alpha0)
    n = len(docs)
    return (float(np.linalg.norm(m2 - m2b)) / m2_sensitivity(n, alpha0),
            float(np.linalg.norm(m3 - m3b)) / m3_sensitivity(n, alpha0))


def test_global_sensitivities_exhaustive_tiny_corpora():
    """Every corpus of 3 documents of 3 words over 3 words (up to order: 220) and every replacement (10)."""
    docs = _all_docs(3, range(3, 4))
    for alpha0 in ALPHAS:
        worst = np.zeros(2)
        for corpus in itertools.combinations_with_replacement(range(len(docs)), 3):
            base = np.array([docs[i] for i in corpus])
            stats = Stats.of(base)
            m2, m3 = stats.moments(alpha0)
            for new in docs:
                m2b, m3b = stats.replaced(base[0], new).moments(alpha0)
                worst = np.maximum(worst, [np.linalg.norm(m2 - m2b) / m2_sensitivity(3, alpha0),
                                           np.linalg.norm(m3 - m3b) / m3_sensitivity(3, alpha0)])
        assert worst.max() <= 1.0
        assert worst.min() > 0.2  # the bounds are not vacuous: some pair comes within a factor 5


def test_global_sensitivities_random_neighbours(rng):
    for alpha0 in ALPHAS:
        worst = np.zeros(2)
        for _ in range(300):
            dim, n = int(rng.integers(2, 6)), int(rng.integers(3, 9))
            docs = np.array([_random_doc(dim, rng) for _ in range(n)])
            worst = np.maximum(worst, _ratios(docs, int(rng.integers(n)), _random_doc(dim, rng), alpha0))
        assert worst.max() <= 1.0


def _climb_corpus(docs: np.ndarray, new: np.ndarray, alpha0: float, which: int, rng: np.random.Generator) -> float:
    """Alternate hill climbs on the replacement document and on each kept document; the largest ratio seen."""
    best = 0.0
    for _ in range(3):
        best = max(best, _hill_climb(lambda d: _ratios(docs, 0, d, alpha0)[which], new, rng, 80))
        for j in range(1, len(docs)):
            def obj(d: np.ndarray, j: int = j) -> float:
                trial = docs.copy()
                trial[j] = d
                return _ratios(trial, 0, new, alpha0)[which]
            best = max(best, _hill_climb(obj, docs[j], rng, 20))
    return best


def test_global_sensitivities_adversarial_search(rng):
    """Hill climbing over the whole corpus and the replacement document, from random starts: the largest
    ratio found stays below 1 (in a longer run: 0.46-0.90 for M2 and 0.17-0.85 for M3 over the three alpha_0;
    the exhaustive test reaches 0.93 and 0.87 at alpha_0 = 0.05, where the bounds are nearly tight)."""
    for alpha0 in ALPHAS:
        for which in (0, 1):
            best = 0.0
            for _ in range(3):
                n = int(rng.integers(3, 6))
                docs = np.array([_random_doc(4, rng) for _ in range(n)])
                best = max(best, _climb_corpus(docs, _random_doc(4, rng), alpha0, which, rng))
            assert best <= 1.0


def test_our_bounds_are_below_the_published_l1_bounds():
    for n, alpha0 in itertools.product((3, 10, 1000), (0.01, 1.0, 100.0)):
        assert m2_sensitivity(n, alpha0) < m2_sensitivity_published(n, alpha0)
        assert m3_sensitivity(n, alpha0) < m3_sensitivity_published(n, alpha0)
    assert m2_sensitivity(100, 1.0) == pytest.approx((math.sqrt(2) + math.sqrt(6) / 2) / 100)
    assert m3_sensitivity(100, 1.0) == pytest.approx(4 * math.sqrt(2) / 100)  # a3 = b3 = 1/3 at alpha_0 = 1


# ----------------------------------------------------------------------------------------------
# Local sensitivities (configurations 2-4), on corpora that satisfy the conditions
# ----------------------------------------------------------------------------------------------

MODEL = LdaModel(np.array([[0.4, 0.4, 0.2, 0.0], [0.0, 0.1, 0.3, 0.6]]), np.array([0.3, 1.2]))
ALPHA0 = 1.5


def _corpus(n: int, seed: int) -> np.ndarray:
    return sample_lda_corpus(MODEL, n, np.random.default_rng(seed), doc_length=(3, 8)).toarray()


def _basis_tensor(m2: np.ndarray, m3: np.ndarray, basis: np.ndarray) -> tuple[np.ndarray, float]:
    g = basis.T @ m2 @ basis
    vals, vecs = np.linalg.eigh(g)
    w = basis @ (vecs / np.sqrt(vals)) @ vecs.T
    return multilinear(m3, w), float(vals.min())


def _eigen_parts(m2: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    vals, vecs = np.linalg.eigh(m2)
    return vals[::-1][:k], vecs[:, ::-1][:, :k]


def _neighbour_docs(rng: np.random.Generator, dim: int, count: int) -> list[np.ndarray]:
    extremes = [np.eye(dim)[i] * 3 for i in range(dim)] + [np.eye(dim)[i] * 8 for i in range(dim)]
    return extremes + [_random_doc(dim, rng) for _ in range(count)]


def _removed_docs(docs: np.ndarray) -> list[np.ndarray]:
    """One document of every distinct type (removing any copy of a type gives the same neighbour)."""
    return list(np.unique(docs, axis=0))


def test_basis_whitened_tensor_sensitivity_random_and_adversarial(rng):
    """Configuration 2's Delta_T (public basis B, symmetric whitening inside it) over every removed document
    type and extreme, random and hill-climbed replacements."""
    docs = _corpus(3000, 1)
    stats = Stats.of(docs)
    m2, m3 = stats.moments(ALPHA0)
    noisy = m2 + 0.002 * (lambda z: (z + z.T) / 2)(rng.standard_normal((4, 4)))
    basis = _eigen_parts(noisy, 2)[1]  # a public basis near the topic subspace
    t, g = _basis_tensor(m2, m3, basis)
    n = len(docs)
    d2, d3 = m2_sensitivity(n, ALPHA0), m3_sensitivity(n, ALPHA0)
    assert g > d2
    bound = basis_whitened_tensor_sensitivity(g, float(np.linalg.norm(t)), d2, d3)

    def change(old: np.ndarray, new: np.ndarray) -> float:
        m2b, m3b = stats.replaced(old, new).moments(ALPHA0)
        return float(np.linalg.norm(t - _basis_tensor(m2b, m3b, basis)[0]))

    worst = 0.0
    for old in _removed_docs(docs)[::2]:
        for new in _neighbour_docs(rng, 4, 4):
            worst = max(worst, change(old, new))
        worst = max(worst, _hill_climb(lambda d, old=old: change(old, d), _random_doc(4, rng), rng, 30))
    assert worst <= bound
    assert worst > 0.01 * bound  # loose (about 35x here: worst-case Delta3 and ||H'||^3) but not vacuous


def test_eigen_whitened_tensor_sensitivity_random_and_adversarial(rng):
    """Configuration 4's Delta_T (basis-free eigenvector whitening S = f(M2)) under its conditions."""
    docs = _corpus(3000, 2)
    stats = Stats.of(docs)
    m2, m3 = stats.moments(ALPHA0)
    n = len(docs)
    d2, d3 = m2_sensitivity(n, ALPHA0), m3_sensitivity(n, ALPHA0)
    vals = np.linalg.eigvalsh(m2)[::-1]
    assert vals[1] - vals[2] > 2 * d2 and vals[1] > d2

    def sym_tensor(m2x: np.ndarray, m3x: np.ndarray) -> np.ndarray:
        v, u = _eigen_parts(m2x, 2)
        s = (u / np.sqrt(v)) @ u.T
        return multilinear(m3x, s)

    t = sym_tensor(m2, m3)
    bound = eigen_whitened_tensor_sensitivity(vals[1], vals[2], m3_frobenius_bound(sp.csr_matrix(docs), ALPHA0), d2, d3)
    worst = 0.0
    for old in _removed_docs(docs)[::2]:
        for new in _neighbour_docs(rng, 4, 4):
            m2b, m3b = stats.replaced(old, new).moments(ALPHA0)
            worst = max(worst, float(np.linalg.norm(t - sym_tensor(m2b, m3b))))

        def obj(d, old=old):
            m2b, m3b = stats.replaced(old, d).moments(ALPHA0)
            return float(np.linalg.norm(t - sym_tensor(m2b, m3b)))
        worst = max(worst, _hill_climb(obj, _random_doc(4, rng), rng, 20))
    assert worst <= bound


def _decomposition(tensor: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    power = sorted_power(tensor_power_method(tensor, 2, np.random.default_rng(seed)))
    return power.eigenvalues, power.eigenvectors


def test_decomposition_and_topic_sensitivities_under_their_conditions(rng):
    """Configurations 3 (e7: eigenvectors and eigenvalues, Theorem 4.3) and 4 (e9: unnormalised topics and
    eigenvalues, Theorem 4.4) on a corpus of 10^6 documents, where the Table 3 conditions hold. The power
    method runs with the same random starts on both neighbours (the mechanism's randomness is fixed)."""
    docs = _corpus(1_000_000, 3)
    stats = Stats.of(docs)
    m2, m3 = stats.moments(ALPHA0)
    n = len(docs)
    d2, d3 = m2_sensitivity(n, ALPHA0), m3_sensitivity(n, ALPHA0)
    basis = _eigen_parts(m2 + 1e-4 * np.eye(4)[:, ::-1] @ np.eye(4), 2)[1]  # public basis for configuration 3
    t_basis, g = _basis_tensor(m2, m3, basis)
    lam, vec = _decomposition(t_basis, 0)
    dt_basis = basis_whitened_tensor_sensitivity(g, float(np.linalg.norm(t_basis)), d2, d3)
    assert tensor_gap_condition(dt_basis, lam).holds
    per3 = decomposition_sensitivity(dt_basis, eigengap(lam), 2)

    vals = np.linalg.eigvalsh(m2)[::-1]
    dt_sym = eigen_whitened_tensor_sensitivity(vals[1], vals[2], m3_frobenius_bound(sp.csr_matrix(docs), ALPHA0),
                                               d2, d3)

    def topics(m2x: np.ndarray, m3x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v, u = _eigen_parts(m2x, 2)
        w = u / np.sqrt(v)
        lam_x, vec_x = _decomposition(multilinear(m3x, w), 1)
        mu = ((ALPHA0 + 2) / 2) * (u * np.sqrt(v)) @ vec_x * lam_x
        return lam_x, mu

    lam4, mu4 = topics(m2, m3)
    assert tensor_gap_condition(dt_sym, lam4).holds
    per4 = decomposition_sensitivity(dt_sym, eigengap(lam4), 2)
    mu_bounds = topic_sensitivities(lam4, per4, per4, vals[0], sqrt_whitening_lipschitz(vals[1], vals[2], d2), d2,
                                    ALPHA0)
    worst_v = worst_l = worst_mu = 0.0
    for old in _removed_docs(docs)[::12]:
        for new in _neighbour_docs(rng, 4, 2):
            m2b, m3b = stats.replaced(old, new).moments(ALPHA0)
            tb, _ = _basis_tensor(m2b, m3b, basis)
            lam_b, vec_b = _decomposition(tb, 0)
            worst_v = max(worst_v, float(np.linalg.norm(vec - vec_b, axis=0).max()))
            worst_l = max(worst_l, float(np.abs(lam - lam_b).max()))
            lam4b, mu4b = topics(m2b, m3b)
            worst_mu = max(worst_mu, float(np.max(np.linalg.norm(mu4 - mu4b, axis=0) / mu_bounds)))
            worst_l = max(worst_l, float(np.abs(lam4 - lam4b).max()) * per3 / per4)
    assert worst_v <= per3 and worst_l <= per3
    assert worst_mu <= 1.0


def test_ptr_distance_is_one_lipschitz_and_certifies_the_bound(rng):
    """Propose-test-release for configuration 2 needs (i) |h(D) - h(D')| <= 1 for neighbours and (ii) h(D) >= 1 =>
    ||T(D) - T(D')||_F <= b. Checked over every removed document type and extreme, random and hill-climbed
    replacements (the basis B is public and fixed, as in the mechanism)."""
    docs = _corpus(3000, 4)
    stats = Stats.of(docs)
    m2, m3 = stats.moments(ALPHA0)
    basis = _eigen_parts(m2 + 0.001 * np.diag([1.0, -1.0, 0.5, 0.0]), 2)[1]
    n = len(docs)
    d2, d3 = m2_sensitivity(n, ALPHA0), m3_sensitivity(n, ALPHA0)
    t, g = _basis_tensor(m2, m3, basis)
    bound = basis_whitened_tensor_sensitivity(0.6 * g, 1.5 * float(np.linalg.norm(t)), d2, d3)
    h = ptr_distance(g, float(np.linalg.norm(t)), d2, d3, bound)
    assert h >= 5  # the test is not vacuous: there is room to move

    def neighbour(old: np.ndarray, new: np.ndarray) -> tuple[int, float]:
        m2b, m3b = stats.replaced(old, new).moments(ALPHA0)
        tb, gb = _basis_tensor(m2b, m3b, basis)
        return ptr_distance(gb, float(np.linalg.norm(tb)), d2, d3, bound), float(np.linalg.norm(t - tb))

    for old in _removed_docs(docs)[::3]:
        for new in _neighbour_docs(rng, 4, 3):
            h_new, change = neighbour(old, new)
            assert abs(h_new - h) <= 1 and change <= bound
        worst = _hill_climb(lambda d, old=old: abs(neighbour(old, d)[0] - h), _random_doc(4, rng), rng, 15)
        assert worst <= 1
