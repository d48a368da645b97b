"""Sensitivities (docs/math/sensitivities.md) checked by brute force: random and adversarial neighbouring pairs.

The moments are written out here independently of the library, as the papers define them.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from dpcore.privacy import sensitivity
from dpcore.validation import InputError


def ball(v: np.ndarray) -> np.ndarray:
    """Map any vector into the unit ball (samples have ||x|| <= 1)."""
    return v / max(1.0, float(np.linalg.norm(v)))


def outer3(x: np.ndarray) -> np.ndarray:
    return np.einsum("i,j,k->ijk", x, x, x)


def mog_m3(samples: np.ndarray, sigma2: float) -> np.ndarray:
    """mean t(x)t(x)t - sigma^2 sum_d (m (x) e_d (x) e_d + e_d (x) m (x) e_d + e_d (x) e_d (x) m)."""
    dim = samples.shape[1]
    m = samples.mean(axis=0)
    eye = np.eye(dim)
    corr = (np.einsum("i,jk->ijk", m, eye) + np.einsum("j,ik->ijk", m, eye) + np.einsum("k,ij->ijk", m, eye))
    return np.einsum("ni,nj,nk->ijk", samples, samples, samples) / len(samples) - sigma2 * corr


def sym2(a: np.ndarray) -> np.ndarray:
    return (a + a.T) / 2


def sym3(t: np.ndarray) -> np.ndarray:
    return sum(t.transpose(p) for p in itertools.permutations(range(3))) / 6


def adversarial_max(fun, dim: int, rng: np.random.Generator, restarts: int = 12) -> float:
    """max over x, y in the unit ball of fun(x, y), by Nelder-Mead from random starts."""
    best = 0.0
    for _ in range(restarts):
        start = rng.standard_normal(2 * dim)
        res = minimize(lambda z: -fun(ball(z[:dim]), ball(z[dim:])), start, method="Nelder-Mead",
                       options={"maxiter": 4000, "xatol": 1e-10, "fatol": 1e-12})
        best = max(best, -res.fun)
    return best


def test_mean_of_unit_interval_values_exhaustive():
    n = 7
    worst = 0.0
    for data in itertools.product([0.0, 1.0], repeat=n):
        for replacement in (0.0, 1.0):
            other = list(data)
            other[-1] = replacement
            worst = max(worst, abs(np.mean(data) - np.mean(other)))
    assert worst == pytest.approx(1 / n)
    for relation in ("replace-one", "as-published"):
        assert sensitivity("mean", n, relation) == pytest.approx(1 / n)


def test_pca_replace_one_bound_is_tight_and_never_exceeded(rng):
    n, dim = 50, 4

    def frob(x, y):
        return float(np.linalg.norm(np.outer(x, x) - np.outer(y, y)))

    bound = sensitivity("pca", n, "replace-one")
    assert bound == pytest.approx(math.sqrt(2) / n)
    for _ in range(500):  # random data sets and replacements
        data = np.array([ball(v * rng.uniform()) for v in rng.standard_normal((n, dim))])
        other = data.copy()
        other[rng.integers(n)] = ball(rng.standard_normal(dim))
        diff = data.T @ data / n - other.T @ other / n
        assert np.linalg.norm(diff) <= bound * (1 + 1e-12)
    worst = adversarial_max(frob, dim, rng)
    assert worst <= math.sqrt(2) + 1e-9
    assert worst >= math.sqrt(2) - 1e-6  # reached by orthogonal unit vectors
    # the published constant 1/N is a spectral-norm bound: orthogonal unit samples exceed it in L2
    e1, e2 = np.eye(dim)[:2]
    assert frob(e1, e2) / n > sensitivity("pca", n, "as-published")


def test_mog_m2_matches_pca(rng):
    n = 20
    assert sensitivity("mog-m2", n, "replace-one") == pytest.approx(math.sqrt(2) / n)
    assert sensitivity("mog-m2", n, "as-published") == pytest.approx(1 / n)


@pytest.mark.parametrize("dim", [3, 4])
def test_stm_moments_exhaustive_over_one_hot_documents(dim):
    n = 10
    eye = np.eye(dim)
    worst2 = 0.0
    words2 = list(itertools.product(range(dim), repeat=2))
    for (a, b), (c, d) in itertools.product(words2, repeat=2):
        for moment in (lambda i, j: np.outer(eye[i], eye[j]), lambda i, j: sym2(np.outer(eye[i], eye[j]))):
            worst2 = max(worst2, float(np.linalg.norm(moment(a, b) - moment(c, d))) / n)
    worst3 = 0.0
    words3 = list(itertools.product(range(dim), repeat=3))
    for u, v in itertools.product(words3, repeat=2):
        for sym in (lambda t: t, sym3):
            t_u = sym(np.einsum("i,j,k->ijk", eye[u[0]], eye[u[1]], eye[u[2]]))
            t_v = sym(np.einsum("i,j,k->ijk", eye[v[0]], eye[v[1]], eye[v[2]]))
            worst3 = max(worst3, float(np.linalg.norm(t_u - t_v)) / n)
    for relation in ("replace-one", "as-published"):
        assert worst2 <= sensitivity("stm-m2", n, relation) * (1 + 1e-12)
        assert worst3 <= sensitivity("stm-m3", n, relation) * (1 + 1e-12)
    assert worst2 == pytest.approx(math.sqrt(2) / n)
    assert worst3 == pytest.approx(math.sqrt(2) / n)


@pytest.mark.parametrize("sigma2", [0.05, 0.5])
def test_mog_m3_with_correction_never_exceeds_the_published_bound(rng, sigma2):
    n, dim = 6, 3
    bound = sensitivity("mog-m3", n, "replace-one", dim=dim, sigma2=sigma2)
    assert bound == pytest.approx((2 + 6 * dim * sigma2) / n)
    assert sensitivity("mog-m3", n, "as-published", dim=dim, sigma2=sigma2) == bound
    base = np.array([ball(v) for v in rng.standard_normal((n, dim))])

    def change(x, y):
        a, b = base.copy(), base.copy()
        a[-1], b[-1] = x, y
        return float(np.linalg.norm(mog_m3(a, sigma2) - mog_m3(b, sigma2)))

    for _ in range(300):
        x, y = ball(rng.standard_normal(dim)), ball(rng.standard_normal(dim))
        assert change(x, y) <= bound * (1 + 1e-12)
    worst = adversarial_max(change, dim, rng, restarts=6)
    assert worst <= bound * (1 + 1e-9)
    # the bound is the papers' triangle inequality and is loose: the sigma^2 term partly cancels
    # the cubic one, so the worst pair stays below 2/N + 6 D sigma^2 / N by a visible margin
    assert worst < 0.9 * bound


def test_mog_m3_needs_dimension_and_variance():
    with pytest.raises(InputError, match="needs the dimension"):
        sensitivity("mog-m3", 10)
    with pytest.raises(InputError, match="statistic must be one of"):
        sensitivity("variance", 10)
    with pytest.raises(InputError, match="N must be an integer >= 1"):
        sensitivity("pca", 0)
    with pytest.raises(InputError, match="neighbouring must be one of"):
        sensitivity("pca", 10, "add-remove")
