"""Paper 004's four noise configurations as table entries (docs/math/lda.md, "The four configurations"): one curator
holds every document and spends the strictest site budget (eps, delta), split equally over the configuration's
edges. Configuration 1 is (eps, delta)-DP; 2, 3 and 4 calibrate to local sensitivities and are not DP as published;
"2ptr" is configuration 2 made DP by propose-test-release. A configuration whose condition fails on the corpus
returns no topics and the reason."""

from __future__ import annotations

from ...cape.guarantee import Guarantee, basic_guarantees, calibrated_stage, curator_guarantees, not_dp
from ...family import Algorithm, GuaranteeContext, RunContext
from ..budget import CONFIGURATIONS, LOCAL_GUARANTEE, edge_budgets
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
    return LdaResult(algorithm=ctx.name, usable=res.usable, topics=res.topics, alpha=res.alpha, reason=res.reason,
                     conditions=res.conditions, notes=res.notes)


def _configuration_guarantees(ctx: GuaranteeContext) -> tuple[Guarantee, ...]:
    """One curator spends the strictest site budget over the configuration's edges: configuration 1 certified by
    its Gaussian calibration, 2ptr by basic composition of its test and its noise, 2, 3 and 4 not DP (local
    sensitivity)."""
    number, privacy = configuration_of(ctx.name)
    cal = ctx.scenario.calibration
    strict_eps, strict_delta = float(ctx.scenario.eps.min()), float(ctx.scenario.delta.min())
    if privacy == "local":
        if number != 1:
            return not_dp(strict_eps, strict_delta, f"paper 004's configuration {number}: {LOCAL_GUARANTEE}")
        edges = edge_budgets(1, strict_eps, strict_delta)
        stages = [calibrated_stage(e, [be], [bd], cal) for e, (be, bd) in edges.items()]
        return curator_guarantees(stages, eps=strict_eps, delta=strict_delta, names=["every site"], calibration=cal,
                                  shares=tuple(be / strict_eps for be, _ in edges.values()),
                                  who="paper 004's configuration 1 at one trusted curator (Gaussian noise at global "
                                  "sensitivities on e3, e4, e8)")
    edges = edge_budgets(number, strict_eps, strict_delta, None, privacy)
    valid = cal == "analytic" or max(be for be, _ in edges.values()) < 1.0
    return basic_guarantees([be for be, _ in edges.values()], eps=strict_eps, delta=strict_delta, site="every site",
                            valid=valid, trusted=True, who="configuration 2 by propose-test-release at one trusted "
                            "curator (a Laplace test, then Gaussian noise at the proposed bound)")


def _entry(name: str, title: str, position: int, colour: str, guarantee: str, description: str) -> Algorithm:
    return Algorithm(name=name, title=title, position=position, colour=colour, guarantee=guarantee,
                     description=description, run=_configuration, guarantees=_configuration_guarantees)


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
