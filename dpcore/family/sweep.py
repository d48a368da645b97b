"""What a sweep needs from a family (docs/experiments.md; :mod:`dpcore.experiments` runs the sweeps): the family's
data settings, the CAPE designs of a grid point, the preparation of its grid points and one run of them. Each family
gives these as one :class:`FamilySweep` (``Family.sweep``), so the sweep engine, its plan, its presets and the
command line never branch on a family's name.

The hooks receive the sweep's specification (a :class:`dpcore.experiments.SweepSpec`: ``family``, ``parameter``,
``grid``, ``algorithms``, ``scenario``, ``data``, ``runs``, ``seed``, ``label``, ``metrics``) and the scenario of
every grid point; they return :class:`FamilyPlan` parts and table rows (:func:`result_rows`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cape import NoiseDesign, scenario_budgets, solve_collusion_robust, solve_general
from ..scenario import Scenario
from ..seeding import run_rng
from ..validation import InputError

__all__ = ["FamilyPlan", "FamilySweep", "GridPoint", "grid_design", "result_rows", "sweep_points"]


@dataclass(frozen=True, eq=False, kw_only=True)
class GridPoint:
    """One grid point: its value and scenario, and what the family prepared for it (PCA: its ``problem`` and
    ``privacy`` set-up; the tensor families: their ``settings``)."""

    value: float | int
    scenario: Scenario
    problem: Any = None
    privacy: Any = None
    settings: Any = None


@dataclass(frozen=True, eq=False, kw_only=True)
class FamilyPlan:
    """A family's part of a prepared sweep: the grid points, the notes that come before the sweep's common notes
    (the data) and after them, and what its runs need: ``replay`` (PCA: standard normals replayed across grid
    points), ``model`` (a synthetic ground truth), ``sizes_max`` (the largest site sizes) and ``path`` (the
    third-moment path)."""

    points: tuple[GridPoint, ...]
    notes_before: tuple[str, ...] = ()
    notes_after: tuple[str, ...] = ()
    replay: bool = False
    model: Any = None
    sizes_max: tuple[int, ...] = ()
    path: str | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class FamilySweep:
    """The sweep hooks of one family.

    ``data``: its data settings type (a frozen dataclass validated on construction, with ``describe()``,
    ``short_name()``, ``quick()`` (the reduced variant's settings, or None to keep them), ``check_size(largest,
    smallest_n)`` and ``OPTIONS``, the command-line flags that set its fields); ``stage_taus(scenario, data)``: the
    tau_s of every CAPE design the family runs, by stage name; ``plan(spec, scenarios, design)``: the
    :class:`FamilyPlan` (``design(scenario, value)`` gives the checked designs of a grid point by stage);
    ``run(plan, spec, run, tick)``: one run's rows (None when ``tick`` asked to stop); ``notes(data, algorithms)``:
    what the chosen algorithms do here, in words; ``guarantees(spec, scenario, value, designs)``: the guarantee of every
    view (:class:`dpcore.cape.guarantee.Guarantee`) of every algorithm of the sweep at one grid point, computed from
    its scenario and its CAPE designs by stage (no run needed: stored results get them too)."""

    data: type
    stage_taus: Callable[[Scenario, Any], Mapping[str, np.ndarray]]
    plan: Callable[[Any, Sequence[Scenario], Callable[[Scenario, float | int], dict[str, NoiseDesign]]], FamilyPlan]
    run: Callable[[Any, Any, int, Callable[[str], bool]], list[tuple] | None]
    notes: Callable[[Any, Sequence[str]], tuple[str, ...]]
    guarantees: Callable[[Any, Scenario, float | int, Mapping[str, NoiseDesign]], dict[str, tuple]]


def grid_design(parameter: str, scenario: Scenario, tau: np.ndarray, value: float | int, where: str) -> NoiseDesign:
    """The CAPE design of one stage at one grid point: the general solver with tau_c at the DP floor, or along c the
    collusion-robust design for c = ``value`` colluders; an InputError naming the point (``where``) when it is
    infeasible."""
    budgets = scenario_budgets(scenario, tau)
    design = solve_collusion_robust(budgets, int(value)) if parameter == "c" else solve_general(budgets)
    if not design.feasible:
        raise InputError(f"no feasible CAPE noise design {where}: {design.reason}", "grid")
    return design


def result_rows(spec: Any, value: float | int, algorithm: str, run: int, metrics: Mapping[str, float | None],
                status: str) -> list[tuple]:
    """The tidy rows of one algorithm at one grid point of one run: (parameter, value, algorithm, run, metric,
    result, status) for every metric of the family (NaN where the run has none)."""
    return [(spec.parameter, float(value), algorithm, run, m, np.nan if metrics.get(m) is None else metrics[m],
             status) for m in spec.metrics]


def sweep_points(prepared: Any, spec: Any, table: Mapping[str, Any], family: str, run_index: int,
                 tick: Callable[[str], bool],
                 evaluate: Callable[[Any, int, np.random.Generator], tuple[Mapping[str, float | None], str]],
                 ) -> list[tuple] | None:
    """One run of every algorithm at every grid point: ``evaluate(entry, point_index, rng)`` gives the metrics and the
    status of one algorithm at one point, each on its stream :func:`dpcore.seeding.run_rng` (seed, run, name,
    ``family``); an algorithm that cannot change along the parameter runs at the first point and its rows repeat at
    every point. ``tick`` after each; None when it asks to stop."""
    rows: list[tuple] = []
    for algorithm in spec.algorithms:  # names checked by SweepSpec: the entries below are trusted
        entry = table[algorithm]
        indices = [0] if algorithm in prepared.invariant else range(len(prepared.points))
        for i in indices:
            point = prepared.points[i]
            metrics, status = evaluate(entry, i, run_rng(spec.seed, run_index, algorithm, family))
            for target in prepared.points if algorithm in prepared.invariant else (point,):
                rows.extend(result_rows(spec, target.value, algorithm, run_index, metrics, status))
            if tick(f"run {run_index + 1}/{spec.runs}, {spec.label} = {point.value:g}: {entry.title}"):
                return None
    return rows
