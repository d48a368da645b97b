"""The single-run contract of every family (docs/architecture.md, "The family contract"; issue 33): one comparison
signature, one result type, one per-run record, one progress form and one guarantee form, so that the layers above
(the front door, reports, pages, the command line) run any family without knowing which.

* :data:`Compare` - ``compare(scenario, data, algorithms=None, *, runs, seed, collusion, progress, should_stop,
  workers) -> Comparison``: R runs of the chosen algorithms (None: the table's defaults) of one family on the data
  its data settings describe (``Family.sweep.data``: ``PcaData``, ``OtdData``, ``LdaData``; None: the type's
  defaults), dealt to ``scenario``'s sites; ``progress(done, total, label)`` (:data:`~dpcore.family.Progress`) after
  every step and ``should_stop()`` as often (Stop keeps the runs that finished);
* :class:`Comparison` - the one result: the summaries (mean and std of every metric of the family's table), one
  :class:`RunRecord` per algorithm and run, every view's computed guarantee (:class:`dpcore.cape.guarantee.Guarantee`,
  never a sentence written by hand), the bits per value, the notes and ``detail`` (the family's own result, for
  what only that family shows: a scree plot, example topics);
* :class:`RunRecord` - one algorithm in one run: its metrics, or why it has none (``status`` "failed": the whitening
  failed; "unusable": the configuration refused the corpus; ``reason``).

Each family's ``compare`` (``Family.compare``) wraps its own comparison (``compare_pca``, ``compare_algorithms``,
``compare_lda``), whose numbers it keeps bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..cape.guarantee import Guarantee
from ..scenario import Scenario
from ..summary import MetricSummary
from .compare import Progress, ShouldStop

__all__ = ["STATUSES", "Compare", "Comparison", "RunRecord", "guarantee_records"]

STATUSES = ("ok", "failed", "unusable")
"""What became of one algorithm in one run: metrics ("ok"), a failed whitening ("failed"), or a configuration that
refused the data ("unusable", capeLDA's configurations 2-4)."""


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """One algorithm in one run: ``metrics`` by name (empty unless ``status`` is "ok") or the ``reason`` it has
    none."""

    run: int
    algorithm: str
    metrics: dict[str, float] = field(default_factory=dict)
    status: str = "ok"
    reason: str | None = None

    def metric(self, name: str) -> float | None:
        """The metric ``name`` (None when the run has none)."""
        return self.metrics.get(name)


@dataclass(frozen=True, eq=False, kw_only=True)
class Comparison:
    """The result of a family's ``compare``: ``family`` (its name), ``algorithms`` (in the order run),
    ``summaries`` (one per algorithm and metric of the family's table, failed runs counted, never averaged in),
    ``records`` (one per algorithm and run, in run order), ``guarantees`` (every view of every algorithm, computed by
    the audit), ``bits_per_value`` (the ring its values travelled on; None: float64), ``scenario`` (the sites it ran
    with), ``runs`` (finished), ``seed``, ``notes``, ``stopped``, ``seconds`` and ``detail`` (the family's own
    comparison object)."""

    family: str
    algorithms: tuple[str, ...]
    summaries: tuple[MetricSummary, ...]
    records: tuple[RunRecord, ...]
    guarantees: dict[str, tuple[Guarantee, ...]]
    bits_per_value: dict[str, int | None]
    scenario: Scenario
    runs: int
    seed: int
    notes: tuple[str, ...] = ()
    stopped: bool = False
    seconds: float = 0.0
    detail: Any = None

    def summary(self, algorithm: str, metric: str) -> MetricSummary:
        """The summary of one algorithm and metric (KeyError when the comparison has none)."""
        for s in self.summaries:
            if s.algorithm == algorithm and s.metric == metric:
                return s
        raise KeyError((algorithm, metric))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every summary, every view's guarantee record, the bits per value and the notes."""
        return {"family": self.family, "algorithms": list(self.algorithms),
                "results": [s.to_dict() for s in self.summaries], "guarantees": guarantee_records(self.guarantees),
                "bits_per_value": dict(self.bits_per_value), "sites": self.scenario.n_sites,
                "sizes": [int(n) for n in self.scenario.sizes], "runs": self.runs, "seed": self.seed,
                "stopped": self.stopped, "notes": list(self.notes)}


def guarantee_records(guarantees: dict[str, Sequence[Guarantee]]) -> list[dict[str, Any]]:
    """One record per algorithm and view, with its one-line label (the reports' and the JSON outputs' form)."""
    return [{"algorithm": name, **g.to_dict(), "label": g.label()} for name, views in guarantees.items()
            for g in views]


class Compare(Protocol):
    """The one comparison signature of every family (``Family.compare``; module docstring)."""

    def __call__(self, scenario: Scenario, data: Any = None, algorithms: Sequence[str] | None = None, *,
                 runs: int = 10, seed: int = 0, collusion: int | None = None, progress: Progress | None = None,
                 should_stop: ShouldStop | None = None, workers: int | None = None) -> Comparison: ...

