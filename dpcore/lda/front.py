"""capeLDA in one call (the front door, docs/python-api.md): ``dpcore.capelda(corpus, k=5, eps=30.0, delta=1e-6,
sites=5)``. The documents are dealt to the scenario's sites as the ``lda`` command deals a text file, and one run of
the algorithm is made: run 0 of :func:`~dpcore.lda.compare_lda` with the same seed, measured against the
non-private topics of the same documents (there is no ground truth). The result carries the guarantee of every view
(:func:`~dpcore.lda.guarantees.lda_guarantees`)."""

from __future__ import annotations

from dataclasses import replace

from ..data import Corpus
from ..family import Fit, front_scenario
from ..scenario import Scenario
from ..seeding import UPLOAD_SPLIT_STREAM, stream_rng
from ..validation import InputError
from .compare import compare_lda
from .guarantees import lda_guarantees
from .problem import LdaSettings, corpus_lda_problem
from .table import algorithm as table_entry

__all__ = ["capelda"]


def capelda(corpus: Corpus, *, k: int, eps: float | None = None, delta: float | None = None, sites: int | None = None,
            scenario: Scenario | None = None, calibration: str = "analytic", algorithm: str = "cape",
            collusion: int | None = None, alpha0: float = 1.0, settings: LdaSettings | None = None,
            seed: int = 0) -> Fit:
    """``k`` topics of a ``corpus`` whose documents several sites hold, by capeLDA (docs/math/lda.md) or any algorithm
    of :data:`~dpcore.lda.ALGORITHMS` (``algorithm``; paper 004's configurations "1" to "4" run at one curator).

    ``corpus``: a :class:`~dpcore.data.Corpus` with its vocabulary (``dpcore.load_bundled_corpus()``, or
    ``dpcore.data.parse_text_corpus`` for your own text; a vocabulary chosen from the private documents is not
    private, and the corpus's notes say so). The sites: a ``scenario``, or ``sites`` equal sites with the same
    (``eps``, ``delta``) each and ``calibration`` ("analytic" by default here); topic models need a large eps (tens).
    ``collusion`` c: both stages use the collusion-robust design for up to c colluders (``settings.collusion``).
    ``alpha0``: the Dirichlet concentration; ``settings``: the budget split, collusion bound, ...
    (:class:`~dpcore.lda.LdaSettings`). ``Fit.components`` is K x D (topics, rows sum to 1), ``Fit.metrics`` the
    topic error against the non-private topics (:data:`~dpcore.lda.METRICS`). A run without topics (whitening
    failed, or a configuration unusable on this corpus) is an InputError that says why."""
    if not isinstance(corpus, Corpus):
        raise InputError("give the documents as a Corpus (dpcore.load_bundled_corpus() or "
                         "dpcore.data.parse_text_corpus)", "corpus")
    scenario = front_scenario(scenario, sites, eps, delta, calibration, corpus.n)
    entry = table_entry(algorithm)
    settings = LdaSettings() if settings is None else settings
    settings = settings if collusion is None else replace(settings, collusion=collusion)
    problem = corpus_lda_problem(corpus, k, alpha0, scenario.sizes / scenario.total_n,
                                 stream_rng(seed, UPLOAD_SPLIT_STREAM))
    comparison = compare_lda(scenario, [entry.name], problem=problem, runs=1, seed=seed, settings=settings,
                             workers=1)
    (record,) = comparison.records
    if record.status != "ok":
        raise InputError(f"{entry.title} gave no topics in this run ({record.status}): {record.reason}")
    return Fit(algorithm=entry.name, title=entry.title, components=comparison.examples[entry.name].topics,
               metrics=dict(record.metrics), scenario=comparison.scenario, result=comparison.examples[entry.name],
               guarantees=lda_guarantees(entry.name, comparison.scenario, problem, settings), notes=comparison.notes)
