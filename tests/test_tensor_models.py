"""Models, empirical moments and their sensitivities (docs/math/sensitivities.md, docs/math/capeagn.md; appendix
D/E of the preprint)."""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pytest

from dpcore.agn import MixtureModel, make_model, mog_norm_bound, sample_mog, sample_stm
from dpcore.data import apportion
from dpcore.privacy import sensitivity, unique_entries_matrix, unique_entries_tensor
from dpcore.tensor import (
    MogSite,
    StmSite,
    mog_sites,
    multilinear,
    pool_sites,
    stm_site_from_words,
    symmetrize,
)
from dpcore.validation import InputError


def _stm_doc_site(docs: list[list[int]], dim: int, estimator: str) -> StmSite:
    """A site from documents of possibly different lengths (word indices)."""
    import scipy.sparse as sp

    rows = [n for n, doc in enumerate(docs) for _ in doc]
    cols = [w for doc in docs for w in doc]
    counts = sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(docs), dim))
    counts.sum_duplicates()
    first = np.array([doc[:3] for doc in docs])
    return StmSite(counts, first, estimator)


# ----------------------------------------------------------------------------------------------
# Generators
# ----------------------------------------------------------------------------------------------

def test_generators_have_the_stated_form(rng):
    mog = make_model("mog", 10, 5, rng)
    assert mog.components.shape == (5, 10)
    np.testing.assert_allclose(np.linalg.norm(mog.components, axis=1), 1.0)
    assert mog.sigma2 == 0.05 and math.isclose(mog.weights.sum(), 1.0)
    stm = make_model("stm", 50, 10, rng, doc_length=4)
    np.testing.assert_allclose(stm.components.sum(axis=1), 1.0)
    assert np.all(stm.components >= 0) and stm.doc_length == 4
    words = sample_stm(stm, 300, rng)
    assert words.shape == (300, 4) and words.min() >= 0 and words.max() < 50
    x = sample_mog(mog, 200, rng)
    assert x.shape == (200, 10)


def test_generators_are_reproducible_and_validated():
    a = make_model("stm", 12, 3, np.random.default_rng(5))
    b = make_model("stm", 12, 3, np.random.default_rng(5))
    np.testing.assert_array_equal(a.components, b.components)
    np.testing.assert_array_equal(sample_stm(a, 50, np.random.default_rng(1)),
                                  sample_stm(b, 50, np.random.default_rng(1)))
    with pytest.raises(InputError, match="K must be <= D"):
        make_model("mog", 4, 5, np.random.default_rng(0))
    with pytest.raises(InputError, match="document length"):
        make_model("stm", 10, 2, np.random.default_rng(0), doc_length=2)
    with pytest.raises(InputError, match="model"):
        make_model("lda", 10, 2, np.random.default_rng(0))


def test_stm_words_follow_the_topics():
    """One topic with known word probabilities: word frequencies within 5 standard errors."""
    p = np.array([0.5, 0.3, 0.15, 0.05])
    model = MixtureModel(kind="stm", components=p[None, :], weights=np.array([1.0]), doc_length=3)
    words = sample_stm(model, 40_000, np.random.default_rng(3)).ravel()
    freq = np.bincount(words, minlength=4) / words.size
    se = np.sqrt(p * (1 - p) / words.size)
    assert np.all(np.abs(freq - p) < 5 * se)


def test_apportion():
    assert apportion(10, np.array([1, 1, 1]), minimum=0).tolist() == [4, 3, 3]  # ties: earlier sites first
    assert apportion(1000, np.array([0.2, 0.3, 0.5]), minimum=0).tolist() == [200, 300, 500]
    assert apportion(7, np.array([1.0, 2.0]), minimum=0).sum() == 7


# ----------------------------------------------------------------------------------------------
# Moments against brute force and against the population
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("estimator", ["first", "all"])
def test_stm_moments_match_brute_force_enumeration(estimator):
    rng = np.random.default_rng(11)
    dim = 5
    docs = [list(rng.integers(0, dim, size=rng.integers(3, 7))) for _ in range(25)]
    site = _stm_doc_site(docs, dim, estimator)
    m2 = np.zeros((dim, dim))
    m3 = np.zeros((dim, dim, dim))
    for doc in docs:
        if estimator == "first":
            pairs, triples = [(0, 1)], [(0, 1, 2)]
        else:
            pairs = list(itertools.permutations(range(len(doc)), 2))
            triples = list(itertools.permutations(range(len(doc)), 3))
        for a, b in pairs:
            m2[doc[a], doc[b]] += 0.5 / len(pairs)
            m2[doc[b], doc[a]] += 0.5 / len(pairs)
        t = np.zeros((dim, dim, dim))
        for a, b, c in triples:
            t[doc[a], doc[b], doc[c]] += 1.0 / len(triples)
        m3 += symmetrize(t)
    np.testing.assert_allclose(site.m2(), m2 / len(docs), atol=1e-15)
    np.testing.assert_allclose(site.m3(), m3 / len(docs), atol=1e-15)
    np.testing.assert_allclose(site.m2_block(1, 4), site.m2()[:4, 1:4], atol=0)


def test_a_small_sites_m3_is_computed_once_kept_read_only_and_a_large_ones_each_time():
    """Sites keep their dense M3 up to MAX_KEPT_M3_DIM (a planner releases the same site's moment hundreds of times):
    the same array every call, equal to a fresh computation, and read-only (a release writing its noise into it would
    change every later release); above the limit each call computes it anew (the dense path's memory estimate)."""
    from dpcore.lda import LdaSite  # noqa: PLC0415
    from dpcore.limits import MAX_KEPT_M3_DIM  # noqa: PLC0415

    rng = np.random.default_rng(3)
    docs = [list(rng.integers(0, 6, size=int(rng.integers(3, 7)))) for _ in range(40)]
    stm = _stm_doc_site(docs, 6, "all")
    sites = [MogSite(rng.standard_normal((30, 4)) * 0.3, 0.02), stm, LdaSite(stm.counts, 1.5),
             MogSite(rng.standard_normal((5, MAX_KEPT_M3_DIM)) * 0.1, 0.01)]
    for site in sites:
        kept = site.m3()
        assert site.m3() is kept and not kept.flags.writeable
        np.testing.assert_array_equal(kept, site._dense_m3())
        with pytest.raises(ValueError, match="read-only"):
            kept[0, 0, 0] += 1.0
        copy = pickle.loads(pickle.dumps(site))  # what a worker process receives
        assert not copy.m3().flags.writeable and copy.m3() is copy.m3()
        np.testing.assert_array_equal(copy.m3(), kept)
    large = MogSite(rng.standard_normal((5, MAX_KEPT_M3_DIM + 1)) * 0.1, 0.01)
    first = large.m3()
    assert large.m3() is not first and first.flags.writeable
    np.testing.assert_array_equal(large.m3(), first)


def test_mog_moments_match_the_formula():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((30, 4)) * 0.3
    site = MogSite(x, 0.02)
    m = x.mean(axis=0)
    expect = np.einsum("ni,nj,nk->ijk", x, x, x) / 30
    eye = np.eye(4)
    for d in range(4):
        e = eye[d]
        expect -= 0.02 * (np.einsum("i,j,k->ijk", m, e, e) + np.einsum("i,j,k->ijk", e, m, e)
                          + np.einsum("i,j,k->ijk", e, e, m))
    np.testing.assert_allclose(site.m3(), expect, atol=1e-15)
    np.testing.assert_allclose(site.m2(), x.T @ x / 30 - 0.02 * eye, atol=1e-15)
    np.testing.assert_allclose(site.m2_block(2, 4), site.m2()[:4, 2:4], atol=1e-15)


@pytest.mark.parametrize("kind", ["mog", "stm-first", "stm-all"])
def test_projected_third_moment_equals_projected_dense_moment(kind):
    """Same data term to rounding: M3_s(W, W, W) from samples vs the dense M3_s projected."""
    rng = np.random.default_rng(4)
    dim, k = 9, 4
    if kind == "mog":
        model = make_model("mog", dim, k, rng)
        (site,), _, _ = mog_sites([sample_mog(model, 400, rng)], model.sigma2, mog_norm_bound(dim, model.sigma2))
    else:
        model = make_model("stm", dim, k, rng, doc_length=5)
        site = stm_site_from_words(sample_stm(model, 400, rng), dim, kind.split("-")[1])
    w = rng.standard_normal((dim, k))
    dense = multilinear(site.m3(), w)
    projected = site.m3_projected(w)
    assert np.max(np.abs(projected - dense)) <= 1e-13 * np.max(np.abs(dense))
    np.testing.assert_allclose(projected, projected.transpose(1, 0, 2), atol=1e-15)


def _entrywise_se_check(contrib: np.ndarray, population: np.ndarray) -> None:
    """Mean of per-sample contributions vs the population value, within 5 standard errors per entry."""
    n = contrib.shape[0]
    mean = contrib.mean(axis=0)
    se = contrib.std(axis=0, ddof=1) / math.sqrt(n)
    assert np.all(np.abs(mean - population) <= 5 * se + 1e-12)


def test_mog_moments_are_unbiased_for_the_model():
    """E[M2] = sum w a a^T and E[M3] = sum w a^(x)3 (scaled by 1/zeta^k) - the sigma^2 corrections work."""
    rng = np.random.default_rng(8)
    model = make_model("mog", 4, 2, rng, sigma2=0.1)
    zeta = mog_norm_bound(4, 0.1)
    x = sample_mog(model, 60_000, rng) / zeta
    assert np.all(np.linalg.norm(x, axis=1) <= 1)
    s2 = 0.1 / zeta**2
    site = MogSite(x, s2)
    eye = np.eye(4)
    c2 = np.einsum("ni,nj->nij", x, x) - s2 * eye
    _entrywise_se_check(c2, model.m2() / zeta**2)
    np.testing.assert_allclose(c2.mean(axis=0), site.m2(), atol=1e-14)
    c3 = (np.einsum("ni,nj,nk->nijk", x, x, x) - s2 * (np.einsum("ni,jk->nijk", x, eye)
                                                        + np.einsum("nj,ik->nijk", x, eye)
                                                        + np.einsum("nk,ij->nijk", x, eye)))
    _entrywise_se_check(c3, model.m3() / zeta**3)
    np.testing.assert_allclose(c3.mean(axis=0), site.m3(), atol=1e-14)


@pytest.mark.parametrize("estimator", ["first", "all"])
def test_stm_moments_are_unbiased_for_the_model(estimator):
    rng = np.random.default_rng(9)
    model = make_model("stm", 4, 2, rng, doc_length=4)
    words = sample_stm(model, 40_000, rng)
    # per-document contributions, computed one document at a time through the site class
    m2s, m3s = [], []
    for block in np.array_split(words, 40):
        site = stm_site_from_words(block, 4, estimator)
        m2s.append(site.m2() * site.n)
        m3s.append(site.m3() * site.n)
    # block means are averages of 1,000 documents: use them as (independent) contributions
    c2 = np.array(m2s) / 1000
    c3 = np.array(m3s) / 1000
    _entrywise_se_check(c2, model.m2())
    _entrywise_se_check(c3, model.m3())


@pytest.mark.parametrize("dim, n", [(3, 7), (10, 2000), (300, 500)])
def test_the_first_word_pairs_m2_is_its_definition_in_every_form(dim, n):
    """The "first" estimator's M2 = (1/N) sum_n (e_a e_b^T + e_b e_a^T) / 2 over each document's first two words,
    written out document by document here, equals the site's dense M2, its blocks, its products and its upper
    entries in colex order (the stored ones: every non-zero entry, and only those)."""
    rng = np.random.default_rng(dim)
    words = rng.integers(0, dim, size=(n, 4))
    site = stm_site_from_words(words, dim, "first")
    reference = np.zeros((dim, dim))
    for a, b in words[:, :2]:
        reference[a, b] += 0.5 / n
        reference[b, a] += 0.5 / n
    np.testing.assert_allclose(site.m2(), reference, rtol=0, atol=1e-15)
    np.testing.assert_allclose(site.m2_block(1, dim), reference[:dim, 1:dim], rtol=0, atol=1e-15)
    np.testing.assert_allclose(site.m2_matvec()(np.eye(dim)), reference, rtol=0, atol=1e-15)
    low, high = np.triu_indices(dim)
    colex = high * (high + 1) // 2 + low
    order = np.argsort(colex)
    upper = reference[low, high][order]
    positions, values = site.m2_upper
    assert np.array_equal(positions, colex[order][upper != 0])
    np.testing.assert_allclose(values, upper[upper != 0], rtol=0, atol=1e-15)


def test_pooling_is_the_size_weighted_average(rng):
    model = make_model("stm", 6, 2, rng)
    sites = [stm_site_from_words(sample_stm(model, n, rng), 6, "all") for n in (30, 70)]
    pooled = pool_sites(sites)
    np.testing.assert_allclose(pooled.m2(), 0.3 * sites[0].m2() + 0.7 * sites[1].m2(), atol=1e-15)
    np.testing.assert_allclose(pooled.m3(), 0.3 * sites[0].m3() + 0.7 * sites[1].m3(), atol=1e-15)


def test_sites_reject_bad_documents():
    import scipy.sparse as sp

    with pytest.raises(InputError, match="at least 3 words"):
        StmSite(sp.csr_matrix(np.array([[1.0, 1.0, 0.0]])), np.array([[0, 1, 0]]), "first")
    with pytest.raises(InputError, match="word order"):
        StmSite(sp.csr_matrix(np.array([[2.0, 1.0, 0.0]])), None, "first")


def test_mog_scaling_clips_to_the_unit_ball():
    x = np.array([[3.0, 4.0], [0.3, 0.4]])
    (site,), s2, clipped = mog_sites([x], 0.5, 2.5)
    assert clipped == 1 and math.isclose(s2, 0.5 / 6.25)
    np.testing.assert_allclose(np.linalg.norm(site.x, axis=1), [1.0, 0.2])


# ----------------------------------------------------------------------------------------------
# Sensitivities by brute force (docs/math/sensitivities.md: random and adversarial neighbouring pairs never exceed them)
# ----------------------------------------------------------------------------------------------

def _neighbour_gaps(make_site, base, alternatives):
    """(||dM2||_F, ||dM3||_F, ||d unique(M2)||, ||d unique(M3)||) over data sets that differ in the last sample."""
    out = []
    for alt in alternatives:
        a, b = make_site(base), make_site(base[:-1] + [alt])
        d2, d3 = a.m2() - b.m2(), a.m3() - b.m3()
        out.append((np.linalg.norm(d2), np.linalg.norm(d3), np.linalg.norm(unique_entries_matrix(d2)),
                    np.linalg.norm(unique_entries_tensor(d3))))
    return np.array(out)


def test_stm_first_sensitivity_exhaustive():
    """Every replacement of the last document's first three words (D = 3): max change sqrt(2)/N."""
    dim, n = 3, 4
    rng = np.random.default_rng(1)
    base = [list(rng.integers(0, dim, 3)) for _ in range(n)]
    all_docs = [list(t) for t in itertools.product(range(dim), repeat=3)]
    worst = np.zeros(4)
    for last in all_docs:
        gaps = _neighbour_gaps(lambda docs: _stm_doc_site(docs, dim, "first"), base[:-1] + [last], all_docs)
        worst = np.maximum(worst, gaps.max(axis=0))
    bound2 = sensitivity("stm-m2", n, "replace-one")
    bound3 = sensitivity("stm-m3", n, "replace-one")
    assert worst[0] <= bound2 * (1 + 1e-12) and worst[1] <= bound3 * (1 + 1e-12)
    assert worst[0] == pytest.approx(bound2) and worst[1] == pytest.approx(bound3)  # attained: (0,0,0) vs (1,1,1)
    assert worst[2] <= worst[0] + 1e-15 and worst[3] <= worst[1] + 1e-15  # unique entries change no more


def test_stm_all_sensitivity_random_and_adversarial():
    dim, n = 4, 5
    rng = np.random.default_rng(2)
    base = [list(rng.integers(0, dim, rng.integers(3, 8))) for _ in range(n)]
    alternatives = [list(rng.integers(0, dim, rng.integers(3, 8))) for _ in range(40)]
    alternatives += [[w] * length for w in range(dim) for length in (3, 4, 7)]  # adversarial: one repeated word
    worst = np.zeros(4)
    for last in alternatives[:12] + [[0, 0, 0], [1, 2, 3]]:
        gaps = _neighbour_gaps(lambda docs: _stm_doc_site(docs, dim, "all"), base[:-1] + [last], alternatives)
        worst = np.maximum(worst, gaps.max(axis=0))
    assert worst[0] <= sensitivity("stm-m2", n, "replace-one") * (1 + 1e-12)
    assert worst[1] <= sensitivity("stm-m3", n, "replace-one") * (1 + 1e-12)
    assert worst[1] == pytest.approx(math.sqrt(2) / n)  # [0,0,0] vs [1,1,1] attains it


def test_mog_sensitivity_random_and_adversarial():
    dim, n, s2 = 5, 6, 0.04
    rng = np.random.default_rng(3)

    def unit_ball(m):
        v = rng.standard_normal((m, dim))
        return v / np.linalg.norm(v, axis=1, keepdims=True) * rng.random((m, 1)) ** (1 / dim)

    base = list(unit_ball(n))
    u = np.eye(dim)[0]
    alternatives = list(unit_ball(200)) + [u, -u, np.eye(dim)[1], np.zeros(dim)]
    worst = np.zeros(4)
    spectral = 0.0
    for last in [base[-1], u, -u]:
        data = base[:-1] + [last]
        gaps = _neighbour_gaps(lambda rows: MogSite(np.array(rows), s2), data, alternatives)
        worst = np.maximum(worst, gaps.max(axis=0))
        for alt in alternatives:
            d2 = MogSite(np.array(data), s2).m2() - MogSite(np.array(data[:-1] + [alt]), s2).m2()
            spectral = max(spectral, np.abs(np.linalg.eigvalsh(d2)).max())
    assert worst[0] <= sensitivity("mog-m2", n, "replace-one") * (1 + 1e-12)
    assert spectral <= sensitivity("mog-m2", n, "as-published") * (1 + 1e-12)  # the published bound is spectral
    assert worst[0] > sensitivity("mog-m2", n, "as-published")  # ... and is exceeded in Frobenius norm
    bound3 = sensitivity("mog-m3", n, "replace-one", dim=dim, sigma2=s2)
    assert worst[1] <= bound3 * (1 + 1e-12)
    # the adversarial pair u vs -u changes M3 by (2/N)(u^(x)3 - sigma^2 C(u)), C(u) the correction's
    # three placements: ||.||^2 = 1 - 6 sigma^2 + (3D + 6) sigma^4 (hand computation); the search reaches it
    assert worst[1] >= 2 / n * math.sqrt(1 - 6 * s2 + (3 * dim + 6) * s2**2) * (1 - 1e-9)
