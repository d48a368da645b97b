"""capePCA (Algorithm 2 of the journal paper, generalized weights of docs/math/cape.md): the real message flow.

Helper noise E_s (sum_s mu_s E_s = 0), aggregator noise F_s and site noise G_s come from a
:class:`~dpcore.cape.NoiseDesign` (the general solver by default, tau_s = Delta_s c(eps_s, delta_s)); site s
releases A_hat_s = A_s + E_s + F_s + G_s; the aggregator forms sum_s mu_s (A_hat_s - F_s) and takes its top-K
eigenvectors. Nothing is simulated at the pooled level (docs/math/corrections.md, item 7).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...cape import CapeNoise, NoiseDesign, sample_noise
from ...privacy.symmetric import symmetric_matrix
from ...validation import InputError, check_choice
from ..algorithm import PcaAlgorithm
from ..problem import PcaPrivacy, PcaProblem, check_pair
from ..result import PcaResult, decompose

__all__ = ["ALGORITHM", "CapeMessages", "cape_aggregate", "cape_messages", "cape_pca"]


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


def communication(n_sites: int, dim: int, rank: int | None = None) -> int:
    """3 S D^2: E_s, F_s and A_hat_s for every site."""
    return 3 * n_sites * dim * dim


def cape_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
             keep_matrix: bool = False) -> PcaResult:
    """capePCA: the real site -> aggregator message flow (module docstring)."""
    check_pair(problem, privacy)
    messages = cape_messages(problem.site_moments, privacy.design, rng)
    estimate = cape_aggregate(messages.released, messages.f, privacy.design.weights)
    return decompose("cape", problem, estimate, communication(problem.n_sites, problem.dim),
                     privacy.design.output_std, keep_matrix)


ALGORITHM = PcaAlgorithm(
    name="cape", title="capePCA", position=10, paper_order=1, colour="#d62728", collusion_robust=True,
    description="capePCA: sites release A_s + E_s + F_s + G_s, the aggregator removes F_s and averages, E cancels",
    communication_text="3 S D^2: helper -> site E_s, aggregator -> site F_s, site -> aggregator A_hat_s",
    communication=communication,
    run=lambda problem, privacy, rng, options: cape_pca(problem, privacy, rng, keep_matrix=options.keep_matrix),
)
