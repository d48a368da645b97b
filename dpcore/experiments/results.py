"""The result of a sweep (docs/experiments.md): the tidy long table, its summary with 95% t-intervals, the gains
per grid point and the notes.

* ``table``: one row per (value, algorithm, run, metric): columns :data:`TABLE_COLUMNS`; ``status`` is ``ok`` or
  says why a run has no result (``whitening failed``: the noisy M2 had non-positive top-K eigenvalues,
  docs/math/corrections.md, item 4; ``unusable``: an LDA configuration whose condition failed on the corpus,
  docs/math/lda.md; the result is then empty, never a silent NaN);
* ``summary``: per (value, algorithm, metric) the number of finished runs, the mean, the standard deviation, the
  standard error and the 95% interval mean +- t_{0.975, n-1} se (Student t);
* ``gains``: the generalized gain G = sum_s mu_s^2 tau_s^2 / tau_c^2 of the CAPE design used at each grid point.

The same spec gives the same table byte for byte (:meth:`SweepResult.to_csv`).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import stdtrit  # the t quantile scipy.stats.t.ppf computes, without importing scipy.stats (1-3 s)

from ..textio import json_ready
from ..validation import InputError
from .cache import lookup_result, store_result
from .designs import sweep_guarantees
from .prepare import algorithm_notes, sweep_plan
from .spec import SweepSpec

__all__ = ["SUMMARY_COLUMNS", "TABLE_COLUMNS", "SweepResult", "cached_result", "summarise_table", "sweep_result",
           "to_table"]

TABLE_COLUMNS = ("parameter", "value", "algorithm", "run", "metric", "result", "status")
SUMMARY_COLUMNS = ("parameter", "value", "algorithm", "metric", "runs", "failed", "mean", "std", "se", "ci_low",
                   "ci_high")


def to_table(spec: SweepSpec, rows: list[tuple] | pd.DataFrame) -> pd.DataFrame:
    """Rows as the tidy table, sorted by grid value, algorithm (the spec's order), run and metric."""
    table = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    if not len(table):
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in zip(
            TABLE_COLUMNS, (object, float, object, int, object, float, object), strict=True)})
    grid_index = {float(v): i for i, v in enumerate(spec.grid)}
    algorithm_index = {a: i for i, a in enumerate(spec.algorithms)}
    metric_index = {m: i for i, m in enumerate(spec.metrics)}
    order = np.lexsort((table["metric"].map(metric_index).to_numpy(), table["run"].to_numpy(),
                        table["algorithm"].map(algorithm_index).to_numpy(), table["value"].map(grid_index).to_numpy()))
    table = table.iloc[order].reset_index(drop=True)
    table["value"] = table["value"].astype(float)
    table["run"] = table["run"].astype(int)
    table["result"] = table["result"].astype(float)
    return table


def summarise_table(spec: SweepSpec, table: pd.DataFrame) -> pd.DataFrame:
    """Per (value, algorithm, metric): finished runs n, failed runs, mean, std (ddof = 1), se = std / sqrt(n)
    and the 95% interval mean +- t_{0.975, n-1} se (:data:`SUMMARY_COLUMNS`). With one run std, se and the
    interval are NaN (no spread to estimate); with none the mean is NaN too and ``failed`` says why."""
    out = []
    groups = table.groupby(["value", "algorithm", "metric"], sort=False).indices if len(table) else {}
    results = table["result"].to_numpy(dtype=float)
    finished = (table["status"] == "ok").to_numpy()
    none = np.zeros(0, dtype=np.intp)
    for value in spec.grid:
        for algorithm in spec.algorithms:
            for metric in spec.metrics:
                rows = groups.get((float(value), algorithm, metric), none)  # positions in table order
                ok = results[rows[finished[rows]]]
                n = int(ok.size)
                mean = float(ok.mean()) if n else math.nan
                std = float(ok.std(ddof=1)) if n > 1 else math.nan
                se = std / math.sqrt(n) if n > 1 else math.nan
                half = float(stdtrit(n - 1, 0.975)) * se if n > 1 else math.nan
                out.append((spec.parameter, float(value), algorithm, metric, n, int(len(rows) - n), mean, std, se,
                            mean - half, mean + half))
    return pd.DataFrame(out, columns=list(SUMMARY_COLUMNS))


@dataclass(frozen=True, eq=False, kw_only=True)
class SweepResult:
    """A finished (or stopped) sweep: the spec, the tidy table, its summary, the gains per grid point, notes.
    ``complete`` is False when the sweep was stopped; ``runs_done`` runs are then in the table."""

    spec: SweepSpec
    table: pd.DataFrame
    summary: pd.DataFrame
    gains: pd.DataFrame
    notes: tuple[str, ...]
    complete: bool
    runs_done: int
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_csv(self) -> str:
        """The tidy table as CSV text (byte-for-byte reproducible for a spec)."""
        return self.table.to_csv(index=False, lineterminator="\n")

    def summary_csv(self) -> str:
        return self.summary.to_csv(index=False, lineterminator="\n")

    def gains_csv(self) -> str:
        return self.gains.to_csv(index=False, lineterminator="\n")

    def guarantees(self) -> pd.DataFrame:
        """Every view's guarantee of every algorithm at every grid point (:func:`sweep_guarantees`; computed from the
        spec's scenario and designs, so a stored result has them too)."""
        if "guarantees" not in self.extra:
            self.extra["guarantees"] = sweep_guarantees(self.spec)
        return self.extra["guarantees"]

    def guarantees_csv(self) -> str:
        return self.guarantees().to_csv(index=False, lineterminator="\n")

    def export_json(self) -> str:
        """Everything a reader needs without the tool: the spec (settings and seed), dpcore's version, the status,
        the summary, the gains, every view's guarantee, the notes (non-finite numbers as null)."""
        return json.dumps(json_ready({"kind": "dpcore sweep", **self.to_dict()}), indent=2)

    def summary_of(self, algorithm: str, metric: str) -> pd.DataFrame:
        """The summary rows of one algorithm and metric, in grid order."""
        s = self.summary
        return s[(s["algorithm"] == algorithm) & (s["metric"] == metric)].reset_index(drop=True)

    def status(self) -> str:
        return ("complete" if self.complete else
                f"stopped after {self.runs_done} of {self.spec.runs} runs (the curves use the finished runs)")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the spec (settings and seed), dpcore's version, status, summary and gains records, every view's
        guarantee, notes (NaN stays NaN; print_json turns it into null)."""
        return {"spec": self.spec.to_dict(), "version": str(sys.modules[__name__.split(".")[0]].__version__),
                "complete": self.complete, "runs_done": self.runs_done,
                "seconds": self.seconds, "summary": self.summary.to_dict(orient="records"),
                "gains": self.gains.to_dict(orient="records"),
                "guarantees": self.guarantees().to_dict(orient="records"), "notes": list(self.notes)}


def sweep_result(spec: SweepSpec, tables: Sequence[pd.DataFrame], *, seconds: float = 0.0) -> SweepResult:
    """Combine the tables of :func:`sweep_runs` (e.g. one per run) into a :class:`SweepResult`; complete when
    every run 0..R-1 is present."""
    frames = [t[list(TABLE_COLUMNS)] for t in tables if len(t)]
    table = to_table(spec, pd.concat(frames, ignore_index=True) if frames else [])
    if table.duplicated(subset=["value", "algorithm", "run", "metric"]).any():
        raise InputError("the same run appears twice in the tables to combine", "runs")
    runs_done = int(table["run"].nunique()) if len(table) else 0
    plan = sweep_plan(spec)
    notes = plan.notes + algorithm_notes(spec)
    result = SweepResult(spec=spec, table=table, summary=summarise_table(spec, table), gains=plan.gains.copy(),
                         notes=notes, complete=runs_done == spec.runs, runs_done=runs_done, seconds=float(seconds))
    if result.complete:
        store_result(spec.to_json(), result)
    return result


def cached_result(spec: SweepSpec) -> SweepResult | None:
    """The cached complete result of ``spec`` or None (counts as a hit or a miss)."""
    return lookup_result(spec.to_json())
