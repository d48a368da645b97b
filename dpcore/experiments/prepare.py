"""Preparing a sweep (docs/experiments.md): the scenario of every grid point, the family's part (its data, problems
and settings per grid point: ``Family.sweep.plan``, :class:`dpcore.family.FamilySweep`), the designs and gains,
which algorithms cannot change along the swept parameter, and the notes. Prepared sweeps are cached
(:mod:`dpcore.experiments.cache`) without their runs and algorithms, which they do not depend on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..family import GridPoint
from ..scenario import Scenario
from .cache import lookup_plan, store_plan
from .designs import grid_designs, sweep_gains
from .families import FAMILIES, invariant_algorithms
from .spec import SweepSpec, scenario_at

__all__ = ["GridPoint", "SweepPlan", "algorithm_notes", "sweep_plan"]


@dataclass(frozen=True, eq=False, kw_only=True)
class SweepPlan:
    """What a sweep needs besides its runs and algorithms (cached by :func:`_plan_key`, which leaves those out:
    use the caller's spec for them, never ``spec`` here): the grid points, the algorithms that cannot change along
    the parameter, the notes, the gains, and the family's run state (:class:`dpcore.family.FamilyPlan`):
    ``replay`` (PCA standard normals replayed across grid points), ``model``, ``sizes_max``, ``path`` (a synthetic
    ground truth, the largest site sizes and the third-moment path)."""

    spec: SweepSpec
    points: tuple[GridPoint, ...]
    invariant: frozenset[str]
    notes: tuple[str, ...]
    gains: pd.DataFrame
    replay: bool = False
    model: Any = None
    sizes_max: tuple[int, ...] = ()
    path: str | None = None


def _caveats(spec: SweepSpec, scenarios: list[Scenario]) -> list[str]:
    """Scenario.caveats() condensed over the grid: one line per kind naming the eps values or grid points."""
    notes = []
    if spec.scenario.calibration == "classic":
        loose = sorted({float(s.eps) for sc in scenarios for s in sc.sites if s.eps >= 1.0})
        if loose:
            notes.append(f"classic Gaussian calibration at eps = {', '.join(f'{e:g}' for e in loose)} (>= 1) is not a "
                         "valid (eps, delta) guarantee (it is proven only for eps < 1); it is used here to reproduce "
                         "the papers. Use the analytic calibration for a real guarantee.")
    large = [(v, sc) for v, sc in zip(spec.grid, scenarios, strict=True) if any(s.delta >= 1.0 / s.n for s in sc.sites)]
    if large:
        worst = max((s for _, sc in large for s in sc.sites), key=lambda s: s.delta * s.n)
        notes.append(f"delta is not well below 1/N_s at {spec.label} = {', '.join(f'{v:g}' for v, _ in large)} "
                     f"(e.g. delta = {worst.delta:g} with N_s = {worst.n:,}, 1/N_s = {1 / worst.n:.3g}); a mechanism "
                     "could then release a whole record with probability delta")
    return notes


def _common_notes(spec: SweepSpec, scenarios: list[Scenario]) -> list[str]:
    base = spec.scenario
    notes = [f"{base.calibration} calibration, {base.neighbouring} neighbours"
             + (" (the papers' constants)" if base.neighbouring == "as-published" else "")]
    notes.extend(_caveats(spec, scenarios))
    if base.tau_c is not None:
        notes.append(f"the scenario's target tau_c = {base.tau_c:g} is not used along a sweep: every grid point uses "
                     "the DP floor max_s mu_s tau_s")
    if spec.parameter == "sites" and base.weights_given:
        notes.append("the scenario's weights cannot be extended to other numbers of sites: mu_s = N_s / N is used")
    if spec.parameter == "c":
        title = FAMILIES[spec.family].cape
        notes.append(f"{title} uses the collusion-robust design for c colluders at every grid point (gain S - c for "
                     "equal sites, up to its 1% safety margin); the other algorithms do not depend on c")
    shared = {
        "eps": "every algorithm sees the same standard normals at every eps (common random numbers)",
        "delta": "every algorithm sees the same standard normals at every delta (common random numbers)",
        "ns": "nested samples: each site's data at a smaller N_s are a prefix of its data at the largest N_s, and "
              "every algorithm sees the same standard normals at every N_s",
        "sites": "nested sites: site s holds the same samples at every S; conventional, DPdisPCA and local noise "
                 "of a site is shared across S, CAPE's e, f, g draws are laid out by S and fresh at every S",
        "c": "the data and every draw are the same at every c; only the CAPE design's variances change",
    }[spec.parameter]
    notes.append(shared)
    return notes


def _plan_key(spec: SweepSpec) -> str:
    data = spec.to_dict()
    del data["runs"]
    del data["algorithms"]
    return json.dumps(data, sort_keys=True)


def algorithm_notes(spec: SweepSpec) -> tuple[str, ...]:
    """What the chosen algorithms do in this sweep, in words (the family's ``sweep.notes``)."""
    return FAMILIES[spec.family].sweep.notes(spec.data, spec.algorithms)


def _prepare(spec: SweepSpec) -> SweepPlan:
    scenarios = [scenario_at(spec, v) for v in spec.grid]
    part = FAMILIES[spec.family].sweep.plan(spec, scenarios, lambda scenario, value: grid_designs(spec, scenario,
                                                                                                  value))
    notes = [*part.notes_before, *_common_notes(spec, scenarios), *part.notes_after]
    return SweepPlan(spec=spec, points=part.points, invariant=invariant_algorithms(spec.family, spec.parameter),
                     notes=tuple(dict.fromkeys(notes)), gains=sweep_gains(spec), replay=part.replay,
                     model=part.model, sizes_max=part.sizes_max, path=part.path)


def sweep_plan(spec: SweepSpec) -> SweepPlan:
    """The prepared sweep of ``spec`` (cached)."""
    key = _plan_key(spec)
    plan = lookup_plan(key)
    if plan is None:
        plan = _prepare(spec)
        store_plan(key, plan)
    return plan
