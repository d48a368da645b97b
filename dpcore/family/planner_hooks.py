"""What the planner needs from a family (docs/planner.md; :mod:`dpcore.planner` answers the questions): the family's
headline metric, its data prepared once per data set, one run at a given aggregate noise (the utility curve's
points), real runs of the family's own algorithms at a scenario (the check), and simulated studies: the data one
study of a given size would hold (fresh synthetic draws, or subsamples of a fixed set), so that the curve's spread is
that of whole studies.
Each family gives these as one :class:`FamilyPlanner` (``Family.planner``), so the planner, its command and its page
never branch on a family's name; the schemes it answers for, and their closed-form noise, are the entries of the
family's algorithm table that give a ``planner`` (:class:`~dpcore.family.PlannerScheme`).

The noise of a scheme is a vector of per-stage aggregate standard deviations (PCA: one stage, the second-moment
matrix; capeAGN and capeLDA: the M2 and the projected M3 stage). The curve is measured along a common scale s of a
fixed stage profile (stage stds = s x profile, profile[0] = 1: "a common noise scale at a fixed budget split").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..scenario import Scenario
from ..seeding import PLANNER_SUBSAMPLE_STREAM, stream_rng
from ..validation import InputError

__all__ = ["DataLoader", "FamilyPlanner", "PlannerData", "nested_subsample"]


@dataclass(frozen=True, kw_only=True)
class DataLoader:
    """How a data set the planner ran on is read again (the exported script's head): ``function`` of ``module``
    called as ``function(content, name, **options)`` on the bytes of the file named ``file`` (an upload), or as
    ``function(**options)`` when ``file`` is None (a bundled data set). ``options`` hold only JSON values."""

    module: str
    function: str
    options: dict[str, Any] = field(default_factory=dict)
    file: str | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class PlannerData:
    """A data set prepared once for the planner: ``payload`` (the family's own: PCA the pooled problem of the
    preprocessed data, the tensor families a reference sample of the model), ``available`` (samples the user
    has; None for synthetic data, which can be drawn at any size), ``description`` (in words), ``key``
    (identifies the data and settings: the curve cache's key) ``reference`` (the non-private value of the metric
    on these data), the family's ``settings``, the raw ``dataset`` (PCA), the ``seed`` it was prepared with and
    ``scale`` (PCA: the largest sample norm that max-norm divided by), ``premise``: what the planner's premise costs
    on these data, in words from the numbers (every answer's limits carry them), ``loader``: how the exported
    script reads the data again (None: the settings' own data), ``unit``: what the data hold ("samples",
    "documents"; the reasons' words), ``drawable``: the most samples one simulated study of synthetic data may hold
    (None: a fixed set, bounded by ``available``), ``size``: the samples these data hold (a study's: its N),
    ``state``: a simulated study's resumable draw (the family's; None: nothing to resume): a larger study of the same
    seed continues from it (``FamilyPlanner.study``'s ``start``), the same bit for bit as drawn from its start."""

    payload: Any
    available: int | None
    description: str
    key: str
    reference: float
    settings: Any = None
    dataset: Any = None
    seed: int = 0
    scale: float = 1.0
    premise: tuple[str, ...] = ()
    loader: DataLoader | None = None
    unit: str = "samples"
    drawable: int | None = None
    size: int = 0
    state: Any = None


@dataclass(frozen=True, eq=False, kw_only=True)
class FamilyPlanner:
    """The planner hooks of one family.

    ``metric``: the headline metric (a name of the family's metric table); ``target_words``: how a target on it
    reads ("share of the non-private captured energy"); ``prepare(settings, dataset, seed)``: a
    :class:`PlannerData` (``dataset`` an uploaded data set or None for the settings' own data); ``scales(data,
    profile)``: the grid of common noise scales the curve is measured on; ``run_at(data,
    stds, rng)``: the metric of one run whose aggregate noise has these per-stage stds (None: the run failed,
    e.g. whitening); ``study(data, n, seed, start)``: the data of one simulated study of ``n`` samples drawn with
    ``seed`` (synthetic: fresh samples, preprocessed on their own; a fixed set: a subsample of n, or the set itself at
    n = all of it), prepared as ``run_at`` reads them, continuing ``start`` (None, or the ``state`` of a smaller study
    of the same seed; the result is the same either way); ``for_studies(data)``: what the curve's worker processes
    need of ``data`` (default: all of it); ``check(data, scenario, scheme, seed)``: the
    metric of one fresh study of the family's algorithm ``scheme`` (a name of its table whose entry has a
    ``planner``: :mod:`dpcore.planner.schemes`) at ``scenario``, its data and noise drawn from ``seed`` (None for a
    failed run); ``guarantees(data, scenario, names)``: the guarantee records (every view,
    :mod:`dpcore.cape.guarantee`) of those algorithms at ``scenario``; ``refuses(data, entry)``: why an algorithm's
    entry cannot run on these data at all (None: it can; e.g. a dense-only entry on data that take the projected
    path); ``script(data)``: (Python source that repeats ``check`` with dpcore, given ``scenario``,
    ``scheme``, ``seed``, ``dataset`` and ``SETTINGS`` defined before it, leaving the metric in ``value``; the JSON
    settings the exporter embeds as ``SETTINGS``), ``imports`` the imports it needs; ``stage_names``: the stages
    of the noise vector; ``percent``: the target is a share of the non-private result (shown in %). The data
    sources it offers are the family's (``Family.sources``, :class:`~dpcore.family.DataSource`). The aggregate noise
    of each scheme is its table entry's (``Algorithm.planner``), not a hook here."""

    metric: str
    target_words: str
    prepare: Callable[[Any, Any, int], PlannerData]
    scales: Callable[[PlannerData, np.ndarray], np.ndarray]
    run_at: Callable[[PlannerData, np.ndarray, np.random.Generator], float | None]
    study: Callable[[PlannerData, int, int, Any], PlannerData]
    check: Callable[[PlannerData, Scenario, str, int], float | None]
    guarantees: Callable[[PlannerData, Scenario, tuple[str, ...]], list[dict]]
    script: Callable[[PlannerData], tuple[str, dict[str, Any]]]
    imports: str
    stage_names: tuple[str, ...] = ("aggregate",)
    percent: bool = False
    for_studies: Callable[[PlannerData], PlannerData] = field(default=lambda data: data)
    refuses: Callable[[PlannerData, Any], str | None] = field(default=lambda data, entry: None)


def nested_subsample(available: int, n: int, seed: int, *, unit: str, source: str) -> np.ndarray:
    """The rows (sorted, so in the file's order) of the ``n`` of ``available`` samples or documents the sites hold at a
    planner answer on the user's data: the first n of one permutation (stream (seed, PLANNER_SUBSAMPLE_STREAM)), so a
    smaller n holds a subset of a larger n's; all of them at n = available. More than ``available`` is refused
    (``unit``: "samples" or "documents"; ``source``: where they come from, e.g. the file's name)."""
    if n > available:
        raise InputError(f"the sites hold N = {n:,} {unit} in all, more than the {available:,} of {source}", "sites")
    return np.sort(stream_rng(seed, PLANNER_SUBSAMPLE_STREAM).permutation(available)[:n])
