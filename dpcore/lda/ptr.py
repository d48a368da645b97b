"""Configuration 2 made (eps, delta)-DP by propose-test-release (docs/math/lda.md, "Propose-test-release").

The local bound of T is a monotone function L(g, ||T||_F) of two quantities whose change per replaced document is
bounded (g by Delta2, ||T||_F by L itself), so the number of replacements before L may exceed a proposed b has a
1-Lipschitz lower bound (:func:`dpcore.lda.sensitivity.ptr_distance`). A Laplace-noised test of it, then the
Gaussian mechanism at b, is (eps, delta)-DP with no assumption on the corpus (Dwork and Lei 2009; Dwork and Roth
2014, section 7.3).
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy.symmetric import symmetric_gaussian_tensor
from .budget import (
    PTR_GUARANTEE,
    ConfigurationResult,
    EdgeBudget,
    LdaDataSummary,
    edge_sigma,
    finish,
    sorted_tpm,
    symmetric_tensor_norm,
    unusable,
)
from .placements import basis_whitening, released_basis
from .recovery import unwhiten
from .sensitivity import Condition, basis_whitened_tensor_sensitivity, ptr_distance

__all__ = ["configuration_2_ptr", "proposed_bound"]


def proposed_bound(data: LdaDataSummary, e8: EdgeBudget, sigma8: np.ndarray, threshold: float) -> tuple[float, float]:
    """The proposal from public quantities only: with g~ = sigma_K(M2_tilde) from the e8 release,
    g_prop = max(g~/2, g~ - 2 sqrt(D) sigma_8 - (threshold + 3) Delta2) (g~ exceeds g by at most the spectral norm of
    the e8 noise, typically 2 sqrt(D) sigma_8, and the test needs about ``threshold`` steps of Delta2 to spare),
    ||T||_prop = 2 ||T||_F of the symmetric-alpha population tensor; b = L(g_prop, ||T||_prop). Returns (b, g_prop)."""
    g_tilde = float(np.min(sigma8))
    spare = 2.0 * math.sqrt(data.m2.shape[0]) * e8.sigma + (threshold + 3.0) * data.delta2
    g_prop = max(0.5 * g_tilde, g_tilde - spare)
    t_prop = 2.0 * symmetric_tensor_norm(data.k, data.alpha0)
    return basis_whitened_tensor_sensitivity(g_prop, t_prop, data.delta2, data.delta3), g_prop


def configuration_2_ptr(data: LdaDataSummary, budget: dict[str, tuple[float, float]], calibration: str,
                        rng: np.random.Generator, n_restarts: int, n_iter: int) -> ConfigurationResult:
    """Propose b (:func:`proposed_bound`), test h_hat = h + Laplace(1 / eps_test) with h = :func:`ptr_distance`
    and release only if h_hat > ln(1 / (2 delta_test)) / eps_test (a corpus with h = 0 passes with probability
    delta_test), then T + noise at b (e6) and the e8 release for the un-whitening."""
    notes: list[str] = []
    e8, basis, sigma8 = released_basis(data, budget["e8"], calibration, rng, notes)
    eps0, delta0 = budget["test"]
    threshold = math.log(1.0 / (2.0 * delta0)) / eps0
    bound, g_prop = proposed_bound(data, e8, sigma8, threshold)
    if not math.isfinite(bound):
        text = (f"no finite sensitivity bound can be proposed: half the K-th eigenvalue of the released M2, "
                f"{g_prop:.3g}, is <= Delta2 = {data.delta2:.3g} (more documents or a larger eps for e8)")
        cond = Condition("propose-test-release", False, math.inf, threshold, text)
        return unusable(2, [cond], notes, guarantee=PTR_GUARANTEE, budgets=(e8,))
    bw = basis_whitening(data.m2, basis, floor=data.delta2)
    tensor = data.site.m3_projected(bw.w)
    h = ptr_distance(float(bw.g_eigenvalues.min()), float(np.linalg.norm(tensor)), data.delta2, data.delta3, bound)
    noisy_h = h + float(rng.laplace(0.0, 1.0 / eps0))
    passed = noisy_h > threshold
    text = (f"the private stability test {'passed' if passed else 'did not pass'}: noisy distance to a corpus where "
            f"the proposed bound b = {bound:.3g} may fail = {noisy_h:.3g} {'>' if passed else '<='} "
            f"ln(1/(2 delta_test))/eps_test = {threshold:.3g}")
    if not passed:
        text += " (more documents, a larger eps or a larger share of it for the test)"
    cond = Condition("propose-test-release", bool(passed), float(noisy_h), float(threshold), text)
    test = EdgeBudget(edge="test", eps=eps0, delta=delta0, sensitivity=1.0, sigma=1.0 / eps0)  # Laplace scale
    if not passed:
        return unusable(2, [cond], notes, guarantee=PTR_GUARANTEE, budgets=(test, e8))
    s6 = edge_sigma(bound, *budget["e6"], calibration, notes)
    power = sorted_tpm(tensor + symmetric_gaussian_tensor(rng, data.k, s6), data.k, rng, n_restarts, n_iter)
    unnormalised = unwhiten(basis * np.sqrt(sigma8), power.eigenvalues, power.eigenvectors, data.alpha0)
    budgets = [test, EdgeBudget(edge="e6", eps=budget["e6"][0], delta=budget["e6"][1], sensitivity=bound, sigma=s6),
               e8]
    return finish(2, [cond], unnormalised, power.eigenvalues, data.alpha0, budgets, PTR_GUARANTEE, notes)
