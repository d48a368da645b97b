"""The family contract's table entry (docs/architecture.md, "The family contract"): one :class:`Algorithm` type for the
algorithms of every family (capePCA, capeAGN, capeLDA and their baselines), one runner signature
``run(ctx: RunContext) -> result``, and the sizes a communication cost is a function of.

An entry says everything every list of algorithms needs: the name (the key of its random stream, of every table and of
every command-line choice), the title shown in tables and legends, a description, its privacy (``guarantee``, a key
of :data:`GUARANTEES`), the communication cost as a formula (text) and as a function of :class:`Sizes`, the runner,
whether it runs by default, whether (and where) it is one of the paper's curves, its colour, and what its result
depends on (a privacy budget, the data, the collusion bound c), which the sweeps use to compute a result once when it
cannot change along the swept parameter. docs/adding-a-baseline.md shows how to add one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..scenario import Scenario

__all__ = ["GUARANTEES", "Algorithm", "RunContext", "Runner", "Sizes"]

GUARANTEES: dict[str, str] = {
    "dp": "calibrated to (eps, delta)",
    "local": "not DP as published (local sensitivity)",
    "none": "no privacy",
}
"""The kinds of privacy an entry can give (its ``guarantee`` field); each result states the details."""


@dataclass(frozen=True, kw_only=True)
class Sizes:
    """What a communication cost depends on: S sites, dimension D, and where a family has them the components K,
    DPdisPCA's rank R and the third-moment path ("dense" or "projected")."""

    n_sites: int
    dim: int
    k: int | None = None
    rank: int | None = None
    path: str | None = None


@dataclass(frozen=True, kw_only=True)
class RunContext:
    """One algorithm in one run, the only argument of every runner.

    ``name``: the algorithm's (its stream's key); ``problem``: the family's data (``PcaProblem``, ``OtdProblem``,
    ``LdaProblem``); ``scenario``: the budgets (its N_s are the sites' sizes; None for a PCA run given only its noise
    levels); ``settings``: the family's options (``PcaOptions``, ``OtdSettings``, ``LdaSettings``); ``rng``: the
    algorithm's own generator; ``path``: the third-moment path of the tensor families ("dense" or "projected");
    ``privacy``: what a family computes once per comparison from the scenario (PCA: ``PcaPrivacy``, the noise levels
    and the CAPE design)."""

    name: str
    problem: Any
    scenario: Scenario | None
    settings: Any
    rng: np.random.Generator
    path: str | None = None
    privacy: Any = None


Runner = Callable[[RunContext], Any]
"""``run(ctx) -> result``: the family's result type (``PcaResult``, ``Decomposition``, ``LdaResult``)."""


@dataclass(frozen=True, kw_only=True)
class Algorithm:
    """One row of an algorithm table (every family).

    ``position`` orders the table (and the default lists; unique within the family); ``default``: run when the user
    does not choose; ``paper_order``: the position in the paper's figure legend (None: not in the figures).
    ``communication(Sizes)`` is the number of values one run sends (``communication_text``: the formula with who sends
    what; None: not modelled, e.g. one curator). ``private`` (the result depends on eps and delta), ``uses_data`` and
    ``collusion_robust`` (it uses the collusion bound c) tell a sweep along which parameters the result cannot
    change; ``dense_only``: no projected third-moment sampler (tensor families); ``distributed``: the sites keep
    their data (rather than handing them to one curator)."""

    name: str
    title: str
    description: str
    run: Runner
    colour: str
    position: int
    guarantee: str = "dp"
    communication_text: str = ""
    communication: Callable[[Sizes], int] | None = None
    default: bool = False
    paper_order: int | None = None
    private: bool = True
    uses_data: bool = True
    collusion_robust: bool = False
    dense_only: bool = False
    distributed: bool = False

    def __post_init__(self) -> None:
        if self.guarantee not in GUARANTEES:
            raise TypeError(f"algorithm {self.name}: guarantee must be one of {', '.join(GUARANTEES)}")
