"""The family contract's table entry (docs/architecture.md, "The family contract"): one :class:`Algorithm` type for the
algorithms of every family (capePCA, capeAGN, capeLDA and their baselines), one runner signature
``run(ctx: RunContext) -> result``, and the sizes a communication cost is a function of.

An entry says everything every list of algorithms needs: the name (the key of its random stream, of every table and of
every command-line choice), the title shown in tables and legends, a description, its privacy (``guarantee``, a key
of :data:`GUARANTEES`, and ``guarantees``, the rule that computes what a run guarantees per view from a
:class:`GuaranteeContext`), the communication cost as a formula (text) and as a function of :class:`Sizes`, the runner,
whether it runs by default, whether (and where) it is one of the paper's curves, its colour, and what its result
depends on (a privacy budget, the data, the collusion bound c), which the sweeps use to compute a result once when it
cannot change along the swept parameter. docs/adding-a-baseline.md shows how to add one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cape.guarantee import Guarantee, no_privacy
from ..scenario import Scenario

__all__ = ["GUARANTEES", "Algorithm", "GuaranteeContext", "GuaranteeRule", "PlannerScheme", "RunContext", "Runner",
           "Sizes"]

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
class GuaranteeContext:
    """What a run's privacy guarantee is computed from (docs/math/audit.md, "Guarantees of a run"), the only argument
    of every entry's ``guarantees`` rule: the algorithm's ``name``, the budgets (``scenario``, its N_s the sites'
    sizes), the family's data and settings (``problem``, ``settings``: what the run used; ``problem`` None where the
    family's rules need none, as PCA's), ``privacy`` (PCA: ``PcaPrivacy``, the noise levels and the CAPE design) and
    ``collusion``, c of the coalition view when the caller chooses it (None: the family's rule, such as the
    collusion-robust design's own c, else ceil(S/3) - 1)."""

    name: str
    scenario: Scenario
    problem: Any = None
    settings: Any = None
    privacy: Any = None
    collusion: int | None = None


GuaranteeRule = Callable[[GuaranteeContext], tuple[Guarantee, ...]]
"""``guarantees(ctx) -> (Guarantee, ...)``: one per view (:mod:`dpcore.cape.guarantee`), computed, never written."""


@dataclass(frozen=True, kw_only=True)
class PlannerScheme:
    """What the planner reads of an algorithm whose run releases the pooled statistic plus noise of one aggregate std
    per unique entry and stage (docs/planner.md, "The method"): the planner answers for every entry of a family's
    table that gives one, in table order, the first the headline's. ``noise(scenario, settings)``: those stds, one per
    stage of the family's planner (``settings``: its data settings), in closed form - an upper bound where the exact
    one needs a search (discrete CAPE's, :func:`dpcore.cape.discrete.output_std_bound`), so that a bisection can call
    it; ``ring(scenario, settings)``: the bits per value its values travel on at a scenario (None: float64), raising
    InputError where its design cannot be carried out (a ring beyond 64 bits); ``words``: how a sentence names it
    (default: the entry's title)."""

    noise: Callable[[Scenario, Any], np.ndarray]
    ring: Callable[[Scenario, Any], int | None] | None = None
    words: str | None = None


@dataclass(frozen=True, kw_only=True)
class Algorithm:
    """One row of an algorithm table (every family).

    ``position`` orders the table (and the default lists; unique within the family); ``default``: run when the user
    does not choose; ``paper_order``: the position in the paper's figure legend (None: not in the figures).
    ``communication(Sizes)`` is the number of values one run sends (``communication_text``: the formula with who sends
    what; None: not modelled, e.g. one curator). ``private`` (the result depends on eps and delta), ``uses_data`` and
    ``collusion_robust`` (it uses the collusion bound c) tell a sweep along which parameters the result cannot
    change; ``dense_only``: no projected third-moment sampler (tensor families); ``distributed``: the sites keep
    their data (rather than handing them to one curator); ``planner``: how the planner answers for it
    (:class:`PlannerScheme`; None: it does not, as for baselines whose noise is not one term on the aggregate).

    ``guarantee`` is its kind of privacy (a key of :data:`GUARANTEES`); ``guarantees`` the rule that computes a run's
    guarantee per view (:meth:`guarantees_of`). An entry whose kind is not "none" must give its rule, so a private
    algorithm is never reported as "no privacy" by default; an entry of kind "none" without one gives
    :func:`~dpcore.cape.guarantee.no_privacy`."""

    name: str
    title: str
    description: str
    run: Runner
    colour: str
    position: int
    guarantee: str = "dp"
    guarantees: GuaranteeRule | None = None
    communication_text: str = ""
    communication: Callable[[Sizes], int] | None = None
    default: bool = False
    paper_order: int | None = None
    private: bool = True
    uses_data: bool = True
    collusion_robust: bool = False
    dense_only: bool = False
    distributed: bool = False
    planner: PlannerScheme | None = None

    def __post_init__(self) -> None:
        if self.guarantee not in GUARANTEES:
            raise TypeError(f"algorithm {self.name}: guarantee must be one of {', '.join(GUARANTEES)}")
        if self.guarantee != "none" and self.guarantees is None:
            raise TypeError(f"algorithm {self.name}: an algorithm with guarantee {self.guarantee!r} must give "
                            "guarantees=, the rule that computes its guarantee per view (docs/adding-a-baseline.md)")

    def guarantees_of(self, ctx: GuaranteeContext) -> tuple[Guarantee, ...]:
        """The guarantee of a run per view: the entry's rule, or "no privacy" for an entry of kind "none" without
        one."""
        return no_privacy() if self.guarantees is None else self.guarantees(ctx)
