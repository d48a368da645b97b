"""capeLDA under the single-run contract (:mod:`dpcore.family.run`): :func:`compare` runs :func:`compare_lda` on
the synthetic corpus its :class:`~dpcore.lda.sweep.LdaData` describe, whose numbers it keeps; the result is the
contract's :class:`~dpcore.family.Comparison` (its ``detail``: the :class:`LdaComparison`)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..family import Comparison, Progress, RunRecord, ShouldStop
from ..scenario import Scenario
from .compare import compare_lda
from .guarantees import lda_guarantees
from .sweep import LdaData
from .table import default_algorithms

__all__ = ["compare"]

_STATUS = {"ok": "ok", "unusable": "unusable", "whitening failed": "failed"}
"""The contract's status of each of :class:`~dpcore.lda.compare.LdaRun`'s."""


def compare(scenario: Scenario, data: LdaData | None = None, algorithms: Sequence[str] | None = None, *,
            runs: int = 10, seed: int = 0, collusion: int | None = None, progress: Progress | None = None,
            should_stop: ShouldStop | None = None, workers: int | None = None) -> Comparison:
    """The contract's comparison for capeLDA (:class:`dpcore.family.run.Compare`; docs/math/lda.md): fresh documents
    of the model of ``data`` (default ``LdaData()``) in every run, measured against the true topics."""
    data = LdaData() if data is None else data
    start = time.perf_counter()
    result = compare_lda(scenario, default_algorithms() if algorithms is None else algorithms,
                         spec=data.synthetic(), runs=runs, seed=seed, settings=data.settings(collusion),
                         progress=progress, should_stop=should_stop, workers=workers)
    # capeLDA's values travel as float64 (no ring): every algorithm's bits per value is None
    records = tuple(RunRecord(run=r.run, algorithm=r.algorithm, metrics=dict(r.metrics), status=_STATUS[r.status],
                              reason=r.reason) for r in result.records)
    guarantees = {name: lda_guarantees(name, result.scenario, result.problem, result.settings)
                  for name in result.algorithms}
    return Comparison(family="lda", algorithms=result.algorithms, summaries=result.summaries, records=records,
                      guarantees=guarantees, bits_per_value=dict.fromkeys(result.algorithms), scenario=result.scenario,
                      runs=result.runs, seed=seed, notes=result.notes, stopped=result.stopped,
                      seconds=time.perf_counter() - start, detail=result)
