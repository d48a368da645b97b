"""capeAGN under the single-run contract (:mod:`dpcore.family.run`): :func:`compare` runs
:func:`compare_algorithms` on the synthetic model its :class:`~dpcore.agn.sweep.OtdData` describe, whose numbers it
keeps; the result is the contract's :class:`~dpcore.family.Comparison` (its ``detail``: the :class:`OtdComparison`)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..family import Comparison, Progress, RunRecord, ShouldStop
from ..scenario import Scenario
from .compare import compare_algorithms
from .guarantees import comparison_guarantees
from .sweep import OtdData
from .table import default_algorithms

__all__ = ["compare"]


def compare(scenario: Scenario, data: OtdData | None = None, algorithms: Sequence[str] | None = None, *,
            runs: int = 10, seed: int = 0, collusion: int | None = None, progress: Progress | None = None,
            should_stop: ShouldStop | None = None, workers: int | None = None) -> Comparison:
    """The contract's comparison for capeAGN (:class:`dpcore.family.run.Compare`; docs/math/capeagn.md): fresh
    samples of the model of ``data`` (default ``OtdData()``) in every run, measured against the truth."""
    data = OtdData() if data is None else data
    start = time.perf_counter()
    result = compare_algorithms(scenario, default_algorithms() if algorithms is None else algorithms,
                                spec=data.synthetic(), runs=runs, seed=seed, settings=data.settings(collusion),
                                progress=progress, should_stop=should_stop, workers=workers)
    records = tuple(RunRecord(run=r.run, algorithm=r.algorithm, metrics=dict(r.metrics),
                              status="ok" if r.error is None else "failed", reason=r.error) for r in result.records)
    return Comparison(family="otd", algorithms=result.algorithms, summaries=result.summaries, records=records,
                      guarantees=comparison_guarantees(result), bits_per_value=result.bits_per_value(),
                      scenario=result.scenario, runs=result.runs, seed=seed, notes=result.notes,
                      stopped=result.stopped, seconds=time.perf_counter() - start, detail=result)
