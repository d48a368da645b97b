"""Non-private LDA by the method of moments: recovery of topics and alpha, the topic error, whitening failures."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.lda.corpus import ISSUE_CORPUS, LdaModel, make_lda_model, sample_lda_corpus
from dpcore.lda.moments import lda_m2, lda_m3_projected
from dpcore.lda.recovery import (
    alpha_from_eigenvalues,
    eigen_whitening,
    fit_lda,
    match_topics,
    to_simplex,
    topic_error,
)
from dpcore.tensor import WhiteningError


def test_population_moments_give_back_the_model_exactly():
    """Whitening the population M2 and decomposing M3(W, W, W) recovers mu and alpha to rounding: the recovery
    formulas mu_i = ((alpha_0+2)/2) lambda_i (W^T)^+ v_i and
    alpha_i = 4 alpha_0 (alpha_0+1)/((alpha_0+2)^2 lambda_i^2)."""
    from dpcore.lda.recovery import sorted_power, unwhiten
    from dpcore.tensor import multilinear, tensor_power_method

    model = make_lda_model(15, 4, np.random.default_rng(5), alpha0=0.7)
    wh = eigen_whitening(model.m2(), 4, noisy=False)
    power = sorted_power(tensor_power_method(multilinear(model.m3(), wh.w), 4, np.random.default_rng(1)))
    mu = unwhiten(wh.u * np.sqrt(wh.eigenvalues), power.eigenvalues, power.eigenvectors, 0.7)
    match, dist = match_topics(to_simplex(mu)[0], model.topics)
    assert dist.max() < 1e-9
    np.testing.assert_allclose(mu.sum(axis=1), 1.0, atol=1e-9)  # the scale (alpha_0 + 2)/2 is exact
    np.testing.assert_allclose(alpha_from_eigenvalues(power.eigenvalues, 0.7), model.alpha[match], rtol=1e-9)


def test_topic_error_metric():
    a = np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]])
    assert topic_error(a, a) == 0.0
    assert topic_error(a[::-1], a) == 0.0  # permutation invariant
    assert topic_error(a, np.array([[0.0, 0.5, 0.5], [0.0, 0.0, 1.0]])) == pytest.approx((2.0 + 0.0) / 2)
    # one-to-one: the nearest-neighbour rule would match both rows to the same reference row
    est = np.array([[0.9, 0.1, 0.0], [0.8, 0.2, 0.0]])
    match, dist = match_topics(est, np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    assert sorted(match) == [0, 1] and dist.max() == pytest.approx(2.0)


def test_recovery_error_falls_with_the_number_of_documents():
    """Mean topic error over 4 random models (D = 30, K = 3, alpha_0 = 1, 30 words per document) at N = 1,000
    and N = 16,000 documents. Sampling error scales as 1/sqrt(N), so the ratio of the means is about 4; over
    8 disjoint windows of four models (seeds 0-31) it was 3.5-4.8 and the largest error at N = 16,000 was 0.0154.
    The test asserts a ratio > 2.5 (smallest seen 1.4 times that) and errors < 0.03 at N = 16,000 (largest seen
    half of it)."""
    small, large = [], []
    for seed in range(4):
        model = make_lda_model(30, 3, np.random.default_rng([7, seed]), alpha0=1.0)
        for n, out in ((1000, small), (16_000, large)):
            counts = sample_lda_corpus(model, n, np.random.default_rng([8, seed, n]), doc_length=30)
            out.append(topic_error(fit_lda(counts, 3, 1.0, np.random.default_rng([9, seed])).topics, model.topics))
    assert np.mean(small) / np.mean(large) > 2.5
    assert max(large) < 0.03


def test_issue_corpus_non_private_error_is_small():
    """The issue's corpus (K = 5, D = 100, alpha_0 = 1 symmetric, 20,000 documents of 50 words): topic error
    0.015-0.019 (mean L1 per topic) and alpha within 3.3% over 8 independent models, corpora and starts; asserted
    < 0.05 (smallest margin 2.6 times) and within 10% (3.1 times)."""
    spec = ISSUE_CORPUS
    model = make_lda_model(spec["dim"], spec["k"], np.random.default_rng(2026), alpha0=spec["alpha0"],
                           alpha_shape=spec["alpha_shape"])
    counts = sample_lda_corpus(model, spec["n_docs"], np.random.default_rng(2027), doc_length=spec["doc_length"])
    fit = fit_lda(counts, spec["k"], spec["alpha0"], np.random.default_rng(2028))
    assert topic_error(fit.topics, model.topics) < 0.05
    match, _ = match_topics(fit.topics, model.topics)
    np.testing.assert_allclose(fit.alpha, model.alpha[match], rtol=0.1)


def test_whitening_failure_is_explained_not_nan():
    """Five identical documents on two words: M2_hat is supported on those two words (one positive, one
    negative eigenvalue, the rest 0), so K = 2 cannot be whitened: an explanation, not NaN. A noisy M2 with a
    negative eigenvalue gives the noisy-case explanation."""
    counts = np.tile([3.0, 2.0, 0.0, 0.0, 0.0, 0.0], (5, 1))
    with pytest.raises(WhiteningError, match="only 1 positive eigenvalue.*does not support 2 topics"):
        fit_lda(counts, 2, 1.0, np.random.default_rng(0))
    model = LdaModel(np.array([[0.5, 0.5, 0, 0, 0, 0], [0, 0, 0.5, 0.5, 0, 0]]), np.array([0.5, 0.5]))
    counts = sample_lda_corpus(model, 400, np.random.default_rng(0), doc_length=10)
    noisy = lda_m2(counts, 1.0) - 0.2 * np.eye(6)
    with pytest.raises(WhiteningError, match="noisy LDA second moment") as info:
        eigen_whitening(noisy, 2, noisy=True)
    assert np.all(np.isfinite(info.value.eigenvalues))


def test_projected_tensor_of_the_fit_is_orthogonally_decomposable_in_the_limit():
    """With many documents the whitened tensor's eigenvalues approach (2/(alpha_0+2)) sqrt(alpha_0 (alpha_0+1)/alpha_i)
    (asserted within 5% at N = 40,000 for this well-separated model; over 8 corpora and starts the largest relative
    deviation was 0.2-1.6%)."""
    model = LdaModel(np.array([[0.4, 0.4, 0.2, 0, 0, 0], [0, 0, 0.1, 0.45, 0.45, 0], [0.1, 0, 0, 0, 0.2, 0.7]]),
                     np.array([0.2, 0.5, 0.8]))
    counts = sample_lda_corpus(model, 40_000, np.random.default_rng(3), doc_length=8)
    fit = fit_lda(counts, 3, model.alpha0, np.random.default_rng(4))
    expected = np.sort(model.whitened_eigenvalues())[::-1]
    np.testing.assert_allclose(fit.eigenvalues, expected, rtol=0.05)
    wh = eigen_whitening(lda_m2(counts, model.alpha0), 3, noisy=False)
    assert lda_m3_projected(counts, model.alpha0, wh.w).shape == (3, 3, 3)
