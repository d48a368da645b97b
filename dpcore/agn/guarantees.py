"""The privacy guarantee of every capeAGN algorithm's result, per view (:mod:`dpcore.cape.guarantee`;
docs/math/audit.md, "Guarantees of a run"): computed from the run's scenario, settings and data sizes, never written
by hand, by each entry of :data:`dpcore.agn.ALGORITHMS` (its ``guarantees`` rule). capeAGN's two stages are composed
exactly in every view; the one-party baselines give the published output's guarantee and say that their curator sees
the data; an algorithm of kind "none" gives none."""

from __future__ import annotations

from ..cape.guarantee import Guarantee
from ..family import GuaranteeContext
from ..scenario import Scenario
from ..tensor.release import STAGES
from .problem import OtdProblem, OtdSettings
from .table import algorithm

__all__ = ["STAGES", "comparison_guarantees", "otd_guarantees"]


def otd_guarantees(name: str, scenario: Scenario, problem: OtdProblem, settings: OtdSettings,
                   ) -> tuple[Guarantee, ...]:
    """The guarantees of algorithm ``name`` (a key of :data:`dpcore.agn.ALGORITHMS`, checked) run on ``problem``
    with the budgets of ``scenario`` and ``settings`` (its budget split and collusion bound)."""
    ctx = GuaranteeContext(name=name, scenario=scenario, problem=problem, settings=settings)
    return algorithm(name).guarantees_of(ctx)


def comparison_guarantees(result) -> dict[str, tuple[Guarantee, ...]]:
    """The guarantees of every algorithm of an :class:`~dpcore.agn.OtdComparison`."""
    return {name: otd_guarantees(name, result.scenario, result.problem, result.settings)
            for name in result.algorithms}
