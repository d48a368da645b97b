"""capeAGN: distributed private orthogonal tensor decomposition, its baselines, dense and projected paths.

SPEC 7 (Algorithm 3 of the journal paper, appendix E of the preprint, paper 001 Alg. 3):

1. Sites release M2_hat_s = M2_s + E2_s + F2_s + G2_s (symmetric; budget eps1 = a eps, delta1 = a delta,
   a = ``eps_split``). The aggregator forms M2_hat = sum_s mu_s (M2_hat_s - F2_s), whitens with its
   top-K eigenpairs, W = U D^{-1/2} (:func:`whiten`; non-positive eigenvalues raise :class:`WhiteningError`).
2. Sites release M3_tilde_s = (M3_s + E3_s + F3_s + G3_s)(W, W, W) (budget (1 - a) eps, (1 - a) delta);
   the aggregator forms M3_tilde = sum_s mu_s (M3_tilde_s - F3_s(W, W, W)).
3. Robust tensor power method (:func:`tensor_power_method`) and recovery a_k = lambda_k U D^{1/2} u_k,
   w_k = 1 / lambda_k^2 renormalised to sum 1 (STM: negative entries zeroed, renormalised to sum 1).

The message flow is run for real (:func:`release_m2`, :func:`release_m3`): helper noise e (zero-sum),
aggregator noise f (subtracted), site noise g, every term symmetric (SPEC 9.1, 9.7).

Two paths for the third moment (SPEC 7 "Large D"):

* ``dense``: every site forms its D x D x D moment and D^3 noise tensors, then projects;
* ``projected``: sites compute M3_s(W, W, W) from their samples and add noise sampled already projected:
  Z(W, W, W) has the law of Y(R, R, R) with Y K x K x K i.i.d. N(0, 1) and R^T R = W^T W (R from a QR of W).
  No D^3 array exists; memory is O(N D + D^2 + K^3) (the D x D second moment stays). The helper and the
  aggregator sample their E3_s and F3_s already projected, using W, which is public after stage 1.

Third-moment noise law (``m3_noise``): ``symmetrized`` = sqrt(6) tau Sym(Z) (unique-entry variances
tau^2, 2 tau^2, 6 tau^2 for 3, 2, 1 distinct indices: at least as private as the published noise), the
only law with an exact projected sampler, used on both paths so that the choice of path never changes
the distribution of a result; ``published`` = i.i.d. N(0, tau^2) unique entries (the paper's AGN),
dense path only.

Noise is drawn from explicit generators in a fixed order (M2 stage by column blocks that depend on D
only, then M3 stage, then the power method's starts), and only scaled afterwards: re-seeding reproduces
the same underlying standard normals at any eps, delta or N_s (common random numbers for sweeps).
numpy's generators are fine for simulation, not a cryptographic source for a deployment (SPEC 9.9).
"""

from __future__ import annotations

import math
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from .cape import NoiseDesign, design_collusion_robust, design_general, sample_noise
from .data import sizes_from_fractions
from .mechanisms import (
    MAX_DENSE_ENTRIES,
    ClassicCalibrationWarning,
    avn_noise,
    noise_multiplier,
    symmetric_tensor,
    unique_count_matrix,
    unique_count_tensor,
)
from .models import (
    DEFAULT_SIGMA2,
    DEFAULT_TOPIC_CONCENTRATION,
    DEFAULT_WEIGHT_CONCENTRATION,
    ESTIMATORS,
    MixtureModel,
    MogSite,
    StmSite,
    make_model,
    mog_norm_bound,
    mog_sites,
    pool_sites,
    random_components,
    sample_mog,
    sample_stm,
    stm_site_from_words,
    symmetrize,
)
from .scenario import Scenario
from .sensitivity import sensitivity
from .validation import (
    InputError,
    check_choice,
    check_finite_array,
    check_positive,
    check_positive_int,
    check_rank,
)

__all__ = [
    "ALGORITHMS",
    "DEFAULT_MEMORY_BUDGET",
    "M3_NOISE",
    "METRICS",
    "PATHS",
    "AlgorithmRun",
    "Decomposition",
    "MetricSummary",
    "OtdComparison",
    "OtdProblem",
    "OtdSettings",
    "PathChoice",
    "PowerResult",
    "StageNoise",
    "SyntheticSpec",
    "Whitening",
    "WhiteningError",
    "AGN_MODELS",
    "agn_stage_taus",
    "algorithm_rng",
    "data_rng",
    "choose_path",
    "compare_algorithms",
    "evaluate",
    "match_components",
    "memory_estimate",
    "mog_problem",
    "multilinear",
    "noisy_tensor_power_method",
    "q_comp",
    "recover",
    "release_m2",
    "release_m3",
    "run_algorithm",
    "synthetic_problem",
    "tensor_power_method",
    "top_eigenpairs",
    "whiten",
]

ALGORITHMS: dict[str, str] = {
    "cape": "capeAGN: CAPE correlated noise on every site's M2 and M3 releases (Algorithm 3)",
    "agn": "AGN on pooled data: one trusted party adds symmetric Gaussian noise to M2 and M3 (appendix E.1)",
    "avn": "AVN on pooled data: Gaussian M2, vector noise with density ~ exp(-beta ||b||) on M3 (appendix E.2)",
    "conv": "conventional: every site adds its full AGN noise, the aggregator averages (no correlated noise)",
    "local": "AGN on one site's data only (the largest site unless chosen)",
    "nonpriv": "non-private tensor power method on pooled data",
    "random": "random vectors from the model's prior (uses no data): the worst-case reference",
    "noisy_tpm": "noisy tensor power method of paper 001 (Alg. 3) on pooled data, noise at every iteration",
}
LABELS = {"cape": "capeAGN", "agn": "AGN (pooled)", "avn": "AVN (pooled)", "conv": "conv", "local": "local",
          "nonpriv": "non-private", "random": "random vectors", "noisy_tpm": "noisy TPM"}
METRICS = ("q_comp", "weight_error")
PATHS = ("auto", "dense", "projected")
M3_NOISE = {
    "symmetrized": "sqrt(6) tau Sym(Z), Z i.i.d. N(0, 1): exact on both paths, unique-entry variance >= tau^2",
    "published": "i.i.d. N(0, tau^2) unique entries mirrored (the paper's AGN); dense path only",
}
DEFAULT_MEMORY_BUDGET = 1 << 30  # 1 GiB for the arrays of one run
DEFAULT_RESTARTS = 10
DEFAULT_ITERATIONS = 30
MAX_RUNS = 1000
EIGH_MAX_DIM = 800  # above this the top-K eigenpairs come from Lanczos (eigsh) instead of a full eigh
_BLOCK_UNIQUE = 1 << 18  # unique M2 entries per block of the CAPE flow (bounds the noise arrays)


# ----------------------------------------------------------------------------------------------
# Multilinear algebra, whitening, power method
# ----------------------------------------------------------------------------------------------

def multilinear(
    tensor: np.ndarray, a: np.ndarray, b: np.ndarray | None = None, c: np.ndarray | None = None
) -> np.ndarray:
    """T(A, B, C)_pqr = sum_abc T_abc A_ap B_bq C_cr (B, C default to A)."""
    b = a if b is None else b
    c = a if c is None else c
    out = np.tensordot(tensor, c, axes=([2], [0]))  # (D, D, r)
    out = np.tensordot(out, b, axes=([1], [0]))  # (D, r, q)
    out = np.tensordot(out, a, axes=([0], [0]))  # (r, q, p)
    return out.transpose(2, 1, 0)


class WhiteningError(InputError):
    """The top-K eigenvalues of the (noisy) M2 are not all positive, so W = U D^{-1/2} does not exist."""

    def __init__(self, message: str, eigenvalues: np.ndarray, k: int):
        super().__init__(message, "K")
        self.eigenvalues = np.asarray(eigenvalues)
        self.k = k


@dataclass(frozen=True, eq=False)
class Whitening:
    """W = U D^{-1/2} (D x K) from the top-K eigenpairs (U, D) of M2_hat, largest first."""

    w: np.ndarray
    u: np.ndarray
    eigenvalues: np.ndarray


def top_eigenpairs(matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The K largest (algebraic) eigenpairs of a symmetric matrix.

    D <= EIGH_MAX_DIM: exact (scipy.linalg.eigh with subset_by_index). Larger D: Lanczos (ARPACK eigsh,
    which = "LA", fixed start vector) on a float32 copy - the matrix-vector products are memory-bound, so
    this halves their cost - followed by a Rayleigh-Ritz step in float64 on the Lanczos vectors, which makes
    the eigenvalues accurate to second order (the vectors to about 1e-6 relative). The result is a
    deterministic function of the matrix, so privacy is unaffected."""
    d = matrix.shape[0]
    if d <= EIGH_MAX_DIM:
        return scipy.linalg.eigh(matrix, subset_by_index=[d - k, d - 1])
    single = matrix.astype(np.float32)
    operator = LinearOperator((d, d), matvec=lambda v: (single @ v.astype(np.float32)).astype(np.float64),
                              dtype=np.float64)
    start = np.random.default_rng(0).standard_normal(d)  # fixed Lanczos start; not a privacy draw
    try:
        _, vecs = eigsh(operator, k=k, which="LA", v0=start, ncv=min(d - 1, max(4 * k, 20)), tol=1e-6,
                        maxiter=20 * d)
    except ArpackNoConvergence:  # pragma: no cover - fall back to the exact solver
        return scipy.linalg.eigh(matrix, subset_by_index=[d - k, d - 1])
    basis, _ = np.linalg.qr(vecs)
    small = basis.T @ (matrix @ basis)
    vals, rotation = scipy.linalg.eigh((small + small.T) / 2)
    return vals, basis @ rotation


def whiten(m2: np.ndarray, k: int, *, noisy: bool = True) -> Whitening:
    """Top-K eigenpairs of the symmetric ``m2`` and W = U D^{-1/2}; raises :class:`WhiteningError` when
    any of the K largest eigenvalues is <= 0 (never returns NaN)."""
    d = m2.shape[0]
    k = check_rank(k, d)
    vals, vecs = top_eigenpairs(m2, k)
    order = np.argsort(vals)[::-1]
    vals, vecs = vals[order], vecs[:, order]
    floor = 1e-12 * max(float(np.max(np.abs(vals))), 1e-300)
    bad = int(np.sum(vals <= floor))
    if bad:
        if noisy:
            message = (
                f"whitening failed: {bad} of the top K = {k} eigenvalues of the noisy second moment M2_hat are "
                f"<= 0 (the smallest is {vals[-1]:.3g}), so W = U D^(-1/2) does not exist. The privacy noise on "
                f"M2 is larger than its K-th component. What would help: more samples per site, a larger eps "
                f"(or a larger share of eps for the first stage), or a smaller K."
            )
        else:
            message = (
                f"whitening failed: the data's second moment M2 has only {k - bad} positive eigenvalue(s) among "
                f"its top K = {k} (the smallest is {vals[-1]:.3g}); the data do not support {k} components. "
                f"Choose a smaller K (or check the MOG sigma^2, which is subtracted from M2)."
            )
        raise WhiteningError(message, vals, k)
    return Whitening(vecs / np.sqrt(vals), vecs, vals)


@dataclass(frozen=True, eq=False)
class PowerResult:
    """Eigenvalues lambda_i (>= 0 after sign normalisation) and unit eigenvectors (columns)."""

    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    notes: tuple[str, ...] = ()


def _power_step(tensor: np.ndarray, u: np.ndarray) -> np.ndarray:
    """u <- T(I, u, u) / ||T(I, u, u)|| for every column of u (columns with a zero image are kept)."""
    y = np.einsum("ijk,jl,kl->il", tensor, u, u)
    norms = np.linalg.norm(y, axis=0)
    keep = norms > 0
    y[:, keep] /= norms[keep]
    y[:, ~keep] = u[:, ~keep]
    return y


def _cube(u: np.ndarray) -> np.ndarray:
    return np.einsum("i,j,k->ijk", u, u, u)


def _check_iterations(n_restarts: int, n_iter: int) -> tuple[int, int]:
    return (check_positive_int(n_restarts, "restarts L"), check_positive_int(n_iter, "iterations N"))


def tensor_power_method(
    tensor: np.ndarray, k: int, rng: np.random.Generator, *, n_restarts: int = DEFAULT_RESTARTS,
    n_iter: int = DEFAULT_ITERATIONS,
) -> PowerResult:
    """Robust tensor power method (Anandkumar et al. 2014, Alg. 1): for each of k components, L random
    unit starts, N iterations u <- T(I, u, u)/||T(I, u, u)||, keep the start with the largest T(u, u, u),
    N more iterations, lambda = T(u, u, u) (sign chosen so lambda >= 0), deflate T <- T - lambda u^(x)3."""
    n_restarts, n_iter = _check_iterations(n_restarts, n_iter)
    t = np.array(tensor, dtype=float)
    dim = t.shape[0]
    k = check_rank(k, dim)
    values = np.empty(k)
    vectors = np.empty((dim, k))
    for i in range(k):
        u = rng.standard_normal((dim, n_restarts))
        u /= np.linalg.norm(u, axis=0)
        for _ in range(n_iter):
            u = _power_step(t, u)
        scores = np.einsum("ijk,il,jl,kl->l", t, u, u, u)
        best = u[:, [int(np.argmax(scores))]]
        for _ in range(n_iter):
            best = _power_step(t, best)
        v = best[:, 0]
        lam = float(np.einsum("ijk,i,j,k->", t, v, v, v))
        if lam < 0:
            v, lam = -v, -lam
        values[i], vectors[:, i] = lam, v
        t -= lam * _cube(v)
    return PowerResult(values, vectors)


@dataclass(frozen=True)
class NoisyTpmBudget:
    """Paper 001, Theorem 4.1: K = k L (R + 1) Gaussian releases composed by advanced composition."""

    releases: int
    eps_release: float
    delta_release: float
    sigma: float
    relation: str

    def describe(self) -> str:
        scale = ("per-release noise std Delta3 ||W||_2^3 c(eps', delta') (sample-level neighbours: one sample "
                 "replaced; Delta3 the pooled M3 sensitivity)" if self.relation == "sample" else
                 "per-release std 6 ||u||_inf^2 c(eps', delta') (the paper's entry-level neighbours: tensors "
                 "differing by one symmetrised unit entry)")
        return (f"{self.releases} noisy releases with eps' = {self.eps_release:.3g}, delta' = "
                f"{self.delta_release:.3g}; {scale}")


def noisy_tpm_budget(
    eps: float, delta: float, k: int, n_restarts: int, n_iter: int, calibration: str,
    sensitivity_value: float | None,
) -> NoisyTpmBudget:
    """eps' = eps / sqrt(K (4 + ln(2/delta))), delta' = delta / (2K), K = k L (R + 1); sigma = Delta c(eps', delta')
    (sample-level, ``sensitivity_value`` given) or 6 c(eps', delta') (entry-level, scaled by ||u||_inf^2 later)."""
    releases = k * n_restarts * (n_iter + 1)
    eps_r = eps / math.sqrt(releases * (4.0 + math.log(2.0 / delta)))
    delta_r = delta / (2.0 * releases)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicCalibrationWarning)
        c = noise_multiplier(eps_r, delta_r, calibration)
    if sensitivity_value is None:
        return NoisyTpmBudget(releases, eps_r, delta_r, 6.0 * c, "entry")
    return NoisyTpmBudget(releases, eps_r, delta_r, sensitivity_value * c, "sample")


def noisy_tensor_power_method(
    tensor: np.ndarray, k: int, rng: np.random.Generator, *, eps: float, delta: float,
    sensitivity_value: float | None, calibration: str = "classic", n_restarts: int = DEFAULT_RESTARTS,
    n_iter: int = DEFAULT_ITERATIONS,
) -> tuple[PowerResult, NoisyTpmBudget]:
    """Paper 001, Alg. 3: for each component, L random starts, R noisy iterations
    u <- ((T - D)(I, u, u) + noise) / ||.||, noisy values lambda~ = (T - D)(u, u, u) + noise, keep the largest,
    deflate D <- D + lambda u^(x)3. Noise std: ``sensitivity_value`` c(eps', delta') for both queries
    (sample-level), or the paper's 6 c ||u||_inf^2 (iterations) and 6 c ||u||_inf^3 (values) when None."""
    n_restarts, n_iter = _check_iterations(n_restarts, n_iter)
    t = np.array(tensor, dtype=float)
    dim = t.shape[0]
    k = check_rank(k, dim)
    budget = noisy_tpm_budget(eps, delta, k, n_restarts, n_iter, calibration, sensitivity_value)
    entry = budget.relation == "entry"
    values = np.empty(k)
    vectors = np.empty((dim, k))
    for i in range(k):
        u = rng.standard_normal((dim, n_restarts))
        u /= np.linalg.norm(u, axis=0)
        for _ in range(n_iter):
            scale = budget.sigma * (np.max(np.abs(u), axis=0) ** 2 if entry else 1.0)
            y = np.einsum("ijk,jl,kl->il", t, u, u) + scale * rng.standard_normal((dim, n_restarts))
            u = y / np.linalg.norm(y, axis=0)
        scale = budget.sigma * (np.max(np.abs(u), axis=0) ** 3 if entry else 1.0)
        scores = np.einsum("ijk,il,jl,kl->l", t, u, u, u) + scale * rng.standard_normal(n_restarts)
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


# ----------------------------------------------------------------------------------------------
# Metrics
# ----------------------------------------------------------------------------------------------

def match_components(estimated: np.ndarray, reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every estimated component the nearest reference component: (indices, distances)."""
    dist = np.linalg.norm(estimated[:, None, :] - reference[None, :, :], axis=2)
    idx = np.argmin(dist, axis=1)
    return idx, dist[np.arange(len(idx)), idx]


def q_comp(estimated: np.ndarray, reference: np.ndarray) -> float:
    """q_comp = (1/K) sum_k min_k' ||a_hat_k - a_k'||_2 (journal paper, section VI-B)."""
    return float(match_components(estimated, reference)[1].mean())


def evaluate(components: np.ndarray, weights: np.ndarray, reference_components: np.ndarray,
             reference_weights: np.ndarray) -> tuple[float, float]:
    """(q_comp, weight error) with the same matching: weight error = (1/K) sum_k |w_hat_k - w_m(k)|,
    m(k) the reference component nearest to a_hat_k."""
    idx, dist = match_components(components, reference_components)
    return float(dist.mean()), float(np.mean(np.abs(weights - reference_weights[idx])))


# ----------------------------------------------------------------------------------------------
# The message flow
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class StageNoise:
    """How one stage's releases are perturbed: ``cape`` (a NoiseDesign: e, f, g), ``independent``
    (N(0, stds_s^2) added by each site), ``avn`` (vector noise with parameter ``beta``, one site, M3
    only) or ``none``."""

    mode: str
    design: NoiseDesign | None = None
    stds: np.ndarray | None = None
    beta: float | None = None


@dataclass(frozen=True, eq=False)
class StageMessages:
    """What was sent in one stage (kept on request, small D only): per-site releases and the e, f, g
    terms, each (S, size) - unique entries of M2 in colex order, or projected K x K x K tensors."""

    releases: np.ndarray
    e: np.ndarray | None
    f: np.ndarray | None
    g: np.ndarray | None


def _column_blocks(dim: int, max_unique: int | None = None) -> list[tuple[int, int]]:
    """Column blocks [j0, j1) of the upper triangle with at most ``max_unique`` entries (>= 1 column)."""
    max_unique = _BLOCK_UNIQUE if max_unique is None else max_unique
    blocks = []
    j0 = 0
    while j0 < dim:
        j1 = j0 + 1
        while j1 < dim and (j1 + 1) * (j1 + 2) // 2 - j0 * (j0 + 1) // 2 <= max_unique:
            j1 += 1
        blocks.append((j0, j1))
        j0 = j1
    return blocks


def _combine(data: np.ndarray, weights: np.ndarray, noise: StageNoise, rng: np.random.Generator, size: int,
             shape: Callable[[np.ndarray], np.ndarray] | None = None, store: list | None = None) -> np.ndarray:
    """Run one round of the protocol on per-site data (S, ...) and return the aggregate.

    ``size`` standard normals are drawn per site and term; ``shape`` maps one site's row of them to the
    release's shape (symmetric tensor, projection). Each site forms its release; the aggregator takes
    sum_s mu_s (release_s - f_s): the real flow, not pooled noise on a pooled statistic."""
    n_sites = data.shape[0]

    def shaped(rows: np.ndarray) -> np.ndarray:
        return rows if shape is None else np.stack([shape(rows[s]) for s in range(n_sites)])

    if noise.mode == "none":
        return np.tensordot(weights, data, axes=1)
    if noise.mode == "independent":
        z = rng.standard_normal((n_sites, size))
        z *= np.asarray(noise.stds, float)[:, None]
        g = shaped(z)
        releases = data + g
        if store is not None:
            store.append(StageMessages(releases, None, None, g))
        return np.tensordot(weights, releases, axes=1)
    if noise.mode == "cape":
        drawn = sample_noise(noise.design, rng, size)
        e, f, g = shaped(drawn.e), shaped(drawn.f), shaped(drawn.g)
        del drawn
        releases = data + e  # what each site sends: data + e + f + g
        releases += f
        releases += g
        if store is not None:
            store.append(StageMessages(releases, e, f, g))
        return np.tensordot(weights, releases - f, axes=1)  # the aggregator removes its own f_s
    raise InputError(f"unknown noise mode {noise.mode!r}")


def release_m2(
    sites: Sequence[MogSite | StmSite], weights: np.ndarray, noise: StageNoise, rng: np.random.Generator,
    *, keep_messages: bool = False,
) -> tuple[np.ndarray, StageMessages | None]:
    """Stage 1: M2_hat = sum_s mu_s (M2_hat_s - F2_s) with M2_hat_s = M2_s + E2_s + F2_s + G2_s.

    Processed in blocks of columns of the upper triangle (unique entries in colex order, the order of
    :func:`dpcore.mechanisms.unique_entries_matrix`), so the noise arrays stay small for any D; the
    blocks depend on D only, so the draws are the same at any eps. Returns (M2_hat, messages or None)."""
    dim = sites[0].dim
    weights = np.asarray(weights, dtype=float)
    out = np.empty((dim, dim))
    kept: list[StageMessages] | None = [] if keep_messages else None
    for j0, j1 in _column_blocks(dim):
        cols = j1 - j0
        mask = np.arange(j1)[None, :] <= (j0 + np.arange(cols))[:, None]  # (cols, j1): i <= j
        data = np.stack([site.m2_block(j0, j1).T[mask] for site in sites])
        agg = _combine(data, weights, noise, rng, data.shape[1], None, kept)
        out.T[j0:j1, :j1][mask] = agg  # upper triangle (i <= j)
        out[j0:j1, :j1][mask] = agg  # its mirror
    messages = None
    if kept:
        def joined(name: str) -> np.ndarray | None:
            parts = [getattr(m, name) for m in kept]
            return None if parts[0] is None else np.concatenate(parts, axis=1)
        messages = StageMessages(joined("releases"), joined("e"), joined("f"), joined("g"))
    return out, messages


def _m3_noise_size(law: str, path: str, dim: int, k: int) -> int:
    if path == "projected":
        return k**3
    return unique_count_tensor(dim) if law == "published" else dim**3


def _m3_shaper(law: str, path: str, dim: int, w: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Map one site's row of i.i.d. noise (variance tau^2) to its third-moment noise tensor."""
    k = w.shape[1]
    if path == "projected":
        r = np.linalg.qr(w, mode="r")  # R^T R = W^T W
        return lambda row: math.sqrt(6.0) * symmetrize(multilinear(row.reshape(k, k, k), r))
    if law == "published":
        return lambda row: symmetric_tensor(row, dim)
    return lambda row: math.sqrt(6.0) * symmetrize(row.reshape(dim, dim, dim))


def release_m3(
    sites: Sequence[MogSite | StmSite], weights: np.ndarray, w: np.ndarray, noise: StageNoise,
    rng: np.random.Generator, *, path: str = "projected", law: str = "symmetrized", keep_messages: bool = False,
) -> tuple[np.ndarray, StageMessages | None]:
    """Stage 2: M3_tilde = sum_s mu_s (M3_tilde_s - F3_s(W, W, W)), M3_tilde_s = (M3_s + E3_s + F3_s + G3_s)(W, W, W).

    ``dense``: the D^3 moment and noise tensors are formed and projected by each site (the aggregator
    projects its own F3_s). ``projected``: M3_s(W, W, W) from the samples plus noise sampled projected.
    Returns (M3_tilde K x K x K, messages with projected releases and e, f, g, or None)."""
    path = check_choice(path, "path", ("dense", "projected"))
    law = check_choice(law, "m3_noise", tuple(M3_NOISE))
    if path == "projected" and law == "published":
        raise InputError("the 'published' third-moment noise has no projected sampler; use 'symmetrized' or the "
                         "dense path", "m3_noise")
    dim, k = w.shape
    weights = np.asarray(weights, dtype=float)
    kept: list[StageMessages] | None = [] if keep_messages else None
    if noise.mode == "avn":
        if path != "dense" or len(sites) != 1:
            raise InputError("AVN noise needs the dense path and pooled data", "path")
        noisy = sites[0].m3() + symmetric_tensor(avn_noise(rng, unique_count_tensor(dim), noise.beta), dim)
        return multilinear(noisy, w), None
    size = _m3_noise_size(law, path, dim, k)
    shape = _m3_shaper(law, path, dim, w)
    if path == "projected":
        data = np.stack([site.m3_projected(w) for site in sites])
        agg = _combine(data, weights, noise, rng, size, shape, kept)
        return agg, (kept[0] if kept else None)
    # Dense: every site perturbs its D^3 moment, then projects what it sends.
    if noise.mode == "none":
        return sum(mu * multilinear(site.m3(), w) for mu, site in zip(weights, sites, strict=True)), None
    n_sites = len(sites)
    if noise.mode == "cape":
        drawn = sample_noise(noise.design, rng, size)
        terms = {"e": drawn.e, "f": drawn.f, "g": drawn.g}
    elif noise.mode == "independent":
        terms = {"e": None, "f": None, "g": rng.standard_normal((n_sites, size)) * np.asarray(noise.stds)[:, None]}
    else:
        raise InputError(f"unknown noise mode {noise.mode!r}")
    agg = np.zeros((k, k, k))
    releases, projected = [], {"e": [], "f": [], "g": []}
    for s, site in enumerate(sites):
        tensor = site.m3()
        proj_terms = {}
        for name, rows in terms.items():
            if rows is None:
                continue
            noise_tensor = shape(rows[s])
            tensor = tensor + noise_tensor
            if name == "f" or kept is not None:  # the aggregator projects F3_s; e and g only when recorded
                proj_terms[name] = multilinear(noise_tensor, w)
        release = multilinear(tensor, w)  # what site s sends (K x K x K)
        f_proj = proj_terms.get("f")  # the aggregator projects its own F3_s
        agg += weights[s] * (release - f_proj if f_proj is not None else release)
        if kept is not None:
            releases.append(release)
            for name in projected:
                projected[name].append(proj_terms.get(name))
    messages = None
    if kept is not None:
        def stacked(name: str) -> np.ndarray | None:
            return None if terms[name] is None else np.stack(projected[name])
        messages = StageMessages(np.stack(releases), stacked("e"), stacked("f"), stacked("g"))
    return agg, messages


# ----------------------------------------------------------------------------------------------
# Memory budget and path choice
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PathChoice:
    path: str
    dense_bytes: int
    projected_bytes: int
    budget: int
    reason: str


def memory_estimate(path: str, dim: int, k: int, n_sites: int) -> int:
    """Bytes of the arrays one run allocates (besides the samples themselves), stated:

    * both paths: the D x D second moment and its copy for the eigensolver (16 D^2), the noise of one
      block of the M2 flow (6 arrays of S x min(2^18, D(D+1)/2) doubles) and the K^3 tensors;
    * dense adds the third-moment noise of all sites, drawn at once (6 S D^3 doubles while drawing:
      standard normals and scaled terms) and about 10 D^3 doubles for one site's moment, its
      symmetrisation and projection."""
    block = min(_BLOCK_UNIQUE, unique_count_matrix(dim))
    m2 = 16 * dim * dim + 48 * n_sites * block + 64 * k**3 * max(n_sites, 1)
    if path == "projected":
        return int(m2)
    return int(m2 + 8 * dim**3 * (6 * n_sites + 10))


def _gib(n: float) -> str:
    if n >= 2**30:
        return f"{n / 2**30:.2f} GiB"
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def choose_path(requested: str, dim: int, k: int, n_sites: int, budget: int = DEFAULT_MEMORY_BUDGET) -> PathChoice:
    """``auto``: dense when its arrays fit ``budget`` (and D^3 <= MAX_DENSE_ENTRIES), else projected.
    ``dense``/``projected`` are forced; an InputError says when even the forced path does not fit."""
    requested = check_choice(requested, "path", PATHS)
    budget = check_positive_int(budget, "memory budget")
    dense = memory_estimate("dense", dim, k, n_sites)
    proj = memory_estimate("projected", dim, k, n_sites)
    dense_ok = dense <= budget and dim**3 <= MAX_DENSE_ENTRIES
    if requested == "dense" and not dense_ok:
        raise InputError(
            f"D = {dim} is too large for the dense path: its D x D x D tensors need about {_gib(dense)}, more than "
            f"the memory budget of {_gib(budget)}. Use the projected path (--path projected or auto), a smaller D, "
            "or a larger budget.", "path")
    if proj > budget:
        raise InputError(
            f"D = {dim} is too large even for the projected path: the D x D second moment needs about "
            f"{_gib(proj)}, more than the memory budget of {_gib(budget)}. Use a smaller D (vocabulary) or raise "
            "the budget.", "D")
    if requested == "dense" or (requested == "auto" and dense_ok):
        why = ("forced" if requested == "dense" else
               f"auto: the dense tensors (about {_gib(dense)}) fit the {_gib(budget)} budget")
        return PathChoice("dense", dense, proj, budget, why)
    why = ("forced" if requested == "projected" else
           f"auto: the dense tensors would need about {_gib(dense)}, more than the {_gib(budget)} budget")
    return PathChoice("projected", dense, proj, budget, why)


# ----------------------------------------------------------------------------------------------
# Problems, settings, results
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class OtdProblem:
    """Data for one run: the sites' samples (already scaled), K, and what the result is compared to.

    ``scale`` multiplies recovered MOG components back to original units (the public bound zeta);
    ``truth`` is None for uploaded data (then the non-private result is the reference)."""

    kind: str
    sites: tuple[MogSite | StmSite, ...]
    k: int
    scale: float = 1.0
    sigma2: float = 0.0
    truth: MixtureModel | None = None
    vocabulary: tuple[str, ...] | None = None
    random_norm: float = 1.0
    notes: tuple[str, ...] = ()

    @property
    def dim(self) -> int:
        return self.sites[0].dim

    @property
    def n_sites(self) -> int:
        return len(self.sites)

    @property
    def sizes(self) -> np.ndarray:
        return np.array([s.n for s in self.sites], dtype=int)


@dataclass(frozen=True)
class OtdSettings:
    """Algorithm settings shared by every run. ``eps_split`` is the share a of eps and delta spent on
    the first (whitening) stage; ``local_site`` None means the largest site. ``collusion`` c (None: the plain
    design) makes capeAGN use ``design_collusion_robust`` with c colluders for both stages."""

    eps_split: float = 0.5
    n_restarts: int = DEFAULT_RESTARTS
    n_iter: int = DEFAULT_ITERATIONS
    path: str = "auto"
    memory_budget: int = DEFAULT_MEMORY_BUDGET
    m3_noise: str = "symmetrized"
    local_site: int | None = None
    topic_concentration: float = DEFAULT_TOPIC_CONCENTRATION
    collusion: int | None = None

    def validated(self) -> OtdSettings:
        split = check_positive(self.eps_split, "eps split")
        if not 0.0 < split < 1.0:
            raise InputError(f"eps split must be strictly between 0 and 1 (got {split:g})", "eps_split")
        _check_iterations(self.n_restarts, self.n_iter)
        check_choice(self.path, "path", PATHS)
        check_positive_int(self.memory_budget, "memory budget")
        check_choice(self.m3_noise, "m3_noise", tuple(M3_NOISE))
        if self.collusion is not None:
            check_positive_int(self.collusion, "collusion", minimum=0)
        return self


@dataclass(frozen=True, eq=False)
class Decomposition:
    """One algorithm's output: recovered components (K x D, original units) and weights."""

    algorithm: str
    components: np.ndarray
    weights: np.ndarray
    eigenvalues: np.ndarray
    whitening_eigenvalues: np.ndarray | None
    path: str
    privacy: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class SyntheticSpec:
    """A synthetic model: kind, D, K, MOG sigma^2, STM document length and estimator."""

    kind: str
    dim: int
    k: int
    sigma2: float = DEFAULT_SIGMA2
    doc_length: int = 3
    estimator: str = "first"
    topic_concentration: float = DEFAULT_TOPIC_CONCENTRATION
    weight_concentration: float = DEFAULT_WEIGHT_CONCENTRATION

    def model(self, rng: np.random.Generator) -> MixtureModel:
        check_choice(self.estimator, "estimator", tuple(ESTIMATORS))
        return make_model(self.kind, self.dim, self.k, rng, sigma2=self.sigma2, doc_length=self.doc_length,
                          topic_concentration=self.topic_concentration,
                          weight_concentration=self.weight_concentration)


def synthetic_problem(model: MixtureModel, sizes: Sequence[int], rng: np.random.Generator,
                      estimator: str = "first") -> OtdProblem:
    """Fresh samples of ``model`` for sites of the given sizes (drawn site by site). MOG samples are
    divided by the public bound zeta = 1 + sigma (sqrt(D) + 4) and clipped to norm 1."""
    sizes = [check_positive_int(int(n), "N_s") for n in sizes]
    if model.kind == "mog":
        parts = [sample_mog(model, n, rng) for n in sizes]
        zeta = mog_norm_bound(model.dim, model.sigma2)
        sites, sigma2, clipped = mog_sites(parts, model.sigma2, zeta)
        notes = (f"samples divided by the public bound zeta = 1 + sigma (sqrt(D) + 4) = {zeta:.3g}"
                 + (f"; {clipped} sample(s) clipped to norm zeta" if clipped else ""),)
        return OtdProblem("mog", sites, model.k, zeta, sigma2, model, notes=notes)
    sites = tuple(stm_site_from_words(sample_stm(model, n, rng), model.dim, estimator) for n in sizes)
    return OtdProblem("stm", sites, model.k, truth=model)


def mog_problem(
    values: np.ndarray, k: int, fractions: Sequence[float], rng: np.random.Generator, *,
    sigma2: float | None = None, norm_bound: float | None = None,
) -> OtdProblem:
    """Uploaded MOG samples (N x D, original units) shuffled (``rng``) and split over sites in proportion
    to ``fractions``. ``sigma2`` None estimates sigma^2 as the smallest eigenvalue of the sample
    covariance (Hsu & Kakade 2013; not private, said in the notes). ``norm_bound`` is a public bound B
    (samples longer than B are clipped); None uses the largest sample norm (the paper's preprocessing,
    not private). No ground truth: the non-private result is the reference."""
    x = check_finite_array(values, "samples")
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise InputError("MOG data need at least 2 samples (rows) and 2 features (columns)", "file")
    n, dim = x.shape
    k = check_rank(k, dim)
    fractions = np.asarray(fractions, dtype=float)
    if n < fractions.size:
        raise InputError(f"{n} samples cannot be split over {fractions.size} sites", "file")
    notes: list[str] = []
    if sigma2 is None:
        if dim <= k or n <= dim:
            raise InputError(f"estimating sigma^2 needs D > K and more samples than features (N = {n}, D = {dim}, "
                             f"K = {k}); give sigma^2", "sigma2")
        cov = np.cov(x, rowvar=False)
        sigma2 = max(float(scipy.linalg.eigh(cov, eigvals_only=True, subset_by_index=[0, 0])[0]), 0.0)
        notes.append(f"sigma^2 = {sigma2:.4g} estimated as the smallest eigenvalue of the sample covariance "
                     "(Hsu & Kakade); this estimate is computed from the data and is not differentially private")
    else:
        sigma2 = check_positive(sigma2, "sigma^2", allow_zero=True)
    if norm_bound is None:
        bound = float(np.linalg.norm(x, axis=1).max())
        if bound <= 0:
            raise InputError("all samples are zero", "file")
        notes.append(f"samples divided by their largest norm {bound:.4g} (the paper's preprocessing); this uses the "
                     "data and is not private - give a public norm bound instead")
    else:
        bound = check_positive(norm_bound, "norm bound")
    sizes = sizes_from_fractions(n, fractions)
    order = rng.permutation(n)
    parts = np.split(x[order], np.cumsum(sizes)[:-1])
    sites, sigma2_scaled, clipped = mog_sites(parts, sigma2, bound)
    if clipped:
        notes.append(f"{clipped} sample(s) longer than the norm bound {bound:.4g} were clipped to it")
    notes.append(f"{n:,} samples shuffled and split over {len(sizes)} sites in proportion to the scenario's N_s: "
                 + ", ".join(str(int(v)) for v in sizes))
    return OtdProblem("mog", sites, k, bound, sigma2_scaled, None, notes=tuple(notes))


# ----------------------------------------------------------------------------------------------
# One algorithm, one run
# ----------------------------------------------------------------------------------------------

def _multiplier(eps: float, delta: float, calibration: str) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClassicCalibrationWarning)
        return noise_multiplier(eps, delta, calibration)


def _feasible(design: NoiseDesign, stage: str) -> NoiseDesign:
    if not design.feasible:
        raise InputError(f"no CAPE noise design for the {stage} stage: {design.reason}", "scenario")
    return design


AGN_MODELS = {"mog": ("mog-m2", "mog-m3"), "stm": ("stm-m2", "stm-m3")}


def agn_stage_taus(
    scenario: Scenario, model: str, split: float, *, dim: int, sigma2: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """tau_s of the two capeAGN stages: M2 with budget (split eps_s, split delta_s), M3 with the rest.

    ``model`` is "mog" or "stm" (:data:`AGN_MODELS`); ``sigma2`` is the MOG component variance (M3 only)."""
    model = check_choice(model, "model", tuple(AGN_MODELS))
    split = float(split)
    if not 0.0 < split < 1.0:
        raise InputError(f"the budget split must be in (0, 1) (got {split!r})", "split")
    stat2, stat3 = AGN_MODELS[model]
    if model == "mog" and sigma2 is None:
        raise InputError("the MOG model needs the component variance sigma^2", "sigma2")
    sens2 = scenario.sensitivities(stat2, dim=dim, sigma2=sigma2)
    sens3 = scenario.sensitivities(stat3, dim=dim, sigma2=sigma2)
    tau2 = sens2 * scenario.multipliers(split, split)
    tau3 = sens3 * scenario.multipliers(1.0 - split, 1.0 - split)
    return tau2, tau3


def algorithm_rng(seed: int, run: int, algorithm: str) -> np.random.Generator:
    """The generator of one algorithm in one run: depends on (seed, run, algorithm) only, never on eps,
    delta or N_s, so a sweep reuses the same standard normals at every grid point."""
    code = zlib.crc32(algorithm.encode())
    return np.random.default_rng([int(seed), int(run), code])


def data_rng(seed: int, run: int) -> np.random.Generator:
    """The generator of one run's synthetic data (independent of the algorithms' noise streams)."""
    return np.random.default_rng([int(seed), int(run), 0xDA7A])


def run_algorithm(
    algorithm: str, problem: OtdProblem, scenario: Scenario, settings: OtdSettings, rng: np.random.Generator,
    *, path: str | None = None,
) -> Decomposition:
    """Run one algorithm (:data:`ALGORITHMS`) on ``problem`` with budgets from ``scenario`` (whose N_s must
    be the sites' sample counts). Raises :class:`WhiteningError` when whitening fails."""
    algorithm = check_choice(algorithm, "algorithm", tuple(ALGORITHMS))
    settings = settings.validated()
    if scenario.n_sites != problem.n_sites or np.any(scenario.sizes != problem.sizes):
        raise InputError(f"the scenario's site sizes {scenario.sizes.tolist()} differ from the data's "
                         f"{problem.sizes.tolist()}; use Scenario.with_sizes()", "scenario")
    if path is None:
        path = choose_path(settings.path, problem.dim, problem.k, problem.n_sites, settings.memory_budget).path
    kind, dim, k = problem.kind, problem.dim, problem.k
    if algorithm == "random":
        comps = random_components(kind, dim, k, rng, norm=problem.random_norm,
                                  topic_concentration=settings.topic_concentration)
        weights = rng.dirichlet(np.ones(k))
        return Decomposition(algorithm, comps, weights, np.full(k, np.nan), None, path, "uses no data")
    if algorithm == "avn" and path != "dense":
        raise InputError("AVN needs the dense path (its vector noise has no projected sampler); D = "
                         f"{dim} runs on the projected path. Use a smaller D or drop avn.", "algorithms")
    law = settings.m3_noise if algorithm != "avn" else "published"
    if path == "projected" and law == "published":
        raise InputError("the 'published' third-moment noise needs the dense path", "m3_noise")
    a = settings.eps_split
    m2_stat, m3_stat = AGN_MODELS[kind]
    extra = {"dim": dim, "sigma2": problem.sigma2} if kind == "mog" else {}
    relation = f"{scenario.neighbouring} neighbours, {scenario.calibration} calibration"
    sites = problem.sites
    notes: list[str] = []

    def tpm(tensor: np.ndarray) -> PowerResult:
        return tensor_power_method(tensor, k, rng, n_restarts=settings.n_restarts, n_iter=settings.n_iter)

    if algorithm in ("cape", "conv"):
        mu = scenario.weights()
        tau2, tau3 = agn_stage_taus(scenario, kind, a, dim=dim, sigma2=extra.get("sigma2"))
        if algorithm == "cape":
            names = scenario.names
            if settings.collusion is None:
                stage2 = StageNoise("cape", _feasible(design_general(tau2, mu, None, names=names), "M2"))
                stage3 = StageNoise("cape", _feasible(design_general(tau3, mu, None, names=names), "M3"))
            else:
                c = settings.collusion
                stage2 = StageNoise("cape", _feasible(design_collusion_robust(tau2, mu, c, names=names), "M2"))
                stage3 = StageNoise("cape", _feasible(design_collusion_robust(tau3, mu, c, names=names), "M3"))
            privacy = (f"each site's M2 release is (a eps_s, a delta_s)-DP and its M3 release ((1-a) eps_s, (1-a) "
                       f"delta_s)-DP on its own, a = {a:g}: (eps_s, delta_s) in total ({relation}); tau_c at the "
                       "DP floor of each stage; what colluding parties see jointly is covered by the audit")
            if settings.collusion is not None:
                privacy = (f"each site's M2 release is (a eps_s, a delta_s)-DP and its M3 release ((1-a) eps_s, "
                           f"(1-a) delta_s)-DP, a = {a:g} ({relation}), also against the aggregator with up to "
                           f"{settings.collusion} colluding site(s): collusion-robust design in both stages")
        else:
            stage2, stage3 = StageNoise("independent", stds=tau2), StageNoise("independent", stds=tau3)
            privacy = f"each site adds its own full noise: (eps_s, delta_s)-DP per site ({relation})"
        m2_hat, _ = release_m2(sites, mu, stage2, rng)
        wh = whiten(m2_hat, k)
        m3_tilde, _ = release_m3(sites, mu, wh.w, stage3, rng, path=path, law=law)
        power = tpm(m3_tilde)
    else:
        if algorithm == "local":
            index = int(np.argmax(problem.sizes)) if settings.local_site is None else int(settings.local_site)
            if not 0 <= index < problem.n_sites:
                raise InputError(f"local site must be in 0..{problem.n_sites - 1} (got {index})", "local_site")
            site = sites[index]
            eps, delta = float(scenario.eps[index]), float(scenario.delta[index])
            who = f"site {scenario.names[index]}'s data only"
        else:
            site = pool_sites(sites)
            eps, delta = float(scenario.eps.min()), float(scenario.delta.min())
            who = "pooled data at one trusted party, the strictest site budget"
        n = site.n
        delta2 = sensitivity(m2_stat, n, scenario.neighbouring, **extra)
        delta3 = sensitivity(m3_stat, n, scenario.neighbouring, **extra)
        if algorithm == "nonpriv":
            m2_hat, _ = release_m2([site], np.ones(1), StageNoise("none"), rng)
            wh = whiten(m2_hat, k, noisy=False)
            m3_tilde, _ = release_m3([site], np.ones(1), wh.w, StageNoise("none"), rng, path=path, law=law)
            power = tpm(m3_tilde)
            privacy = "no privacy"
        else:
            delta_stage1 = delta if algorithm == "avn" else a * delta  # AVN's M3 is pure DP (appendix E.2)
            tau2 = delta2 * _multiplier(a * eps, delta_stage1, scenario.calibration)
            m2_hat, _ = release_m2([site], np.ones(1), StageNoise("independent", stds=np.array([tau2])), rng)
            wh = whiten(m2_hat, k)
            if algorithm in ("agn", "local"):
                tau3 = delta3 * _multiplier((1 - a) * eps, (1 - a) * delta, scenario.calibration)
                m3_tilde, _ = release_m3([site], np.ones(1), wh.w, StageNoise("independent", stds=np.array([tau3])),
                                         rng, path=path, law=law)
                power = tpm(m3_tilde)
                privacy = f"{who}: (eps, delta) = ({eps:g}, {delta:g}) split a = {a:g} between M2 and M3 ({relation})"
            elif algorithm == "avn":
                beta = (1 - a) * eps / delta3
                m3_tilde, _ = release_m3([site], np.ones(1), wh.w, StageNoise("avn", beta=beta), rng, path="dense",
                                         law="published")
                power = tpm(m3_tilde)
                privacy = (f"{who}: W is (a eps, delta)-DP by Analyze Gauss, M3 pure ((1-a) eps)-DP by vector noise "
                           f"with beta = (1-a) eps / Delta3 = {beta:.3g}; (eps, delta) = ({eps:g}, {delta:g}) in total "
                           f"({relation})")
            else:  # noisy_tpm
                m3_tilde, _ = release_m3([site], np.ones(1), wh.w, StageNoise("none"), rng, path=path, law=law)
                spectral = float(wh.eigenvalues[-1]) ** -1.5  # ||W||_2^3
                power, budget = noisy_tensor_power_method(
                    m3_tilde, k, rng, eps=(1 - a) * eps, delta=(1 - a) * delta, sensitivity_value=delta3 * spectral,
                    calibration=scenario.calibration, n_restarts=settings.n_restarts, n_iter=settings.n_iter)
                privacy = (f"{who}: W is (a eps, a delta)-DP by Analyze Gauss; the power method is "
                           f"((1-a) eps, (1-a) delta)-DP by advanced composition over {budget.describe()} "
                           f"({relation})")
    comps, weights, rec_notes = recover(wh, power, kind, problem.scale)
    notes.extend(rec_notes)
    return Decomposition(algorithm, comps, weights, power.eigenvalues, wh.eigenvalues, path, privacy, tuple(notes))


# ----------------------------------------------------------------------------------------------
# Many runs, many algorithms
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AlgorithmRun:
    """One algorithm in one run: metrics, or the whitening failure that stopped it."""

    run: int
    algorithm: str
    q_comp: float | None
    weight_error: float | None
    error: str | None = None


@dataclass(frozen=True)
class MetricSummary:
    """Mean and standard deviation (ddof = 1) over the runs that finished; ``failed`` runs stopped at whitening."""

    algorithm: str
    metric: str
    mean: float | None
    std: float | None
    runs: int
    failed: int

    def to_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "metric": self.metric, "mean": self.mean, "std": self.std,
                "runs": self.runs, "failed": self.failed}


@dataclass(frozen=True, eq=False)
class OtdComparison:
    """Everything the CLI and the dashboard show: summaries, per-run records, one example per algorithm."""

    algorithms: tuple[str, ...]
    summaries: tuple[MetricSummary, ...]
    records: tuple[AlgorithmRun, ...]
    path: PathChoice
    reference: str
    reference_components: np.ndarray
    reference_weights: np.ndarray
    examples: dict[str, Decomposition]
    privacy: dict[str, str]
    failures: dict[str, str]
    problem: OtdProblem
    scenario: Scenario
    settings: OtdSettings
    runs: int
    seed: int
    notes: tuple[str, ...] = field(default=())

    def summary(self, algorithm: str, metric: str = "q_comp") -> MetricSummary:
        for s in self.summaries:
            if s.algorithm == algorithm and s.metric == metric:
                return s
        raise KeyError((algorithm, metric))

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [s.to_dict() for s in self.summaries],
            "path": self.path.path,
            "path_reason": self.path.reason,
            "reference": self.reference,
            "model": self.problem.kind,
            "dim": self.problem.dim,
            "k": self.problem.k,
            "sites": self.problem.n_sites,
            "sizes": self.problem.sizes.tolist(),
            "runs": self.runs,
            "seed": self.seed,
            "eps_split": self.settings.eps_split,
            "m3_noise": self.settings.m3_noise,
            "neighbouring": self.scenario.neighbouring,
            "calibration": self.scenario.calibration,
            "privacy": dict(self.privacy),
            "failures": dict(self.failures),
            "notes": list(self.notes),
        }


def _summaries(algorithms: Sequence[str], records: list[AlgorithmRun]) -> tuple[MetricSummary, ...]:
    out = []
    for alg in algorithms:
        mine = [r for r in records if r.algorithm == alg]
        ok = [r for r in mine if r.error is None]
        for metric in METRICS:
            vals = np.array([getattr(r, metric) for r in ok], dtype=float)
            mean = float(vals.mean()) if vals.size else None
            std = float(vals.std(ddof=1)) if vals.size > 1 else (0.0 if vals.size == 1 else None)
            out.append(MetricSummary(alg, metric, mean, std, int(vals.size), len(mine) - len(ok)))
    return tuple(out)


def compare_algorithms(
    scenario: Scenario,
    algorithms: Sequence[str],
    *,
    spec: SyntheticSpec | None = None,
    problem: OtdProblem | None = None,
    runs: int = 10,
    seed: int = 0,
    settings: OtdSettings = OtdSettings(),
    progress: Callable[[float, str], None] | None = None,
) -> OtdComparison:
    """Run ``algorithms`` ``runs`` times and summarise q_comp and the weight error.

    Synthetic (``spec``): one ground truth drawn from ``seed``, fresh samples per run at the scenario's
    N_s, the truth is the reference. Uploaded (``problem``): the same data every run (runs differ in the
    noise), the reference is the non-private result (no ground truth): q_comp is then the distance to it.
    A whitening failure is recorded for that run and algorithm (``failed``), not averaged in."""
    if (spec is None) == (problem is None):
        raise InputError("give either a synthetic model or data, not both")
    algorithms = tuple(dict.fromkeys(algorithms))
    if not algorithms:
        raise InputError(f"choose at least one algorithm ({', '.join(ALGORITHMS)})", "algorithms")
    for alg in algorithms:
        check_choice(alg, "algorithm", tuple(ALGORITHMS))
    runs = check_positive_int(runs, "runs")
    if runs > MAX_RUNS:
        raise InputError(f"runs must be at most {MAX_RUNS} (got {runs})", "runs")
    seed = check_positive_int(seed, "seed", minimum=0)
    settings = settings.validated()
    notes: list[str] = []
    if spec is not None:
        model = spec.model(np.random.default_rng([seed, 0x30DE1]))
        dim, k, n_sites = model.dim, model.k, scenario.n_sites
        scenario_run = scenario
    else:
        model = None
        dim, k, n_sites = problem.dim, problem.k, problem.n_sites
        scenario_run = scenario.with_sizes(problem.sizes)
    choice = choose_path(settings.path, dim, k, n_sites, settings.memory_budget)
    if "avn" in algorithms and choice.path != "dense":
        raise InputError(f"AVN needs the dense path, but D = {dim} runs on the projected path ({choice.reason}). "
                         "Drop avn or use a smaller D.", "algorithms")
    if choice.path == "projected" and settings.m3_noise == "published":
        raise InputError("the 'published' third-moment noise needs the dense path; use 'symmetrized'", "m3_noise")
    notes.extend(scenario_run.caveats())
    records: list[AlgorithmRun] = []
    examples: dict[str, Decomposition] = {}
    privacy: dict[str, str] = {}
    failures: dict[str, str] = {}
    total = runs * len(algorithms)
    done = 0
    reference_components = reference_weights = None
    fixed_reference = None
    if problem is not None:
        reference = "nonprivate"
        notes.extend(problem.notes)
        ref = run_algorithm("nonpriv", problem, scenario_run, settings, np.random.default_rng([seed, 0x4EF]),
                            path=choice.path)
        fixed_reference = ref
        reference_components, reference_weights = ref.components, ref.weights
        if problem.kind == "mog":
            problem = replace(problem, random_norm=float(np.linalg.norm(ref.components, axis=1).mean()))
        notes.append("no ground truth: q_comp is the distance of each result to the non-private result "
                     "(same matching rule), and the weight error is measured against its weights")
    else:
        reference = "truth"
        reference_components, reference_weights = model.components, model.weights
    current = problem
    for run in range(runs):
        if model is not None:
            current = synthetic_problem(model, scenario.sizes, data_rng(seed, run), spec.estimator)
            if run == 0:
                notes.extend(current.notes)
        for alg in algorithms:
            if progress is not None:
                progress(done / total, f"run {run + 1}/{runs}: {LABELS[alg]}")
            rng = algorithm_rng(seed, run, alg)
            try:
                dec = run_algorithm(alg, current, scenario_run, settings, rng, path=choice.path)
            except WhiteningError as exc:
                records.append(AlgorithmRun(run, alg, None, None, str(exc)))
                failures.setdefault(alg, str(exc))
            else:
                qc, we = evaluate(dec.components, dec.weights, reference_components, reference_weights)
                records.append(AlgorithmRun(run, alg, qc, we))
                examples.setdefault(alg, dec)
                privacy.setdefault(alg, dec.privacy)
            done += 1
    if progress is not None:
        progress(1.0, "done")
    if fixed_reference is not None:
        notes.extend(fixed_reference.notes)
    return OtdComparison(
        algorithms, _summaries(algorithms, records), tuple(records), choice, reference,
        np.asarray(reference_components), np.asarray(reference_weights), examples, privacy, failures,
        current, scenario_run, settings, runs, seed, tuple(dict.fromkeys(notes)),
    )
