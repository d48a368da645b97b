"""capeLDA under the single-run contract (:mod:`dpcore.family.run`): :func:`compare` runs :func:`compare_lda` on
the synthetic corpus its :class:`~dpcore.lda.sweep.LdaData` describe, whose numbers it keeps; the result is the
contract's :class:`~dpcore.family.Comparison` (its ``detail``: the :class:`LdaComparison`). :class:`LdaRunData` are
the data settings of one comparison (the command line's), which can also carry the documents of a text corpus - an
option a sweep does not offer."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..family import Comparison, Progress, RunRecord, ShouldStop
from ..scenario import Scenario
from .compare import compare_lda
from .guarantees import lda_guarantees
from .problem import LdaProblem
from .sweep import LdaData
from .table import default_algorithms

__all__ = ["LdaRunData", "compare"]

_STATUS = {"ok": "ok", "unusable": "unusable", "whitening failed": "failed"}
"""The contract's status of each of :class:`~dpcore.lda.compare.LdaRun`'s."""


@dataclass(frozen=True, kw_only=True)
class LdaRunData(LdaData):
    """:class:`LdaData` of one comparison: ``corpus`` (the documents of a text corpus dealt to the sites,
    :func:`dpcore.lda.corpus_lda_problem`; the same in every run, measured against the non-private topics; None: the
    synthetic model's fresh documents in every run)."""

    corpus: LdaProblem | None = None


def compare(scenario: Scenario, data: LdaData | None = None, algorithms: Sequence[str] | None = None, *,
            runs: int = 10, seed: int = 0, collusion: int | None = None, progress: Progress | None = None,
            should_stop: ShouldStop | None = None, workers: int | None = None) -> Comparison:
    """The contract's comparison for capeLDA (:class:`dpcore.family.run.Compare`; docs/math/lda.md): fresh documents
    of the model of ``data`` (default ``LdaData()``) in every run, measured against the true topics; or the documents
    of a text corpus (:class:`LdaRunData`), measured against the non-private topics."""
    data = LdaData() if data is None else data
    start = time.perf_counter()
    corpus = data.corpus if isinstance(data, LdaRunData) else None
    source: dict[str, Any] = {"spec": data.synthetic()} if corpus is None else {"problem": corpus}
    result = compare_lda(scenario, default_algorithms() if algorithms is None else algorithms, runs=runs, seed=seed,
                         settings=data.settings(collusion), progress=progress, should_stop=should_stop,
                         workers=workers, **source)
    # capeLDA's values travel as float64 (no ring): every algorithm's bits per value is None
    records = tuple(RunRecord(run=r.run, algorithm=r.algorithm, metrics=dict(r.metrics), status=_STATUS[r.status],
                              reason=r.reason) for r in result.records)
    guarantees = {name: lda_guarantees(name, result.scenario, result.problem, result.settings)
                  for name in result.algorithms}
    return Comparison(family="lda", algorithms=result.algorithms, summaries=result.summaries, records=records,
                      guarantees=guarantees, bits_per_value=dict.fromkeys(result.algorithms), scenario=result.scenario,
                      runs=result.runs, seed=seed, notes=result.notes, stopped=result.stopped,
                      seconds=time.perf_counter() - start, detail=result)
