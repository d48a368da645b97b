"""The knobs the planner solves for, and the scenario at any value of one (docs/planner.md, "Questions").

One knob moves while the scenario holds the rest: the samples per site (every site scaled together, or one site),
eps (every site, or one site) or the number of equal sites. The aggregate noise of every scheme falls as the knob
grows (tau_s = Delta(N_s) c(eps_s, delta_s) falls in N_s and eps_s; more equal sites average more), which is what
lets :mod:`dpcore.planner.solve` invert it by bisection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from ..limits import EPS_RANGE, MAX_PLANNER_STUDY_NUMBERS, MAX_SITE_SIZE, MAX_SITES
from ..scenario import Scenario, Site, scenario_from_dict
from ..validation import InputError, check_choice

__all__ = ["KNOBS", "SHORT_FACTOR", "Knob", "Question", "at_value", "data_limit", "knob_value", "question"]

Knob = Literal["n", "eps", "sites"]
KNOBS: dict[str, str] = {
    "n": "samples per site",
    "eps": "eps",
    "sites": "number of equal sites",
}
"""The knobs (``--solve``), with what their answer counts."""
SHORT_FACTOR = 0.8
"""The check's point just short of the answer: this fraction of it (N_s, eps or S; at least 1 site, 1 sample)."""


@dataclass(frozen=True, kw_only=True)
class Question:
    """What to solve for: ``knob`` ("n", "eps", "sites"), ``site`` (the 0-based site whose N_s or eps moves alone;
    None: every site), ``target`` (on the family's headline metric)."""

    knob: str
    target: float
    site: int | None = None

    @property
    def integer(self) -> bool:
        return self.knob != "eps"

    def words(self, scenario: Scenario) -> str:
        """'samples per site', 'samples of site B', 'eps of every site', 'number of equal sites'."""
        if self.knob == "sites":
            return KNOBS["sites"]
        if self.site is None:
            return "samples per site" if self.knob == "n" else "eps of every site"
        what = "samples" if self.knob == "n" else "eps"
        return f"{what} of site {scenario.names[self.site]}"


def question(knob: str, target: float, scenario: Scenario, site: str | int | None = None) -> Question:
    """A checked :class:`Question`: ``site`` a site's name or 1-based position (only for n and eps)."""
    knob = check_choice(knob, "what to solve for", tuple(KNOBS))
    if not isinstance(target, (int, float)) or not math.isfinite(float(target)):
        raise InputError(f"the target must be a finite number (got {target!r})", "target")
    index = None
    if site is not None and site != "":
        if knob == "sites":
            raise InputError("a single site applies to n and eps, not to the number of sites", "site")
        names = scenario.names
        if isinstance(site, str) and site in names:
            index = names.index(site)
        else:
            try:
                index = int(site) - 1
            except (TypeError, ValueError):
                index = -1
            if not 0 <= index < scenario.n_sites:
                raise InputError(f"site {site!r} is not in the scenario: give a name ({', '.join(names[:6])}"
                                 f"{', ...' if len(names) > 6 else ''}) or a position 1..{scenario.n_sites}", "site")
    return Question(knob=knob, target=float(target), site=index)


def knob_value(q: Question, scenario: Scenario) -> float:
    """The knob's value in ``scenario`` (the mean N_s when every site moves and sizes differ; the largest eps)."""
    if q.knob == "sites":
        return scenario.n_sites
    values = scenario.sizes if q.knob == "n" else scenario.eps
    if q.site is not None:
        return float(values[q.site])
    return float(np.mean(values)) if q.knob == "n" else float(np.max(values))


def bounds(q: Question, scenario: Scenario, available: int | None, unit: str = "samples",
           drawable: int | None = None) -> tuple[float, float, str]:
    """The knob's range and what its upper end is: the tool's limit, the data the user has (``available``
    ``unit``) or the most one simulated study of synthetic data holds (``drawable``)."""
    if available is None and drawable is not None:
        available = drawable
        unit = f"{unit} one simulated study may hold (N x D at most {MAX_PLANNER_STUDY_NUMBERS:,} numbers)"
    if q.knob == "eps":
        return EPS_RANGE[0], EPS_RANGE[1], f"the largest eps this tool accepts ({EPS_RANGE[1]:g})"
    if q.knob == "sites":
        first = scenario.sites[0].n
        high, why = MAX_SITES, f"the most sites this tool accepts ({MAX_SITES})"
        if available is not None and available // first < high:
            high, why = available // first, f"the {available:,} {_have(unit)} ({first:,} per site)"
        return 1, max(high, 1), why
    sizes = scenario.sizes
    high, why = MAX_SITE_SIZE, f"the largest N_s this tool accepts ({MAX_SITE_SIZE:,})"
    if available is not None:
        if q.site is None:
            cap = available * float(np.mean(sizes)) / float(sizes.sum())
            high, why = math.floor(cap), f"the {available:,} {_have(unit)}"
        else:
            cap = available - (int(sizes.sum()) - int(sizes[q.site]))
            high, why = cap, f"the {available:,} {_have(unit)} (the other sites hold {available - cap:,})"
    return 1, max(high, 0), why


def data_limit(available: int | None, drawable: int | None, unit: str = "samples") -> tuple[int, str] | None:
    """The most samples a study may hold and its words: the data the user has, or what one simulated study of
    synthetic data may hold (None: no limit)."""
    if available is not None:
        return available, f"the {available:,} {unit} you have"
    if drawable is not None:
        return drawable, (f"the {drawable:,} {unit} one simulated study may hold (N x D at most "
                          f"{MAX_PLANNER_STUDY_NUMBERS:,} numbers)")
    return None


def _have(unit: str) -> str:
    """'samples you have', or the simulated study's limit as it is."""
    return unit if " " in unit else f"{unit} you have"


def at_value(q: Question, scenario: Scenario, value: float, *, checked: bool = False) -> Scenario:
    """The scenario with the knob at ``value`` (unchecked and fast for the bisection; ``checked`` validates it as any
    input is: the answer's scenario)."""
    sites = list(scenario.sites)
    if q.knob == "sites":
        first = sites[0]
        count = int(value)
        sites = [Site(name=f"s{i + 1}", n=first.n, eps=first.eps, delta=first.delta) for i in range(count)]
    elif q.knob == "n":
        if q.site is not None:
            sites[q.site] = replace(sites[q.site], n=int(value))
        else:
            mean = float(np.mean(scenario.sizes))
            sites = [replace(s, n=max(1, round(s.n * value / mean))) for s in sites]
    else:
        if q.site is not None:
            sites[q.site] = replace(sites[q.site], eps=float(value))
        else:
            top = float(np.max(scenario.eps))
            sites = [replace(s, eps=s.eps * float(value) / top) for s in sites]
    moved = replace(scenario, sites=tuple(sites))
    return scenario_from_dict(moved.to_dict()) if checked else moved


def short_of(q: Question, value: float) -> float:
    """The check's point just short of ``value``: :data:`SHORT_FACTOR` of it (whole numbers rounded down, at
    least 1)."""
    short = SHORT_FACTOR * value
    return max(1, math.floor(short)) if q.integer else short
