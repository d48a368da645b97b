"""The steps the two-stage flows of the LDA algorithms share (capeLDA, conventional, pooled, local: docs/math/lda.md,
"capeLDA"), as functions of the family contract's :class:`~dpcore.family.RunContext` (``ctx.problem`` an
:class:`~dpcore.lda.LdaProblem`, ``ctx.settings`` the :class:`~dpcore.lda.LdaSettings`, ``ctx.path`` the
third-moment path). The table entries are :class:`dpcore.family.Algorithm`, collected by :mod:`dpcore.lda.table`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..family import RunContext
from ..tensor.release import StageNoise, release_m2, release_m3
from .budget import m3_noise_law, sorted_tpm
from .problem import LdaResult
from .recovery import alpha_from_eigenvalues, eigen_whitening, to_simplex, unwhiten
from .site import LdaSite

__all__ = ["two_stage"]


def two_stage(ctx: RunContext, sites: Sequence[LdaSite], weights: np.ndarray, stage2: StageNoise,
              stage3: StageNoise) -> LdaResult:
    """The flow of capeLDA and its baselines: M2_hat = sum_s mu_s (release_s - f_s)
    (:func:`dpcore.tensor.release_m2`), W = U Sigma^{-1/2} from its top-K eigenpairs, T = the aggregate of the
    projected M3 releases (:func:`dpcore.tensor.release_m3`; noise law :func:`~dpcore.lda.budget.m3_noise_law`),
    the robust tensor power method,
    mu_i = ((alpha_0+2)/2) lambda_i U Sigma^{1/2} v_i on the simplex, alpha_i from lambda_i. The un-whitening
    reuses the stage-1 release (post-processing).
    Raises WhiteningError when the noisy M2 has a non-positive top-K eigenvalue."""
    problem = ctx.problem
    m2, _ = release_m2(sites, weights, stage2, ctx.rng)
    whitening = eigen_whitening(m2, problem.k, noisy=stage2.mode != "none")
    tensor, _ = release_m3(sites, weights, whitening.w, stage3, ctx.rng, path=ctx.path,
                           law=m3_noise_law(ctx.path, problem.k))
    power = sorted_tpm(tensor, problem.k, ctx.rng, ctx.settings.n_restarts, ctx.settings.n_iter)
    back = whitening.u * np.sqrt(whitening.eigenvalues)
    topics, notes = to_simplex(unwhiten(back, power.eigenvalues, power.eigenvectors, problem.alpha0))
    return LdaResult(algorithm=ctx.name, usable=True, topics=topics,
                     alpha=alpha_from_eigenvalues(power.eigenvalues, problem.alpha0),
                     notes=notes)
