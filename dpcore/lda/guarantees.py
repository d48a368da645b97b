"""The privacy guarantee of every LDA algorithm's result, per view (:mod:`dpcore.cape.guarantee`; docs/math/audit.md,
"Guarantees of a run"), computed by each entry of :data:`dpcore.lda.ALGORITHMS` (its ``guarantees`` rule): capeLDA's
two stages composed exactly in every view (the aggregator's view can exceed the promise: the collusion-robust design
keeps it), the conventional scheme, one site alone, the trusted curator, paper 004's configurations (1 and 2ptr
certified by their calibration; 2, 3 and 4 not DP: local sensitivity); an algorithm of kind "none" gives none."""

from __future__ import annotations

from ..cape.guarantee import Guarantee
from ..family import GuaranteeContext
from ..scenario import Scenario
from ..tensor.release import STAGES
from .problem import LdaProblem, LdaSettings
from .table import algorithm

__all__ = ["STAGES", "curve_guarantees", "lda_guarantees"]


def lda_guarantees(name: str, scenario: Scenario, problem: LdaProblem, settings: LdaSettings,
                   ) -> tuple[Guarantee, ...]:
    """The guarantees of algorithm ``name`` (a key of :data:`dpcore.lda.ALGORITHMS`, checked) on ``problem`` (its
    sites' document counts) with the budgets of ``scenario`` (eps, delta and calibration) and ``settings`` (split,
    collusion)."""
    ctx = GuaranteeContext(name=name, scenario=scenario.with_sizes(problem.sizes), problem=problem, settings=settings)
    return algorithm(name).guarantees_of(ctx)


def curve_guarantees(curve, eps: float, settings: LdaSettings | None = None,
                     scenario: Scenario | None = None) -> dict[str, tuple[Guarantee, ...]]:
    """The guarantees of every algorithm of an :class:`~dpcore.lda.curves.LdaCurve` at one eps of its grid (every
    site's eps set to it; delta, calibration and settings as the curve was run)."""
    base = curve.scenario if scenario is None else scenario
    settings = curve.settings if settings is None else settings
    at = base.with_sites(eps=float(eps))
    return {name: lda_guarantees(name, at, curve.problem, settings) for name in curve.algorithms}
