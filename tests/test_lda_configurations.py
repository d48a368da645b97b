"""The four noise configurations of paper 004: budgets, noise scales, usable/unusable verdicts, utility vs eps."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpcore.lda.budget import m3_noise_law
from dpcore.lda.configurations import (
    EDGES,
    edge_budgets,
    run_configuration,
    summarize_data,
)
from dpcore.lda.corpus import LdaModel, make_lda_model, sample_lda_corpus
from dpcore.lda.recovery import topic_error
from dpcore.privacy import noise_multiplier
from dpcore.tensor import StageNoise, release_m3
from dpcore.validation import InputError


@pytest.fixture(scope="module")
def symmetric_corpus():
    model = make_lda_model(30, 3, np.random.default_rng([3, 0]), alpha0=1.0, alpha_shape="symmetric")
    counts = sample_lda_corpus(model, 20_000, np.random.default_rng([4, 0]), doc_length=30)
    return model, summarize_data(counts, 3, 1.0)


@pytest.fixture(scope="module")
def separated_corpus():
    """Two topics with distinct alpha and a million short documents: every condition of Table 3 holds."""
    model = LdaModel(np.array([[0.4, 0.4, 0.2, 0.0], [0.0, 0.1, 0.3, 0.6]]), np.array([0.3, 1.2]))
    counts = sample_lda_corpus(model, 1_000_000, np.random.default_rng(3), doc_length=(3, 8))
    return model, summarize_data(counts, 2, 1.5)


def test_budget_split_and_noise_scales(symmetric_corpus):
    _, data = symmetric_corpus
    budgets = edge_budgets(1, 0.9, 3e-6)
    assert list(budgets) == ["e3", "e4", "e8"]
    for eps_e, delta_e in budgets.values():
        assert eps_e == pytest.approx(0.3) and delta_e == pytest.approx(1e-6)
    split = {"e6": 0.25, "e8": 0.75}
    result = run_configuration(2, data, 2.0, 1e-5, np.random.default_rng(0), split=split, calibration="analytic")
    assert result.usable
    by_edge = {b.edge: b for b in result.budgets}
    assert by_edge["e6"].eps == pytest.approx(0.5) and by_edge["e8"].delta == pytest.approx(7.5e-6)
    for b in result.budgets:
        assert b.sigma == pytest.approx(b.sensitivity * noise_multiplier(b.eps, b.delta, "analytic"))
    assert by_edge["e8"].sensitivity == data.delta2
    assert sum(b.eps for b in result.budgets) == pytest.approx(2.0)  # basic composition


def test_configuration_1_is_dp_with_global_sensitivities_and_can_share_m2(symmetric_corpus):
    _, data = symmetric_corpus
    res = run_configuration(1, data, 3.0, 1e-6, np.random.default_rng(1))
    assert res.usable and res.conditions == () and "calibrated to (eps, delta)" in res.guarantee
    assert [b.edge for b in res.budgets] == ["e3", "e4", "e8"]
    assert {b.edge: b.sensitivity for b in res.budgets} == {"e3": data.delta3, "e4": data.delta2, "e8": data.delta2}
    shared = run_configuration(1, data, 3.0, 1e-6, np.random.default_rng(1), share_m2=True)
    assert [b.edge for b in shared.budgets] == ["e3", "e4+e8"]
    assert shared.budgets[1].eps == pytest.approx(2.0)
    np.testing.assert_allclose(res.topics.sum(axis=1), 1.0)
    assert np.all(res.topics >= 0)


def test_errors_fall_with_eps(symmetric_corpus):
    """Configurations 1 and 2 on D = 30, K = 3, alpha_0 = 1, 20,000 documents of 30 words, 3 runs each (non-private
    error about 0.01). Asserted: below 0.05 at eps = 300 and at least 3 times smaller than at eps = 3. Over 8
    independent corpora and noise streams (published third-moment law): the error at eps = 300 was 0.009-0.017
    (at most a third of 0.05) and the error at eps = 3 was 9.5-55 times it (minimum margin 3.2 times the factor 3)."""
    model, data = symmetric_corpus
    for configuration in (1, 2):
        errors = {}
        for eps in (3.0, 300.0):
            runs = [run_configuration(configuration, data, eps, 1e-6, np.random.default_rng([5, configuration, r]))
                    for r in range(3)]
            assert all(r.usable for r in runs)
            errors[eps] = np.mean([topic_error(r.topics, model.topics) for r in runs])
        assert errors[300.0] < 0.05
        assert errors[3.0] > 3 * errors[300.0]


def test_symmetric_prior_makes_configurations_3_and_4_unusable(symmetric_corpus):
    """A symmetric alpha gives equal whitened eigenvalues: gamma_s is only sampling noise, the eigengap condition
    of Table 3 fails, and the result says so and returns no topics (unusable on each of 8 corpora and noise
    streams)."""
    _, data = symmetric_corpus
    for configuration in (3, 4):
        res = run_configuration(configuration, data, 10.0, 1e-6, np.random.default_rng(2))
        assert not res.usable and res.topics is None and res.budgets == ()
        assert "unusable" in res.reason and "too close together" in res.reason
        assert "no differential-privacy guarantee" in res.guarantee


def test_small_eps_for_e8_makes_configuration_2_unusable_with_a_reason():
    """At eps = 0.05 the e8 release of M2 is mostly noise, so its top-K eigenvectors U8 miss the topics and
    lambda_min(U8^T M2_hat U8) falls below Delta2: the whitened tensor's bound does not hold. 300 documents of
    30 words (Delta2 = 0.0088): over 8 corpora x 4 noise streams lambda_min was at most 0.41 Delta2 (on the
    20,000-document corpus, where Delta2 is 67 times smaller, the basis condition held on 3 of 8 streams)."""
    model = make_lda_model(30, 3, np.random.default_rng([3, 0]), alpha0=1.0, alpha_shape="symmetric")
    data = summarize_data(sample_lda_corpus(model, 300, np.random.default_rng([4, 0]), doc_length=30), 3, 1.0)
    res = run_configuration(2, data, 0.05, 1e-6, np.random.default_rng([3, 0, 0]))
    assert not res.usable
    assert "released basis" in res.reason and "Delta2" in res.reason


def test_all_four_configurations_run_where_the_conditions_hold(separated_corpus):
    """eps = 10^4 on the separated corpus: every condition holds and every configuration recovers the topics (asserted
    error < 0.1). Over 8 corpora and noise streams all four were usable on every stream; the largest errors were
    0.004 (configurations 1-3) and 0.023-0.058 (configuration 4, output perturbation): margin 1.7 times."""
    model, data = separated_corpus
    for configuration in (1, 2, 3, 4):
        res = run_configuration(configuration, data, 1e4, 1e-6, np.random.default_rng(configuration))
        assert res.usable, res.reason
        assert all(c.holds for c in res.conditions)
        assert [b.edge for b in res.budgets] == list(EDGES[configuration])
        assert topic_error(res.topics, model.topics) < 0.1
    cond4 = run_configuration(4, data, 1.0, 1e-6, np.random.default_rng(0)).conditions
    assert [c.name for c in cond4] == ["M2 spectral gap (Table 3)", "tensor eigengap (Table 3)"]


def test_configuration_2_with_propose_test_release(symmetric_corpus):
    """privacy="ptr": three edges (test, e6, e8), noise at the proposed bound, (eps, delta)-DP guarantee; at a small
    eps the private test fails and the result says so. Over 8 corpora and noise streams the error at eps = 300 was
    0.008-0.024 (asserted < 0.2, margin 8 times) and the test failed at eps = 0.05 on every stream."""
    model, data = symmetric_corpus
    res = run_configuration(2, data, 300.0, 1e-6, np.random.default_rng(7), privacy="ptr")
    assert res.usable, res.reason
    assert [b.edge for b in res.budgets] == ["test", "e6", "e8"]
    assert res.conditions[0].name == "propose-test-release" and res.conditions[0].holds
    assert "calibrated to (eps, delta)" in res.guarantee and "propose-test-release" in res.guarantee
    assert sum(b.eps for b in res.budgets) == pytest.approx(300.0)
    assert topic_error(res.topics, model.topics) < 0.2
    weak = run_configuration(2, data, 0.05, 1e-6, np.random.default_rng(7), privacy="ptr")
    assert not weak.usable and weak.topics is None
    assert "stability test did not pass" in weak.reason or "no finite sensitivity bound" in weak.reason
    with pytest.raises(InputError, match="configuration 2 only"):
        run_configuration(3, data, 1.0, 1e-6, np.random.default_rng(0), privacy="ptr")


def test_bad_settings_are_rejected(symmetric_corpus):
    _, data = symmetric_corpus
    with pytest.raises(InputError, match="edges e6, e8"):
        run_configuration(2, data, 1.0, 1e-6, np.random.default_rng(0), split={"e3": 1.0})
    with pytest.raises(InputError, match="sum to 1"):
        run_configuration(2, data, 1.0, 1e-6, np.random.default_rng(0), split={"e6": 0.5, "e8": 0.6})
    with pytest.raises(InputError, match="configuration 1 only"):
        run_configuration(2, data, 1.0, 1e-6, np.random.default_rng(0), share_m2=True)
    with pytest.raises(InputError, match="configuration must be"):
        run_configuration(5, data, 1.0, 1e-6, np.random.default_rng(0))
    with pytest.raises(InputError, match="eps"):
        run_configuration(1, data, -1.0, 1e-6, np.random.default_rng(0))


def test_classic_calibration_above_eps_1_is_flagged(symmetric_corpus):
    _, data = symmetric_corpus
    res = run_configuration(1, data, 30.0, 1e-6, np.random.default_rng(0), calibration="classic")
    assert any("not a valid (eps, delta) guarantee" in note for note in res.notes)


class _ZeroMoments:
    """A site whose moments are zero: what dpcore.tensor.release_m3 returns is then its noise alone."""

    n, dim = 50, 7

    def m3_projected(self, w: np.ndarray) -> np.ndarray:
        return np.zeros((w.shape[1],) * 3)


def test_projected_m3_noise_has_the_law_of_the_projected_dense_noise():
    """Configuration 1's e3 release (dpcore.tensor.release_m3 with one party's independent noise, projected path, the
    law of dpcore.lda.budget.m3_noise_law: published for K <= 20) adds P(W, W, W), P symmetric with i.i.d.
    N(0, sigma^2) unique entries; its value at (u, u, u) is P(x, x, x) = sum over unique (i <= j <= l) of
    m_ijl P_ijl x_i x_j x_l (x = W u, m the number of distinct orderings), with variance
    sigma^2 sum m_ijl^2 (x_i x_j x_l)^2 (brute force over the 84 unique entries of D = 7). The sampler without a
    D^3 array must match: 20,000 draws, relative standard error of a variance estimate sqrt(2/20,000) = 1%,
    asserted within 5%."""
    assert m3_noise_law("projected", 3) == "published" and m3_noise_law("projected", 21) == "symmetrized"
    assert m3_noise_law("dense", 30) == "published"
    rng = np.random.default_rng(9)
    w = rng.standard_normal((7, 3))
    noise = StageNoise("independent", stds=np.array([0.5]))
    draws = np.stack([release_m3([_ZeroMoments()], np.ones(1), w, noise, rng, path="projected",
                                 law=m3_noise_law("projected", 3))[0] for _ in range(20_000)])
    np.testing.assert_allclose(draws, draws.transpose(0, 2, 1, 3), atol=1e-12)  # symmetric
    for _ in range(3):
        u = rng.standard_normal(3)
        x = w @ u
        values = np.einsum("nijk,i,j,k->n", draws, u, u, u)
        expected = 0.25 * sum(len(set(itertools.permutations(t))) ** 2 * (x[t[0]] * x[t[1]] * x[t[2]]) ** 2
                              for t in itertools.combinations_with_replacement(range(7), 3))
        assert math.isclose(values.var(), expected, rel_tol=0.05)
