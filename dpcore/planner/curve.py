"""The utility curve of a (data set, algorithm family, study size): the headline metric against the aggregate noise,
measured on simulated studies and cached (docs/planner.md, "The method").

Run r is one simulated study of N samples: its data drawn once from the seed :func:`dpcore.seeding.study_seed` (seed,
PLANNER_STUDY_STREAM, r) by the family's ``study`` hook (a fresh synthetic ground truth and samples, or a subsample
of a fixed set), then at every noise scale s the family's ``run_at`` with stage stds s x profile (PCA: one stage;
capeAGN and capeLDA: (M2, M3) at the budget split's fixed ratio), its noise from :func:`dpcore.seeding.planner_rng`
(seed, j, r). So the spread at a point is that of whole studies (data and noise), and the curve is the same for any
number of worker processes. The curve keeps every run: the mean, the spread (std) and the failed runs per point.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import isotonic_regression
from scipy.stats import t as student_t

from ..experiments.families import FAMILIES
from ..family import PlannerData
from ..limits import MAX_RUNS
from ..seeding import PLANNER_STUDY_STREAM, planner_rng, study_seed
from ..validation import InputError, check_int_range
from ..workers import run_tasks

__all__ = ["CURVE_CACHE_SIZE", "CURVE_RUNS", "FAILED_SHARE", "UtilityCurve", "cached_curve", "clear_cache",
           "curve_cache_size", "measure_curve", "monotone"]

CURVE_RUNS = 20
"""Simulated studies of a curve (each run at every grid point; the spread of whole studies is measured from them)."""
FAILED_SHARE = 0.05
"""A point where more than this share of the runs failed (e.g. whitening) counts as reaching nothing (the 95 % band
of the figure)."""
CURVE_CACHE_SIZE = 16
"""Curves kept in memory (per data set, profile, runs and seed), oldest dropped first."""
STUDY_STATE_BYTES = 256 * 2**20
"""Bytes of simulated studies' resumable draws kept in memory (``PlannerData.state``: a study at a larger N continues
from the largest smaller one of its seed), least recently used dropped first; a draw larger than this is not kept."""
_CACHE: OrderedDict[tuple, UtilityCurve] = OrderedDict()
_STATES: OrderedDict[tuple, Any] = OrderedDict()


@dataclass(frozen=True, eq=False, kw_only=True)
class UtilityCurve:
    """The measured curve: ``values`` (points x runs; NaN for a failed run) of the family's ``metric`` at the noise
    ``scales`` (stage stds = scale x ``profile``), the data's ``description``, ``key`` and non-private ``reference``,
    the ``seed`` and the time it took."""

    family: str
    metric: str
    higher_is_better: bool
    scales: np.ndarray
    profile: np.ndarray
    values: np.ndarray
    reference: float
    description: str
    key: str
    seed: int
    seconds: float
    stage_names: tuple[str, ...] = field(default=("aggregate",))
    size: int = 0

    @property
    def runs(self) -> int:
        return int(self.values.shape[1])

    @property
    def mean(self) -> np.ndarray:
        """Mean over the runs that did not fail (NaN where all failed)."""
        with np.errstate(invalid="ignore"):
            return np.array([np.nanmean(row) if np.isfinite(row).any() else np.nan for row in self.values])

    @property
    def std(self) -> np.ndarray:
        """Run-to-run standard deviation (ddof 1) over the runs that did not fail."""
        out = []
        for row in self.values:
            ok = row[np.isfinite(row)]
            out.append(float(np.std(ok, ddof=1)) if ok.size > 1 else np.nan)
        return np.array(out)

    @property
    def failed(self) -> np.ndarray:
        """Share of failed runs per point."""
        return np.mean(~np.isfinite(self.values), axis=1)

    def reach(self, p: float) -> np.ndarray:
        """The metric that a share ``p`` of fresh studies reaches at each point: the one-sided normal prediction bound
        mean -/+ t_{R-1}(p') sd sqrt(1 + 1/R) over the R studies that did not fail (p' = p / (1 - failed share): a
        failed study meets no target; nothing where p' >= 1), made monotone in the noise (:func:`monotone`)."""
        sign = 1.0 if self.higher_is_better else -1.0
        worst = -np.inf if self.higher_is_better else np.inf
        out = np.full(len(self.scales), worst)
        for j, row in enumerate(self.values):
            ok = row[np.isfinite(row)]
            need = p / (1.0 - self.failed[j]) if self.failed[j] < 1 else 2.0
            if ok.size < 2 or need >= 1.0:
                continue
            factor = float(student_t.ppf(need, ok.size - 1)) * np.sqrt(1.0 + 1.0 / ok.size)
            out[j] = float(np.mean(ok)) - sign * factor * float(np.std(ok, ddof=1))
        return monotone(out, self.higher_is_better)

    def share(self, j: int, target: float) -> float:
        """The share of the studies at point ``j`` that met ``target`` (a failed study meets none)."""
        row = self.values[j]
        with np.errstate(invalid="ignore"):
            met = row >= target if self.higher_is_better else row <= target
        return float(np.mean(met & np.isfinite(row)))

    def band(self, z: float) -> np.ndarray:
        """The metric that a share Phi(z) of single runs reaches at each point (mean - z std when higher is better,
        mean + z std when lower is better), made monotone in the noise (worse as the noise grows: isotonic
        regression, :func:`monotone`); a point with more than 5 % failed runs counts as reaching nothing."""
        sign = 1.0 if self.higher_is_better else -1.0
        std = np.nan_to_num(self.std, nan=0.0)
        edge = self.mean - sign * z * std
        worst = -np.inf if self.higher_is_better else np.inf
        edge = np.where((self.failed > FAILED_SHARE) | ~np.isfinite(edge), worst, edge)
        return monotone(edge, self.higher_is_better)

    def records(self) -> list[dict[str, Any]]:
        """One row per grid point: the scale, each stage's std, mean, std, failed share."""
        rows = []
        for j, s in enumerate(self.scales):
            row = {"scale": float(s)}
            for name, p in zip(self.stage_names, self.profile, strict=True):
                row[f"std_{name}"] = float(s * p)
            row.update(mean=float(self.mean[j]), std=float(self.std[j]), failed=float(self.failed[j]),
                       runs=self.runs)
            rows.append(row)
        return rows


def monotone(values: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """The closest sequence (least squares) that never improves as the noise grows (scipy's isotonic regression);
    infinite entries (failed points) stay as they are and pull nothing."""
    values = np.asarray(values, dtype=float)
    out = values.copy()
    finite = np.isfinite(values)
    if finite.sum() > 1:
        fitted = isotonic_regression(values[finite], increasing=not higher_is_better).x
        out[finite] = fitted
    bad = np.flatnonzero(~finite)
    if bad.size:  # a failed point makes every noisier point count as failed too
        out[bad[0]:] = values[bad[0]]
    return out


@dataclass(frozen=True, eq=False, kw_only=True)
class _Shared:
    family: str
    data: PlannerData
    scales: np.ndarray
    profile: np.ndarray
    seed: int
    size: int


def _curve_run(shared: _Shared, task: tuple[int, Any], tick: Callable[[str], bool]
               ) -> tuple[list[float], Any] | None:
    """Study ``run`` (``task``: the run and the resumable draw of a smaller study of its seed, or None): its data
    drawn once, then a run at every grid point (a task of :func:`dpcore.workers.run_tasks`); the values and the
    study's own resumable draw."""
    run, start = task
    hooks = FAMILIES[shared.family].planner
    data = hooks.study(shared.data, shared.size, study_seed(shared.seed, PLANNER_STUDY_STREAM, run), start)
    out = []
    for j, s in enumerate(shared.scales):
        value = hooks.run_at(data, s * shared.profile, planner_rng(shared.seed, j, run))
        out.append(np.nan if value is None else float(value))
        if tick(f"study {run + 1} of N = {shared.size:,}: noise {j + 1}/{len(shared.scales)}"):
            return None
    return out, data.state


def _state_key(family: str, data: PlannerData, seed: int, run: int) -> tuple:
    return (family, data.key, int(seed), int(run))


def _start(family: str, data: PlannerData, seed: int, run: int, size: int) -> Any:
    """The kept resumable draw of study ``run`` holding the most samples, at most ``size`` (None: none)."""
    states = _STATES.get(_state_key(family, data, seed, run))
    if not states:
        return None
    fits = [n for n in states if n <= size]
    return states[max(fits)] if fits else None


def _keep_state(family: str, data: PlannerData, seed: int, run: int, state: Any) -> None:
    """Keep study ``run``'s resumable draw (by the samples it holds), within :data:`STUDY_STATE_BYTES`."""
    if state is None or state.nbytes > STUDY_STATE_BYTES:
        return
    key = _state_key(family, data, seed, run)
    _STATES.setdefault(key, {})[int(state.size)] = state
    _STATES.move_to_end(key)
    while sum(x.nbytes for states in _STATES.values() for x in states.values()) > STUDY_STATE_BYTES:
        oldest = next(iter(_STATES))
        states = _STATES[oldest]
        states.pop(min(states))
        if not states:
            del _STATES[oldest]


def curve_cache_size() -> int:
    """Curves in the cache."""
    return len(_CACHE)


def clear_cache() -> None:
    """Forget every cached curve and every kept study draw."""
    _CACHE.clear()
    _STATES.clear()


def cached_curve(family: str, data: PlannerData, profile: np.ndarray, *, size: int, runs: int = CURVE_RUNS,
                 seed: int = 0, scales: np.ndarray | None = None) -> UtilityCurve | None:
    """The cached curve of these arguments (as :func:`measure_curve` keys it), or None."""
    key = _key(family, data, profile, size, runs, seed, scales)
    return _CACHE.get(key)


def _key(family: str, data: PlannerData, profile: np.ndarray, size: int, runs: int, seed: int,
         scales: np.ndarray | None) -> tuple:
    grid = None if scales is None else tuple(np.round(np.log(np.asarray(scales, dtype=float)), 9))
    return (family, data.key, tuple(np.round(np.asarray(profile, dtype=float), 6)), int(size), int(runs), int(seed),
            grid)


def measure_curve(family: str, data: PlannerData, profile: np.ndarray, *, size: int | None = None,
                  runs: int = CURVE_RUNS, seed: int = 0, workers: int | None = None,
                  tick: Callable[[str], bool] | None = None, scales: np.ndarray | None = None,
                  progress: Callable[[float, str], None] | None = None) -> UtilityCurve:
    """The curve of ``runs`` simulated studies of ``size`` samples (default: the data's own) of ``data`` for
    ``family`` at the stage ``profile``, on the family's grid or on ``scales`` (cached per data key, profile, size,
    runs, seed and grid: a second question on the same data and size costs nothing). Runs go to ``workers`` processes
    (same numbers for any number); ``tick(label)`` after every run at every point, True to stop (an InputError: a
    curve needs every run); ``progress(share done, words)`` after every run too (a page's progress bar)."""
    runs = check_int_range(runs, "runs of the curve", 2, MAX_RUNS)
    profile = np.asarray(profile, dtype=float)
    size = int(data.size if size is None else size)
    key = _key(family, data, profile, size, runs, seed, scales)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    hooks = FAMILIES[family].planner
    scales = np.asarray(hooks.scales(data, profile) if scales is None else scales, dtype=float)
    start = time.perf_counter()
    shared = _Shared(family=family, data=hooks.for_studies(data), scales=scales, profile=profile, seed=int(seed),
                     size=size)
    total, done = runs * len(scales), [0]
    if progress is not None:
        progress(0.0, f"simulated studies of N = {size:,}: starting {total} runs in worker processes")

    def counted(label: str) -> bool:
        done[0] += 1
        if progress is not None:
            progress(done[0] / total, f"simulated studies of N = {size:,}: {done[0]} of {total} runs")
        return bool(tick(label)) if tick is not None else False

    tasks = [(r, _start(family, data, seed, r, size)) for r in range(runs)]
    finished, stopped = run_tasks(_curve_run, shared, tasks, workers=workers, tick=counted)
    if stopped or len(finished) < runs:
        raise InputError("the curve was stopped before every run finished; measure it again", "curve")
    for r in range(runs):
        _keep_state(family, data, seed, r, finished[r][1])
    values = np.array([finished[r][0] for r in range(runs)], dtype=float).T
    metric = FAMILIES[family].metrics[hooks.metric]
    curve = UtilityCurve(family=family, metric=hooks.metric, higher_is_better=metric.higher_is_better, scales=scales,
                         profile=profile, values=values, reference=float(data.reference),
                         description=data.description, key=data.key, seed=int(seed),
                         seconds=time.perf_counter() - start, stage_names=hooks.stage_names, size=size)
    _CACHE[key] = curve
    while len(_CACHE) > CURVE_CACHE_SIZE:
        _CACHE.popitem(last=False)
    return curve
