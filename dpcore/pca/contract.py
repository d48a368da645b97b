"""capePCA under the single-run contract (:mod:`dpcore.family.run`): :func:`compare` prepares the data its
:class:`~dpcore.pca.sweep.PcaData` name for the scenario's sites (as the sweeps do) and runs :func:`compare_pca`,
whose numbers it keeps; the result is the contract's :class:`~dpcore.family.Comparison` (its ``detail``: a
:class:`PcaDetail`, the setup and the :class:`PcaComparison`). :class:`PcaRunData` are the data settings of one
comparison (the command line's and the page's), which can also scale before clipping, deal the samples by label and
draw a shortfall with replacement - options a sweep does not offer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..family import Comparison, Progress, RunRecord, ShouldStop
from ..scenario import Scenario
from ..validation import check_positive
from .compare import PcaComparison, compare_pca
from .guarantees import privacy_guarantees
from .metrics import METRICS
from .setup import PcaSetup, prepare_pca
from .sweep import PcaData, data_set

__all__ = ["PcaDetail", "PcaRunData", "compare", "pca_comparison"]


@dataclass(frozen=True, kw_only=True)
class PcaRunData(PcaData):
    """:class:`PcaData` of one comparison, with the split's options (:func:`dpcore.pca.prepare_pca`): ``scale`` (the
    public scale divided out before clipping), ``by_label`` (deal the samples sorted by label: a non-IID split) and
    ``allow_replacement`` (draw the shortfall again when the sites need more samples than exist)."""

    scale: float = 1.0
    by_label: bool = False
    allow_replacement: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "scale", check_positive(self.scale, "scale"))
        object.__setattr__(self, "by_label", bool(self.by_label))
        object.__setattr__(self, "allow_replacement", bool(self.allow_replacement))


@dataclass(frozen=True, eq=False, kw_only=True)
class PcaDetail:
    """capePCA's own result behind a :class:`~dpcore.family.Comparison`: the ``setup`` (the data set, its split and
    the privacy set-up) and the ``comparison``."""

    setup: PcaSetup
    comparison: PcaComparison


def compare(scenario: Scenario, data: PcaData | None = None, algorithms: Sequence[str] | None = None, *,
            runs: int = 10, seed: int = 0, collusion: int | None = None, progress: Progress | None = None,
            should_stop: ShouldStop | None = None, workers: int | None = None) -> Comparison:
    """The contract's comparison for capePCA (:class:`dpcore.family.run.Compare`; docs/math/capepca.md): the data
    of ``data`` (default ``PcaData()``) dealt to the sites with ``seed``, then :func:`compare_pca`; the guarantees of
    every view with up to ``collusion`` colluders (None: the audit's default)."""
    data = PcaData() if data is None else data
    split = data if isinstance(data, PcaRunData) else PcaRunData()
    setup = prepare_pca(data_set(data, scenario.total_n, seed), scenario, data.k, preprocessing=data.preprocessing,
                        scale=split.scale, by_label=split.by_label, allow_replacement=split.allow_replacement,
                        features=data.features, seed=seed, solver_dtype=data.solver_dtype)
    result = compare_pca(setup.problem, setup.privacy, algorithms, runs, seed, rank=data.rank, progress=progress,
                         should_stop=should_stop, workers=workers)
    return pca_comparison(setup, result, seed, collusion=collusion)


def pca_comparison(setup: PcaSetup, result: PcaComparison, seed: int, *,
                   collusion: int | None = None) -> Comparison:
    """capePCA's own result (:func:`prepare_pca`'s setup and :func:`compare_pca`'s comparison, run with ``seed``) as
    the contract's :class:`~dpcore.family.Comparison`: one record per run and algorithm, the guarantees of every view
    with up to ``collusion`` colluders (None: the audit's default), the notes of both."""
    records = tuple(RunRecord(run=run, algorithm=name, metrics={m: float(r.metrics[m]) for m in METRICS})
                    for run in range(len(next(iter(result.results.values())))) for name, rs in result.results.items()
                    for r in rs[run:run + 1])
    options = {} if collusion is None else {"collusion": collusion}
    return Comparison(family="pca", algorithms=tuple(result.results), summaries=tuple(result.summary),
                      records=records, guarantees=privacy_guarantees(setup.privacy, result.results, **options),
                      bits_per_value=result.bits_per_value(), scenario=setup.privacy.scenario,
                      runs=len(next(iter(result.results.values()))), seed=seed,
                      notes=tuple(dict.fromkeys((*setup.notes, *result.notes))), stopped=result.stopped,
                      seconds=result.seconds, detail=PcaDetail(setup=setup, comparison=result))
