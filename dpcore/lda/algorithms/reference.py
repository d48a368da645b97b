"""The random reference (docs/math/lda.md): K topics drawn from the prior Dirichlet(c 1_D) of the synthetic topics
and alpha from a flat Dirichlet, using no data - the worst case every algorithm should beat."""

from __future__ import annotations

import numpy as np

from ...cape.guarantee import no_data
from ...family import Algorithm, RunContext
from ..problem import LdaResult

__all__ = ["ENTRIES"]


def _random(ctx: RunContext) -> LdaResult:
    problem = ctx.problem
    topics = ctx.rng.dirichlet(np.full(problem.dim, ctx.settings.topic_concentration), size=problem.k)
    alpha = problem.alpha0 * ctx.rng.dirichlet(np.ones(problem.k))
    return LdaResult(algorithm=ctx.name, usable=True, topics=topics, alpha=alpha)


ENTRIES = (
    Algorithm(
        name="random", title="random topics", position=90, default=True, colour="#7f7f7f", guarantee="none",
        private=False, uses_data=False,
        description="random topics from the prior Dirichlet(c) of the synthetic topics (c = 0.1 unless set), using no "
        "data: the worst-case reference",
        run=_random, guarantees=lambda ctx: no_data(),
    ),
)
