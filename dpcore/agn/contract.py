"""capeAGN under the single-run contract (:mod:`dpcore.family.run`): :func:`compare` runs
:func:`compare_algorithms` on the synthetic model its :class:`~dpcore.agn.sweep.OtdData` describe, whose numbers it
keeps; the result is the contract's :class:`~dpcore.family.Comparison` (its ``detail``: the :class:`OtdComparison`).
:class:`OtdRunData` are the data settings of one comparison (the command line's), which can also carry uploaded data
(:class:`OtdRunUpload`) and the memory budget that decides the third-moment path - options a sweep does not offer."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..data.text import Corpus
from ..family import Comparison, Progress, RunRecord, ShouldStop
from ..limits import DEFAULT_MEMORY_BUDGET
from ..scenario import Scenario
from ..validation import check_rank
from .compare import OtdComparison, compare_algorithms
from .guarantees import comparison_guarantees
from .problem import OtdSettings, SyntheticSpec, upload_problem
from .sweep import OtdData
from .table import default_algorithms

__all__ = ["OtdRunData", "OtdRunUpload", "compare", "otd_comparison", "run_data"]


@dataclass(frozen=True, eq=False, kw_only=True)
class OtdRunUpload:
    """Uploaded data (:func:`dpcore.agn.upload_problem`): ``values`` (an N x D table: a MOG problem with ``sigma2``
    and ``norm_bound``, None: estimated; or a :class:`~dpcore.data.Corpus`: an STM problem with ``estimator``),
    dealt to the scenario's sites with the comparison's seed. There is no ground truth: the reference is the
    non-private result."""

    values: Any
    sigma2: float | None = None
    norm_bound: float | None = None
    estimator: str | None = None


@dataclass(frozen=True, kw_only=True)
class OtdRunData(OtdData):
    """:class:`OtdData` of one comparison: ``memory_budget`` (bytes; decides the third-moment path "auto") and
    ``upload`` (uploaded data instead of the synthetic model, :class:`OtdRunUpload`; None: the model)."""

    memory_budget: int = DEFAULT_MEMORY_BUDGET
    upload: OtdRunUpload | None = None

    def settings(self, collusion: int | None = None) -> OtdSettings:
        return replace(super().settings(collusion), memory_budget=int(self.memory_budget))


def run_data(settings: OtdSettings, spec: SyntheticSpec | None = None, *, upload: OtdRunUpload | None = None,
             k: int = 0) -> OtdRunData:
    """The data settings of one comparison from the capeAGN page's form: its ``settings`` (eps split, restarts,
    iterations, path, third-moment noise law, memory budget) and either the synthetic model ``spec`` or ``upload``
    with K = ``k`` components, D being the upload's (a corpus's vocabulary, a table's columns) and K checked
    against it."""
    tuning = {"eps_split": settings.eps_split, "n_restarts": settings.n_restarts, "n_iter": settings.n_iter,
              "path": settings.path, "m3_noise": settings.m3_noise, "memory_budget": settings.memory_budget}
    if upload is None:
        if spec is None:
            raise ValueError("run_data needs the synthetic model or an upload")
        return OtdRunData(model=spec.kind, dim=spec.dim, k=spec.k, sigma2=spec.sigma2, doc_length=spec.doc_length,
                          estimator=spec.estimator, truth=spec.truth, **tuning)
    corpus = isinstance(upload.values, Corpus)
    dim = len(upload.values.vocabulary) if corpus else int(upload.values.shape[1])
    return OtdRunData(model="stm" if corpus else "mog", dim=dim, k=check_rank(k, dim), upload=upload, **tuning)


def compare(scenario: Scenario, data: OtdData | None = None, algorithms: Sequence[str] | None = None, *,
            runs: int = 10, seed: int = 0, collusion: int | None = None, progress: Progress | None = None,
            should_stop: ShouldStop | None = None, workers: int | None = None) -> Comparison:
    """The contract's comparison for capeAGN (:class:`dpcore.family.run.Compare`; docs/math/capeagn.md): fresh
    samples of the model of ``data`` (default ``OtdData()``) in every run, measured against the truth; or, with an
    upload (:class:`OtdRunData`), the uploaded data dealt to the sites, measured against the non-private result."""
    data = OtdData() if data is None else data
    start = time.perf_counter()
    names = default_algorithms() if algorithms is None else algorithms
    upload = data.upload if isinstance(data, OtdRunData) else None
    source: dict[str, Any] = ({"spec": data.synthetic()} if upload is None else {"problem": upload_problem(
        upload.values, data.k, scenario, seed, sigma2=upload.sigma2, norm_bound=upload.norm_bound,
        estimator=upload.estimator)})
    result = compare_algorithms(scenario, names, runs=runs, seed=seed, settings=data.settings(collusion),
                                progress=progress, should_stop=should_stop, workers=workers, **source)
    return otd_comparison(result, seconds=time.perf_counter() - start)


def otd_comparison(result: OtdComparison, *, seconds: float = 0.0) -> Comparison:
    """capeAGN's own result (:func:`compare_algorithms`'s) as the contract's :class:`~dpcore.family.Comparison`: one
    record per run and algorithm ("failed" with the whitening's reason), every view's guarantee, the bits per
    value."""
    records = tuple(RunRecord(run=r.run, algorithm=r.algorithm, metrics=dict(r.metrics),
                              status="ok" if r.error is None else "failed", reason=r.error) for r in result.records)
    return Comparison(family="otd", algorithms=result.algorithms, summaries=result.summaries, records=records,
                      guarantees=comparison_guarantees(result), bits_per_value=result.bits_per_value(),
                      scenario=result.scenario, runs=result.runs, seed=result.seed, notes=result.notes,
                      stopped=result.stopped, seconds=seconds, detail=result)
