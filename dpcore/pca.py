"""capePCA (Algorithm 2 of the journal paper) and the PCA baselines of SPEC 6.

Conventions
-----------
* Data are D x N_s matrices X_s with one sample per column and ||x|| <= 1 (see :mod:`dpcore.data`).
  Site s holds A_s = (1/N_s) X_s X_s^T; the pooled second-moment matrix is A = (1/N) X X^T =
  sum_s (N_s / N) A_s.
* A symmetric D x D matrix travels as its D(D+1)/2 unique entries (``dpcore.mechanisms`` colex order):
  noise is drawn for the unique entries and mirrored, so every released matrix and every noise term
  is symmetric by construction (SPEC 9.1).
* Noise is always standard normals scaled by a standard deviation, drawn in a fixed order whose length
  does not depend on eps or delta. Re-seeding the generator therefore reproduces the same underlying
  draws at any privacy level (common random numbers for sweeps): :func:`algorithm_rng` gives every
  (seed, run, algorithm) its own stream.
* numpy's generators are not cryptographically secure: this is a simulation, not a deployment (SPEC 9.9).

Algorithms (:data:`ALGORITHMS`), each ``f(problem, privacy, rng, ...) -> PcaResult``:

* ``cape``: the real message flow. Helper noise E_s (sum_s mu_s E_s = 0), aggregator noise F_s and site
  noise G_s come from a :class:`dpcore.cape.NoiseDesign` (``design_general`` by default, tau_s = Delta_s
  c(eps_s, delta_s)); site s releases A_hat_s = A_s + E_s + F_s + G_s; the aggregator forms
  sum_s mu_s (A_hat_s - F_s) and takes its top-K eigenvectors. Nothing is simulated at the pooled level
  (SPEC 9.7).
* ``pool_ag``: pooled Analyze Gauss: A + symmetric N(0, tau_pool^2) with tau_pool = Delta_pool max_s c(eps_s,
  delta_s), Delta_pool the sensitivity at N (the strictest site's budget, so every site is covered).
* ``nondp``: top-K of A, the optimum.
* ``local``: Analyze Gauss on one site's data with its own tau_s (by default the site with the smallest tau_s).
* ``conv``: each site sends A_s + G_s with G_s ~ N(0, tau_s^2) per unique entry; the aggregator averages
  with the weights mu_s.
* ``dpdis``: DPdisPCA (Imtiaz & Sarwate 2018): each site sends P_s = V_R Lambda_R^(1/2) of its A_s + G_s
  (top-R eigenpairs, negative eigenvalues clipped at 0); top-K of sum_s mu_s P_s P_s^T.
* ``central``: the central-noise scheme of paper 002 (DPDPCA): exact sums X_s X_s^T reach a proxy through
  secure aggregation (additively homomorphic encryption), which adds one symmetric Gaussian draw to the
  pooled sum; same noise level as ``pool_ag``, different trust assumptions (a proxy that does not
  collude with the data user). Data are centred in preprocessing, so the mean-vector share of 002 is
  omitted.

Metrics (SPEC 6): captured energy q = tr(V^T A V) with the pooled non-private A, its ratio to the optimum
tr(V_K^T A V_K), and the subspace distance ||V_K V_K^T - V V^T||_2.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.linalg

from .cape import CapeNoise, NoiseDesign, conventional_std, design_general, sample_noise
from .data import Dataset, Preprocessed, SiteSplit, preprocess, split_sites
from .mechanisms import symmetric_matrix, unique_count_matrix, unique_entries_matrix
from .scenario import Scenario, equal_sites_scenario
from .sensitivity import sensitivity
from .validation import InputError, check_choice, check_positive_int, check_rank

__all__ = [
    "ALGORITHMS",
    "ALGORITHM_TITLES",
    "COMMUNICATION",
    "MAX_PCA_ENTRIES",
    "METRICS",
    "CapeMessages",
    "MetricSummary",
    "PcaComparison",
    "PcaPrivacy",
    "PcaProblem",
    "PcaResult",
    "PcaSetup",
    "align_signs",
    "algorithm_rng",
    "cape_aggregate",
    "cape_messages",
    "cape_pca",
    "captured_energy",
    "central_pca",
    "communication_volume",
    "compare_pca",
    "conv_pca",
    "dpdis_pca",
    "equal_sites_scenario",
    "local_pca",
    "noise_dominance_note",
    "noise_spectral_norm",
    "nondp_pca",
    "pca_privacy",
    "pca_problem",
    "pool_ag_pca",
    "prepare_pca",
    "run_algorithm",
    "scree",
    "subspace_distance",
    "summarise",
    "top_eigenpairs",
]

ALGORITHMS: dict[str, str] = {
    "cape": "capePCA: sites release A_s + E_s + F_s + G_s, the aggregator removes F_s and averages, E cancels",
    "pool_ag": "pooled Analyze Gauss: a trusted curator holds all data and adds one symmetric Gaussian",
    "nondp": "non-private PCA of the pooled second-moment matrix (the optimum)",
    "local": "Analyze Gauss on one site's data only",
    "conv": "conventional: every site adds its full noise tau_s, the aggregator averages",
    "dpdis": "DPdisPCA: every site sends the top-R partial square root of its noisy A_s",
    "central": "central noise (paper 002): exact sums via secure aggregation, one Gaussian draw at the pooled level",
}
ALGORITHM_TITLES: dict[str, str] = {
    "cape": "capePCA", "pool_ag": "pooled AG", "nondp": "non-dp pool", "local": "local", "conv": "conv",
    "dpdis": "DPdisPCA", "central": "central (DPDPCA)",
}
METRICS: dict[str, str] = {
    "captured_energy": "q_CE = tr(V^T A V), A the pooled non-private second-moment matrix",
    "captured_energy_ratio": "q_CE / q_CE(non-dp pool); 1 is optimal",
    "subspace_distance": "||V_K V_K^T - V V^T||_2 (0 = the true subspace, 1 = an orthogonal direction)",
}
COMMUNICATION: dict[str, str] = {
    "cape": "3 S D^2: helper -> site E_s, aggregator -> site F_s, site -> aggregator A_hat_s",
    "pool_ag": "S D^2: every site gives its A_s to a trusted curator",
    "nondp": "S D^2: every site gives its A_s to a trusted curator",
    "local": "0: one site works alone",
    "conv": "S D^2: site -> aggregator A_s + G_s",
    "dpdis": "S D R: site -> aggregator P_s (D x R)",
    "central": "S (D^2 + D + 1) + D^2 + D: encrypted shares (sum, mean vector, count) to the proxy, noisy sums to "
    "the data user",
}
MAX_PCA_ENTRIES = 8_000_000
"""Largest S x D(D+1)/2 (numbers in one noise term across sites): about 64 MB per array."""


# ----------------------------------------------------------------------------------------------
# Problem and privacy set-up
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PcaProblem:
    """The data side of a PCA comparison, computed once and reused by every run and eps.

    ``site_moments`` (S, D(D+1)/2) holds the unique entries of A_s = X_s X_s^T / N_s; ``pooled`` is the D x D
    pooled A; ``eigenvalues`` all eigenvalues of A (descending); ``top_vectors`` V_K(A) (D x K).
    ``solver_dtype`` is the precision of the eigen-decompositions of the noisy matrices (float64; float32 is about
    twice as fast and its rounding, about 1e-7 ||A||, is far below any DP noise; the sweeps use it).
    """

    site_moments: np.ndarray
    sizes: np.ndarray
    dim: int
    k: int
    pooled_unique: np.ndarray
    pooled: np.ndarray
    eigenvalues: np.ndarray
    top_vectors: np.ndarray
    solver_dtype: str = "float64"

    @property
    def n_sites(self) -> int:
        return int(self.sizes.size)

    @property
    def total_n(self) -> int:
        return int(self.sizes.sum())

    @property
    def optimal_energy(self) -> float:
        """tr(V_K^T A V_K) = sum of the K largest eigenvalues of A."""
        return float(self.eigenvalues[: self.k].sum())

    def site_matrix(self, site: int) -> np.ndarray:
        return symmetric_matrix(self.site_moments[site], self.dim)


def pca_problem(sites: Sequence[np.ndarray], k: int) -> PcaProblem:
    """Site second-moment matrices, the pooled A and its eigen-decomposition for top-``k`` PCA.

    Every site is a D x N_s array (samples as columns) with ||x|| <= 1: the sensitivities assume it.
    """
    if len(sites) == 0:
        raise InputError("need at least one site", "sites")
    arrays = [np.asarray(x, dtype=float) for x in sites]
    dim = arrays[0].shape[0] if arrays[0].ndim == 2 else 0
    for s, x in enumerate(arrays):
        if x.ndim != 2 or x.shape[1] < 1 or x.shape[0] != dim:
            raise InputError(f"site {s + 1}: data must be a D x N_s matrix with D = {dim} and N_s >= 1 "
                             f"(got shape {x.shape})", "sites")
        if not np.all(np.isfinite(x)):
            raise InputError(f"site {s + 1}: data contain NaN or infinite values", "sites")
        largest = float(np.linalg.norm(x, axis=0).max())
        if largest > 1.0 + 1e-9:
            raise InputError(f"site {s + 1}: a sample has norm {largest:.4g} > 1; the sensitivities assume "
                             "||x|| <= 1, so preprocess (max-norm or clip) first", "sites")
    if dim < 2:
        raise InputError("PCA needs at least D = 2 features", "D")
    k = check_rank(k, dim)
    n_unique = unique_count_matrix(dim)
    if len(arrays) * n_unique > MAX_PCA_ENTRIES:
        raise InputError(
            f"S x D(D+1)/2 = {len(arrays)} x {n_unique:,} = {len(arrays) * n_unique:,} numbers per noise term is more "
            f"than the {MAX_PCA_ENTRIES:,} this tool keeps in memory; use fewer sites or fewer features", "sites"
        )
    sizes = np.array([x.shape[1] for x in arrays], dtype=int)
    moments = np.empty((len(arrays), n_unique))
    pooled = np.zeros((dim, dim))
    for s, x in enumerate(arrays):
        scatter = x @ x.T
        pooled += scatter
        moments[s] = unique_entries_matrix(scatter / sizes[s])
    pooled /= sizes.sum()
    pooled = (pooled + pooled.T) / 2
    eigenvalues, vectors = scipy.linalg.eigh(pooled)
    order = np.argsort(eigenvalues)[::-1]
    eigenvalues = eigenvalues[order]
    top = np.ascontiguousarray(vectors[:, order[:k]])
    for arr in (moments, pooled, eigenvalues, top, sizes):
        arr.setflags(write=False)
    pooled_unique = unique_entries_matrix(pooled)
    pooled_unique.setflags(write=False)
    return PcaProblem(moments, sizes, dim, k, pooled_unique, pooled, eigenvalues, top)


@dataclass(frozen=True)
class PcaPrivacy:
    """The privacy side: per-site tau_s, weights mu_s, the CAPE design and the pooled noise level.

    tau_s = Delta_s c(eps_s, delta_s) with Delta_s the PCA sensitivity at N_s under the scenario's relation;
    ``pooled_std`` = Delta(N) max_s c(eps_s, delta_s) is the noise of a trusted curator who must honour every
    site's budget (equal to the CAPE output std tau_c for weights N_s/N and the default tau_c).
    """

    scenario: Scenario
    tau: np.ndarray
    weights: np.ndarray
    design: NoiseDesign
    pooled_std: float
    notes: tuple[str, ...] = field(default=())

    @property
    def conventional_std(self) -> float:
        return conventional_std(self.weights, self.tau)


def pca_privacy(scenario: Scenario, design: NoiseDesign | None = None) -> PcaPrivacy:
    """Budgets of a scenario for PCA: tau_s = scenario.sensitivities("pca") * scenario.multipliers() and the
    CAPE noise design (``design_general`` with the scenario's weights and tau_c unless ``design`` is given)."""
    tau = scenario.taus("pca")
    weights = scenario.weights()
    if design is None:
        design = design_general(tau, weights, scenario.tau_c, names=scenario.names)
    elif design.n_sites != scenario.n_sites or not np.allclose(design.tau, tau):
        raise InputError("the noise design was made for other sites or budgets than this scenario", "design")
    if not design.feasible:
        raise InputError(f"no feasible CAPE noise design for this scenario: {design.reason}", "design")
    pooled_std = sensitivity("pca", scenario.total_n, scenario.neighbouring) * float(scenario.multipliers().max())
    notes = tuple(scenario.caveats()) + tuple(design.notes)
    return PcaPrivacy(scenario, tau, weights, design, pooled_std, notes)


def _check_pair(problem: PcaProblem, privacy: PcaPrivacy) -> None:
    sizes = privacy.scenario.sizes
    if sizes.size != problem.n_sites or np.any(sizes != problem.sizes):
        raise InputError(f"the scenario's site sizes {sizes.tolist()} do not match the data's {problem.sizes.tolist()}",
                         "sites")


# ----------------------------------------------------------------------------------------------
# Linear algebra and metrics
# ----------------------------------------------------------------------------------------------

def top_eigenpairs(matrix: np.ndarray, k: int, *, overwrite: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The k largest eigenvalues (descending) and eigenvectors (D x k) of a symmetric matrix, by the partial
    solver scipy.linalg.eigh(subset_by_index=[D-k, D-1]), reading the lower triangle only; ``overwrite`` lets
    LAPACK destroy ``matrix``.
    Every eigen-decomposition in this module goes through here (the benchmark times it)."""
    dim = matrix.shape[0]
    values, vectors = scipy.linalg.eigh(matrix, lower=True, subset_by_index=[dim - k, dim - 1], check_finite=False,
                                        overwrite_a=overwrite)
    return values[::-1], np.ascontiguousarray(vectors[:, ::-1])


def captured_energy(pooled: np.ndarray, subspace: np.ndarray) -> float:
    """q_CE = tr(V^T A V)."""
    return float(np.sum((pooled @ subspace) * subspace))


def subspace_distance(v1: np.ndarray, v2: np.ndarray) -> float:
    """||V1 V1^T - V2 V2^T||_2 for orthonormal D x K bases: the sine of the largest principal angle, computed
    as the largest singular value of (I - V1 V1^T) V2 (accurate for small angles too)."""
    if v1.shape != v2.shape:
        raise InputError(f"subspaces of different shapes {v1.shape} and {v2.shape}")
    residual = v2 - v1 @ (v1.T @ v2)
    return min(1.0, float(np.linalg.svd(residual, compute_uv=False).max()))


def communication_volume(algorithm: str, n_sites: int, dim: int, rank: int | None = None) -> int:
    """Numbers sent by one run (:data:`COMMUNICATION`); a D x D matrix counts D^2 as in the paper (a symmetric
    one could travel as D(D+1)/2)."""
    algorithm = check_choice(algorithm, "algorithm", tuple(ALGORITHMS))
    s, d = n_sites, dim
    if algorithm == "cape":
        return 3 * s * d * d
    if algorithm in ("pool_ag", "nondp", "conv"):
        return s * d * d
    if algorithm == "local":
        return 0
    if algorithm == "dpdis":
        return s * d * (rank if rank is not None else 0)
    return s * (d * d + d + 1) + d * d + d


@dataclass(frozen=True)
class PcaResult:
    """One run of one algorithm: the subspace V (D x K), the top-K eigenvalues of the matrix it decomposed,
    the metrics, the numbers sent, and the std of the noise per unique entry of the decomposed matrix
    (None when the noise is not additive, as in DPdisPCA). ``matrix`` is kept only on request."""

    algorithm: str
    subspace: np.ndarray
    eigenvalues: np.ndarray
    captured_energy: float
    captured_energy_ratio: float
    subspace_distance: float
    communication: int
    noise_std: float | None
    matrix: np.ndarray | None = None

    def metric(self, name: str) -> float:
        return float(getattr(self, check_choice(name, "metric", tuple(METRICS))))


def _result(algorithm: str, problem: PcaProblem, values: np.ndarray, vectors: np.ndarray, communication: int,
            noise_std: float | None, matrix: np.ndarray | None) -> PcaResult:
    energy = captured_energy(problem.pooled, vectors)
    optimum = problem.optimal_energy
    ratio = energy / optimum if optimum > 0 else float("nan")
    return PcaResult(algorithm, vectors, values, energy, ratio, subspace_distance(problem.top_vectors, vectors),
                     communication, noise_std, matrix)


@lru_cache(maxsize=4)
def _lower_positions(dim: int) -> np.ndarray:
    """Flat positions of the lower triangle in row-major order, which is the colex order of the unique entries
    (entry (i, j), i <= j, sits at j(j+1)/2 + i, row j of the lower triangle)."""
    rows, cols = np.tril_indices(dim)
    positions = rows * dim + cols
    positions.setflags(write=False)
    return positions


def _lower_matrix(unique: np.ndarray, dim: int, dtype: str = "float64") -> np.ndarray:
    """The symmetric matrix with these unique entries, stored in its lower triangle only (the upper triangle is
    left unset): what LAPACK's symmetric eigensolvers read. Three times faster than mirroring."""
    matrix = np.empty((dim, dim), dtype=dtype)
    matrix.ravel()[_lower_positions(dim)] = unique
    return matrix


def _decompose(algorithm: str, problem: PcaProblem, unique: np.ndarray, communication: int, noise_std: float | None,
               keep_matrix: bool) -> PcaResult:
    if keep_matrix:
        matrix = symmetric_matrix(unique, problem.dim)
        values, vectors = top_eigenpairs(matrix, problem.k)
    else:
        matrix = None
        values, vectors = top_eigenpairs(_lower_matrix(unique, problem.dim, problem.solver_dtype), problem.k,
                                         overwrite=True)
    return _result(algorithm, problem, values, vectors, communication, noise_std, matrix)


# ----------------------------------------------------------------------------------------------
# capePCA: the message flow
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CapeMessages:
    """Everything that travels in one capePCA run, as unique entries (S, D(D+1)/2): the helper's e_s, the
    aggregator's f_s, the sites' own g_s and the releases a_hat_s = a_s + e_s + f_s + g_s."""

    e: np.ndarray
    f: np.ndarray
    g: np.ndarray
    released: np.ndarray

    def matrices(self, name: str, dim: int) -> np.ndarray:
        """(S, D, D) symmetric matrices of one term ('e', 'f', 'g' or 'released')."""
        return symmetric_matrix(getattr(self, check_choice(name, "term", ("e", "f", "g", "released"))), dim)


def cape_messages(site_moments: np.ndarray, design: NoiseDesign, rng: np.random.Generator) -> CapeMessages:
    """Sites' releases: a_hat_s = a_s + e_s + f_s + g_s per unique entry, noise from ``sample_noise(design)``
    (standard normals in the fixed order e, f, g, scaled by the design)."""
    if design.n_sites != site_moments.shape[0]:
        raise InputError(f"the design has {design.n_sites} sites, the data {site_moments.shape[0]}", "design")
    noise: CapeNoise = sample_noise(design, rng, site_moments.shape[1])
    released = site_moments + noise.e
    released += noise.f
    released += noise.g
    return CapeMessages(noise.e, noise.f, noise.g, released)


def cape_aggregate(released: np.ndarray, f: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The aggregator's estimate sum_s mu_s (a_hat_s - f_s) (unique entries); the helper noise cancels because
    sum_s mu_s e_s = 0."""
    return np.asarray(weights, dtype=float) @ (released - f)


def cape_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
             keep_matrix: bool = False) -> PcaResult:
    """capePCA (Algorithm 2, generalized weights of SPEC 4): the real site -> aggregator message flow."""
    _check_pair(problem, privacy)
    messages = cape_messages(problem.site_moments, privacy.design, rng)
    estimate = cape_aggregate(messages.released, messages.f, privacy.design.weights)
    return _decompose("cape", problem, estimate, communication_volume("cape", problem.n_sites, problem.dim),
                      privacy.design.output_std, keep_matrix)


# ----------------------------------------------------------------------------------------------
# Baselines
# ----------------------------------------------------------------------------------------------

def nondp_pca(problem: PcaProblem, privacy: PcaPrivacy | None = None, rng: np.random.Generator | None = None, *,
              keep_matrix: bool = False) -> PcaResult:
    """Non-private top-K of the pooled A (draws nothing)."""
    return _result("nondp", problem, problem.eigenvalues[: problem.k].copy(), problem.top_vectors.copy(),
                   communication_volume("nondp", problem.n_sites, problem.dim), 0.0,
                   problem.pooled.copy() if keep_matrix else None)


def pool_ag_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
                keep_matrix: bool = False) -> PcaResult:
    """Analyze Gauss on pooled data: A + symmetric noise with std ``privacy.pooled_std`` per unique entry."""
    _check_pair(problem, privacy)
    z = rng.standard_normal(problem.pooled_unique.size)
    return _decompose("pool_ag", problem, problem.pooled_unique + privacy.pooled_std * z,
                      communication_volume("pool_ag", problem.n_sites, problem.dim), privacy.pooled_std, keep_matrix)


def _default_local_site(privacy: PcaPrivacy) -> int:
    return int(np.argmin(privacy.tau))


def local_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *, site: int | None = None,
              keep_matrix: bool = False) -> PcaResult:
    """Analyze Gauss on one site's data (default: the site with the smallest tau_s, the first on ties)."""
    _check_pair(problem, privacy)
    site = _default_local_site(privacy) if site is None else int(site)
    if not 0 <= site < problem.n_sites:
        raise InputError(f"local site must be in 0..{problem.n_sites - 1} (got {site})", "site")
    z = rng.standard_normal(problem.pooled_unique.size)
    tau = float(privacy.tau[site])
    return _decompose("local", problem, problem.site_moments[site] + tau * z, 0, tau, keep_matrix)


def _conventional_releases(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator) -> np.ndarray:
    z = rng.standard_normal(problem.site_moments.shape)
    z *= privacy.tau[:, None]
    z += problem.site_moments
    return z


def conv_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
             keep_matrix: bool = False) -> PcaResult:
    """Conventional scheme: site releases A_s + G_s with std tau_s, aggregator sum_s mu_s (A_s + G_s)."""
    _check_pair(problem, privacy)
    releases = _conventional_releases(problem, privacy, rng)
    return _decompose("conv", problem, privacy.weights @ releases,
                      communication_volume("conv", problem.n_sites, problem.dim), privacy.conventional_std,
                      keep_matrix)


def dpdis_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *, rank: int | None = None,
              keep_matrix: bool = False) -> PcaResult:
    """DPdisPCA: P_s = V_R(A_hat_s) Lambda_R^(1/2) (negative eigenvalues clipped), top-K of sum mu_s P_s P_s^T.
    ``rank`` R defaults to K and must satisfy K <= R <= D."""
    _check_pair(problem, privacy)
    rank = problem.k if rank is None else check_positive_int(rank, "R")
    if not problem.k <= rank <= problem.dim:
        raise InputError(f"DPdisPCA rank R must satisfy K = {problem.k} <= R <= D = {problem.dim} (got {rank})", "R")
    releases = _conventional_releases(problem, privacy, rng)
    parts = []
    for s in range(problem.n_sites):
        values, vectors = top_eigenpairs(_lower_matrix(releases[s], problem.dim, problem.solver_dtype), rank,
                                         overwrite=True)
        parts.append(vectors * np.sqrt(np.clip(values, 0.0, None) * privacy.weights[s])[None, :])
    stacked = np.concatenate(parts, axis=1)
    matrix = stacked @ stacked.T
    values, vectors = top_eigenpairs(matrix, problem.k)
    return _result("dpdis", problem, values, vectors, communication_volume("dpdis", problem.n_sites, problem.dim, rank),
                   None, matrix if keep_matrix else None)


def central_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
                keep_matrix: bool = False) -> PcaResult:
    """Central noise (paper 002): sum_s X_s X_s^T through secure aggregation, one symmetric Gaussian with std
    N tau_pool added to the sum by the proxy, divided by N by the data user."""
    _check_pair(problem, privacy)
    total = problem.total_n
    secure_sum = problem.sizes.astype(float) @ problem.site_moments  # sum_s X_s X_s^T, unique entries
    z = rng.standard_normal(secure_sum.size)
    noisy_sum = secure_sum + (total * privacy.pooled_std) * z
    return _decompose("central", problem, noisy_sum / total,
                      communication_volume("central", problem.n_sites, problem.dim), privacy.pooled_std, keep_matrix)


_RUNNERS: dict[str, Callable[..., PcaResult]] = {
    "cape": cape_pca, "pool_ag": pool_ag_pca, "nondp": nondp_pca, "local": local_pca, "conv": conv_pca,
    "dpdis": dpdis_pca, "central": central_pca,
}


def run_algorithm(algorithm: str, problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
                  rank: int | None = None, local_site: int | None = None, keep_matrix: bool = False) -> PcaResult:
    """Run one algorithm by name (:data:`ALGORITHMS`)."""
    algorithm = check_choice(algorithm, "algorithm", tuple(ALGORITHMS))
    options: dict[str, Any] = {"keep_matrix": keep_matrix}
    if algorithm == "dpdis":
        options["rank"] = rank
    if algorithm == "local":
        options["site"] = local_site
    return _RUNNERS[algorithm](problem, privacy, rng, **options)


def algorithm_rng(seed: int, run: int, algorithm: str) -> np.random.Generator:
    """The generator of one (seed, run, algorithm): SFC64 seeded by SeedSequence([seed, run, index]).
    The streams do not depend on eps, delta or on which other algorithms run, so a sweep over eps reuses the
    same standard normals (common random numbers). SFC64 is used because it draws normals about 15% faster
    than the default PCG64; neither is cryptographically secure."""
    algorithm = check_choice(algorithm, "algorithm", tuple(ALGORITHMS))
    sequence = np.random.SeedSequence([int(seed), int(run), list(ALGORITHMS).index(algorithm)])
    return np.random.Generator(np.random.SFC64(sequence))


# ----------------------------------------------------------------------------------------------
# Comparison over runs
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MetricSummary:
    """Mean and standard deviation (ddof = 1; 0 for a single run) of one metric of one algorithm."""

    algorithm: str
    metric: str
    mean: float
    std: float
    runs: int

    def to_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "metric": self.metric, "mean": self.mean, "std": self.std,
                "runs": self.runs}


@dataclass(frozen=True)
class PcaComparison:
    """Every run of every algorithm, the summary table, the communication volumes and notes."""

    results: dict[str, list[PcaResult]]
    summary: list[MetricSummary]
    communication: dict[str, int]
    notes: tuple[str, ...]
    seconds: float

    def records(self) -> list[dict[str, Any]]:
        return [m.to_dict() for m in self.summary]

    def summary_csv(self) -> str:
        """The summary (algorithm, metric, mean, std, runs) as CSV text."""
        return _csv(["algorithm", "metric", "mean", "std", "runs"], [m.to_dict() for m in self.summary])

    def runs_csv(self) -> str:
        """One row per (algorithm, run) as CSV text."""
        return _csv(["algorithm", "run", *METRICS, "numbers_sent"], self.runs_table())

    def runs_table(self) -> list[dict[str, Any]]:
        """One row per (algorithm, run) with every metric: the CSV the dashboard offers."""
        rows = []
        for algorithm, results in self.results.items():
            for run, r in enumerate(results):
                rows.append({"algorithm": algorithm, "run": run, **{m: r.metric(m) for m in METRICS},
                             "numbers_sent": r.communication})
        return rows


def _csv(headers: list[str], rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=headers, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})
    return buffer.getvalue()


def align_signs(reference: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Flip each column of ``vectors`` so that it has a non-negative inner product with the same column of
    ``reference`` (eigenvectors are defined up to sign; for pictures of true vs private components)."""
    count = min(reference.shape[1], vectors.shape[1])
    signs = np.sign(np.sum(reference[:, :count] * vectors[:, :count], axis=0))
    signs[signs == 0] = 1.0
    out = np.array(vectors[:, :count], dtype=float)
    return out * signs[None, :]


def summarise(results: dict[str, list[PcaResult]]) -> list[MetricSummary]:
    """Mean and std over runs of every metric (:data:`METRICS`) for every algorithm."""
    out = []
    for algorithm, runs in results.items():
        for metric in METRICS:
            values = np.array([r.metric(metric) for r in runs], dtype=float)
            std = float(values.std(ddof=1)) if values.size > 1 else 0.0
            out.append(MetricSummary(algorithm, metric, float(values.mean()), std, int(values.size)))
    return out


def compare_pca(problem: PcaProblem, privacy: PcaPrivacy, algorithms: Sequence[str] = tuple(ALGORITHMS),
                runs: int = 10, seed: int = 0, *, rank: int | None = None, local_site: int | None = None,
                keep_first_matrix: bool = False,
                progress: Callable[[int, int, str], None] | None = None) -> PcaComparison:
    """Run every algorithm ``runs`` times with :func:`algorithm_rng` (seed, run, algorithm) streams.
    ``progress(done, total, label)`` is called after each run of each algorithm; ``keep_first_matrix`` keeps
    the decomposed matrix of run 0 (for the scree plot)."""
    algorithms = list(dict.fromkeys(algorithms))
    if not algorithms:
        raise InputError("choose at least one algorithm", "algorithms")
    for a in algorithms:
        check_choice(a, "algorithm", tuple(ALGORITHMS))
    runs = check_positive_int(runs, "runs")
    _check_pair(problem, privacy)
    if "dpdis" in algorithms and rank is not None and not problem.k <= rank <= problem.dim:
        raise InputError(f"DPdisPCA rank R must satisfy K = {problem.k} <= R <= D = {problem.dim} (got {rank})", "R")
    start = time.perf_counter()
    results: dict[str, list[PcaResult]] = {a: [] for a in algorithms}
    total = runs * len(algorithms)
    done = 0
    for run in range(runs):
        for algorithm in algorithms:
            result = run_algorithm(algorithm, problem, privacy, algorithm_rng(seed, run, algorithm), rank=rank,
                                   local_site=local_site, keep_matrix=keep_first_matrix and run == 0)
            results[algorithm].append(result)
            done += 1
            if progress is not None:
                progress(done, total, f"run {run + 1}/{runs}: {ALGORITHM_TITLES[algorithm]}")
    communication = {a: results[a][0].communication for a in algorithms}
    notes = list(privacy.notes)
    if "local" in algorithms:
        site = _default_local_site(privacy) if local_site is None else local_site
        notes.append(f"local uses site {privacy.scenario.names[site]} (N_s = {problem.sizes[site]:,})")
    return PcaComparison(results, summarise(results), communication, tuple(notes), time.perf_counter() - start)


def scree(problem: PcaProblem, matrix: np.ndarray, count: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` (default: all) largest eigenvalues of the true A and of a noisy estimate, descending."""
    count = problem.dim if count is None else min(check_positive_int(count, "count"), problem.dim)
    noisy = np.sort(scipy.linalg.eigvalsh(matrix, check_finite=False))[::-1]
    return problem.eigenvalues[:count].copy(), noisy[:count]


def noise_spectral_norm(dim: int, std: float) -> float:
    """About 2 sqrt(D) std: the spectral norm of a D x D symmetric matrix with i.i.d. N(0, std^2) unique
    entries (the edge of Wigner's semicircle), for large D."""
    return 2.0 * float(np.sqrt(dim)) * float(std)


def noise_dominance_note(problem: PcaProblem, privacy: PcaPrivacy) -> str | None:
    """A warning when the CAPE (= pooled) noise is expected to swamp the K-th eigenvalue of A, i.e.
    2 sqrt(D) tau_c > lambda_K(A): then even capePCA recovers little, and the baselines less."""
    edge = noise_spectral_norm(problem.dim, privacy.design.output_std)
    lambda_k = float(problem.eigenvalues[problem.k - 1])
    if edge <= lambda_k:
        return None
    return (f"the aggregate's noise has spectral norm about 2 sqrt(D) tau_c = {edge:.3g}, more than the K-th "
            f"eigenvalue of A ({lambda_k:.3g}): at this budget the private top-{problem.k} directions are mostly "
            "noise for every algorithm. Raise eps or N_s, lower K, or use fewer features.")


# ----------------------------------------------------------------------------------------------
# From a data set and a scenario to a ready problem
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PcaSetup:
    """What :func:`prepare_pca` did: preprocessing, the split into the scenario's sites, problem and privacy."""

    dataset: Dataset
    preprocessed: Preprocessed
    split: SiteSplit
    problem: PcaProblem
    privacy: PcaPrivacy
    notes: tuple[str, ...]


def prepare_pca(dataset: Dataset, scenario: Scenario, k: int, *, preprocessing: str = "max-norm", scale: float = 1.0,
                by_label: bool = False, allow_replacement: bool = True, seed: int = 0,
                design: NoiseDesign | None = None) -> PcaSetup:
    """Preprocess ``dataset`` (centre, then max-norm or clip; not private), deal its samples to the scenario's
    sites (sizes N_s; shuffled with ``default_rng([seed, 1])``; with replacement when needed, flagged), and build
    the :class:`PcaProblem` and :class:`PcaPrivacy`."""
    k = check_rank(k, dataset.dim)
    prepared = preprocess(dataset.x, preprocessing, scale=scale)
    split = split_sites(prepared.x, scenario.sizes, np.random.default_rng([int(seed), 1]), labels=dataset.labels,
                        by_label=by_label, allow_replacement=allow_replacement)
    problem = pca_problem(split.sites, k)
    privacy = pca_privacy(scenario, design)
    notes = [f"preprocessing: {prepared.note}"]
    if split.message:
        notes.append(split.message)
    crowded = noise_dominance_note(problem, privacy)
    if crowded:
        notes.append(crowded)
    return PcaSetup(dataset, prepared, split, problem, privacy, tuple(notes) + privacy.notes)
