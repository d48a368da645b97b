"""Method of moments for LDA: whitening, the robust tensor power method, recovery of topics and alpha.

Paper 004, section 3.1 (Figure 1, edges e0..e8). With W a D x K matrix such that W^T M2 W = I_K, the
whitened tensor is T = M3(W, W, W) = sum_i lambda_i v_i^(x)3 with orthonormal v_i = sqrt(w_i) W^T mu_i,
w_i = alpha_i / (alpha_0 (alpha_0 + 1)) and

    lambda_i = (2 / (alpha_0 + 2)) sqrt(alpha_0 (alpha_0 + 1) / alpha_i).

So alpha_i = 4 alpha_0 (alpha_0 + 1) / ((alpha_0 + 2)^2 lambda_i^2), and since M2 W v_i = sqrt(w_i) mu_i,

    mu_i = ((alpha_0 + 2) / 2) lambda_i B v_i,   B = M2 W = (W^T)^+ when W = U Sigma^{-1/2}.

The un-whitening matrix B is the paper's W^dagger (edge e8). Recovered topics are mapped to the simplex by
zeroing negative entries and renormalising (scale-free, so the factor (alpha_0 + 2)/2 and a noisy lambda_i
do not matter); components are listed in decreasing lambda_i.

Topic error (the metric of every LDA result): the mean over topics of the L1 distance ||mu_hat_i - mu_pi(i)||_1
between probability vectors, after the one-to-one matching pi that minimises the total (Hungarian method).
It lies in [0, 2] (2 = disjoint supports); half of it is the total-variation distance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..family import Metric, metric_table
from ..tensor.power import DEFAULT_ITERATIONS, DEFAULT_RESTARTS, PowerResult, tensor_power_method
from ..tensor.whitening import Whitening, WhiteningError, whiten
from ..validation import check_positive, check_rank
from .moments import lda_m2, lda_m3_projected, prepare_counts

__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_RESTARTS",
    "METRICS",
    "LdaFit",
    "alpha_from_eigenvalues",
    "eigen_whitening",
    "evaluate_topics",
    "fit_lda",
    "match_topics",
    "sorted_power",
    "to_simplex",
    "topic_error",
    "unwhiten",
]


METRICS: dict[str, Metric] = metric_table((
    Metric(name="topic_error", label="topic error (mean L1 per topic)", words="topic error", higher_is_better=False,
           description="topic error: mean L1 distance per topic after optimal matching, in [0, 2] (lower is better)",
           bounds=(0.0, 2.0), compute=lambda topics, reference: topic_error(topics, reference)),
))
"""Every LDA metric (module docstring), in the order tables show them, each ``compute(topics, reference_topics)``:
the comparisons, curves and sweeps evaluate every result with each."""


def evaluate_topics(topics: np.ndarray, reference: np.ndarray) -> dict[str, float]:
    """Every metric of :data:`METRICS` of recovered ``topics`` against the ``reference`` topics, by name."""
    return {name: m.compute(topics, reference) for name, m in METRICS.items()}


@dataclass(frozen=True, eq=False)
class LdaFit:
    """Recovered topics (K x D probability vectors, decreasing lambda), alpha (K), the whitened tensor's
    eigenvalues lambda_i and the top-K eigenvalues of the M2 used for whitening."""

    topics: np.ndarray
    alpha: np.ndarray
    eigenvalues: np.ndarray
    m2_eigenvalues: np.ndarray
    notes: tuple[str, ...] = ()


def eigen_whitening(m2: np.ndarray, k: int, *, noisy: bool) -> Whitening:
    """W = U Sigma^{-1/2} from the top-K (algebraic) eigenpairs of the symmetric ``m2`` (the project's
    :func:`dpcore.tensor.whiten`); a non-positive eigenvalue raises WhiteningError explained for LDA."""
    try:
        return whiten(m2, k, noisy=noisy)
    except WhiteningError as exc:
        vals = exc.eigenvalues
        bad = int(np.sum(vals <= 1e-12 * max(float(np.max(np.abs(vals))), 1e-300)))
        if noisy:
            message = (f"whitening failed: {bad} of the top K = {k} eigenvalues of the noisy LDA second moment are "
                       f"<= 0 (the smallest is {vals[-1]:.3g}), so W = U Sigma^(-1/2) does not exist: the privacy "
                       "noise on M2 is larger than its K-th eigenvalue. More documents, a larger eps (or a larger "
                       "share of it for M2) or a smaller K would help.")
        else:
            message = (f"whitening failed: the LDA second moment M2 has only {k - bad} positive eigenvalue(s) among "
                       f"its top K = {k} (the smallest is {vals[-1]:.3g}); the corpus does not support {k} topics with "
                       "alpha_0 as given. Choose a smaller K or a different alpha_0.")
        raise WhiteningError(message, vals, k) from None


def sorted_power(power: PowerResult) -> PowerResult:
    """The same eigenpairs in decreasing lambda (a canonical order for releases and comparisons)."""
    order = np.argsort(-power.eigenvalues, kind="stable")
    return PowerResult(power.eigenvalues[order], power.eigenvectors[:, order], power.notes)


def alpha_from_eigenvalues(eigenvalues: np.ndarray, alpha0: float) -> np.ndarray:
    """alpha_i = 4 alpha_0 (alpha_0 + 1) / ((alpha_0 + 2)^2 lambda_i^2) (lambda_i <= 0 gives inf)."""
    lam = np.asarray(eigenvalues, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(lam > 0, 4.0 * alpha0 * (alpha0 + 1.0) / ((alpha0 + 2.0) ** 2 * np.maximum(lam, 1e-300) ** 2),
                        np.inf)


def unwhiten(back: np.ndarray, eigenvalues: np.ndarray, eigenvectors: np.ndarray, alpha0: float) -> np.ndarray:
    """Unnormalised topics mu_i = ((alpha_0 + 2) / 2) lambda_i B v_i as rows (K x D); B = ``back`` (D x K)."""
    return (((alpha0 + 2.0) / 2.0) * (back @ eigenvectors) * np.asarray(eigenvalues)).T


def to_simplex(unnormalised: np.ndarray) -> tuple[np.ndarray, tuple[str, ...]]:
    """Zero the negative entries of each row and renormalise it to sum 1 (a row with no positive entry
    becomes uniform, and a note says so)."""
    comps = np.clip(np.asarray(unnormalised, dtype=float), 0.0, None)
    sums = comps.sum(axis=1)
    empty = sums <= 0
    notes: tuple[str, ...] = ()
    if empty.any():
        notes = (f"{int(empty.sum())} recovered topic(s) had no positive entry and were set to uniform",)
        comps[empty] = 1.0
        sums = comps.sum(axis=1)
    return comps / sums[:, None], notes


def fit_lda(
    counts: object, k: int, alpha0: float, rng: np.random.Generator, *, n_restarts: int = DEFAULT_RESTARTS,
    n_iter: int = DEFAULT_ITERATIONS,
) -> LdaFit:
    """Non-private method of moments: M2_hat, W = U Sigma^{-1/2} (top-K eigenpairs), T = M3_hat(W, W, W) from
    the counts (no D^3 array), robust tensor power method (``rng`` draws its starts), recovery."""
    c = prepare_counts(counts)
    k = check_rank(k, c.shape[1])
    alpha0 = check_positive(alpha0, "alpha_0")
    wh = eigen_whitening(lda_m2(c, alpha0), k, noisy=False)
    tensor = lda_m3_projected(c, alpha0, wh.w)
    power = sorted_power(tensor_power_method(tensor, k, rng, n_restarts=n_restarts, n_iter=n_iter))
    back = wh.u * np.sqrt(wh.eigenvalues)  # (W^T)^+ = U Sigma^{1/2}
    topics, notes = to_simplex(unwhiten(back, power.eigenvalues, power.eigenvectors, alpha0))
    return LdaFit(topics, alpha_from_eigenvalues(power.eigenvalues, alpha0), power.eigenvalues, wh.eigenvalues,
                  notes)


def match_topics(estimated: np.ndarray, reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The one-to-one matching minimising the total L1 distance: (reference index of each estimated topic,
    the L1 distances). Needs as many estimated as reference topics."""
    est = np.asarray(estimated, dtype=float)
    ref = np.asarray(reference, dtype=float)
    cost = np.abs(est[:, None, :] - ref[None, :, :]).sum(axis=2)
    rows, cols = linear_sum_assignment(cost)
    match = np.empty(est.shape[0], dtype=int)
    match[rows] = cols
    return match, cost[np.arange(est.shape[0]), match]


def topic_error(estimated: np.ndarray, reference: np.ndarray) -> float:
    """Mean over topics of ||mu_hat_i - mu_pi(i)||_1 after the optimal one-to-one matching pi (in [0, 2])."""
    return float(match_topics(estimated, reference)[1].mean())
