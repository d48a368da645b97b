"""The CAPE designs of every grid point and their gain G = sum_s mu_s^2 tau_s^2 / tau_c^2 (docs/experiments.md):
the plain design (general solver, tau_c at the DP floor), or along c the collusion-robust one, for every stage the
family runs (its ``sweep.stage_taus``: capePCA one, capeAGN and capeLDA two)."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

import pandas as pd

from ..cape import NoiseDesign
from ..family import grid_design
from ..scenario import Scenario
from ..validation import InputError
from .families import FAMILIES
from .spec import SweepSpec, scenario_at

__all__ = ["GAIN_COLUMNS", "GUARANTEE_COLUMNS", "check_designs", "grid_designs", "sweep_gains", "sweep_guarantees"]

GAIN_COLUMNS = ("parameter", "value", "design", "gain", "tau_c", "tau_conv")
GUARANTEE_COLUMNS = ("parameter", "value", "algorithm", "view", "colluders", "site", "certified", "eps", "delta",
                     "promised_eps", "promised_delta", "exact", "label")


_DESIGNS: OrderedDict[str, dict[str, NoiseDesign]] = OrderedDict()
_DESIGNS_LOCK = threading.Lock()
_DESIGN_CACHE_SIZE = 64
"""Grid points whose designs a process keeps: a sweep asks for each point's designs four times (its gains, twice,
its guarantees and its plan), and each is a handful of linear programs."""


def _design_key(spec: SweepSpec, scenario: Scenario, value: float | int) -> str:
    data = spec.to_dict()
    del data["runs"]
    del data["algorithms"]
    return json.dumps([data, scenario.to_dict(), float(value)], sort_keys=True)


def grid_designs(spec: SweepSpec, scenario: Scenario, value: float | int) -> dict[str, NoiseDesign]:
    """The designs of one grid point by stage; an InputError when one is infeasible (naming the stage when the
    family has several). Computed once per (spec without its runs and algorithms, scenario, value) in a process and
    kept (the designs are a deterministic function of them); each call gets its own dict of the shared designs."""
    key = _design_key(spec, scenario, value)
    with _DESIGNS_LOCK:
        known = _DESIGNS.get(key)
        if known is not None:
            _DESIGNS.move_to_end(key)
            return dict(known)
    taus = FAMILIES[spec.family].sweep.stage_taus(scenario, spec.data)
    point = f"at {spec.label} = {value:g}"
    designs = {stage: grid_design(spec.parameter, scenario, tau, value, point if len(taus) == 1 else
                                  f"for the {stage} {point}") for stage, tau in taus.items()}
    with _DESIGNS_LOCK:
        _DESIGNS[key] = designs
        while len(_DESIGNS) > _DESIGN_CACHE_SIZE:
            _DESIGNS.popitem(last=False)
    return dict(designs)


def sweep_gains(spec: SweepSpec) -> pd.DataFrame:
    """The generalized gain G = sum mu_s^2 tau_s^2 / tau_c^2 of the CAPE design used at every grid point
    (collusion-robust along c, the plain design otherwise), with its tau_c and the conventional std tau_conv
    (:data:`GAIN_COLUMNS`; one row per stage). Needs no data."""
    rows = []
    for value in spec.grid:
        for name, design in grid_designs(spec, scenario_at(spec, value), value).items():
            rows.append({"parameter": spec.parameter, "value": float(value), "design": name, "gain": design.gain,
                         "tau_c": float(design.tau_c), "tau_conv": design.tau_conv})
    return pd.DataFrame(rows, columns=list(GAIN_COLUMNS))


def sweep_guarantees(spec: SweepSpec) -> pd.DataFrame:
    """The guarantee of every view of every algorithm at every grid point (:data:`GUARANTEE_COLUMNS`; the family's
    ``sweep.guarantees`` from the point's scenario and CAPE designs, computed by the audit, never written by hand):
    what a stored result or a live sweep carries with its numbers. Needs no data and no run."""
    hook = FAMILIES[spec.family].sweep.guarantees
    rows = []
    for value in spec.grid:
        scenario = scenario_at(spec, value)
        designs = grid_designs(spec, scenario, value)
        try:
            by_algorithm = hook(spec, scenario, value, designs)
        except InputError as exc:  # a design an algorithm cannot carry here (e.g. the discrete design's ring)
            raise InputError(f"at {spec.label} = {value:g}, {_failing(spec, scenario, value, designs)}: {exc}",
                             "algorithms") from exc
        for algorithm, views in by_algorithm.items():
            for g in views:
                record = g.to_dict()
                rows.append({"parameter": spec.parameter, "value": float(value), "algorithm": algorithm,
                             **{k: record.get(k) for k in GUARANTEE_COLUMNS[3:-1]}, "label": g.label()})
    return pd.DataFrame(rows, columns=list(GUARANTEE_COLUMNS))


def _failing(spec: SweepSpec, scenario: Scenario, value: float | int, designs: dict[str, NoiseDesign]) -> str:
    """The title of the first algorithm whose guarantee cannot be computed at this point (the error path only)."""
    hook, titles = FAMILIES[spec.family].sweep.guarantees, FAMILIES[spec.family].algorithms
    for name in spec.algorithms:
        try:
            hook(spec.replace(algorithms=(name,)), scenario, value, designs)
        except InputError:
            return titles[name].title
    return "an algorithm"


def check_designs(spec: SweepSpec) -> pd.DataFrame:
    """Before anything runs: every grid point's CAPE designs are feasible (an InputError naming the point, field
    "grid") and every algorithm's guarantee can be computed there (an InputError naming the point, field
    "algorithms": a design an algorithm cannot carry, such as a discrete design whose aggregate would not fit its
    ring, is refused now rather than after the runs). Returns the guarantees (:func:`sweep_guarantees`)."""
    sweep_gains(spec)
    return sweep_guarantees(spec)
