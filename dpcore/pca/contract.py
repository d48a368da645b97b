"""capePCA under the single-run contract (:mod:`dpcore.family.run`): :func:`compare` prepares the data its
:class:`~dpcore.pca.sweep.PcaData` name for the scenario's sites (as the sweeps do) and runs :func:`compare_pca`,
whose numbers it keeps; the result is the contract's :class:`~dpcore.family.Comparison` (its ``detail``: the
:class:`PcaComparison`, with the setup under ``detail_setup``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..family import Comparison, Progress, RunRecord, ShouldStop
from ..scenario import Scenario
from .compare import compare_pca
from .guarantees import privacy_guarantees
from .metrics import METRICS
from .setup import prepare_pca
from .sweep import PcaData, data_set

__all__ = ["compare"]


def compare(scenario: Scenario, data: PcaData | None = None, algorithms: Sequence[str] | None = None, *,
            runs: int = 10, seed: int = 0, collusion: int | None = None, progress: Progress | None = None,
            should_stop: ShouldStop | None = None, workers: int | None = None) -> Comparison:
    """The contract's comparison for capePCA (:class:`dpcore.family.run.Compare`; docs/math/capepca.md): the data
    of ``data`` (default ``PcaData()``) dealt to the sites with ``seed``, then :func:`compare_pca`; the guarantees of
    every view with up to ``collusion`` colluders (None: the audit's default)."""
    data = PcaData() if data is None else data
    setup = prepare_pca(data_set(data, scenario.total_n, seed), scenario, data.k, preprocessing=data.preprocessing,
                        features=data.features, seed=seed, solver_dtype=data.solver_dtype)
    result = compare_pca(setup.problem, setup.privacy, algorithms, runs, seed, rank=data.rank, progress=progress,
                         should_stop=should_stop, workers=workers)
    records = tuple(RunRecord(run=run, algorithm=name, metrics={m: float(r.metrics[m]) for m in METRICS})
                    for run in range(len(next(iter(result.results.values())))) for name, rs in result.results.items()
                    for r in rs[run:run + 1])
    options = {} if collusion is None else {"collusion": collusion}
    return Comparison(family="pca", algorithms=tuple(result.results), summaries=tuple(result.summary),
                      records=records, guarantees=privacy_guarantees(setup.privacy, result.results, **options),
                      bits_per_value=result.bits_per_value(), scenario=setup.privacy.scenario,
                      runs=len(next(iter(result.results.values()))), seed=seed,
                      notes=tuple(dict.fromkeys((*setup.notes, *result.notes))), stopped=result.stopped,
                      seconds=result.seconds, detail=result)
