"""The tensor power methods and the recovery of components and weights (capeAGN step 3, docs/math/capeagn.md).

* :func:`tensor_power_method` - the robust tensor power method (Anandkumar et al. 2014, Alg. 1);
* :func:`noisy_tensor_power_method` - paper 001's Alg. 3, noise at every iteration, with its composed budget;
* :func:`recover` - a_k = lambda_k U D^{1/2} u_k, w_k = 1 / lambda_k^2 renormalised.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..limits import MAX_POWER_ITERATIONS, MAX_POWER_RESTARTS, MAX_POWER_WORK
from ..privacy.calibration import multiplier, privacy_profile
from ..validation import InputError, check_int_range, check_rank
from .whitening import Whitening

__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_RESTARTS",
    "NoisyTpmBudget",
    "PowerResult",
    "check_iterations",
    "check_power_work",
    "noisy_tensor_power_method",
    "noisy_tpm_budget",
    "recover",
    "tensor_power_method",
]

DEFAULT_RESTARTS = 10
DEFAULT_ITERATIONS = 30


@dataclass(frozen=True, eq=False)
class PowerResult:
    """Eigenvalues lambda_i (>= 0 after sign normalisation) and unit eigenvectors (columns)."""

    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    notes: tuple[str, ...] = ()


def _unfold(tensor: np.ndarray) -> np.ndarray:
    """The D x D^2 unfolding of a C-contiguous D x D x D tensor, a view of it: an in-place deflation of the tensor
    shows in it (of any other order it would be a copy, which the deflation would miss)."""
    if not tensor.flags.c_contiguous:
        raise ValueError("the power method unfolds a C-contiguous tensor")
    return tensor.reshape(tensor.shape[0], -1)


def _image(unfolded: np.ndarray, u: np.ndarray) -> np.ndarray:
    """T(I, u_l, u_l) for every column u_l of u (D x L): the D x D^2 unfolding of T (:func:`_unfold`) times the
    columnwise Kronecker products u_l (x) u_l, one BLAS product (a three-operand einsum loops over D^3 L in C
    without BLAS: 2-7 times slower at D = 5-20, the whitened tensors' sizes; the power method makes K (L + 1) N of
    these)."""
    dim = unfolded.shape[0]
    return unfolded @ (u[:, None, :] * u[None, :, :]).reshape(dim * dim, -1)


def _values(unfolded: np.ndarray, u: np.ndarray) -> np.ndarray:
    """T(u_l, u_l, u_l) for every column u_l of u: u_l . T(I, u_l, u_l)."""
    return np.einsum("il,il->l", u, _image(unfolded, u))


def _power_step(unfolded: np.ndarray, u: np.ndarray) -> np.ndarray:
    """u <- T(I, u, u) / ||T(I, u, u)|| for every column of u (columns with a zero image are kept). A step is a few
    microseconds of numpy calls on K x K^2 arrays, made K (L + 1) N times per run: the norms are
    ``np.linalg.norm(y, axis=0)`` bit for bit (its formula for real arrays) without its checks and conversions:
    14-18 % of a step at K = 3-10."""
    y = _image(unfolded, u)
    norms = np.sqrt(np.add.reduce(y * y, axis=0))
    if norms.all():  # the usual case, without the masks' copies
        y /= norms
        return y
    keep = norms > 0
    y[:, keep] /= norms[keep]
    y[:, ~keep] = u[:, ~keep]
    return y


def _cube(u: np.ndarray) -> np.ndarray:
    return np.einsum("i,j,k->ijk", u, u, u)


def check_iterations(n_restarts: int, n_iter: int) -> tuple[int, int]:
    """Restarts L and iterations N of the power method, bounded by MAX_POWER_RESTARTS and MAX_POWER_ITERATIONS."""
    return (check_int_range(n_restarts, "restarts L", 1, MAX_POWER_RESTARTS),
            check_int_range(n_iter, "iterations N", 1, MAX_POWER_ITERATIONS))


def check_power_work(k: int, n_restarts: int, n_iter: int, *, dim: int | None = None, samples: int | None = None,
                     width: float = 0.0) -> float:
    """The joint bound on the product of the power method's flags (:data:`~dpcore.limits.MAX_POWER_WORK`),
    checked before its loop; the estimated multiply-adds. In core (``samples`` None): K components, L starts of
    N steps and N more for the best start, each step a contraction of the ``dim`` x ``dim`` x ``dim`` tensor
    (``dim`` = K after whitening): K (N L + N) dim^3. Online (paper 001, Alg. 2): N + 1 passes over ``samples``
    rows of ``width`` numbers for each of the K components, each row contracted with W and the L starts:
    K (N + 1) samples K (width + L)."""
    k, n_restarts, n_iter = int(k), int(n_restarts), int(n_iter)
    if samples is None:
        size = k if dim is None else int(dim)
        work = float(k) * (n_iter * n_restarts + n_iter) * float(size) ** 3
        how = f"K = {k} components x (N L + N) = {n_iter * (n_restarts + 1):,} steps x D^3 = {size}^3"
    else:
        work = float(k) * (n_iter + 1) * float(samples) * k * (float(width) + n_restarts)
        how = (f"K = {k} components x N + 1 = {n_iter + 1:,} passes over {int(samples):,} samples x K (width + L) = "
               f"{k} x ({float(width):.3g} + {n_restarts})")
    if work > MAX_POWER_WORK:
        raise InputError(f"the tensor power method would take about {work:.2g} multiply-adds ({how}), more than the "
                         f"{MAX_POWER_WORK:.0e} allowed; use fewer restarts L, iterations N or components K",
                         "restarts")
    return work


def tensor_power_method(
    tensor: np.ndarray, k: int, rng: np.random.Generator, *, n_restarts: int = DEFAULT_RESTARTS,
    n_iter: int = DEFAULT_ITERATIONS,
) -> PowerResult:
    """Robust tensor power method (Anandkumar et al. 2014, Alg. 1): for each of k components, L random
    unit starts, N iterations u <- T(I, u, u)/||T(I, u, u)||, keep the start with the largest T(u, u, u),
    N more iterations, lambda = T(u, u, u) (sign chosen so lambda >= 0), deflate T <- T - lambda u^(x)3."""
    n_restarts, n_iter = check_iterations(n_restarts, n_iter)
    t = np.array(tensor, dtype=float, order="C")  # C order: its unfolding is a view, which the deflation updates
    dim = t.shape[0]
    k = check_rank(k, dim)
    check_power_work(k, n_restarts, n_iter, dim=dim)
    values = np.empty(k)
    vectors = np.empty((dim, k))
    unfolded = _unfold(t)
    for i in range(k):
        u = rng.standard_normal((dim, n_restarts))
        u /= np.linalg.norm(u, axis=0)
        for _ in range(n_iter):
            u = _power_step(unfolded, u)
        scores = _values(unfolded, u)
        best = u[:, [int(np.argmax(scores))]]
        for _ in range(n_iter):
            best = _power_step(unfolded, best)
        v = best[:, 0]
        lam = float(_values(unfolded, best)[0])
        if lam < 0:
            v, lam = -v, -lam
        values[i], vectors[:, i] = lam, v
        t -= lam * _cube(v)
    return PowerResult(values, vectors)


@dataclass(frozen=True, kw_only=True)
class NoisyTpmBudget:
    """Paper 001, Algorithm 3: K = k L (R + 1) Gaussian releases with the published per-release budget
    eps' = eps / sqrt(K (4 + ln(2/delta))), delta' = delta / (2K), each with noise multiplier c(eps', delta').

    The guarantee the code has (docs/math/capeagn.md, "Noisy tensor power method"; docs/math/corrections.md, note C)
    is exact Gaussian composition, not the advanced composition the paper cites (whose Dwork-Roth constant does not
    add up to eps when ln(2/delta) > 4): K adaptively composed Gaussian mechanisms with sensitivity / std at most
    1 / c each are exactly as private as one Gaussian mechanism with mu = sqrt(K) / c (Dong, Roth & Su 2022), so
    the releases are (eps, delta_composed)-DP with delta_composed = privacy_profile(mu, eps) <= delta."""

    releases: int
    eps_release: float
    delta_release: float
    sigma: float
    relation: str
    eps: float
    delta: float
    mu: float
    delta_composed: float

    def describe(self) -> str:
        scale = ("per-release noise std Delta3 ||W||_2^3 c(eps', delta') (sample-level neighbours: one sample "
                 "replaced; Delta3 the pooled M3 sensitivity)" if self.relation == "sample" else
                 "per-release std 6 ||u||_inf^2 c(eps', delta') (the paper's entry-level neighbours: tensors "
                 "differing by one symmetrised unit entry)")
        return (f"{self.releases} noisy releases with eps' = {self.eps_release:.3g}, delta' = "
                f"{self.delta_release:.3g}; {scale}; composed exactly as Gaussian mechanisms (mu = "
                f"sqrt(K) / c(eps', delta') = {self.mu:.3g}): delta {self.delta_composed:.3g} at eps {self.eps:g}, "
                f"the stage's delta = {self.delta:g}")


def noisy_tpm_budget(
    eps: float, delta: float, k: int, n_restarts: int, n_iter: int, calibration: str,
    sensitivity_value: float | None,
) -> NoisyTpmBudget:
    """eps' = eps / sqrt(K (4 + ln(2/delta))), delta' = delta / (2K), K = k L (R + 1); sigma = Delta c(eps', delta')
    (sample-level, ``sensitivity_value`` given) or 6 c(eps', delta') (entry-level, scaled by ||u||_inf^2 later);
    mu = sqrt(K) / c(eps', delta') and delta_composed = privacy_profile(mu, eps), the exact delta of the K
    releases at eps (:class:`NoisyTpmBudget`)."""
    releases = k * n_restarts * (n_iter + 1)
    eps_r = eps / math.sqrt(releases * (4.0 + math.log(2.0 / delta)))
    delta_r = delta / (2.0 * releases)
    c = multiplier(eps_r, delta_r, calibration)  # the classic caveat is the scenario's (Scenario.caveats)
    mu = math.sqrt(releases) / c
    common = {"releases": releases, "eps_release": eps_r, "delta_release": delta_r, "eps": float(eps),
              "delta": float(delta), "mu": mu, "delta_composed": privacy_profile(mu, eps)}
    if sensitivity_value is None:
        return NoisyTpmBudget(sigma=6.0 * c, relation="entry", **common)
    return NoisyTpmBudget(sigma=sensitivity_value * c, relation="sample", **common)


def noisy_tensor_power_method(
    tensor: np.ndarray, k: int, rng: np.random.Generator, *, eps: float, delta: float,
    sensitivity_value: float | None, calibration: str = "classic", n_restarts: int = DEFAULT_RESTARTS,
    n_iter: int = DEFAULT_ITERATIONS,
) -> tuple[PowerResult, NoisyTpmBudget]:
    """Paper 001, Alg. 3: for each component, L random starts, R noisy iterations
    u <- ((T - D)(I, u, u) + noise) / ||.||, noisy values lambda~ = (T - D)(u, u, u) + noise, keep the largest,
    deflate D <- D + lambda u^(x)3. Noise std: ``sensitivity_value`` c(eps', delta') for both queries
    (sample-level), or the paper's 6 c ||u||_inf^2 (iterations) and 6 c ||u||_inf^3 (values) when None."""
    n_restarts, n_iter = check_iterations(n_restarts, n_iter)
    t = np.array(tensor, dtype=float, order="C")  # C order: its unfolding is a view, which the deflation updates
    dim = t.shape[0]
    k = check_rank(k, dim)
    budget = noisy_tpm_budget(eps, delta, k, n_restarts, n_iter, calibration, sensitivity_value)
    entry = budget.relation == "entry"
    values = np.empty(k)
    vectors = np.empty((dim, k))
    unfolded = _unfold(t)
    for i in range(k):
        u = rng.standard_normal((dim, n_restarts))
        u /= np.linalg.norm(u, axis=0)
        for _ in range(n_iter):
            scale = budget.sigma * (np.max(np.abs(u), axis=0) ** 2 if entry else 1.0)
            y = _image(unfolded, u) + scale * rng.standard_normal((dim, n_restarts))
            u = y / np.linalg.norm(y, axis=0)
        scale = budget.sigma * (np.max(np.abs(u), axis=0) ** 3 if entry else 1.0)
        scores = _values(unfolded, u) + scale * rng.standard_normal(n_restarts)
        best = int(np.argmax(scores))
        v, lam = u[:, best], float(scores[best])
        if lam < 0:
            v, lam = -v, -lam
        values[i], vectors[:, i] = lam, v
        t -= lam * _cube(v)
    return PowerResult(values, vectors), budget


def recover(
    whitening: Whitening, power: PowerResult, kind: str, scale: float = 1.0
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """a_k = lambda_k (W^T)^+ u_k = lambda_k U D^{1/2} u_k (times the MOG scale zeta),
    w_k = 1/lambda_k^2 renormalised to sum 1 (a tiny noisy lambda would otherwise give an unbounded weight).
    STM: negative entries set to 0 and each a_k renormalised to sum 1 (uniform if nothing positive is left).
    Returns (components K x D, weights K, notes)."""
    lam = power.eigenvalues
    back = whitening.u * np.sqrt(whitening.eigenvalues)  # (W^T)^+ = U D^{1/2}
    comps = (back @ power.eigenvectors * lam).T
    weights = 1.0 / np.maximum(lam**2, 1e-300)
    weights = weights / weights.sum()  # a probability vector (unchanged for exact moments, where it sums to 1)
    notes: list[str] = []
    if kind == "stm":
        comps = np.clip(comps, 0.0, None)
        sums = comps.sum(axis=1)
        empty = sums <= 0
        if empty.any():
            notes.append(f"{int(empty.sum())} recovered topic(s) had no positive entry and were set to uniform")
            comps[empty] = 1.0
            sums = comps.sum(axis=1)
        comps = comps / sums[:, None]
    else:
        comps = comps * scale
    return comps, weights, tuple(notes)


