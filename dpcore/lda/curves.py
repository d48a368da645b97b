"""Topic error against eps for a synthetic or a text corpus (docs/math/lda.md; the Topic models page and
``python -m dpcore lda --eps`` with several values).

Every run draws its corpus once (synthetic: :func:`dpcore.seeding.data_rng`; text: the same documents every run) and
evaluates every algorithm at every eps of the grid on it; an algorithm's noise comes from its own stream
:func:`dpcore.seeding.run_rng` (seed, run, name, "lda"), drawn in an order that does not depend on eps, so the curves
use common random numbers. Algorithms whose result cannot depend on eps (non-private, random) run once per run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..limits import MAX_GRID_POINTS, MAX_RUNS
from ..otd.whitening import WhiteningError
from ..scenario import Scenario
from ..seeding import data_rng, run_rng
from ..validation import InputError, check_epsilon, check_positive_int
from .algorithm import GUARANTEES
from .compare import MODEL_STREAM, reference_topics
from .problem import LdaProblem, LdaResult, LdaSettings, LdaSpec, check_synthetic_size, synthetic_lda_problem
from .recovery import topic_error
from .table import check_algorithms, run_algorithm

__all__ = ["CURVE_COLUMNS", "LdaCurve", "eps_curve"]

CURVE_COLUMNS = ("eps", "algorithm", "runs", "unusable", "whitening_failed", "mean", "se")


@dataclass(frozen=True, eq=False, kw_only=True)
class LdaCurve:
    """Topic error per (eps, algorithm): the tidy ``records`` (eps, algorithm, run, topic_error, status) and their
    ``summary`` (:data:`CURVE_COLUMNS`; se = std / sqrt(runs)); the first reason each algorithm had no topics and
    its privacy statement; one result per (algorithm, eps) of the first run that gave topics, for top words; the
    scenario (sites, delta, calibration) and settings it ran with, for its guarantees
    (:func:`dpcore.lda.guarantees.curve_guarantees`)."""

    algorithms: tuple[str, ...]
    grid: tuple[float, ...]
    records: pd.DataFrame
    summary: pd.DataFrame
    reasons: dict[str, str]
    guarantees: dict[str, str]
    examples: dict[tuple[str, float], LdaResult]
    reference: str
    reference_topics: np.ndarray
    problem: LdaProblem
    runs: int
    seed: int
    notes: tuple[str, ...] = ()
    scenario: Scenario | None = None
    settings: LdaSettings | None = None

    def at(self, algorithm: str, eps: float) -> dict[str, Any]:
        """The summary row of one algorithm at one eps."""
        row = self.summary[(self.summary["algorithm"] == algorithm) & (self.summary["eps"] == float(eps))]
        return row.iloc[0].to_dict()

    def usable(self, algorithm: str) -> bool:
        return bool((self.summary.loc[self.summary["algorithm"] == algorithm, "runs"] > 0).any())


def _check(grid: Sequence[float], runs: int, seed: int) -> tuple[tuple[float, ...], int, int]:
    values = tuple(sorted({check_epsilon(float(e), "eps value") for e in grid}))
    if not values:
        raise InputError("give at least one eps value", "eps")
    if len(values) > MAX_GRID_POINTS:
        raise InputError(f"at most {MAX_GRID_POINTS} eps values (got {len(values)})", "eps")
    runs = check_positive_int(runs, "runs")
    if runs > MAX_RUNS:
        raise InputError(f"runs must be at most {MAX_RUNS} (got {runs})", "runs")
    return values, runs, check_positive_int(seed, "seed", minimum=0)


def _summary(records: pd.DataFrame, algorithms: Sequence[str], grid: Sequence[float]) -> pd.DataFrame:
    rows = []
    for eps in grid:
        for name in algorithms:
            mine = records[(records["eps"] == eps) & (records["algorithm"] == name)]
            ok = mine.loc[mine["status"] == "ok", "topic_error"].to_numpy(dtype=float)
            n = int(ok.size)
            se = float(ok.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
            rows.append((eps, name, n, int((mine["status"] == "unusable").sum()),
                         int((mine["status"] == "whitening failed").sum()), float(ok.mean()) if n else math.nan, se))
    return pd.DataFrame(rows, columns=list(CURVE_COLUMNS))


def eps_curve(  # long: checks, then one loop over runs, eps and algorithms, read top to bottom
    scenario: Scenario, algorithms: Sequence[str], grid: Sequence[float], *, spec: LdaSpec | None = None,
    problem: LdaProblem | None = None, runs: int = 5, seed: int = 0, settings: LdaSettings | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> LdaCurve:
    """Topic error of ``algorithms`` at every eps of ``grid`` (every site's eps set to the value; delta, sizes and
    weights from ``scenario``), ``runs`` times, on a synthetic corpus (``spec``: truth as reference) or on the
    documents of ``problem`` (the non-private result as reference)."""
    if (spec is None) == (problem is None):
        raise InputError("give either a synthetic model or a corpus, not both")
    entries = check_algorithms(algorithms)
    grid, runs, seed = _check(grid, runs, seed)
    settings = LdaSettings() if settings is None else settings
    if spec is not None:
        check_synthetic_size(spec, scenario.sizes)
    model = None if spec is None else spec.model(np.random.default_rng([seed, MODEL_STREAM]))
    base = scenario if problem is None else scenario.with_sizes(problem.sizes)
    if np.any(base.sizes < 3):
        raise InputError(f"every site needs at least 3 documents (N_s = {base.sizes.tolist()})", "scenario")
    scenarios = {eps: base.with_sites(eps=eps) for eps in grid}
    notes = list(scenarios[grid[-1]].caveats()) + (list(problem.notes) if problem is not None else [])
    reference, label = reference_topics(model, problem, base, settings, seed, notes)
    rows: list[tuple] = []
    reasons: dict[str, str] = {}
    guarantees: dict[str, str] = {}
    examples: dict[tuple[str, float], LdaResult] = {}
    total, done = runs * len(entries), 0
    current = problem
    for run in range(runs):
        if model is not None:
            current = synthetic_lda_problem(model, base.sizes, data_rng(seed, run), doc_length=spec.doc_length)
        for entry in entries:
            if progress is not None:
                progress(done / total, f"run {run + 1}/{runs}: {entry.title}")
            points = grid[:1] if not entry.private else grid
            for eps in points:
                try:
                    res = run_algorithm(entry, current, scenarios[eps], settings, run_rng(seed, run, entry.name, "lda"))
                except WhiteningError as exc:
                    reasons.setdefault(entry.name, str(exc))
                    status, error = "whitening failed", math.nan
                else:
                    guarantees.setdefault(entry.name, res.guarantee)
                    if res.usable:
                        status, error = "ok", topic_error(res.topics, reference)
                        examples.setdefault((entry.name, eps), res)
                    else:
                        reasons.setdefault(entry.name, res.reason)
                        status, error = "unusable", math.nan
                targets = grid if not entry.private else (eps,)
                rows.extend((float(e), entry.name, run, error, status) for e in targets)
                if not entry.private:
                    for e in grid[1:]:
                        if (entry.name, grid[0]) in examples:
                            examples.setdefault((entry.name, e), examples[(entry.name, grid[0])])
            done += 1
    if progress is not None:
        progress(1.0, "done")
    records = pd.DataFrame(rows, columns=["eps", "algorithm", "run", "topic_error", "status"])
    names = tuple(e.name for e in entries)
    for entry in entries:
        guarantees.setdefault(entry.name, GUARANTEES[entry.guarantee])
    return LdaCurve(algorithms=names, grid=grid, records=records, summary=_summary(records, names, grid),
                    reasons=reasons, guarantees=guarantees, examples=examples, reference=label,
                    reference_topics=np.asarray(reference), problem=current, runs=runs, seed=seed,
                    notes=tuple(dict.fromkeys(notes)), scenario=base, settings=settings)
