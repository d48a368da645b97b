"""Exact sampling of the discrete Gaussian N_Z(0, sigma^2) with integer arithmetic only (docs/math/discrete.md,
"The sampler"; Canonne, Kamath and Steinke, *The discrete Gaussian for differential privacy*, NeurIPS 2020,
Algorithms 1-3), vectorised over a batch in numpy int64.

P(X = x) = exp(-x^2 / (2 sigma^2)) / sum_y exp(-y^2 / (2 sigma^2)) for every integer x, sigma^2 = p / q rational.
The algorithm (CKS), with the random-bit protocol this module fixes (the reference implementation of
``tests/test_discrete_gaussian.py`` follows the same protocol with Python fractions and must agree draw by draw):

* ``Bernoulli(n/d)`` (0 <= n <= d): one uniform integer U below d, success iff U < n; none is drawn when n = 0
  (failure) or n = d (success).
* ``Bernoulli(exp(-n/d))`` for 0 <= n/d <= 1 (CKS Algorithm 1, von Neumann): K = 1; repeat: A = Bernoulli(n/d), and
  for K >= 2 also A = A and Bernoulli(1/K) (one uniform below K, success iff 0) - together Bernoulli(gamma/K); stop
  at the first failure, else K += 1; success iff K is odd. For gamma = f + r/L > 1: f trials of Bernoulli(exp(-1)),
  stopping at the first failure, then Bernoulli(exp(-r/L)).
* discrete Laplace with scale t (CKS Algorithm 2): U uniform below t; reject unless Bernoulli(exp(-U/t)); V counts
  the successes of Bernoulli(exp(-1)) before the first failure; X = U + t V; B uniform below 2; reject if B = 1 and
  X = 0; return (1 - 2B) X.
* discrete Gaussian (CKS Algorithm 3): t = floor(sigma) + 1 unless given; Y = discrete Laplace(t); accept with
  Bernoulli(exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))). The exponent is gamma = N / L with, when sigma^2 / t = m is an
  integer, N = (|Y| - m)^2 and L = 2 t m, and otherwise N = (q t |Y| - p)^2 and L = 2 p q t^2.

Uniform integers come from a :class:`UniformSource`: :class:`GeneratorSource` draws them with
``numpy.random.Generator.integers`` (Lemire's method: exact given uniform words), so the sampler runs on a seeded
PCG64 for tests and simulations and on the ChaCha20 generator of :func:`dpcore.seeding.secure_party_rng` in a real run.
Every quantity is an int64 below 2^63 (checked when the law is made: L < 2^63); squares N = j^2 with |j| >= 2^31 are
formed with Python integers for those elements only (a rare, slower path: docs/math/discrete.md, "Running time").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Rational
from typing import Protocol

import numpy as np

from ..limits import MAX_SAMPLER_SIGMA2
from ..validation import InputError

__all__ = [
    "MAX_SAMPLER_SIGMA2",
    "DiscreteGaussianLaw",
    "GeneratorSource",
    "UniformSource",
    "discrete_gaussian_law",
    "discrete_gaussian_pmf",
    "discrete_gaussian_variance",
    "sample_discrete_gaussian",
    "sampler_law",
]

_INT64_LIMIT = 2**63 - 1
_SMALL_J = 2**31
"""|j| below this: j^2 < 2^62, exact in int64."""


class UniformSource(Protocol):
    """Where the sampler's uniform integers come from. ``below(bound, ids)`` returns one uniform integer in
    [0, bound) for each element named in ``ids`` (bound >= 1; one bound for the whole call: every call of the
    algorithm has one); a source may use ``ids`` to give every element its own stream, as the reference test does, a
    generator ignores them."""

    def below(self, bound: int, ids: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class GeneratorSource:
    """Uniform integers from a numpy Generator (``integers(0, bound, size)``, exact), in the order asked."""

    rng: np.random.Generator

    def below(self, bound: int, ids: np.ndarray) -> np.ndarray:
        return self.rng.integers(0, bound, size=ids.size, dtype=np.int64)


@dataclass(frozen=True, kw_only=True)
class DiscreteGaussianLaw:
    """N_Z(0, sigma2) with sigma2 = p / q > 0 and the Laplace scale t of the proposal; ``m`` = sigma2 / t when it is
    an integer (the fast form of the acceptance exponent), else None."""

    sigma2: Fraction
    t: int

    @property
    def m(self) -> int | None:
        ratio = self.sigma2 / self.t
        return int(ratio) if ratio.denominator == 1 else None

    @property
    def exponent_denominator(self) -> int:
        """L of the acceptance exponent gamma = N / L (module docstring)."""
        m = self.m
        if m is not None:
            return 2 * self.t * m
        p, q = self.sigma2.numerator, self.sigma2.denominator
        return 2 * p * q * self.t * self.t


def _as_fraction(sigma2: object) -> Fraction:
    if isinstance(sigma2, bool) or not isinstance(sigma2, (Rational, Integral)):
        raise InputError(f"sigma^2 of a discrete Gaussian must be an integer or a Fraction (got {sigma2!r})",
                         "sigma2")
    return Fraction(sigma2)


def discrete_gaussian_law(sigma2: int | Fraction, t: int | None = None) -> DiscreteGaussianLaw:
    """The law N_Z(0, sigma2) with proposal scale ``t`` (default floor(sigma) + 1, CKS's choice), checked: sigma2
    positive and at most :data:`MAX_SAMPLER_SIGMA2`, t a positive integer, and the exponent's denominator below
    2^63."""
    s2 = _as_fraction(sigma2)
    if s2 <= 0 or s2 > MAX_SAMPLER_SIGMA2:
        raise InputError(f"sigma^2 must be in (0, 2^60] (got {float(s2):.6g})", "sigma2")
    if t is None:
        t = math.isqrt(s2.numerator // s2.denominator) + 1
    if isinstance(t, bool) or not isinstance(t, Integral) or t < 1 or t > 2**31:
        raise InputError(f"the Laplace scale t must be an integer in 1..2^31 (got {t!r})", "t")
    law = DiscreteGaussianLaw(sigma2=s2, t=int(t))
    if law.exponent_denominator > _INT64_LIMIT:
        raise InputError(f"sigma^2 = {s2} with t = {t} needs exponents with denominators beyond 2^63; use "
                         "sampler_law (sigma^2 a multiple of t)", "sigma2")
    return law


def sampler_law(target: float | int | Fraction) -> DiscreteGaussianLaw:
    """The sampler-friendly law with sigma^2 >= ``target``: sigma^2 = t m with t = floor(sqrt(ceil(target))) (at
    least 1) and m = ceil(ceil(target) / t), so that sigma^2 / t is an integer (the fast exponent) and sigma^2 exceeds
    the target by less than t + 1 (relative excess below 2 / sigma)."""
    if isinstance(target, float):
        if not math.isfinite(target) or target <= 0:
            raise InputError(f"a target variance must be a positive finite number (got {target!r})", "sigma2")
        whole = math.ceil(Fraction(target))
    else:
        whole = math.ceil(_as_fraction(target))
    if whole < 1 or whole > MAX_SAMPLER_SIGMA2:
        raise InputError(f"a target variance must be in (0, 2^60] (got {float(target):.6g})", "sigma2")
    t = max(1, math.isqrt(whole))
    m = -(-whole // t)
    return discrete_gaussian_law(t * m, t)


# -- the vectorised algorithm ---------------------------------------------------------------------------------------

def _bernoulli(n: np.ndarray, d: int, ids: np.ndarray, source: UniformSource) -> np.ndarray:
    """Bernoulli(n/d) per element (0 <= n <= d): no draw where n = 0 or n = d."""
    out = n >= d
    draw = (n > 0) & ~out
    if draw.all():
        return source.below(d, ids) < n
    if draw.any():
        out[draw] = source.below(d, ids[draw]) < n[draw]
    return out


def _bernoulli_exp_unit(n: np.ndarray, d: int, ids: np.ndarray, source: UniformSource) -> np.ndarray:
    """Bernoulli(exp(-n/d)) per element, 0 <= n/d <= 1 (CKS Algorithm 1 with Bernoulli(gamma/K) drawn as
    Bernoulli(gamma) and Bernoulli(1/K)). Every element still running in round K has the same K."""
    k_final = np.ones(ids.size, dtype=np.int64)
    active = np.arange(ids.size)
    k = 1
    while active.size:
        keep = _bernoulli(n[active], d, ids[active], source)
        if k >= 2 and keep.any():
            keep[keep] = source.below(k, ids[active[keep]]) == 0
        active = active[keep]
        k += 1
        k_final[active] = k
    return k_final % 2 == 1


def _exp_minus_one(ids: np.ndarray, source: UniformSource) -> np.ndarray:
    """Bernoulli(exp(-1)): Algorithm 1 with gamma = 1, whose Bernoulli(gamma) never draws: K = the first k >= 2
    with a non-zero uniform below k; success iff K is odd."""
    odd = np.zeros(ids.size, dtype=bool)
    active = np.arange(ids.size)
    k = 2
    while active.size:
        zero = source.below(k, ids[active]) == 0
        odd[active[~zero]] = k % 2 == 1
        active = active[zero]
        k += 1
    return odd


def _bernoulli_exp(whole: np.ndarray, rest: np.ndarray, denominator: int, ids: np.ndarray,
                   source: UniformSource) -> np.ndarray:
    """Bernoulli(exp(-(whole + rest / denominator))): ``whole`` trials of Bernoulli(exp(-1)), in order, stopping at
    the first failure, then Bernoulli(exp(-rest / denominator))."""
    alive = np.ones(ids.size, dtype=bool)
    left = whole.copy()
    while True:
        due = np.flatnonzero(alive & (left > 0))
        if due.size == 0:
            break
        alive[due[~_exp_minus_one(ids[due], source)]] = False
        left[due] -= 1
    live = np.flatnonzero(alive)
    if live.size:
        alive[live] = _bernoulli_exp_unit(rest[live], denominator, ids[live], source)
    return alive


def _geometric(ids: np.ndarray, source: UniformSource) -> np.ndarray:
    """Successes of Bernoulli(exp(-1)) before the first failure, per element."""
    count = np.zeros(ids.size, dtype=np.int64)
    active = np.arange(ids.size)
    while active.size:
        active = active[_exp_minus_one(ids[active], source)]
        count[active] += 1
    return count


def _discrete_laplace(t: int, ids: np.ndarray, source: UniformSource) -> np.ndarray:
    """One discrete Laplace(t) draw per element (CKS Algorithm 2), P(x) proportional to exp(-|x| / t)."""
    out = np.zeros(ids.size, dtype=np.int64)
    pending = np.arange(ids.size)
    scale = np.int64(t)
    while pending.size:
        u = source.below(t, ids[pending])
        first = _bernoulli_exp_unit(u, t, ids[pending], source)
        taken, u = pending[first], u[first]
        v = _geometric(ids[taken], source)
        if v.size and int(v.max()) > (2**62) // t:  # probability below exp(-2^31): never, but never wrap either
            raise RuntimeError("discrete Laplace draw beyond 2^62")
        x = u + scale * v
        sign = source.below(2, ids[taken])
        bad = (sign == 1) & (x == 0)
        out[taken] = np.where(sign == 1, -x, x)
        retry = ~first
        retry[np.flatnonzero(first)[bad]] = True
        pending = pending[retry]
    return out


def _exponent(law: DiscreteGaussianLaw, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(floor(gamma), N mod L) of gamma = N / L = (|y| - sigma^2/t)^2 / (2 sigma^2) per element (module docstring),
    exact: int64 where |j| < 2^31, Python integers for the others."""
    denominator = law.exponent_denominator
    absy = np.abs(y)
    m = law.m
    if m is not None:
        j = absy - np.int64(m)
        small = np.abs(j) < _SMALL_J
    else:
        p, q = law.sigma2.numerator, law.sigma2.denominator
        scale = q * law.t  # q t and p are below 2^62: L = 2 p q t^2 < 2^63
        j = np.zeros(y.size, dtype=np.int64)
        fits = absy <= (2**62) // scale
        j[fits] = absy[fits] * np.int64(scale) - np.int64(p)
        small = fits & (np.abs(j) < _SMALL_J)
    whole = np.zeros(y.size, dtype=np.int64)
    rest = np.zeros(y.size, dtype=np.int64)
    if small.any():
        square = j[small] * j[small]
        whole[small], rest[small] = np.divmod(square, np.int64(denominator))
    for i in np.flatnonzero(~small):
        value = int(absy[i]) - m if m is not None else q * law.t * int(absy[i]) - p
        f, r = divmod(value * value, denominator)
        whole[i], rest[i] = min(f, _INT64_LIMIT), r
    return whole, rest


def sample_discrete_gaussian(law: DiscreteGaussianLaw, size: int, source: UniformSource | np.random.Generator,
                             ids: np.ndarray | None = None) -> np.ndarray:
    """``size`` independent draws of N_Z(0, law.sigma2) (int64), exactly (CKS Algorithm 3, module docstring).
    ``source``: a :class:`UniformSource` or a numpy Generator (wrapped in :class:`GeneratorSource`); ``ids``: the
    elements' names for the source (default 0..size-1)."""
    if isinstance(source, np.random.Generator):
        source = GeneratorSource(source)
    if isinstance(size, bool) or not isinstance(size, Integral) or size < 0:
        raise InputError(f"size must be a non-negative integer (got {size!r})", "size")
    names = np.arange(size, dtype=np.int64) if ids is None else np.asarray(ids, dtype=np.int64)
    out = np.zeros(int(size), dtype=np.int64)
    pending = np.arange(int(size))
    while pending.size:
        y = _discrete_laplace(law.t, names[pending], source)
        whole, rest = _exponent(law, y)
        accept = _bernoulli_exp(whole, rest, law.exponent_denominator, names[pending], source)
        out[pending[accept]] = y[accept]
        pending = pending[~accept]
    return out


# -- the law's numbers (for tests, docs and the audit) --------------------------------------------------------------

def discrete_gaussian_pmf(values: np.ndarray, sigma2: float) -> np.ndarray:
    """P(X = x) of N_Z(0, sigma2) for integers ``values``: exp(-x^2 / 2 sigma2) / Z, with Z summed over
    |y| <= 40 sigma + 1 (the rest is below exp(-800) of Z)."""
    s2 = float(sigma2)
    reach = int(40 * math.sqrt(s2)) + 1
    support = np.arange(-reach, reach + 1, dtype=float)
    norm = float(np.sum(np.exp(-support**2 / (2 * s2))))
    x = np.asarray(values, dtype=float)
    return np.exp(-x**2 / (2 * s2)) / norm


def discrete_gaussian_variance(sigma2: float) -> float:
    """Var(X) of N_Z(0, sigma2) (at most sigma2, CKS Proposition 19), summed over |x| <= 40 sigma + 1."""
    s2 = float(sigma2)
    reach = int(40 * math.sqrt(s2)) + 1
    support = np.arange(-reach, reach + 1, dtype=float)
    weights = np.exp(-support**2 / (2 * s2))
    return float(np.sum(support**2 * weights) / np.sum(weights))
