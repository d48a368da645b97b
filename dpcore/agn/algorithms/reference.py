"""The random reference (docs/math/capeagn.md): components drawn from the model's prior, using no data - the
worst case every algorithm should beat."""

from __future__ import annotations

import numpy as np

from ...cape.guarantee import no_data
from ...family import Algorithm, RunContext
from ..models import random_components
from ..problem import Decomposition

__all__ = ["ENTRIES"]


def _random(ctx: RunContext) -> Decomposition:
    problem = ctx.problem
    k = problem.k
    comps = random_components(problem.kind, problem.dim, k, ctx.rng, norm=problem.random_norm,
                              topic_concentration=ctx.settings.topic_concentration)
    weights = ctx.rng.dirichlet(np.ones(k))
    return Decomposition(algorithm=ctx.name, components=comps, weights=weights, eigenvalues=np.full(k, np.nan),
                         whitening_eigenvalues=None, path=ctx.path)


ENTRIES = (
    Algorithm(
        name="random", title="random vectors", position=70, default=True, paper_order=5, colour="#7f7f7f",
        private=False, uses_data=False, guarantee="none",
        description="random vectors from the model's prior (uses no data): the worst-case reference",
        communication_text="0: uses no data", communication=lambda sizes: 0, run=_random,
        guarantees=lambda ctx: no_data(),
    ),
)
