"""What the four noise configurations of paper 004 share (docs/math/lda.md, "The four configurations"): their edges,
the budget split over the edges, each edge's noise scale, the corpus summary their conditions read, and the result.

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
analytic calibration (:func:`dpcore.privacy.noise_multiplier`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..limits import MAX_PUBLISHED_PROJECTED_K
from ..linalg import top_eigenpairs
from ..privacy.calibration import ClassicCalibrationWarning, noise_multiplier
from ..tensor.power import PowerResult, tensor_power_method
from ..validation import InputError, check_positive, check_rank
from .moments import prepare_counts
from .recovery import alpha_from_eigenvalues, sorted_power, to_simplex
from .sensitivity import Condition, m2_sensitivity, m3_sensitivity
from .site import LdaSite

__all__ = [
    "CONFIGURATIONS",
    "DP_GUARANTEE",
    "EDGES",
    "LOCAL_GUARANTEE",
    "PRIVACY",
    "PTR_EDGES",
    "PTR_GUARANTEE",
    "ConfigurationResult",
    "EdgeBudget",
    "LdaDataSummary",
    "edge_budgets",
    "edge_sigma",
    "finish",
    "m3_noise_law",
    "sorted_tpm",
    "summarize_data",
    "summarize_site",
    "unusable",
]

def m3_noise_law(path: str, k: int) -> str:
    """The third-moment noise law of every LDA release (:data:`dpcore.tensor.M3_NOISE`; docs/math/lda.md, "The
    third-moment noise law"): the published law (i.i.d. N(0, sigma^2) unique entries, the paper's Gaussian
    mechanism) wherever it can be drawn exactly - the dense path, or the projected path with
    K <= MAX_PUBLISHED_PROJECTED_K - and the symmetrised law sqrt(6) sigma Sym(Z) above that. A change of
    Frobenius norm Delta moves the vector of unique entries by at most Delta, so the published law at sigma is the
    Gaussian mechanism with at least the sensitivity it needs; the symmetrised law is the published one plus
    independent noise (its unique-entry covariance diag(1, 2, 6) sigma^2 dominates sigma^2 I), hence at least as
    private, with more noise."""
    return "published" if path == "dense" or k <= MAX_PUBLISHED_PROJECTED_K else "symmetrized"


CONFIGURATIONS: dict[int, str] = {
    1: "noise on M3 (e3), on M2 for the whitening (e4) and on M2 for the un-whitening (e8); no condition",
    2: "noise on the whitened tensor T (e6) and on M2 for the un-whitening (e8); needs the M2 spectral gap",
    3: "noise on the decomposition's eigenvectors and eigenvalues (e7) and on M2 (e8); needs both gaps",
    4: "noise on the recovered topics (e9, output perturbation); needs both gaps",
}
EDGES: dict[int, tuple[str, ...]] = {1: ("e3", "e4", "e8"), 2: ("e6", "e8"), 3: ("e7", "e8"), 4: ("e9",)}
PRIVACY = {
    "local": "paper 004 as published: noise at the local sensitivity of the corpus at hand, conditions checked on it",
    "ptr": "configuration 2 made differentially private by propose-test-release: a public proposal b for the "
           "sensitivity of T, a Laplace test that the corpus is far from any corpus where b fails, then noise at b",
}
PTR_EDGES = ("test", "e6", "e8")
DP_GUARANTEE = ("calibrated to (eps, delta) for replace-one-document neighbours: Gaussian mechanisms with global "
                "sensitivities "
                "Delta2 (M2) and Delta3 (M3), basic composition over the edges")
PTR_GUARANTEE = (
    "calibrated to (eps, delta) for replace-one-document neighbours: propose-test-release (Dwork and Lei 2009) - a "
    "proposed bound b on the sensitivity of T from public quantities, a Laplace test (eps_test) of a 1-Lipschitz lower "
    "bound on the number of documents to change before b may fail, passing by mistake with probability <= delta_test, "
    "then the Gaussian mechanism at b; e8 with the global Delta2; basic composition over test, e6 and e8"
)
LOCAL_GUARANTEE = (
    "NOT differentially private as published: noise calibrated to paper 004's local (data-dependent) sensitivity; "
    "the bound holds for every neighbour of this corpus, but it and the usable verdict are computed from the private "
    "corpus, so it is no differential-privacy guarantee by itself (propose-test-release would make it one)"
)


@dataclass(frozen=True, kw_only=True)
class EdgeBudget:
    """(eps_e, delta_e), the edge's L2 sensitivity and its Gaussian noise std sigma_e = Delta_e c(eps_e, delta_e)."""

    edge: str
    eps: float
    delta: float
    sensitivity: float
    sigma: float


@dataclass(frozen=True, eq=False, kw_only=True)
class ConfigurationResult:
    """One run of a configuration. ``usable`` False means a condition failed: no noise was drawn (or, for
    propose-test-release, the test did not pass) and ``topics`` is None; ``reason`` says which condition and why."""

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


def edge_sigma(sensitivity: float, eps: float, delta: float, calibration: str, notes: list[str]) -> float:
    """sigma_e = Delta_e c(eps_e, delta_e); the classic calibration's caveat at eps_e >= 1 goes into ``notes``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ClassicCalibrationWarning)
        c = noise_multiplier(eps, delta, calibration)
    for w in caught:
        if issubclass(w.category, ClassicCalibrationWarning):
            notes.append(str(w.message))
    return sensitivity * c


@dataclass(frozen=True, eq=False, kw_only=True)
class LdaDataSummary:
    """The private quantities the configurations use: the corpus (one :class:`~dpcore.lda.site.LdaSite`, the
    pooled documents at one curator), K, M2_hat, its K+1 largest eigenvalues, Delta2 and Delta3."""

    site: LdaSite
    k: int
    top_eigenvalues: np.ndarray  # K + 1 largest (algebraic), decreasing
    delta2: float
    delta3: float

    @property
    def counts(self):
        return self.site.counts

    @property
    def alpha0(self) -> float:
        return self.site.alpha0

    @property
    def m2(self) -> np.ndarray:
        return self.site.m2_dense

    @property
    def n(self) -> int:
        return self.site.n

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


def summarize_site(site: LdaSite, k: int) -> LdaDataSummary:
    """The summary of a validated site (K <= D - 1 checked by the caller): the K+1 largest eigenvalues of its M2
    (:func:`dpcore.linalg.top_eigenpairs`) and the global sensitivities at its N."""
    vals, _ = top_eigenpairs(site.m2_dense, k + 1)
    return LdaDataSummary(site=site, k=k, top_eigenvalues=vals, delta2=m2_sensitivity(site.n, site.alpha0),
                          delta3=m3_sensitivity(site.n, site.alpha0))


def summarize_data(counts: object, k: int, alpha0: float) -> LdaDataSummary:
    """M2_hat (dense D x D), its K+1 largest eigenvalues and the global sensitivities (validates the inputs)."""
    c = prepare_counts(counts)
    alpha0 = check_positive(alpha0, "alpha_0")
    k = check_rank(k, c.shape[1] - 1, dim_name="D - 1")
    return summarize_site(LdaSite(c, alpha0), k)


def sorted_tpm(tensor: np.ndarray, k: int, rng: np.random.Generator, n_restarts: int, n_iter: int) -> PowerResult:
    """The robust tensor power method, components in decreasing lambda."""
    return sorted_power(tensor_power_method(tensor, k, rng, n_restarts=n_restarts, n_iter=n_iter))


def unusable(configuration: int, conditions: list[Condition], notes: list[str], *,
             guarantee: str = LOCAL_GUARANTEE, budgets: tuple[EdgeBudget, ...] = ()) -> ConfigurationResult:
    """The result of a configuration whose condition failed: no topics, the failed conditions in words."""
    failed = [c for c in conditions if not c.holds]
    reason = f"configuration {configuration} is unusable on this corpus: " + "; and ".join(c.text for c in failed)
    return ConfigurationResult(configuration=configuration, usable=False, conditions=tuple(conditions), reason=reason,
                               budgets=budgets, guarantee=guarantee, notes=tuple(notes))


def finish(configuration: int, conditions: list[Condition], unnormalised: np.ndarray, eigenvalues: np.ndarray,
           alpha0: float, budgets: list[EdgeBudget], guarantee: str, notes: list[str]) -> ConfigurationResult:
    """Topics on the simplex, alpha from the eigenvalues, the result."""
    topics, more = to_simplex(unnormalised)
    notes.extend(more)
    return ConfigurationResult(configuration=configuration, usable=True, conditions=tuple(conditions), reason=None,
                               topics=topics, alpha=alpha_from_eigenvalues(eigenvalues, alpha0),
                               eigenvalues=np.asarray(eigenvalues), budgets=tuple(budgets), guarantee=guarantee,
                               notes=tuple(dict.fromkeys(notes)))


def symmetric_tensor_norm(k: int, alpha0: float) -> float:
    """||T||_F of the population whitened tensor for a symmetric alpha: sqrt(K) (2/(alpha_0+2)) sqrt((alpha_0+1) K),
    the smallest over all alpha with this alpha_0 (Cauchy-Schwarz on sum 1/alpha_i)."""
    return 2.0 / (alpha0 + 2.0) * k * math.sqrt(alpha0 + 1.0)
