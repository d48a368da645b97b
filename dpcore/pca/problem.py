"""The two sides of a PCA comparison: the data (:class:`PcaProblem`) and the privacy set-up (:class:`PcaPrivacy`)
(docs/math/capepca.md).

Data are D x N_s matrices X_s with one sample per column and ||x|| <= 1 (see :mod:`dpcore.data`). Site s holds
A_s = (1/N_s) X_s X_s^T; the pooled second-moment matrix is A = (1/N) X X^T = sum_s (N_s / N) A_s. A symmetric
D x D matrix travels as its D(D+1)/2 unique entries (:mod:`dpcore.privacy.symmetric`, colex order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from .. import linalg
from ..cape import NoiseDesign, conventional_std, scenario_budgets, solve_general
from ..limits import MAX_PCA_ENTRIES
from ..privacy.sensitivity import sensitivity_unchecked
from ..privacy.symmetric import symmetric_matrix, unique_count_matrix, unique_entries_matrix
from ..scenario import Scenario
from ..validation import InputError, check_choice, check_positive_int, check_rank

__all__ = ["PcaPrivacy", "PcaProblem", "check_pair", "pca_privacy", "pca_problem", "site_moment"]
__all__ = ["SOLVER_DTYPES", "PcaPrivacy", "PcaProblem", "check_pair", "pca_privacy", "pca_problem",
           "scatter_problem"]

SOLVER_DTYPES = ("float32", "float64")
"""Precisions of the eigen-decompositions of the noisy matrices."""


@dataclass(frozen=True, kw_only=True)
class PcaProblem:
    """The data side of a PCA comparison, computed once and reused by every run and eps.

    ``site_moments`` (S, D(D+1)/2) holds the unique entries of A_s = X_s X_s^T / N_s; ``pooled`` is the D x D
    pooled A; ``eigenvalues`` all eigenvalues of A (descending); ``top_vectors`` V_K(A) (D x K).
    ``solver_dtype`` is the precision of the eigen-decompositions of the noisy matrices: float32 (default; about
    1.5 to 2 times faster) or float64. The float32 error is bounded in docs/math/capepca.md ("Precision of the
    eigensolver"): eigenvalues within 4 sqrt(D) eps32 ||M||_2, captured energy within 2 K ||A||_2 times that over
    the eigengap, orders of magnitude below the DP noise; tests/test_pca.py checks both bounds.
    """

    site_moments: np.ndarray
    sizes: np.ndarray
    dim: int
    k: int
    pooled_unique: np.ndarray
    pooled: np.ndarray
    eigenvalues: np.ndarray
    top_vectors: np.ndarray
    solver_dtype: str = "float32"

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


def site_moment(x: np.ndarray, scatter: np.ndarray | None = None) -> np.ndarray:
    """Unique entries of site s's A_s = (1/N_s) X_s X_s^T for samples as the columns of ``x`` (D x N_s,
    ||x|| <= 1); ``scatter`` is X_s X_s^T when already computed. What a capePCA site releases (plus noise)."""
    if scatter is None:
        scatter = x @ x.T
    return unique_entries_matrix(scatter / x.shape[1])


def pca_problem(sites: Sequence[np.ndarray], k: int, *, solver_dtype: str = "float32") -> PcaProblem:
    """Site second-moment matrices, the pooled A and its eigen-decomposition for top-``k`` PCA (in float64), and the
    precision of the noisy matrices' eigen-decompositions (``solver_dtype``: float32 or float64).

    Every site is a D x N_s array (samples as columns) with ||x|| <= 1: the sensitivities assume it.
    """
    solver_dtype = check_choice(solver_dtype, "solver precision", SOLVER_DTYPES)
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
        moments[s] = site_moment(x, scatter)
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
    return PcaProblem(site_moments=moments, sizes=sizes, dim=dim, k=k, pooled_unique=pooled_unique, pooled=pooled,
                      eigenvalues=eigenvalues, top_vectors=top, solver_dtype=solver_dtype)


def scatter_problem(pooled: np.ndarray, n: int, k: int, solver_dtype: str = "float32", *,
                    top_only: bool = False, lanczos_above: int | None = None) -> PcaProblem:
    """The one-site problem of a pooled A = X X^T / N given directly (D x D, samples of norm <= 1; the planner's
    simulated studies, whose scatter is formed in float32): as :func:`pca_problem` makes it from the samples. With
    ``top_only`` its ``eigenvalues`` are the K largest only (what the captured energy and the planner's grid read;
    the subset eigensolver is several times faster at D = 784), by Lanczos above D = ``lanczos_above``
    (:func:`dpcore.linalg.top_eigenpairs`: eigenvalues accurate to second order, 6 ms against 28 ms at D = 784)."""
    solver_dtype = check_choice(solver_dtype, "solver precision", SOLVER_DTYPES)
    pooled = (np.asarray(pooled, dtype=float) + np.asarray(pooled, dtype=float).T) / 2
    dim = pooled.shape[0]
    k = check_rank(k, dim)
    subset = [dim - k, dim - 1] if top_only else None
    if top_only and lanczos_above is not None and dim > lanczos_above:
        eigenvalues, vectors = linalg.top_eigenpairs(pooled, k, lanczos_above=lanczos_above)
    else:
        eigenvalues, vectors = scipy.linalg.eigh(pooled, subset_by_index=subset)
    order = np.argsort(eigenvalues)[::-1]
    eigenvalues = eigenvalues[order]
    top = np.ascontiguousarray(vectors[:, order[:k]])
    pooled_unique = unique_entries_matrix(pooled)
    sizes = np.array([int(n)])
    moments = pooled_unique[None, :].copy()
    for arr in (moments, pooled, eigenvalues, top, sizes, pooled_unique):
        arr.setflags(write=False)
    return PcaProblem(site_moments=moments, sizes=sizes, dim=dim, k=k, pooled_unique=pooled_unique, pooled=pooled,
                      eigenvalues=eigenvalues, top_vectors=top, solver_dtype=solver_dtype)


@dataclass(frozen=True, kw_only=True)
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
    dim: int | None = None
    """D of the data when known (:func:`~dpcore.pca.setup.prepare_pca` sets it): the discrete design's scale and
    guarantee depend on the D (D + 1) / 2 entries of a release (docs/math/discrete.md)."""

    @property
    def conventional_std(self) -> float:
        return conventional_std(self.weights, self.tau)


def pca_privacy(scenario: Scenario, design: NoiseDesign | None = None, *, dim: int | None = None) -> PcaPrivacy:
    """Budgets of a scenario for PCA: tau_s = scenario.sensitivities("pca") * scenario.multipliers() and the
    CAPE noise design (``design_general`` with the scenario's weights and tau_c unless ``design`` is given); ``dim``:
    D of the data (:attr:`PcaPrivacy.dim`), which the discrete design's guarantee needs."""
    tau = scenario.taus("pca")
    weights = scenario.weights()
    if design is None:
        design = solve_general(scenario_budgets(scenario, tau), scenario.tau_c)
    elif design.n_sites != scenario.n_sites or not np.allclose(design.tau, tau):
        raise InputError("the noise design was made for other sites or budgets than this scenario", "design")
    if not design.feasible:
        raise InputError(f"no feasible CAPE noise design for this scenario: {design.reason}", "design")
    pooled_std = sensitivity_unchecked("pca", scenario.total_n, scenario.neighbouring) * float(
        scenario.multipliers().max())
    notes = tuple(scenario.caveats()) + tuple(design.notes)
    return PcaPrivacy(scenario=scenario, tau=tau, weights=weights, design=design, pooled_std=pooled_std, notes=notes,
                      dim=None if dim is None else check_positive_int(dim, "D", minimum=2))


def check_pair(problem: PcaProblem, privacy: PcaPrivacy) -> None:
    sizes = privacy.scenario.sizes
    if sizes.size != problem.n_sites or np.any(sizes != problem.sizes):
        raise InputError(f"the scenario's site sizes {sizes.tolist()} do not match the data's {problem.sizes.tolist()}",
                         "sites")
