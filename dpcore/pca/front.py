"""capePCA in one call (the front door, docs/python-api.md): ``dpcore.capepca(X, k=5, eps=1.0, delta=1e-5,
sites=5)``. The data are dealt to the scenario's sites, preprocessed as the command line and the dashboard do
(:func:`~dpcore.pca.prepare_pca`), and one run of the algorithm is made: run 0 of :func:`~dpcore.pca.compare_pca`
with the same seed, so its numbers are that comparison's. The result carries the guarantee of every view
(:func:`~dpcore.pca.guarantees.pca_guarantees`)."""

from __future__ import annotations

from ..cape import plan_scenario
from ..data import Dataset, dataset_from_array
from ..family import Fit, front_scenario
from ..scenario import Scenario
from .compare import compare_pca
from .guarantees import pca_guarantees
from .setup import prepare_pca
from .table import algorithm as table_entry

__all__ = ["capepca"]


def capepca(data: object, *, k: int, eps: float | None = None, delta: float | None = None, sites: int | None = None,
            scenario: Scenario | None = None, calibration: str = "analytic", algorithm: str = "cape",
            collusion: int | None = None, features: str = "centre", preprocessing: str = "max-norm",
            seed: int = 0) -> Fit:
    """The top-``k`` principal directions of ``data`` held by several sites, by capePCA (docs/math/capepca.md) or any
    algorithm of :data:`~dpcore.pca.ALGORITHMS` (``algorithm``).

    ``data``: an array N x D (one sample per row, as in a CSV file or scikit-learn), or a
    :class:`~dpcore.data.Dataset` (``dpcore.load_bundled("digits")``). The sites: a ``scenario``, or ``sites`` equal
    sites sharing the samples with the same (``eps``, ``delta``) each and ``calibration`` ("analytic" by default here:
    a real guarantee at every eps; the papers' "classic" is no guarantee for eps >= 1, README "Before you trust a
    number"). ``collusion`` c: capePCA's noise design is the collusion-robust one, which keeps every promise in every
    view with up to c colluders (docs/math/audit.md); None: the general design. ``features`` and ``preprocessing``:
    centring or standardising, then scaling by the largest sample norm or clipping (:func:`~dpcore.data.preprocess`;
    it reads the data and is not private, the notes say so). ``seed`` seeds the split and the noise.
    ``Fit.components`` is K x D; ``Fit.metrics`` the captured energy, its ratio to the non-private optimum and the
    subspace distance (:data:`~dpcore.pca.METRICS`)."""
    dataset = data if isinstance(data, Dataset) else dataset_from_array(data)
    scenario = front_scenario(scenario, sites, eps, delta, calibration, dataset.n_samples)
    entry = table_entry(algorithm)
    design = None if collusion is None else plan_scenario(scenario, "pca", solver="collusion-robust",
                                                          collusion=collusion).design
    setup = prepare_pca(dataset, scenario, k, preprocessing=preprocessing, features=features, seed=seed,
                        design=design)
    comparison = compare_pca(setup.problem, setup.privacy, [entry.name], runs=1, seed=seed, workers=1)
    result = comparison.results[entry.name][0]
    return Fit(algorithm=entry.name, title=entry.title, components=result.subspace.T.copy(),
               metrics=dict(result.metrics), guarantees=pca_guarantees(entry.name, setup.privacy), scenario=scenario,
               result=result, notes=tuple(dict.fromkeys(setup.notes + comparison.notes)))
