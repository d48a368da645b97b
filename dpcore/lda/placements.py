"""Configurations 1-4 of paper 004 as published (docs/math/lda.md, "The four configurations"; edges and budgets:
:mod:`dpcore.lda.budget`).

Noise laws: M2 (e4, e8, D x D) symmetric with i.i.d. N(0, sigma^2) unique entries and M3 (e3) the same law on its
unique entries (the published law; for K > 20 the symmetrised sqrt(6) sigma Sym(Z):
:func:`~dpcore.lda.budget.m3_noise_law`) sampled already projected through W - both through the message flows of
:mod:`dpcore.tensor.release` (one party, independent noise), so no D^3 array exists; T (e6, K x K x K) symmetric with
i.i.d. unique entries; i.i.d. entries for the vectors of e7 and e9. Unique entries of a symmetric release change by
at most the Frobenius norm of the change, so these laws are at least as private as the Gaussian mechanism needs.

Un-whitening (e8) uses the released M2 in the same basis as the tensor: B = M2_tilde W for configuration 1
(M2 W v_i = sqrt(w_i) mu_i when W whitens M2), B = U8 Sigma8^{1/2} for configurations 2 and 3.

**Whitening basis of configurations 2 and 3.** The paper whitens T with W = U Sigma^{-1/2} from the private
M2_hat and un-whitens with W^dagger from the noisy one. Eigenvector signs, and rotations among close top-K
eigenvalues, make U (hence T and the eigenvectors of e7) no function of the corpus with a bounded sensitivity,
and the two bases need not match. Here the basis is public: U8, the top-K eigenvectors of the e8 release, and
the whitening inside it is the symmetric W_B = U8 (U8^T M2_hat U8)^{-1/2}, which is what the paper's own proof of
Theorem G.5 compares (W' = W (W^T M2' W)^{-1/2}). Its sensitivity needs g = lambda_min(U8^T M2_hat U8) > Delta2.

**Privacy of configurations 2-4, as published.** Their sensitivities (Theorems 4.2-4.4) are local: computed
from the corpus at hand (its spectrum, ||M3_hat||, the tensor's eigenvalues) and valid for all of its
neighbours only when the conditions hold. Calibrating noise to a local sensitivity, and announcing whether
the conditions hold, is not (eps, delta)-differential privacy by itself: both depend on the private corpus.
Every result of configurations 2-4 says so (``guarantee``); configuration 1 uses global sensitivities only
and is (eps, delta)-DP. The conditions are checked on the data before any noise is drawn; when one fails
the configuration is reported unusable with the reason and returns no topics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..privacy.symmetric import symmetric_gaussian_tensor
from ..tensor.release import StageNoise, release_m2, release_m3
from .budget import (
    DP_GUARANTEE,
    LOCAL_GUARANTEE,
    ConfigurationResult,
    EdgeBudget,
    LdaDataSummary,
    edge_sigma,
    finish,
    m3_noise_law,
    sorted_tpm,
    unusable,
)
from .recovery import eigen_whitening, unwhiten
from .sensitivity import (
    Condition,
    basis_whitened_tensor_sensitivity,
    decomposition_sensitivity,
    eigen_whitened_tensor_sensitivity,
    eigengap,
    sqrt_whitening_lipschitz,
    tensor_gap_condition,
    topic_sensitivities,
)

__all__ = ["BasisWhitening", "basis_whitening", "configuration_1", "configuration_2_or_3", "configuration_4",
           "noisy_m2", "released_basis"]

Budget = dict[str, tuple[float, float]]


def noisy_m2(data: LdaDataSummary, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """M2_hat + E, E symmetric with i.i.d. N(0, sigma^2) unique entries (:func:`dpcore.tensor.release_m2`, one
    party)."""
    m2, _ = release_m2([data.site], np.ones(1), StageNoise("independent", stds=np.array([sigma])), rng)
    return m2


def configuration_1(data: LdaDataSummary, budget: Budget, calibration: str, rng: np.random.Generator,
                    n_restarts: int, n_iter: int, share_m2: bool) -> ConfigurationResult:
    """Noise on M2 for the whitening (e4) and the un-whitening (e8) - once for both with ``share_m2`` - and on the
    projected M3 (e3), all at the global sensitivities."""
    notes: list[str] = []
    budgets: list[EdgeBudget] = []
    if share_m2:
        eps_m2, delta_m2 = budget["e4"][0] + budget["e8"][0], budget["e4"][1] + budget["e8"][1]
        sigma = edge_sigma(data.delta2, eps_m2, delta_m2, calibration, notes)
        budgets.append(EdgeBudget(edge="e4+e8", eps=eps_m2, delta=delta_m2, sensitivity=data.delta2, sigma=sigma))
        m2_w = m2_back = noisy_m2(data, sigma, rng)
        notes.append("one noisy M2 serves both the whitening (e4) and the un-whitening (e8), with their budgets "
                     "added (post-processing of one release)")
    else:
        s4 = edge_sigma(data.delta2, *budget["e4"], calibration, notes)
        s8 = edge_sigma(data.delta2, *budget["e8"], calibration, notes)
        budgets += [EdgeBudget(edge=e, eps=budget[e][0], delta=budget[e][1], sensitivity=data.delta2, sigma=s)
                    for e, s in (("e4", s4), ("e8", s8))]
        m2_w = noisy_m2(data, s4, rng)
        m2_back = noisy_m2(data, s8, rng)
    wh = eigen_whitening(m2_w, data.k, noisy=True)
    s3 = edge_sigma(data.delta3, *budget["e3"], calibration, notes)
    budgets.insert(0, EdgeBudget(edge="e3", eps=budget["e3"][0], delta=budget["e3"][1], sensitivity=data.delta3,
                                 sigma=s3))
    tensor, _ = release_m3([data.site], np.ones(1), wh.w, StageNoise("independent", stds=np.array([s3])), rng,
                           path="projected", law=m3_noise_law("projected", data.k))
    power = sorted_tpm(tensor, data.k, rng, n_restarts, n_iter)
    back = m2_back @ wh.w
    return finish(1, [], unwhiten(back, power.eigenvalues, power.eigenvectors, data.alpha0), power.eigenvalues,
                  data.alpha0, budgets, DP_GUARANTEE, notes)


@dataclass(frozen=True, eq=False)
class BasisWhitening:
    """W_B = B G^{-1/2} with G = B^T M2_hat B for a public orthonormal basis B (D x K)."""

    basis: np.ndarray
    w: np.ndarray
    g_eigenvalues: np.ndarray


def basis_whitening(m2: np.ndarray, basis: np.ndarray, floor: float = 0.0) -> BasisWhitening:
    """The symmetric whitening of ``m2`` inside span(basis), W_B = B G^{-1/2}, G = B^T m2 B, with G's eigenvalues
    raised to at least ``floor`` (> 0 keeps W_B finite when G is not positive definite; the callers only use an
    unclamped W_B: the g > Delta2 condition, or the propose-test-release test, covers the clamped case).
    ``g_eigenvalues`` are G's own eigenvalues (not clamped)."""
    g = basis.T @ m2 @ basis
    vals, vecs = np.linalg.eigh((g + g.T) / 2.0)
    inv_sqrt = (vecs / np.sqrt(np.maximum(vals, max(floor, 1e-300)))) @ vecs.T
    return BasisWhitening(basis, basis @ inv_sqrt, vals)


def _basis_condition(g_min: float, delta2: float) -> Condition:
    holds = g_min > delta2
    text = (f"M2 restricted to the released basis is {'well' if holds else 'not'} positive enough for the whitened "
            f"tensor's bound: lambda_min(U8^T M2 U8) = {g_min:.3g} {'>' if holds else '<='} Delta2 = {delta2:.3g}")
    if not holds:
        text += "; the noise of e8 is too large for its basis to capture K topics (larger eps for e8, more documents)"
    return Condition("whitening in the released basis", bool(holds), float(delta2), float(g_min), text)


def released_basis(data: LdaDataSummary, budget: tuple[float, float], calibration: str, rng: np.random.Generator,
                   notes: list[str]) -> tuple[EdgeBudget, np.ndarray, np.ndarray]:
    """e8: M2_tilde = M2_hat + E8; its top-K eigenvectors U8 (the public basis) and eigenvalues Sigma8 (> 0)."""
    s8 = edge_sigma(data.delta2, *budget, calibration, notes)
    wh = eigen_whitening(noisy_m2(data, s8, rng), data.k, noisy=True)
    return (EdgeBudget(edge="e8", eps=budget[0], delta=budget[1], sensitivity=data.delta2, sigma=s8), wh.u,
            wh.eigenvalues)


def configuration_2_or_3(number: int, data: LdaDataSummary, budget: Budget, calibration: str,
                         rng: np.random.Generator, n_restarts: int, n_iter: int) -> ConfigurationResult:
    """Configuration 2 (noise on T in the released basis, e6) or 3 (noise on the decomposition's output, e7), both
    with the e8 release for the un-whitening; conditions checked before any noise on T or its output."""
    notes: list[str] = []
    conditions = [data.gap_condition()]
    e8, basis, sigma8 = released_basis(data, budget["e8"], calibration, rng, notes)
    bw = basis_whitening(data.m2, basis)
    conditions.append(_basis_condition(float(bw.g_eigenvalues.min()), data.delta2))
    if not all(c.holds for c in conditions):
        return unusable(number, conditions, notes)
    tensor = data.site.m3_projected(bw.w)
    delta_t = basis_whitened_tensor_sensitivity(float(bw.g_eigenvalues.min()), float(np.linalg.norm(tensor)),
                                                data.delta2, data.delta3)
    back = basis * np.sqrt(sigma8)  # U8 Sigma8^{1/2}: the un-whitening from the e8 release
    if number == 2:
        s6 = edge_sigma(delta_t, *budget["e6"], calibration, notes)
        power = sorted_tpm(tensor + symmetric_gaussian_tensor(rng, data.k, s6), data.k, rng, n_restarts, n_iter)
        budgets = [EdgeBudget(edge="e6", eps=budget["e6"][0], delta=budget["e6"][1], sensitivity=delta_t, sigma=s6),
                   e8]
        lam, vecs = power.eigenvalues, power.eigenvectors
    else:
        power = sorted_tpm(tensor, data.k, rng, n_restarts, n_iter)
        conditions.append(tensor_gap_condition(delta_t, power.eigenvalues))
        if not conditions[-1].holds:
            return unusable(number, conditions, notes)
        per = decomposition_sensitivity(delta_t, eigengap(power.eigenvalues), data.k)
        delta_e7 = math.sqrt(2.0 * data.k) * per  # K eigenvectors and K eigenvalues, each moving by <= per
        s7 = edge_sigma(delta_e7, *budget["e7"], calibration, notes)
        vecs = power.eigenvectors + s7 * rng.standard_normal(power.eigenvectors.shape)
        lam = power.eigenvalues + s7 * rng.standard_normal(data.k)
        budgets = [EdgeBudget(edge="e7", eps=budget["e7"][0], delta=budget["e7"][1], sensitivity=delta_e7, sigma=s7),
                   e8]
    unnormalised = unwhiten(back, lam, vecs, data.alpha0)
    return finish(number, conditions, unnormalised, lam, data.alpha0, budgets, LOCAL_GUARANTEE, notes)


def configuration_4(data: LdaDataSummary, budget: Budget, calibration: str, rng: np.random.Generator,
                    n_restarts: int, n_iter: int) -> ConfigurationResult:
    """Output perturbation (e9): the non-private topics and eigenvalues plus noise at Theorem 4.4's sensitivity."""
    notes: list[str] = []
    conditions = [data.gap_condition()]
    s_1, s_k, s_k1 = (float(data.top_eigenvalues[i]) for i in (0, data.k - 1, data.k))
    if not conditions[0].holds or s_k <= data.delta2:
        if s_k <= data.delta2:
            text = f"sigma_k = {s_k:.3g} <= Delta2 = {data.delta2:.3g}: the whitening is not stable"
            conditions.append(Condition("positive K-th eigenvalue", False, data.delta2, s_k, text))
        return unusable(4, conditions, notes)
    wh = eigen_whitening(data.m2, data.k, noisy=False)
    power = sorted_tpm(data.site.m3_projected(wh.w), data.k, rng, n_restarts, n_iter)
    delta_t = eigen_whitened_tensor_sensitivity(s_k, s_k1, data.site.m3_norm_bound, data.delta2, data.delta3)
    conditions.append(tensor_gap_condition(delta_t, power.eigenvalues))
    if not conditions[-1].holds:
        return unusable(4, conditions, notes)
    per = decomposition_sensitivity(delta_t, eigengap(power.eigenvalues), data.k)
    lip = sqrt_whitening_lipschitz(s_k, s_k1, data.delta2)
    mu_sens = topic_sensitivities(power.eigenvalues, per, per, s_1, lip, data.delta2, data.alpha0)
    delta_e9 = math.sqrt(float(np.sum(mu_sens**2)) + data.k * per**2)
    s9 = edge_sigma(delta_e9, *budget["e9"], calibration, notes)
    back = wh.u * np.sqrt(wh.eigenvalues)
    unnormalised = unwhiten(back, power.eigenvalues, power.eigenvectors, data.alpha0)
    unnormalised = unnormalised + s9 * rng.standard_normal(unnormalised.shape)
    lam = power.eigenvalues + s9 * rng.standard_normal(data.k)
    budgets = [EdgeBudget(edge="e9", eps=budget["e9"][0], delta=budget["e9"][1], sensitivity=delta_e9, sigma=s9)]
    return finish(4, conditions, unnormalised, lam, data.alpha0, budgets, LOCAL_GUARANTEE, notes)
