"""The four noise configurations of paper 004 (section 5, Tables 2 and 3) on the data-flow graph of Figure 1.

=====  ===============  ================================================================================
conf.  edges            what gets Gaussian noise
=====  ===============  ================================================================================
1      e3, e4, e8       M3_hat (e3) and M2_hat twice: for the whitening W (e4) and for the un-whitening (e8)
2      e6, e8           the whitened tensor T (e6) and M2_hat for the un-whitening (e8)
3      e7, e8           the decomposition's output (eigenvectors v_i and eigenvalues lambda_i, e7) and M2_hat (e8)
4      e9               the recovered (unnormalised) topics and the eigenvalues (output perturbation)
=====  ===============  ================================================================================

Budget: the configuration's (eps, delta) is split over its edges by ``split`` (fractions, equal by default);
edge e gets (f_e eps, f_e delta), and basic composition (paper Proposition 2.3: the eps and delta add up)
gives (eps, delta) in total; later edges may depend on earlier releases (adaptive composition, which basic
composition allows). Each edge's noise is sigma_e = Delta_e c(eps_e, delta_e) with the project's classic or
analytic calibration (:func:`dpcore.mechanisms.noise_multiplier`). Noise laws: symmetric with i.i.d.
N(0, sigma^2) unique entries for M2 (e4, e8, D x D) and T (e6, K x K x K) - valid because the unique entries
change by at most the Frobenius norm of the change; sqrt(6) sigma Sym(Z) for M3 (e3), sampled already
projected through W (its unique entries get variance sigma^2, 2 sigma^2 or 6 sigma^2: at least as private; the
project's exact projected sampler, so no D^3 array exists); i.i.d. entries for the vectors of e7 and e9.

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

**Propose-test-release** (``privacy="ptr"``, configuration 2): the local bound of T is a monotone function
L(g, ||T||_F) of two quantities whose change per replaced document is bounded (g by Delta2, ||T||_F by L itself),
so the number of replacements before L may exceed a proposed b has a 1-Lipschitz lower bound
(:func:`dpcore.lda.sensitivity.ptr_distance`). A Laplace-noised test of it, then the Gaussian mechanism at b,
is (eps, delta)-DP with no assumption on the corpus (Dwork and Lei 2009; Dwork and Roth 2014, section 7.3).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ._core import (
    ClassicCalibrationWarning,
    InputError,
    PowerResult,
    check_choice,
    check_delta,
    check_epsilon,
    check_positive,
    check_rank,
    noise_multiplier,
    symmetric_gaussian_matrix,
    symmetric_gaussian_tensor,
    symmetrize,
    tensor_power_method,
)
from .moments import lda_m2, lda_m3_projected, m3_frobenius_bound, prepare_counts
from .recovery import (
    DEFAULT_ITERATIONS,
    DEFAULT_RESTARTS,
    alpha_from_eigenvalues,
    eigen_whitening,
    sorted_power,
    to_simplex,
    unwhiten,
)
from .sensitivity import (
    Condition,
    basis_whitened_tensor_sensitivity,
    decomposition_sensitivity,
    eigen_whitened_tensor_sensitivity,
    eigengap,
    m2_sensitivity,
    m3_sensitivity,
    ptr_distance,
    sqrt_whitening_lipschitz,
    tensor_gap_condition,
    topic_sensitivities,
)

__all__ = [
    "CONFIGURATIONS",
    "EDGES",
    "PRIVACY",
    "PTR_EDGES",
    "ConfigurationResult",
    "LdaDataSummary",
    "edge_budgets",
    "run_configuration",
    "summarize_data",
]

CONFIGURATIONS: dict[int, str] = {
    1: "noise on M3 (e3), on M2 for the whitening (e4) and on M2 for the un-whitening (e8); no condition",
    2: "noise on the whitened tensor T (e6) and on M2 for the un-whitening (e8); needs the M2 spectral gap",
    3: "noise on the decomposition's eigenvectors and eigenvalues (e7) and on M2 (e8); needs both gaps",
    4: "noise on the recovered topics (e9, output perturbation); needs both gaps",
}
EDGES: dict[int, tuple[str, ...]] = {1: ("e3", "e4", "e8"), 2: ("e6", "e8"), 3: ("e7", "e8"), 4: ("e9",)}
PRIVACY = {
    "local": "paper 004 as published: noise at the local sensitivity of the corpus at hand, conditions checked on it",
    "ptr": "configuration 2 made (eps, delta)-DP by propose-test-release: a public proposal b for the sensitivity of "
           "T, a Laplace test that the corpus is far from any corpus where b fails, then noise at b",
}
PTR_EDGES = ("test", "e6", "e8")
PTR_GUARANTEE = (
    "(eps, delta)-DP for replace-one-document neighbours: propose-test-release (Dwork and Lei 2009) - a proposed "
    "bound b on the sensitivity of T from public quantities, a Laplace test (eps_test) of a 1-Lipschitz lower bound "
    "on the number of documents to change before b may fail, passing by mistake with probability <= delta_test, "
    "then the Gaussian mechanism at b; e8 with the global Delta2; basic composition over test, e6 and e8"
)
LOCAL_GUARANTEE = (
    "noise calibrated to paper 004's local (data-dependent) sensitivity: the bound holds for every neighbour of "
    "this corpus, but it and the usable verdict are computed from the private corpus, so this is not an "
    "(eps, delta)-DP guarantee by itself (propose-test-release would make it one)"
)


@dataclass(frozen=True)
class EdgeBudget:
    """(eps_e, delta_e), the edge's L2 sensitivity and its Gaussian noise std sigma_e = Delta_e c(eps_e, delta_e)."""

    edge: str
    eps: float
    delta: float
    sensitivity: float
    sigma: float


@dataclass(frozen=True, eq=False)
class ConfigurationResult:
    """One run of a configuration. ``usable`` False means a condition failed: no noise was drawn and
    ``topics`` is None; ``reason`` says which condition and why."""

    configuration: int
    usable: bool
    conditions: tuple[Condition, ...]
    reason: str | None
    topics: np.ndarray | None = None
    alpha: np.ndarray | None = None
    eigenvalues: np.ndarray | None = None
    budgets: tuple[EdgeBudget, ...] = ()
    guarantee: str = ""
    notes: tuple[str, ...] = field(default=())


def _split(configuration: int, split: Mapping[str, float] | None, privacy: str = "local") -> dict[str, float]:
    edges = PTR_EDGES if privacy == "ptr" else EDGES[configuration]
    if split is None:
        return {e: 1.0 / len(edges) for e in edges}
    if set(split) != set(edges):
        raise InputError(f"configuration {configuration} splits its budget over the edges {', '.join(edges)} "
                         f"(got {', '.join(sorted(split))})", "split")
    fractions = {e: check_positive(split[e], f"budget share of {e}") for e in edges}
    total = sum(fractions.values())
    if abs(total - 1.0) > 1e-9:
        raise InputError(f"the budget shares must sum to 1 (they sum to {total:.6g})", "split")
    return fractions


def edge_budgets(configuration: int, eps: float, delta: float, split: Mapping[str, float] | None = None,
                 privacy: str = "local") -> dict[str, tuple[float, float]]:
    """(eps_e, delta_e) = (f_e eps, f_e delta) per edge of the configuration (basic composition); with
    ``privacy="ptr"`` (configuration 2) the edges are the test, e6 and e8."""
    return {e: (f * eps, f * delta) for e, f in _split(configuration, split, privacy).items()}


def _sigma(sensitivity: float, eps: float, delta: float, calibration: str, notes: list[str]) -> float:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ClassicCalibrationWarning)
        c = noise_multiplier(eps, delta, calibration)
    for w in caught:
        if issubclass(w.category, ClassicCalibrationWarning):
            notes.append(str(w.message))
    return sensitivity * c


# ----------------------------------------------------------------------------------------------
# What the conditions need, computed once from the corpus
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class LdaDataSummary:
    """The private quantities the configurations use: M2_hat, its K+1 largest eigenvalues, Delta2, Delta3."""

    counts: object
    k: int
    alpha0: float
    m2: np.ndarray
    top_eigenvalues: np.ndarray  # K + 1 largest (algebraic), decreasing
    delta2: float
    delta3: float

    @property
    def n(self) -> int:
        return int(self.counts.shape[0])

    def gap_condition(self) -> Condition:
        """Table 3 (configurations 2-4): Delta2 <= (sigma_k - sigma_{k+1}) / 2 on the corpus's M2_hat."""
        s_k, s_k1 = float(self.top_eigenvalues[self.k - 1]), float(self.top_eigenvalues[self.k])
        half_gap = (s_k - s_k1) / 2.0
        holds = self.delta2 <= half_gap
        text = (f"the sensitivity of M2, Delta2 = {self.delta2:.3g}, is {'within' if holds else 'more than'} half the "
                f"spectral gap (sigma_k - sigma_k+1)/2 = ({s_k:.3g} - {s_k1:.3g})/2 = {half_gap:.3g}")
        if not holds:
            text += "; more documents (Delta2 ~ 1/N) or a smaller K would help"
        return Condition("M2 spectral gap (Table 3)", bool(holds), self.delta2, float(half_gap), text)


def summarize_data(counts: object, k: int, alpha0: float) -> LdaDataSummary:
    """M2_hat (dense D x D), its K+1 largest eigenvalues and the global sensitivities (validates the inputs)."""
    c = prepare_counts(counts)
    alpha0 = check_positive(alpha0, "alpha_0")
    dim = c.shape[1]
    k = check_rank(k, dim - 1, dim_name="D - 1")
    m2 = lda_m2(c, alpha0)
    vals = np.linalg.eigvalsh(m2)[::-1][: k + 1]
    return LdaDataSummary(c, k, alpha0, m2, vals, m2_sensitivity(c.shape[0], alpha0),
                          m3_sensitivity(c.shape[0], alpha0))


# ----------------------------------------------------------------------------------------------
# Building blocks
# ----------------------------------------------------------------------------------------------

def _noisy_m2(m2: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    return m2 + symmetric_gaussian_matrix(rng, m2.shape[0], sigma)


def _projected_tensor_noise(w: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """(sqrt(6) sigma Sym(Z))(W, W, W) for Z i.i.d. N(0, 1) of size D^3, sampled as sqrt(6) sigma Sym(Y(R, R, R)),
    Y i.i.d. K^3 and R^T R = W^T W (R from a QR of W): the same Gaussian law, no D^3 array."""
    k = w.shape[1]
    r = np.linalg.qr(w, mode="r")
    y = rng.standard_normal((k, k, k))
    projected = np.einsum("abc,ai,bj,ck->ijk", y, r, r, r)
    return math.sqrt(6.0) * sigma * symmetrize(projected)


def _symmetric_tensor_noise(k: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Symmetric K x K x K noise with i.i.d. N(0, sigma^2) unique entries (the paper's symmetric Gaussian)."""
    return symmetric_gaussian_tensor(rng, k, sigma)


def _tpm(tensor: np.ndarray, k: int, rng: np.random.Generator, n_restarts: int, n_iter: int) -> PowerResult:
    return sorted_power(tensor_power_method(tensor, k, rng, n_restarts=n_restarts, n_iter=n_iter))


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


def _unusable(configuration: int, conditions: list[Condition], notes: list[str]) -> ConfigurationResult:
    failed = [c for c in conditions if not c.holds]
    reason = (f"configuration {configuration} is unusable on this corpus: "
              + "; and ".join(c.text for c in failed))
    return ConfigurationResult(configuration, False, tuple(conditions), reason, guarantee=LOCAL_GUARANTEE,
                               notes=tuple(notes))


def _finish(configuration: int, conditions: list[Condition], unnormalised: np.ndarray, eigenvalues: np.ndarray,
            alpha0: float, budgets: list[EdgeBudget], guarantee: str, notes: list[str]) -> ConfigurationResult:
    topics, more = to_simplex(unnormalised)
    notes.extend(more)
    return ConfigurationResult(configuration, True, tuple(conditions), None, topics,
                               alpha_from_eigenvalues(eigenvalues, alpha0), np.asarray(eigenvalues), tuple(budgets),
                               guarantee, tuple(dict.fromkeys(notes)))


# ----------------------------------------------------------------------------------------------
# The configurations
# ----------------------------------------------------------------------------------------------

def _configuration_1(data: LdaDataSummary, budget: dict[str, tuple[float, float]], calibration: str,
                     rng: np.random.Generator, n_restarts: int, n_iter: int, share_m2: bool) -> ConfigurationResult:
    notes: list[str] = []
    budgets: list[EdgeBudget] = []
    if share_m2:
        eps_m2 = budget["e4"][0] + budget["e8"][0]
        delta_m2 = budget["e4"][1] + budget["e8"][1]
        sigma = _sigma(data.delta2, eps_m2, delta_m2, calibration, notes)
        budgets.append(EdgeBudget("e4+e8", eps_m2, delta_m2, data.delta2, sigma))
        m2_w = m2_back = _noisy_m2(data.m2, sigma, rng)
        notes.append("one noisy M2 serves both the whitening (e4) and the un-whitening (e8), with their budgets "
                     "added (post-processing of one release)")
    else:
        s4 = _sigma(data.delta2, *budget["e4"], calibration, notes)
        s8 = _sigma(data.delta2, *budget["e8"], calibration, notes)
        budgets += [EdgeBudget("e4", *budget["e4"], data.delta2, s4), EdgeBudget("e8", *budget["e8"], data.delta2, s8)]
        m2_w = _noisy_m2(data.m2, s4, rng)
        m2_back = _noisy_m2(data.m2, s8, rng)
    wh = eigen_whitening(m2_w, data.k, noisy=True)
    s3 = _sigma(data.delta3, *budget["e3"], calibration, notes)
    budgets.insert(0, EdgeBudget("e3", *budget["e3"], data.delta3, s3))
    tensor = lda_m3_projected(data.counts, data.alpha0, wh.w) + _projected_tensor_noise(wh.w, s3, rng)
    power = _tpm(tensor, data.k, rng, n_restarts, n_iter)
    back = m2_back @ wh.w
    guarantee = ("(eps, delta)-DP for replace-one-document neighbours: Gaussian mechanisms with global sensitivities "
                 "Delta2 (M2) and Delta3 (M3), basic composition over the edges")
    return _finish(1, [], unwhiten(back, power.eigenvalues, power.eigenvectors, data.alpha0), power.eigenvalues,
                   data.alpha0, budgets, guarantee, notes)


def _released_basis(data: LdaDataSummary, budget: tuple[float, float], calibration: str, rng: np.random.Generator,
                    notes: list[str]) -> tuple[EdgeBudget, np.ndarray, np.ndarray]:
    """e8: M2_tilde = M2_hat + E8; its top-K eigenvectors U8 (the public basis) and eigenvalues Sigma8 (> 0)."""
    s8 = _sigma(data.delta2, *budget, calibration, notes)
    m2_tilde = _noisy_m2(data.m2, s8, rng)
    wh = eigen_whitening(m2_tilde, data.k, noisy=True)
    return EdgeBudget("e8", *budget, data.delta2, s8), wh.u, wh.eigenvalues


def _configuration_2_or_3(number: int, data: LdaDataSummary, budget: dict[str, tuple[float, float]],
                          calibration: str, rng: np.random.Generator, n_restarts: int,
                          n_iter: int) -> ConfigurationResult:
    notes: list[str] = []
    conditions = [data.gap_condition()]
    e8, basis, sigma8 = _released_basis(data, budget["e8"], calibration, rng, notes)
    bw = basis_whitening(data.m2, basis)
    conditions.append(_basis_condition(float(bw.g_eigenvalues.min()), data.delta2))
    if not all(c.holds for c in conditions):
        return _unusable(number, conditions, notes)
    tensor = lda_m3_projected(data.counts, data.alpha0, bw.w)
    delta_t = basis_whitened_tensor_sensitivity(float(bw.g_eigenvalues.min()), float(np.linalg.norm(tensor)),
                                                data.delta2, data.delta3)
    back = basis * np.sqrt(sigma8)  # U8 Sigma8^{1/2}: the un-whitening from the e8 release
    if number == 2:
        s6 = _sigma(delta_t, *budget["e6"], calibration, notes)
        power = _tpm(tensor + _symmetric_tensor_noise(data.k, s6, rng), data.k, rng, n_restarts, n_iter)
        budgets = [EdgeBudget("e6", *budget["e6"], delta_t, s6), e8]
        lam, vecs = power.eigenvalues, power.eigenvectors
    else:
        power = _tpm(tensor, data.k, rng, n_restarts, n_iter)
        conditions.append(tensor_gap_condition(delta_t, power.eigenvalues))
        if not conditions[-1].holds:
            return _unusable(number, conditions, notes)
        per = decomposition_sensitivity(delta_t, eigengap(power.eigenvalues), data.k)
        delta_e7 = math.sqrt(2.0 * data.k) * per  # K eigenvectors and K eigenvalues, each moving by <= per
        s7 = _sigma(delta_e7, *budget["e7"], calibration, notes)
        vecs = power.eigenvectors + s7 * rng.standard_normal(power.eigenvectors.shape)
        lam = power.eigenvalues + s7 * rng.standard_normal(data.k)
        budgets = [EdgeBudget("e7", *budget["e7"], delta_e7, s7), e8]
    unnormalised = unwhiten(back, lam, vecs, data.alpha0)
    return _finish(number, conditions, unnormalised, lam, data.alpha0, budgets, LOCAL_GUARANTEE, notes)


def _symmetric_tensor_norm(k: int, alpha0: float) -> float:
    """||T||_F of the population whitened tensor for a symmetric alpha: sqrt(K) (2/(alpha_0+2)) sqrt((alpha_0+1) K),
    the smallest over all alpha with this alpha_0 (Cauchy-Schwarz on sum 1/alpha_i)."""
    return 2.0 / (alpha0 + 2.0) * k * math.sqrt(alpha0 + 1.0)


def _configuration_2_ptr(data: LdaDataSummary, budget: dict[str, tuple[float, float]], calibration: str,
                         rng: np.random.Generator, n_restarts: int, n_iter: int) -> ConfigurationResult:
    """Configuration 2 with propose-test-release. Proposal from public quantities only: with g~ = sigma_K(M2_tilde)
    from the e8 release, g_prop = max(g~/2, g~ - 2 sqrt(D) sigma_8 - (threshold + 3) Delta2) (g~ exceeds g by at most
    the spectral norm of the e8 noise, typically 2 sqrt(D) sigma_8, and the test needs about ``threshold`` steps of
    Delta2 to spare), ||T||_prop = 2 ||T||_F of the symmetric-alpha population tensor; b = L(g_prop, ||T||_prop).
    Test: h_hat = h + Laplace(1 / eps_test) with h = :func:`ptr_distance`; release only if
    h_hat > ln(1 / (2 delta_test)) / eps_test (a corpus with h = 0 passes with probability delta_test)."""
    notes: list[str] = []
    e8, basis, sigma8 = _released_basis(data, budget["e8"], calibration, rng, notes)
    eps0, delta0 = budget["test"]
    threshold = math.log(1.0 / (2.0 * delta0)) / eps0
    g_tilde = float(np.min(sigma8))
    spare = 2.0 * math.sqrt(data.m2.shape[0]) * e8.sigma + (threshold + 3.0) * data.delta2
    g_prop = max(0.5 * g_tilde, g_tilde - spare)
    t_prop = 2.0 * _symmetric_tensor_norm(data.k, data.alpha0)
    bound = basis_whitened_tensor_sensitivity(g_prop, t_prop, data.delta2, data.delta3)
    if not math.isfinite(bound):
        text = (f"no finite sensitivity bound can be proposed: half the K-th eigenvalue of the released M2, "
                f"{g_prop:.3g}, is <= Delta2 = {data.delta2:.3g} (more documents or a larger eps for e8)")
        cond = Condition("propose-test-release", False, math.inf, threshold, text)
        return ConfigurationResult(2, False, (cond,), f"configuration 2 is unusable on this corpus: {text}",
                                   budgets=(e8,), guarantee=PTR_GUARANTEE, notes=tuple(notes))
    bw = basis_whitening(data.m2, basis, floor=data.delta2)
    tensor = lda_m3_projected(data.counts, data.alpha0, bw.w)
    g_min, t_norm = float(bw.g_eigenvalues.min()), float(np.linalg.norm(tensor))
    h = ptr_distance(g_min, t_norm, data.delta2, data.delta3, bound)
    noisy_h = h + float(rng.laplace(0.0, 1.0 / eps0))
    passed = noisy_h > threshold
    text = (f"the private stability test {'passed' if passed else 'did not pass'}: noisy distance to a corpus where "
            f"the proposed bound b = {bound:.3g} may fail = {noisy_h:.3g} {'>' if passed else '<='} "
            f"ln(1/(2 delta_test))/eps_test = {threshold:.3g}")
    if not passed:
        text += " (more documents, a larger eps or a larger share of it for the test)"
    cond = Condition("propose-test-release", bool(passed), float(noisy_h), float(threshold), text)
    test = EdgeBudget("test", eps0, delta0, 1.0, 1.0 / eps0)  # Laplace scale 1/eps on a 1-Lipschitz count
    if not passed:
        return ConfigurationResult(2, False, (cond,), f"configuration 2 is unusable on this corpus: {text}",
                                   budgets=(test, e8), guarantee=PTR_GUARANTEE, notes=tuple(notes))
    s6 = _sigma(bound, *budget["e6"], calibration, notes)
    power = _tpm(tensor + _symmetric_tensor_noise(data.k, s6, rng), data.k, rng, n_restarts, n_iter)
    unnormalised = unwhiten(basis * np.sqrt(sigma8), power.eigenvalues, power.eigenvectors, data.alpha0)
    budgets = [test, EdgeBudget("e6", *budget["e6"], bound, s6), e8]
    return _finish(2, [cond], unnormalised, power.eigenvalues, data.alpha0, budgets, PTR_GUARANTEE, notes)


def _configuration_4(data: LdaDataSummary, budget: dict[str, tuple[float, float]], calibration: str,
                     rng: np.random.Generator, n_restarts: int, n_iter: int) -> ConfigurationResult:
    notes: list[str] = []
    conditions = [data.gap_condition()]
    s_1, s_k, s_k1 = (float(data.top_eigenvalues[i]) for i in (0, data.k - 1, data.k))
    if not conditions[0].holds or s_k <= data.delta2:
        if s_k <= data.delta2:
            text = f"sigma_k = {s_k:.3g} <= Delta2 = {data.delta2:.3g}: the whitening is not stable"
            conditions.append(Condition("positive K-th eigenvalue", False, data.delta2, s_k, text))
        return _unusable(4, conditions, notes)
    wh = eigen_whitening(data.m2, data.k, noisy=False)
    tensor = lda_m3_projected(data.counts, data.alpha0, wh.w)
    power = _tpm(tensor, data.k, rng, n_restarts, n_iter)
    delta_t = eigen_whitened_tensor_sensitivity(s_k, s_k1, m3_frobenius_bound(data.counts, data.alpha0),
                                                data.delta2, data.delta3)
    conditions.append(tensor_gap_condition(delta_t, power.eigenvalues))
    if not conditions[-1].holds:
        return _unusable(4, conditions, notes)
    per = decomposition_sensitivity(delta_t, eigengap(power.eigenvalues), data.k)
    lip = sqrt_whitening_lipschitz(s_k, s_k1, data.delta2)
    mu_sens = topic_sensitivities(power.eigenvalues, per, per, s_1, lip, data.delta2, data.alpha0)
    delta_e9 = math.sqrt(float(np.sum(mu_sens**2)) + data.k * per**2)
    s9 = _sigma(delta_e9, *budget["e9"], calibration, notes)
    back = wh.u * np.sqrt(wh.eigenvalues)
    unnormalised = unwhiten(back, power.eigenvalues, power.eigenvectors, data.alpha0)
    unnormalised = unnormalised + s9 * rng.standard_normal(unnormalised.shape)
    lam = power.eigenvalues + s9 * rng.standard_normal(data.k)
    budgets = [EdgeBudget("e9", *budget["e9"], delta_e9, s9)]
    return _finish(4, conditions, unnormalised, lam, data.alpha0, budgets, LOCAL_GUARANTEE, notes)


def run_configuration(
    configuration: int, data: LdaDataSummary, eps: float, delta: float, rng: np.random.Generator, *,
    calibration: str = "analytic", split: Mapping[str, float] | None = None, share_m2: bool = False,
    privacy: str = "local", n_restarts: int = DEFAULT_RESTARTS, n_iter: int = DEFAULT_ITERATIONS,
) -> ConfigurationResult:
    """Run configuration 1-4 on the corpus summarised by ``data`` (:func:`summarize_data`) with total budget
    (eps, delta) split over its edges. ``share_m2`` (configuration 1 only) releases M2 once for both e4 and e8.
    ``privacy`` (:data:`PRIVACY`): "local" as published, "ptr" (configuration 2 only) propose-test-release.
    Raises WhiteningError when a noisy M2 cannot be whitened (configurations 1-3)."""
    if configuration not in CONFIGURATIONS:
        raise InputError(f"configuration must be one of {', '.join(map(str, CONFIGURATIONS))} (got {configuration!r})",
                         "configuration")
    eps = check_epsilon(eps)
    delta = check_delta(delta)
    check_choice(calibration, "calibration", ("classic", "analytic"))
    if share_m2 and configuration != 1:
        raise InputError("sharing one M2 release between e4 and e8 applies to configuration 1 only", "share_m2")
    check_choice(privacy, "privacy", tuple(PRIVACY))
    if privacy == "ptr" and configuration != 2:
        raise InputError("propose-test-release is implemented for configuration 2 only (configuration 1 is DP as it "
                         "is; 3 and 4 would need a private estimate of the tensor's eigengaps)", "privacy")
    budget = edge_budgets(configuration, eps, delta, split, privacy)
    if privacy == "ptr":
        return _configuration_2_ptr(data, budget, calibration, rng, n_restarts, n_iter)
    if configuration == 1:
        return _configuration_1(data, budget, calibration, rng, n_restarts, n_iter, share_m2)
    if configuration in (2, 3):
        return _configuration_2_or_3(configuration, data, budget, calibration, rng, n_restarts, n_iter)
    return _configuration_4(data, budget, calibration, rng, n_restarts, n_iter)

