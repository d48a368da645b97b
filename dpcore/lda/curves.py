"""Every LDA metric (the topic error) against eps for a synthetic or a text corpus (docs/math/lda.md; the Topic models
page and ``python -m dpcore lda --eps`` with several values).

Every run draws its corpus once (synthetic: :func:`dpcore.seeding.data_rng`; text: the same documents every run) and
evaluates every algorithm at every eps of the grid on it; an algorithm's noise comes from its own stream
:func:`dpcore.seeding.run_rng` (seed, run, name, "lda"), drawn in an order that does not depend on eps, so the curves
use common random numbers. Algorithms whose result cannot depend on eps (non-private, random) run once per run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ..family import Algorithm, Progress, ShouldStop, check_runs, each_algorithm, run_comparison, stop_note
from ..limits import MAX_GRID_POINTS
from ..scenario import Scenario
from ..seeding import LDA_MODEL_STREAM, run_rng, stream_rng
from ..tensor.whitening import WhiteningError
from ..validation import InputError, check_epsilon
from .ahead import (
    CurvePreparation,
    PreparedRun,
    install,
    preparation_key,
    prepare_one,
    prepare_runs,
    prepared_runs,
)
from .compare import Shared, first_of, reference_topics, run_problem
from .problem import LdaProblem, LdaResult, LdaSettings, LdaSpec, check_synthetic_size
from .recovery import METRICS, evaluate_topics
from .table import ALGORITHMS, check_algorithms, run_algorithm

__all__ = ["CURVE_COLUMNS", "RECORD_COLUMNS", "LdaCurve", "curve_preparation_key", "eps_curve", "prepare_curve"]

CURVE_COLUMNS = ("eps", "algorithm", "metric", "runs", "unusable", "whitening_failed", "mean", "se")
RECORD_COLUMNS = ("eps", "algorithm", "run", *METRICS, "status")
"""The tidy records of a curve: one row per (eps, algorithm, run), a column per metric (NaN without topics)."""


@dataclass(frozen=True, eq=False, kw_only=True)
class LdaCurve:
    """Every metric per (eps, algorithm): the tidy ``records`` (:data:`RECORD_COLUMNS`) and their ``summary`` (one
    row per eps, algorithm and metric, :data:`CURVE_COLUMNS`; se = std / sqrt(runs)); the first reason each algorithm
    had no topics; one result per (algorithm, eps) of the first run that gave topics, for
    top words; the scenario (sites, delta, calibration) and settings it ran with, for its guarantees
    (:func:`dpcore.lda.guarantees.curve_guarantees`)."""

    algorithms: tuple[str, ...]
    grid: tuple[float, ...]
    records: pd.DataFrame
    summary: pd.DataFrame
    reasons: dict[str, str]
    examples: dict[tuple[str, float], LdaResult]
    reference: str
    reference_topics: np.ndarray
    problem: LdaProblem
    runs: int
    seed: int
    notes: tuple[str, ...] = ()
    scenario: Scenario | None = None
    settings: LdaSettings | None = None

    def at(self, algorithm: str, eps: float, metric: str | None = None) -> dict[str, Any]:
        """The summary row of one algorithm at one eps for ``metric`` (default: the table's first)."""
        metric = next(iter(METRICS)) if metric is None else metric
        s = self.summary
        row = s[(s["algorithm"] == algorithm) & (s["eps"] == float(eps)) & (s["metric"] == metric)]
        return row.iloc[0].to_dict()

    def usable(self, algorithm: str) -> bool:
        return bool((self.summary.loc[self.summary["algorithm"] == algorithm, "runs"] > 0).any())


def _check(grid: Sequence[float], runs: int, seed: int) -> tuple[tuple[float, ...], int, int]:
    values = tuple(sorted({check_epsilon(float(e), "eps value") for e in grid}))
    if not values:
        raise InputError("give at least one eps value", "eps")
    if len(values) > MAX_GRID_POINTS:
        raise InputError(f"at most {MAX_GRID_POINTS} eps values (got {len(values)})", "eps")
    return (values, *check_runs(runs, seed))


def _summary(records: pd.DataFrame, algorithms: Sequence[str], grid: Sequence[float]) -> pd.DataFrame:
    rows = []
    for eps in grid:
        for name in algorithms:
            mine = records[(records["eps"] == eps) & (records["algorithm"] == name)]
            for metric in METRICS:
                ok = mine.loc[mine["status"] == "ok", metric].to_numpy(dtype=float)
                n = int(ok.size)
                se = float(ok.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
                rows.append((eps, name, metric, n, int((mine["status"] == "unusable").sum()),
                             int((mine["status"] == "whitening failed").sum()), float(ok.mean()) if n else math.nan,
                             se))
    return pd.DataFrame(rows, columns=list(CURVE_COLUMNS))


@dataclass(frozen=True, eq=False, kw_only=True)
class _CurveShared:
    """What every run of a curve needs (sent once to each worker process)."""

    run: Shared
    grid: tuple[float, ...]
    scenarios: dict[float, Scenario]
    prepared: dict[int, PreparedRun] = field(default_factory=dict)


@dataclass(frozen=True, eq=False, kw_only=True)
class _CurveRun:
    """One run of a curve: its rows (:data:`RECORD_COLUMNS`), and per algorithm (and eps) the first
    reason, privacy statement and example; the run's documents (synthetic corpora, run 0 only)."""

    rows: list[tuple]
    reasons: dict[str, str]
    examples: dict[tuple[str, float], LdaResult]
    problem: LdaProblem | None


def _curve_run(shared: _CurveShared, run: int, tick: Callable[[str], bool]) -> _CurveRun | None:
    """Every algorithm at every eps of the grid in one run (a task of :func:`dpcore.family.run_comparison`); an
    algorithm whose result cannot depend on eps runs once and its row is repeated. None when stopped."""
    base, grid = shared.run, shared.grid
    problem = run_problem(base, run)
    ahead = shared.prepared.get(run)
    if ahead is not None:
        install(problem, ahead)
    out = _CurveRun(rows=[], reasons={}, examples={},
                    problem=problem if run == 0 and base.model is not None else None)

    def one(entry: Algorithm) -> None:
        for eps in (grid if entry.private else grid[:1]):
            try:
                res = (ahead.fixed[entry.name] if ahead is not None and entry.name in ahead.fixed else
                       run_algorithm(entry, problem, shared.scenarios[eps], base.settings,
                                     run_rng(base.seed, run, entry.name, "lda")))
            except WhiteningError as exc:
                out.reasons.setdefault(entry.name, str(exc))
                status, values = "whitening failed", {}
            else:
                if res.usable:
                    status, values = "ok", evaluate_topics(res.topics, base.reference)
                    out.examples.setdefault((entry.name, eps), res)
                else:
                    out.reasons.setdefault(entry.name, res.reason)
                    status, values = "unusable", {}
            metrics = tuple(values.get(m, math.nan) for m in METRICS)
            out.rows.extend((float(e), entry.name, run, *metrics, status)
                            for e in (grid if not entry.private else (eps,)))
        if not entry.private and (entry.name, grid[0]) in out.examples:
            for e in grid[1:]:
                out.examples.setdefault((entry.name, e), out.examples[(entry.name, grid[0])])

    return out if each_algorithm(ALGORITHMS, base.names, run, base.runs, tick, one) is not None else None


def _setup(scenario: Scenario, algorithms: Sequence[str], grid: Sequence[float], spec: LdaSpec | None,
           problem: LdaProblem | None, runs: int, seed: int, settings: LdaSettings | None):
    """The checks and what every run of a curve shares (:func:`eps_curve`, :func:`prepare_curve`)."""
    if (spec is None) == (problem is None):
        raise InputError("give either a synthetic model or a corpus, not both")
    entries = check_algorithms(algorithms)
    grid, runs, seed = _check(grid, runs, seed)
    settings = LdaSettings() if settings is None else settings
    if spec is not None:
        check_synthetic_size(spec, scenario.sizes)
    model = None if spec is None else spec.model(stream_rng(seed, LDA_MODEL_STREAM))
    base = scenario if problem is None else scenario.with_sizes(problem.sizes)
    if np.any(base.sizes < 3):
        raise InputError(f"every site needs at least 3 documents (N_s = {base.sizes.tolist()})", "scenario")
    scenarios = {eps: base.with_sites(eps=eps) for eps in grid}
    notes = list(scenarios[grid[-1]].caveats()) + (list(problem.notes) if problem is not None else [])
    reference, label = reference_topics(model, problem, base, settings, seed, notes)
    shared = _CurveShared(grid=grid, scenarios=scenarios, run=Shared(
        names=tuple(e.name for e in entries), scenario=base, settings=settings, seed=seed, runs=runs,
        reference=reference, model=model, sizes=tuple(int(n) for n in base.sizes),
        doc_length=None if spec is None else spec.doc_length, problem=problem))
    return entries, shared, notes, label


def prepare_curve(preparation: CurvePreparation, scenario: Scenario, algorithms: Sequence[str],
                  grid: Sequence[float], *, spec: LdaSpec, runs: int = 5, seed: int = 0,
                  settings: LdaSettings | None = None) -> None:
    """Prepare the runs of ``eps_curve(scenario, algorithms, grid, spec=spec, runs=runs, seed=seed,
    settings=settings)`` that depend on no budget (:mod:`dpcore.lda.ahead`) into ``preparation`` (whose key must be
    the curve's, :func:`curve_preparation_key`), run by run until its ``stop`` is set, as many runs as
    :data:`~dpcore.lda.ahead.MAX_PREPARED_BYTES` allows."""
    entries, shared, _, _ = _setup(scenario, algorithms, grid, spec, None, runs, seed, settings)
    if preparation.key != _key(spec, shared):
        raise InputError("this preparation is for another setting", "prepared")
    first = shared.scenarios[shared.grid[0]]
    count = prepared_runs(shared.run.runs, len(shared.run.sizes), spec.dim)
    prepare_runs(preparation, count, lambda run: prepare_one(shared.run, run, entries, first, preparation.stop))


def _key(spec: LdaSpec | None, shared: _CurveShared) -> tuple | None:
    if spec is None:
        return None
    return preparation_key(spec, shared.run.scenario.sizes, shared.run.seed, shared.run.settings, shared.grid[0])


def curve_preparation_key(scenario: Scenario, grid: Sequence[float], *, spec: LdaSpec, seed: int = 0,
                          settings: LdaSettings | None = None) -> tuple:
    """The key of a curve's :class:`~dpcore.lda.ahead.CurvePreparation` (what its prepared runs depend on)."""
    return preparation_key(spec, scenario.sizes, seed, LdaSettings() if settings is None else settings,
                           min(float(e) for e in grid))


def eps_curve(  # long: checks, the runs (workers, progress, Stop) and the result, read top to bottom
    scenario: Scenario, algorithms: Sequence[str], grid: Sequence[float], *, spec: LdaSpec | None = None,
    problem: LdaProblem | None = None, runs: int = 5, seed: int = 0, settings: LdaSettings | None = None,
    progress: Progress | None = None, should_stop: ShouldStop | None = None,
    workers: int | None = None, prepared: CurvePreparation | None = None,
) -> LdaCurve:
    """Every metric of ``algorithms`` at every eps of ``grid`` (every site's eps set to the value; delta, sizes and
    weights from ``scenario``), ``runs`` times, on a synthetic corpus (``spec``: truth as reference) or on the
    documents of ``problem`` (the non-private result as reference). Runs go to ``workers`` processes (the same
    numbers for any number); ``progress(done, total, label)`` after each algorithm of each run, ``should_stop()`` as
    often: a stopped curve keeps the runs that finished. ``prepared``: the runs prepared ahead for this setting
    (:func:`prepare_curve`; its preparation is asked to stop, and the runs it finished are used: the same numbers)."""
    entries, shared, notes, label = _setup(scenario, algorithms, grid, spec, problem, runs, seed, settings)
    grid, runs, seed, settings, base = shared.grid, shared.run.runs, shared.run.seed, shared.run.settings, \
        shared.run.scenario
    if prepared is not None:
        prepared.stop.set()
        shared = replace(shared, prepared=prepared.finished(_key(spec, shared)))
    finished, stopped = run_comparison(
        _curve_run, shared, runs, len(entries), should_stop=should_stop, workers=workers,
        progress=progress)
    if stopped:
        notes.append(stop_note(len(finished), runs))
    records = pd.DataFrame([row for outcome in finished for row in outcome.rows], columns=list(RECORD_COLUMNS))
    names = tuple(e.name for e in entries)
    first = next((o.problem for o in finished if o.problem is not None), None)
    return LdaCurve(algorithms=names, grid=grid, records=records, summary=_summary(records, names, grid),
                    reasons=first_of(finished, "reasons"),
                    examples=first_of(finished, "examples"), reference=label,
                    reference_topics=np.asarray(shared.run.reference),
                    problem=first if first is not None else run_problem(shared.run, int(records["run"].iloc[0])),
                    runs=len(finished), seed=seed, notes=tuple(dict.fromkeys(notes)), scenario=base,
                    settings=settings)
