"""L2 sensitivities of the edges of paper 004's data-flow graph (Table 3, Appendix G), with explicit constants.

Neighbouring corpora (section 3.2): replace one document by any other document of length >= 3. Every bound
is on the Frobenius (L2) norm of the change, the norm the Gaussian mechanism needs; the paper bounds the L1
norm (which is larger) and writes the whitened and later edges only as O(.). Proof sketches are below and in
``docs/math/lda.md``; ``tests/test_lda_sensitivity.py`` checks every bound by brute force over random and
adversarial (optimised) neighbouring corpora.

Global sensitivities (valid for every corpus of N documents):

* **M2_hat** (edges e4, e8): Delta2 = (sqrt(2) + sqrt(6) a2) / N, a2 = alpha_0/(alpha_0 + 1).
  Replacing document N changes M2_hat by (P2 - P2')/N - (a2/N) (d r^T + r d^T) with d = p - p',
  r = sum_{m<N} p_m / (N - 1). P2, P2' are non-negative with ||.||_F <= 1, so ||P2 - P2'||_F <= sqrt(2);
  ||d r^T + r d^T||_F^2 = 2 ||d||^2 ||r||^2 + 2 (d.r)^2 <= 2*2*1 + 2*1 = 6 (||d||^2 <= 2, ||r|| <= 1, |d.r| <= 1).
* **M3_hat** (edge e3): Delta3 = sqrt(2) (1 + 6 a3 + 3 b3) / N, a3 = alpha_0/(alpha_0 + 2),
  b3 = 2 alpha_0^2/((alpha_0 + 1)(alpha_0 + 2)). The three parts of the estimator change by at most
  sqrt(2)/N (P3 - P3'), 3 a3 (sqrt(2) + sqrt(2))/N (the pair-times-single U-statistic: (P2 - P2') x r and
  s x d, three placements) and 3 b3 sqrt(2)/N (d in one of three slots of the triple U-statistic).

Local sensitivities (paper Theorems 4.2-4.4: they depend on the corpus D at hand and hold for every
neighbour D' of D when D satisfies the stated condition):

* **T in a public basis B** (edges e6, e7 via the decomposition): T = M3_hat(W_B, W_B, W_B) with
  W_B = B G^{-1/2}, G = B^T M2_hat B, B a fixed D x K matrix with orthonormal columns. With
  g = lambda_min(G) > Delta2 and rho = Delta2 / (2 (g - Delta2)):
  Delta_T = Delta3 (g - Delta2)^{-3/2} + ||T||_F rho (3 + 3 rho + rho^2).
  Proof: with A = M3_hat(B, B, B), H = G^{-1/2} and M = G^{1/2} G'^{-1/2} (so H' = H M and
  A(H', H', H') = T(M, M, M)): T - T' = (A - A')(H', H', H') + T(I - M, I, I) + T(M, I - M, I) + T(M, M, I - M).
  ||A - A'||_F <= Delta3 (projecting by B does not increase the Frobenius norm), ||H'||_2 <= (g - Delta2)^{-1/2}
  (Weyl: ||G - G'||_2 <= ||G - G'||_F <= Delta2), and ||I - M||_2 = ||(G'^{1/2} - G^{1/2}) G'^{-1/2}||_2 <= rho
  because x -> sqrt(x) is (1/2)(g - Delta2)^{-1/2}-Lipschitz on [g - Delta2, inf), and a Lipschitz scalar
  function is Lipschitz with the same constant in Frobenius norm on symmetric matrices (divided differences:
  (U^T (f(G) - f(G')) V)_ij = (f(a_i) - f(b_j)) / (a_i - b_j) (U^T (G - G') V)_ij); ||M||_2 <= 1 + rho.
  The paper's eq. (67) has ||W - W'||^3 where the first-order term belongs, and Frobenius norms of W where
  spectral norms suffice (hence its k^{3/2}).
* **T with the eigenvector whitening** (configuration 4): the basis-free whitening S = f(M2_hat),
  f(x) = x^{-1/2} on the top-K eigenvalues and 0 on the others, T = M3_hat(S, S, S) (T in the eigenbasis U
  is T(U, U, U), the same tensor in coordinates). With sigma_k > sigma_{k+1} the K-th and (K+1)-th largest
  eigenvalues of M2_hat, gap = sigma_k - sigma_{k+1} > Delta2 and sigma_k > Delta2, the divided differences of
  f over the two spectra give ||S - S'||_F <= L_S Delta2 with
  L_S = max((1/2)(sigma_k - Delta2)^{-3/2}, (sigma_k - Delta2)^{-1/2} / (gap - Delta2)), and
  Delta_T = Delta3 s'^3 + F3 L_S Delta2 (1/sigma_k + s'/sqrt(sigma_k) + s'^2), s' = (sigma_k - Delta2)^{-1/2},
  F3 >= ||M3_hat||_F (:func:`dpcore.lda.moments.m3_frobenius_bound`).
* **Decomposition output** (edge e7; Theorem 4.3): Delta_v = Delta_lambda = 2 sqrt(K) Delta_T / gamma_s per
  component, gamma_s = min_i (lambda_i - lambda_{i+1}) / 4 over the decreasing eigenvalues with lambda_{K+1} = 0,
  under the condition Delta_T <= gamma_s lambda_K / (2 sqrt(K)) (Table 3). This constant is the paper's, from
  the perturbation theorem of the simultaneous power method it cites; it is not re-proved here. First-order
  perturbation of an orthogonal decomposition moves v_i by about Delta_T / lambda_i and lambda_i by about
  Delta_T; since gamma_s <= lambda_K / 4, the paper's value is at least 8 sqrt(K) times the first-order one,
  and the gap condition keeps the decreasing order of the components (hence which output is which) fixed.
  The brute-force tests are the evidence that it holds for the power method used here.
* **Recovered topics** (edge e9; Theorem 4.4): mu_i = c lambda_i R v_i with c = (alpha_0 + 2)/2 and
  R = M2_K^{1/2} (f(x) = sqrt(x) on the top-K eigenvalues, 0 elsewhere, Lipschitz constant L_R from the same
  divided differences): Delta_mu_i = c (Delta_lambda sqrt(sigma_1) + (lambda_i + Delta_lambda)(L_R Delta2 +
  sqrt(sigma_1 + Delta2) Delta_v)).

A release of several components at once (all K eigenvectors, all K topics) is one Gaussian mechanism on the
stacked vector, with sensitivity the root of the sum of the squared per-component bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..privacy.sensitivity import lda_sensitivity
from ..validation import check_positive, check_positive_int
from .moments import coefficients

__all__ = [
    "Condition",
    "decomposition_sensitivity",
    "eigengap",
    "eigen_whitening_lipschitz",
    "eigen_whitened_tensor_sensitivity",
    "m2_sensitivity",
    "m2_sensitivity_published",
    "ptr_distance",
    "m3_sensitivity",
    "m3_sensitivity_published",
    "sqrt_whitening_lipschitz",
    "tensor_gap_condition",
    "topic_sensitivities",
    "basis_whitened_tensor_sensitivity",
]


def _n_alpha(n: int, alpha0: float) -> tuple[int, float]:
    return check_positive_int(n, "number of documents N", minimum=3), check_positive(alpha0, "alpha_0")


def m2_sensitivity(n: int, alpha0: float) -> float:
    """Delta2 = (sqrt(2) + sqrt(6) alpha_0/(alpha_0 + 1)) / N: global Frobenius sensitivity of M2_hat
    (:func:`dpcore.privacy.lda_sensitivity`, statistic "lda-m2")."""
    return lda_sensitivity("lda-m2", n, alpha0)


def m3_sensitivity(n: int, alpha0: float) -> float:
    """Delta3 = sqrt(2) (1 + 6 a3 + 3 b3) / N: global Frobenius sensitivity of M3_hat
    (:func:`dpcore.privacy.lda_sensitivity`, statistic "lda-m3")."""
    return lda_sensitivity("lda-m3", n, alpha0)


def m2_sensitivity_published(n: int, alpha0: float) -> float:
    """Paper 004, Theorem G.3 (an L1 bound, hence also an L2 bound): 2/N + 4 a2 (1/N + 1/(N (N-1)))."""
    n, alpha0 = _n_alpha(n, alpha0)
    return 2.0 / n + 4.0 * coefficients(alpha0).a2 * (1.0 / n + 1.0 / (n * (n - 1.0)))


def m3_sensitivity_published(n: int, alpha0: float) -> float:
    """Paper 004, Theorem G.4 as printed: 2/N + 12 alpha_0/(alpha_0+2) (1/N + 1/(N(N-1))) + alpha_0^2/((alpha_0+1)
    (alpha_0+2)) (6(N+1)/(N(N-2)) + 18/(N(N-1)(N-2)) + 6/(N-2)). Derived for the paper's misprinted estimator."""
    n, alpha0 = _n_alpha(n, alpha0)
    a = alpha0
    return (2.0 / n + 12.0 * a / (a + 2.0) * (1.0 / n + 1.0 / (n * (n - 1.0)))
            + a * a / ((a + 1.0) * (a + 2.0)) * (6.0 * (n + 1.0) / (n * (n - 2.0)) + 18.0 / (n * (n - 1.0) * (n - 2.0))
                                                  + 6.0 / (n - 2.0)))


def basis_whitened_tensor_sensitivity(g: float, t_norm: float, delta2: float, delta3: float) -> float:
    """Delta_T = Delta3 (g - Delta2)^{-3/2} + ||T||_F rho (3 + 3 rho + rho^2), rho = Delta2 / (2 (g - Delta2)), for
    T = M3(W_B, W_B, W_B), W_B = B (B^T M2 B)^{-1/2}, B public; g = lambda_min(B^T M2_hat B) must exceed Delta2
    (else inf). ``t_norm`` is ||T||_F of the corpus at hand."""
    slack = g - delta2
    if slack <= 0:
        return math.inf
    rho = delta2 / (2.0 * slack)
    return delta3 * slack**-1.5 + t_norm * rho * (3.0 + 3.0 * rho + rho * rho)


def ptr_distance(g: float, t_norm: float, delta2: float, delta3: float, bound: float, *,
                 max_steps: int = 1_000_000) -> int:
    """Propose-test-release distance for configuration 2: h = the number of steps j = 0, 1, ... (before the first
    failure) with L_j = L(g - j Delta2, t_j) <= ``bound``, where L is :func:`basis_whitened_tensor_sensitivity`,
    t_0 = ||T||_F and t_{j+1} = t_j + L_j.

    Every corpus within j <= h - 1 replacements of this one has g >= g - j Delta2 (Weyl) and ||T||_F <= t_j (each
    replacement moves T by at most the local sensitivity of the corpus it starts from), hence local sensitivity
    <= L_j <= bound, since L decreases in g and increases in ||T||. And h is 1-Lipschitz: a neighbour starts from
    a state (g', t') no worse than step 1 of this sequence (g' >= g - Delta2, t' <= t_1), so by induction its
    step j is no worse than step j + 1 here, and h' >= h - 1 (and symmetrically). Capped at ``max_steps``."""
    h, t = 0, float(t_norm)
    while h < max_steps:
        local = basis_whitened_tensor_sensitivity(g - h * delta2, t, delta2, delta3)
        if not local <= bound:
            break
        t += local
        h += 1
    return h


def eigen_whitening_lipschitz(sigma_k: float, sigma_k1: float, delta2: float) -> float:
    """L_S with ||S - S'||_F <= L_S ||M2 - M2'||_F for S = f(M2), f = x^{-1/2} on the top K, 0 below:
    max((1/2)(sigma_k - Delta2)^{-3/2}, (sigma_k - Delta2)^{-1/2} / (sigma_k - sigma_k1 - Delta2)); inf when
    sigma_k <= Delta2 or the gap is <= Delta2."""
    low = sigma_k - delta2
    gap = sigma_k - sigma_k1 - delta2
    if low <= 0 or gap <= 0:
        return math.inf
    return max(0.5 * low**-1.5, low**-0.5 / gap)


def _sqrt_cross(x_min: float, y_max: float) -> float:
    """sup of sqrt(x) / (x - y) over x >= x_min > 0 and y <= y_max < x_min."""
    if y_max >= -x_min:
        return math.sqrt(x_min) / (x_min - y_max)
    return 0.5 / math.sqrt(-y_max)


def sqrt_whitening_lipschitz(sigma_k: float, sigma_k1: float, delta2: float) -> float:
    """L_R with ||R - R'||_F <= L_R ||M2 - M2'||_F for R = f(M2), f = sqrt on the top K, 0 below (the
    un-whitening M2_K^{1/2}); inf when sigma_k <= Delta2 or the gap is <= Delta2."""
    low = sigma_k - delta2
    if low <= 0 or sigma_k - sigma_k1 - delta2 <= 0:
        return math.inf
    return max(0.5 * low**-0.5, _sqrt_cross(sigma_k, sigma_k1 + delta2), _sqrt_cross(low, sigma_k1))


def eigen_whitened_tensor_sensitivity(sigma_k: float, sigma_k1: float, m3_norm: float, delta2: float,
                                      delta3: float) -> float:
    """Delta_T = Delta3 s'^3 + F3 L_S Delta2 (1/sigma_k + s'/sqrt(sigma_k) + s'^2), s' = (sigma_k - Delta2)^{-1/2},
    F3 >= ||M3_hat||_F: the whitened tensor of configuration 4 (eigenvector whitening, basis-free form)."""
    lip = eigen_whitening_lipschitz(sigma_k, sigma_k1, delta2)
    if math.isinf(lip):
        return math.inf
    s_new = (sigma_k - delta2) ** -0.5
    return delta3 * s_new**3 + m3_norm * lip * delta2 * (1.0 / sigma_k + s_new / math.sqrt(sigma_k) + s_new**2)


def eigengap(eigenvalues: np.ndarray) -> float:
    """gamma_s = min_i (lambda_i - lambda_{i+1}) / 4 over the decreasing eigenvalues, lambda_{K+1} = 0 (Table 1)."""
    lam = np.sort(np.asarray(eigenvalues, dtype=float))[::-1]
    return float(np.min(lam - np.append(lam[1:], 0.0)) / 4.0)


def decomposition_sensitivity(delta_t: float, gamma_s: float, k: int) -> float:
    """Delta_v = Delta_lambda = 2 sqrt(K) Delta_T / gamma_s per component (Theorem 4.3); inf if gamma_s <= 0."""
    if gamma_s <= 0:
        return math.inf
    return 2.0 * math.sqrt(k) * delta_t / gamma_s


@dataclass(frozen=True)
class Condition:
    """One condition of a configuration, evaluated on the data: ``holds`` iff value <= threshold."""

    name: str
    holds: bool
    value: float
    threshold: float
    text: str


def tensor_gap_condition(delta_t: float, eigenvalues: np.ndarray) -> Condition:
    """Table 3 (configurations 3 and 4): Delta_T <= gamma_s lambda_K / (2 sqrt(K))."""
    lam = np.sort(np.asarray(eigenvalues, dtype=float))[::-1]
    k = lam.size
    gamma = eigengap(lam)
    threshold = gamma * float(lam[-1]) / (2.0 * math.sqrt(k)) if gamma > 0 else 0.0
    holds = bool(delta_t <= threshold and gamma > 0)
    words = ("the whitened tensor's eigengap is large enough for its sensitivity" if holds else
             "the whitened tensor's eigenvalues are too close together for its sensitivity")
    sign = "<=" if holds else ">"
    text = (f"{words}: Delta_T = {delta_t:.3g} {sign} gamma_s lambda_K / (2 sqrt K) = {threshold:.3g} "
            f"(eigenvalues {', '.join(f'{v:.3g}' for v in lam)}; gamma_s = min gap / 4 = {gamma:.3g})")
    if not holds:
        text += ("; more documents shrink Delta_T (about 1/N), and a prior alpha with more distinct entries widens "
                 "the gaps (a symmetric alpha gives equal eigenvalues, gamma_s = 0 in the population)")
    return Condition("tensor eigengap (Table 3)", holds, float(delta_t), float(threshold), text)


def topic_sensitivities(eigenvalues: np.ndarray, delta_v: float, delta_lambda: float, sigma_1: float,
                        lip_sqrt: float, delta2: float, alpha0: float) -> np.ndarray:
    """Per-topic Delta_mu_i = ((alpha_0+2)/2) (Delta_lambda sqrt(sigma_1) + (lambda_i + Delta_lambda)(L_R Delta2 +
    sqrt(sigma_1 + Delta2) Delta_v)) for the unnormalised topics mu_i = ((alpha_0+2)/2) lambda_i M2_K^{1/2} v_i."""
    lam = np.asarray(eigenvalues, dtype=float)
    c = (alpha0 + 2.0) / 2.0
    return c * (delta_lambda * math.sqrt(sigma_1)
                + (lam + delta_lambda) * (lip_sqrt * delta2 + math.sqrt(sigma_1 + delta2) * delta_v))
