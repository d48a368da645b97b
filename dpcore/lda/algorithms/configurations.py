"""Paper 004's four noise configurations as table entries (docs/math/lda.md, "The four configurations"): one curator
holds every document and spends the strictest site budget (eps, delta), split equally over the configuration's
edges. Configuration 1 is (eps, delta)-DP; 2, 3 and 4 calibrate to local sensitivities and are not DP as published;
"2ptr" is configuration 2 made DP by propose-test-release. A configuration whose condition fails on the corpus
returns no topics and the reason."""

from __future__ import annotations

from ...family import Algorithm, RunContext
from ..budget import CONFIGURATIONS, edge_budgets
from ..configurations import run_configuration_unchecked
from ..problem import LdaResult

__all__ = ["ENTRIES", "configuration_of"]

_NAMES = {"1": (1, "local"), "2": (2, "local"), "2ptr": (2, "ptr"), "3": (3, "local"), "4": (4, "local")}


def configuration_of(name: str) -> tuple[int, str]:
    """(configuration number, privacy mode) of a table entry "1", "2", "2ptr", "3" or "4"."""
    return _NAMES[name]


def _configuration(ctx: RunContext) -> LdaResult:
    number, privacy = configuration_of(ctx.name)
    scenario = ctx.scenario
    eps, delta = float(scenario.eps.min()), float(scenario.delta.min())
    budget = edge_budgets(number, eps, delta, None, privacy)
    res = run_configuration_unchecked(number, ctx.problem.summary, budget, scenario.calibration, ctx.rng,
                                      privacy=privacy, n_restarts=ctx.settings.n_restarts,
                                      n_iter=ctx.settings.n_iter)
    guarantee = (f"{res.guarantee}; one curator holds every document and spends (eps, delta) = ({eps:g}, {delta:g}), "
                 "the strictest site budget, split equally over the edges")
    return LdaResult(algorithm=ctx.name, usable=res.usable, topics=res.topics, alpha=res.alpha, guarantee=guarantee,
                     reason=res.reason, conditions=res.conditions, notes=res.notes)


def _entry(name: str, title: str, position: int, colour: str, guarantee: str, description: str) -> Algorithm:
    return Algorithm(name=name, title=title, position=position, colour=colour, guarantee=guarantee,
                        description=description, run=_configuration)


ENTRIES = (
    _entry("1", "configuration 1", 60, "#ff7f0e", "dp", f"paper 004, configuration 1: {CONFIGURATIONS[1]}"),
    _entry("2", "configuration 2", 62, "#e377c2", "local", f"paper 004, configuration 2: {CONFIGURATIONS[2]}; not DP "
           "as published (local sensitivity)"),
    _entry("2ptr", "configuration 2 (PTR)", 63, "#f7b6d2", "dp", "configuration 2 made differentially private by "
           "propose-test-release: a public bound b on the sensitivity of T, a private test that the corpus is far "
           "from any corpus where b fails, noise at b"),
    _entry("3", "configuration 3", 64, "#bcbd22", "local", f"paper 004, configuration 3: {CONFIGURATIONS[3]}; not DP "
           "as published (local sensitivity)"),
    _entry("4", "configuration 4", 66, "#17becf", "local", f"paper 004, configuration 4: {CONFIGURATIONS[4]}; not DP "
           "as published (local sensitivity)"),
)
