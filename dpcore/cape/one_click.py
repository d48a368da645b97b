"""Home's one-click lessons (docs/dashboard.md, "Home"): three buttons, each a scenario and the sentence that reads
it. Every number in a sentence comes from the scenario's plan (the headline gain, the site at the DP floor, the
audit, the collusion-robust design), and :func:`lesson_of` says which lesson, if any, the current scenario is, so
that the explanation follows the state: after **Undo** the scenario is no longer the lesson's and its sentence goes
(issue 29: "the gain falls to 1.16" stayed under a headline of 2.22).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..scenario import Scenario, preset_scenario, scenario_from_dict
from .gain import headline_of
from .plan import Plan, plan_scenario

__all__ = ["ONE_CLICKS", "OneClick", "lesson_of", "lesson_sentence"]


@dataclass(frozen=True, kw_only=True)
class OneClick:
    """A button of Home: its label and the scenario it loads (a preset, optionally with another calibration)."""

    key: str
    label: str
    preset: str
    calibration: str | None = None

    def scenario(self) -> Scenario:
        scenario = preset_scenario(self.preset)
        return scenario if self.calibration is None else scenario.replace(calibration=self.calibration)


ONE_CLICKS: dict[str, OneClick] = {c.key: c for c in (
    OneClick(key="wins", label="CAPE wins: equal sites", preset="equal"),
    OneClick(key="stops", label="CAPE stops helping: a strict site", preset="one-strict"),
    OneClick(key="breaks", label="A promise breaks: exact calibration", preset="default", calibration="analytic"),
)}


def lesson_of(scenario: Scenario) -> str | None:
    """The key of the lesson whose scenario ``scenario`` is, or None."""
    return next((key for key, c in ONE_CLICKS.items() if c.scenario() == scenario), None)


def _values(values: np.ndarray, fmt: str) -> str:
    low, high = np.min(values).item(), np.max(values).item()
    return f"{low:{fmt}}" if low == high else f"{low:{fmt}} to {high:{fmt}}"


def _sites(scenario: Scenario, budgets: bool = True) -> str:
    """'5 sites with 1,000 samples each and eps = 0.5' or '5 sites with 500 to 1,500 samples and eps = 0.3 to 0.8'."""
    each = " each" if len(set(scenario.sizes.tolist())) == 1 else ""
    text = f"{scenario.n_sites} sites with {_values(scenario.sizes.astype(int), ',')} samples{each}"
    return text + (f" and eps = {_values(scenario.eps, 'g')}" if budgets else "")


def _wins(plan: Plan, plan_of: Callable[[Scenario], Plan]) -> str:
    gain = headline_of(plan.design).gain
    s = plan.scenario.n_sites
    at_most = (f"the gain is S = {s}, the most CAPE can give {s} sites at the DP floor" if abs(gain - s) <= 1e-6 * s
               else f"the gain is {gain:.3g} (S = {s} at most)")
    return (f"{_sites(plan.scenario).capitalize()}. Every site's noise counts the same, so correlated noise removes "
            f"all but one S-th of it: {at_most}.")


def _stops(plan: Plan, plan_of: Callable[[Scenario], Plan]) -> str:
    scenario = plan.scenario
    head = headline_of(plan.design)
    strict = scenario.names.index(head.floor_site)
    others = np.delete(scenario.eps, strict)
    data = scenario.to_dict()
    data["sites"][strict]["eps"] = float(np.max(others))
    before = headline_of(plan_of(scenario_from_dict(data)).design).gain
    c = head.floor_site
    return (f"{_sites(scenario, budgets=False).capitalize()}: site {c} asks for eps = {scenario.eps[strict]:g}, the "
            f"others for {_values(others, 'g')}. Anyone who reads the published aggregate sees site {c} behind noise "
            f"tau_c / mu_{c}, so tau_c must be at least mu_{c} tau_{c} (the DP floor). That one site's noise is "
            f"{100 / head.gain:.0f}% of the noise variance the conventional scheme carries anyway: the gain falls to "
            f"{head.gain:.3g} (from {before:.3g} when site {c} asks for {float(np.max(others)):g} like the others), "
            f"and no noise design can do better, because the published average itself must hide site {c}.")


def _breaks(plan: Plan, plan_of: Callable[[Scenario], Plan]) -> str:
    scenario = plan.scenario
    failing = plan.audit.failing() if plan.audit is not None else []
    total = len(plan.audit.rows) if plan.audit is not None else 0
    sites = sorted({r.site for r in failing}, key=scenario.names.index)
    views = sorted({r.view for r in failing})
    text = (f"{_sites(scenario).capitalize()}, with the {scenario.calibration} (exact) calibration. Each release keeps "
            "its promise on its own, but the aggregator sees all of them and can combine them: ")
    if not failing:
        return text + "here the audit finds no view in which a site gets less privacy than promised."
    text += (f"the audit on the Noise design page finds {len(failing)} of {total} site-views in which a site gets less "
             f"privacy than promised (sites {', '.join(sites)}; views: {', '.join(views)})")
    robust = plan.robust
    if robust is not None and robust.feasible:
        text += (f", and the collusion-robust calibration buys it back with part of the gain "
                 f"({headline_of(plan.design).gain:.3g} to {robust.gain:.3g})")
    return text + "."


_SENTENCES: dict[str, Callable[[Plan, Callable[[Scenario], Plan]], str]] = {
    "wins": _wins, "stops": _stops, "breaks": _breaks}


def lesson_sentence(key: str, plan: Plan | None = None, plan_of: Callable[[Scenario], Plan] | None = None) -> str:
    """The sentence of lesson ``key``, read off ``plan`` (the plan of the mean of the lesson's scenario; computed when
    None) and, for the strict site, the plan of the same sites with that site's eps like the others'. ``plan_of``
    plans a scenario (default :func:`~dpcore.cape.plan.plan_scenario` of the mean; the dashboard passes its cached
    one)."""
    plan_of = plan_of or (lambda s: plan_scenario(s, "mean"))
    plan = plan if plan is not None else plan_of(ONE_CLICKS[key].scenario())
    return _SENTENCES[key](plan, plan_of)
