"""The entry type of the LDA algorithm table (:mod:`dpcore.lda.table`), the context a runner receives, and the steps
the two-stage flows share (capeLDA, conventional, pooled, local: docs/math/lda.md, "capeLDA").

An entry carries the name (the key of its random stream, of every table and of the command line's
``--configuration``), title, description, its privacy in words, the runner, the default flag, its colour, and what
its result depends on (a privacy budget, the data, the collusion bound c), which the sweeps use to compute a result
once when it cannot change along the swept parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..otd.release import StageNoise, release_m2, release_m3
from ..scenario import Scenario
from .budget import m3_noise_law, sorted_tpm
from .problem import LdaProblem, LdaResult, LdaSettings
from .recovery import alpha_from_eigenvalues, eigen_whitening, to_simplex, unwhiten
from .site import LdaSite

__all__ = ["GUARANTEES", "LdaAlgorithm", "RunContext", "Runner"]

GUARANTEES: dict[str, str] = {
    "dp": "calibrated to (eps, delta)",
    "local": "not DP as published (local sensitivity)",
    "none": "no privacy",
}
"""The kinds of privacy an entry can give (its ``guarantee`` field); each result states the details."""


@dataclass(frozen=True, kw_only=True)
class RunContext:
    """One algorithm in one run: the documents, the budgets (``scenario``, whose N_s are the sites' document counts),
    the settings, the algorithm's own generator and the third-moment path ("dense" or "projected")."""

    name: str
    problem: LdaProblem
    scenario: Scenario
    settings: LdaSettings
    rng: np.random.Generator
    path: str

    @property
    def relation(self) -> str:
        return f"replace-one-document neighbours, {self.scenario.calibration} calibration"

    def two_stage(self, sites: Sequence[LdaSite], weights: np.ndarray, stage2: StageNoise, stage3: StageNoise,
                  guarantee: str) -> LdaResult:
        """The flow of capeLDA and its baselines: M2_hat = sum_s mu_s (release_s - f_s)
        (:func:`dpcore.otd.release_m2`), W = U Sigma^{-1/2} from its top-K eigenpairs, T = the aggregate of the
        projected M3 releases (:func:`dpcore.otd.release_m3`; noise law :func:`~dpcore.lda.budget.m3_noise_law`),
        the robust tensor power method,
        mu_i = ((alpha_0+2)/2) lambda_i U Sigma^{1/2} v_i on the simplex, alpha_i from lambda_i. The un-whitening
        reuses the stage-1 release (post-processing).
        Raises WhiteningError when the noisy M2 has a non-positive top-K eigenvalue."""
        problem = self.problem
        m2, _ = release_m2(sites, weights, stage2, self.rng)
        whitening = eigen_whitening(m2, problem.k, noisy=stage2.mode != "none")
        tensor, _ = release_m3(sites, weights, whitening.w, stage3, self.rng, path=self.path,
                                law=m3_noise_law(self.path, problem.k))
        power = sorted_tpm(tensor, problem.k, self.rng, self.settings.n_restarts, self.settings.n_iter)
        back = whitening.u * np.sqrt(whitening.eigenvalues)
        topics, notes = to_simplex(unwhiten(back, power.eigenvalues, power.eigenvectors, problem.alpha0))
        return LdaResult(algorithm=self.name, usable=True, topics=topics,
                         alpha=alpha_from_eigenvalues(power.eigenvalues, problem.alpha0), guarantee=guarantee,
                         notes=notes)


Runner = Callable[[RunContext], LdaResult]


@dataclass(frozen=True, kw_only=True)
class LdaAlgorithm:
    """One row of the LDA algorithm table.

    ``guarantee`` is a key of :data:`GUARANTEES`; ``position`` orders the table; ``default``: run when the user does
    not choose. ``private`` (the result depends on eps and delta), ``uses_data`` and ``collusion_robust`` (it uses
    the collusion bound c) tell a sweep along which parameters the result cannot change; ``distributed``: the sites
    keep their documents (capeLDA, conventional, local) rather than handing them to one curator."""

    name: str
    title: str
    description: str
    guarantee: str
    run: Runner
    colour: str
    position: int
    default: bool = False
    private: bool = True
    uses_data: bool = True
    collusion_robust: bool = False
    distributed: bool = False
