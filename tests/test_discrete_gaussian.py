"""The exact discrete Gaussian sampler (dpcore.privacy.discrete_gaussian, docs/math/discrete.md "The sampler"):
draw by draw equal to a reference implementation of Canonne-Kamath-Steinke's algorithms written here with Python
fractions on fixed random bits (every batch element its own stream), and its law equal to the discrete Gaussian's
pmf by a chi-square test whose threshold comes from the chi-square distribution."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chi2

from dpcore.privacy.discrete_gaussian import (
    GeneratorSource,
    _exponent,
    discrete_gaussian_law,
    discrete_gaussian_pmf,
    discrete_gaussian_variance,
    sample_discrete_gaussian,
    sampler_law,
)
from dpcore.validation import InputError

# -- the reference: CKS Algorithms 1-3 one draw at a time, with Fractions, on the documented bit protocol ----------


class Bits:
    """One element's fixed random stream: uniform integers below b from its own random.Random (none drawn for b = 1)."""

    def __init__(self, seed: int):
        self.random = random.Random(seed)

    def below(self, bound: int) -> int:
        return 0 if bound == 1 else self.random.randrange(bound)


def ref_bernoulli_nd(n: int, d: int, bits: Bits) -> bool:
    """Bernoulli(n/d) on the representation (n, d) itself (not reduced): one uniform below d."""
    if n == 0:
        return False
    if n >= d:
        return True
    return bits.below(d) < n


def ref_bernoulli_exp_unit(n: int, d: int, bits: Bits) -> bool:
    """CKS Algorithm 1 for gamma = n/d in [0, 1]: Bernoulli(gamma/K) as Bernoulli(n/d) and Bernoulli(1/K)."""
    assert 0 <= Fraction(n, d) <= 1
    k = 1
    while True:
        a = ref_bernoulli_nd(n, d, bits)
        if a and k >= 2:
            a = bits.below(k) == 0
        if not a:
            break
        k += 1
    return k % 2 == 1


def ref_bernoulli_exp(gamma: Fraction, denominator: int, bits: Bits) -> bool:
    """exp(-gamma) for gamma >= 0 written over ``denominator``: floor(gamma) trials of exp(-1), then the rest."""
    whole = math.floor(gamma)
    for _ in range(whole):
        if not ref_bernoulli_exp_unit(1, 1, bits):
            return False
    rest = gamma - whole
    numerator = rest * denominator
    assert numerator.denominator == 1
    return ref_bernoulli_exp_unit(int(numerator), denominator, bits)


def ref_laplace(t: int, bits: Bits) -> int:
    """CKS Algorithm 2, scale t."""
    while True:
        u = bits.below(t)
        if not ref_bernoulli_exp_unit(u, t, bits):
            continue
        v = 0
        while ref_bernoulli_exp_unit(1, 1, bits):
            v += 1
        x = u + t * v
        b = bits.below(2)
        if b == 1 and x == 0:
            continue
        return -x if b == 1 else x


def ref_gaussian(sigma2: Fraction, t: int, bits: Bits) -> int:
    """CKS Algorithm 3 with the exponent written over the documented denominator."""
    m = sigma2 / t
    denominator = 2 * t * int(m) if m.denominator == 1 else 2 * sigma2.numerator * sigma2.denominator * t * t
    while True:
        y = ref_laplace(t, bits)
        gamma = (abs(y) - m) ** 2 / (2 * sigma2)
        if ref_bernoulli_exp(gamma, denominator, bits):
            return y


class PerElement:
    """The sampler's source with one Bits stream per batch element (the same streams the reference reads)."""

    def __init__(self, seeds):
        self.streams = {i: Bits(seed) for i, seed in enumerate(seeds)}

    def below(self, bound: int, ids: np.ndarray) -> np.ndarray:
        return np.array([self.streams[int(i)].below(int(bound)) for i in ids], dtype=np.int64)


@pytest.mark.parametrize("sigma2,t", [(Fraction(1, 2), None), (Fraction(7, 3), None), (Fraction(2), None),
                                      (Fraction(30), 5), (Fraction(1000), None), (Fraction(10**6), 1000),
                                      (Fraction(9, 1000), None), (Fraction(2**40), 2**20)])
def test_sampler_equals_reference_on_fixed_bits(sigma2, t):
    seeds = [1000 * i + 17 for i in range(400)]
    law = discrete_gaussian_law(sigma2, t)
    got = sample_discrete_gaussian(law, len(seeds), PerElement(seeds))
    want = [ref_gaussian(law.sigma2, law.t, Bits(seed)) for seed in seeds]
    assert got.tolist() == want


def test_large_values_take_the_exact_python_path():
    """|j| >= 2^31 (squares beyond int64) on the fast form: sigma^2 = 2^58 puts many proposals there."""
    law = sampler_law(2.0**58)
    seeds = list(range(60))
    got = sample_discrete_gaussian(law, len(seeds), PerElement(seeds))
    want = [ref_gaussian(law.sigma2, law.t, Bits(seed)) for seed in seeds]
    assert got.tolist() == want
    # the exponent of proposals far out, where j^2 leaves int64, against Fractions
    y = np.array([0, 1, -(2**31), 2**33 + 5, -(2**36) - 3, 2**40], dtype=np.int64)
    whole, rest = _exponent(law, y)
    for value, f, r in zip(y.tolist(), whole.tolist(), rest.tolist(), strict=True):
        gamma = (abs(value) - law.sigma2 / law.t) ** 2 / (2 * law.sigma2)
        assert f == math.floor(gamma) and Fraction(r, law.exponent_denominator) == gamma - f


# -- the law ---------------------------------------------------------------------------------------------------------

def _chi_square_pvalue(draws: np.ndarray, edges: np.ndarray, probs: np.ndarray) -> float:
    """Pearson's chi-square p-value of the draws' counts in the bins [edges[i], edges[i+1]) against ``probs``."""
    counts = np.histogram(draws, bins=edges)[0]
    expected = probs * draws.size
    assert expected.min() >= 5
    stat = float(np.sum((counts - expected) ** 2 / expected))
    return float(chi2.sf(stat, df=counts.size - 1))


def _integer_bins(sigma2: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """One bin per integer, the tails pooled from where they hold fewer than 20 expected draws; exact
    probabilities."""
    reach = int(40 * math.sqrt(sigma2)) + 2
    support = np.arange(-reach, reach + 1)
    pmf = discrete_gaussian_pmf(support, sigma2)
    below = np.cumsum(pmf) * n  # expected draws at or below each value
    lo = int(support[np.flatnonzero(below >= 20)[0]])  # the lower tail bin ends at lo, holding >= 20
    hi = -lo
    edges = np.concatenate([[-reach - 1], np.arange(lo + 1, hi + 1), [reach + 2]]).astype(float) - 0.5
    probs = np.array([pmf[(support >= edges[i]) & (support < edges[i + 1])].sum() for i in range(edges.size - 1)])
    return edges, probs / probs.sum()


# A p-value below 1e-6 rejects; with a correct sampler that happens with probability 1e-6 per test (every test runs
# on fixed seeds, so the suite is deterministic; other seeds: DPCORE_TEST_RNG_SEED).
P_REJECT = 1e-6


@pytest.mark.parametrize("sigma2", [Fraction(1, 2), Fraction(7, 3), Fraction(10), Fraction(200)])
def test_law_matches_pmf_chi_square(sigma2, rng):
    law = discrete_gaussian_law(sigma2)
    draws = sample_discrete_gaussian(law, 200_000, rng)
    edges, probs = _integer_bins(float(sigma2), draws.size)
    assert _chi_square_pvalue(draws, edges, probs) > P_REJECT


@pytest.mark.parametrize("target", [1e4, 1e12])
def test_large_sigma_law_chi_square(target, rng):
    """Large sigma on the fast form: 40 bins of equal probability under the continuous normal (whose bin
    probabilities differ from the discrete Gaussian's by less than 1e-6 of a bin at sigma >= 100), chi-square."""
    law = sampler_law(target)
    sigma = math.sqrt(float(law.sigma2))
    draws = sample_discrete_gaussian(law, 200_000, rng)
    from scipy.stats import norm
    inner = np.floor(norm.ppf(np.linspace(0, 1, 41)[1:-1]) * sigma) + 0.5  # bin edges between integers
    edges = np.concatenate([[-np.inf], inner, [np.inf]])
    if sigma <= 200:  # exact bin probabilities from the pmf
        support = np.arange(-int(41 * sigma), int(41 * sigma) + 1)
        pmf = discrete_gaussian_pmf(support, float(law.sigma2))
        probs = np.array([pmf[(support > edges[i]) & (support < edges[i + 1])].sum() for i in range(40)])
    else:
        probs = np.diff(norm.cdf(edges / sigma))
    assert _chi_square_pvalue(draws, edges, probs / probs.sum()) > P_REJECT
    # the variance within 6 standard errors of sigma^2 (Var of X^2 = 2 sigma^4 for a normal)
    assert abs(float(np.mean(draws.astype(float) ** 2)) / float(law.sigma2) - 1) < 6 * math.sqrt(2 / draws.size)


def test_generator_source_is_reproducible_and_keyed_by_the_generator():
    law = sampler_law(1e8)
    a = sample_discrete_gaussian(law, 5000, np.random.default_rng(3))
    b = sample_discrete_gaussian(law, 5000, GeneratorSource(np.random.default_rng(3)))
    c = sample_discrete_gaussian(law, 5000, np.random.default_rng(4))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_secure_generator_runs_the_sampler():
    """A real run's ChaCha20 generator (dpcore.seeding) is a source like any other."""
    from dpcore.seeding import secure_party_rng
    draws = sample_discrete_gaussian(sampler_law(1e6), 20_000, secure_party_rng(b"k" * 32, 0, "pca", "A", "site",
                                                                                  "s1"))
    assert abs(float(np.mean(draws.astype(float) ** 2)) / 1e6 - 1) < 6 * math.sqrt(2 / draws.size)


def test_sampler_law_is_friendly_and_close():
    for target in (1, 2.5, 1e3, 123456789.5, 2.0**50):
        law = sampler_law(target)
        assert law.m is not None and law.sigma2 >= target
        assert float(law.sigma2) - target < law.t + 1


def test_variance_of_the_law_is_below_sigma2():
    assert discrete_gaussian_variance(0.5) < 0.5
    assert abs(discrete_gaussian_variance(100.0) - 100.0) < 1e-9


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, Fraction(2**61), "3"])
def test_bad_laws_are_refused(bad):
    with pytest.raises(InputError):
        discrete_gaussian_law(bad)


def test_bad_scale_and_denominator_are_refused():
    with pytest.raises(InputError):
        discrete_gaussian_law(10, 0)
    with pytest.raises(InputError, match="2\\^63"):
        discrete_gaussian_law(Fraction(2**40 + 1, 3), 2**19)
