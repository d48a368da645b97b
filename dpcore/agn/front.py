"""capeAGN in one call (the front door, docs/python-api.md): ``dpcore.capeagn(X, k=3, eps=1.0, delta=1e-5,
sites=5)`` for samples of a mixture of Gaussians, or a :class:`~dpcore.data.Corpus` for a single topic model. The
data are dealt to the scenario's sites as an upload is (:func:`~dpcore.agn.upload_problem`), and one run of the
algorithm is made: run 0 of :func:`~dpcore.agn.compare_algorithms` with the same seed, measured against the
non-private result on the same data (there is no ground truth). The result carries the guarantee of every view
(:func:`~dpcore.agn.guarantees.otd_guarantees`)."""

from __future__ import annotations

from dataclasses import replace

from ..data import Corpus, dataset_from_array
from ..family import Fit, front_scenario
from ..scenario import Scenario
from ..validation import InputError
from .compare import compare_algorithms
from .guarantees import otd_guarantees
from .problem import OtdSettings, upload_problem
from .table import algorithm as table_entry

__all__ = ["capeagn"]


def capeagn(data: object, *, k: int, eps: float | None = None, delta: float | None = None, sites: int | None = None,
            scenario: Scenario | None = None, calibration: str = "analytic", algorithm: str = "cape",
            collusion: int | None = None, settings: OtdSettings | None = None, sigma2: float | None = None,
            norm_bound: float | None = None, seed: int = 0) -> Fit:
    """``k`` components of ``data`` held by several sites, by capeAGN (docs/math/capeagn.md) or any algorithm of
    :data:`~dpcore.agn.ALGORITHMS` (``algorithm``).

    ``data``: an array N x D of samples of a mixture of Gaussians (one per row), or a :class:`~dpcore.data.Corpus` of
    documents for a single topic model (``dpcore.data.parse_text_corpus``). The sites: a ``scenario``, or ``sites``
    equal sites with the same (``eps``, ``delta``) each and ``calibration`` ("analytic" by default here).
    ``collusion`` c: both stages use the collusion-robust design for up to c colluders (``settings.collusion``).
    ``sigma2`` and ``norm_bound`` (mixtures): the noise variance and a public bound on the samples' norms (None:
    estimated from the data, not private; the notes say so). ``settings``: the budget split, power-method iterations,
    collusion bound, ... (:class:`~dpcore.agn.OtdSettings`). ``Fit.components`` is K x D (recovered means or topics,
    in the data's units), ``Fit.metrics`` q_comp, its normalised form and the weight error against the non-private
    result (:data:`~dpcore.agn.METRICS`). A run whose noise swamps the second moment (whitening fails) is an
    InputError that says so."""
    if isinstance(data, Corpus):
        values, n_total = data, data.n
    else:
        values = dataset_from_array(data).x.T
        n_total = values.shape[0]
    scenario = front_scenario(scenario, sites, eps, delta, calibration, n_total)
    entry = table_entry(algorithm)
    settings = OtdSettings() if settings is None else settings
    settings = settings if collusion is None else replace(settings, collusion=collusion)
    problem = upload_problem(values, k, scenario, seed, sigma2=sigma2, norm_bound=norm_bound)
    comparison = compare_algorithms(scenario, [entry.name], problem=problem, runs=1, seed=seed, settings=settings,
                                    workers=1)
    if entry.name in comparison.failures:
        raise InputError(f"{entry.title} found no components in this run: {comparison.failures[entry.name]}")
    (record,) = comparison.records
    return Fit(algorithm=entry.name, title=entry.title, components=comparison.examples[entry.name].components,
               metrics=dict(record.metrics), scenario=comparison.scenario, result=comparison.examples[entry.name],
               guarantees=otd_guarantees(entry.name, comparison.scenario, comparison.problem, settings),
               notes=comparison.notes)
