"""capeLDA's planner hooks (:class:`dpcore.family.FamilyPlanner`; docs/planner.md).

capeLDA and the conventional scheme release M2 and the projected M3 of the documents' word counts with Gaussian noise
per unique entry (docs/math/lda.md): the aggregate of each stage carries std sigma_2, sigma_3 (capeLDA: the DP floor
max_s mu_s tau_s of each stage; conventional: sqrt(sum_s mu_s^2 tau_s^2)). At a fixed budget split both scale
together: the curve is measured along a common scale s of (sigma_2, sigma_3) = s (1, rho), on a reference corpus of
the synthetic model (:data:`REFERENCE_DOCUMENTS` documents, one pooled site; topic error against the true topics) or
on a real corpus as the Topic models page and ``python -m dpcore lda`` read it (the bundled Python-docs corpus,
:func:`load_bundled`; your text, :func:`load_text`: all of its documents pooled, topic error against their
non-private topics), the noise added by the same two-stage flow every LDA algorithm runs
(:func:`dpcore.lda.algorithm.two_stage`). At an answer with fewer documents than the corpus has, the sites hold a
nested subsample of them (:func:`planner_problem`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..cape.guarantee import run_guarantee_records
from ..data import NOT_PRIVATE_VOCABULARY, Corpus, load_bundled_corpus, parse_text_corpus
from ..family import DataSource, FamilyPlanner, PlannerData, RunContext, nested_subsample
from ..limits import MAX_PLANNER_STUDY_NUMBERS, MAX_TEXT_BYTES
from ..scenario import Scenario, equal_sites_scenario
from ..seeding import (
    LDA_MODEL_STREAM,
    LDA_REFERENCE_STREAM,
    PLANNER_SAMPLE_STREAM,
    UPLOAD_SPLIT_STREAM,
    data_rng,
    planner_rng,
    run_rng,
    stream_rng,
)
from ..tensor import WhiteningError
from ..tensor.release import StageNoise
from ..validation import InputError
from .algorithm import two_stage
from .compare import compare_lda
from .guarantees import lda_guarantees
from .problem import LdaProblem, corpus_lda_problem, synthetic_lda_problem
from .recovery import topic_error
from .sweep import LdaData
from .table import run_algorithm

__all__ = ["PLANNER", "REFERENCE_DOCUMENTS", "SCALE_DECADES", "SCALE_POINTS", "SOURCES", "LdaCorpus", "fresh_study",
           "load_bundled", "load_text", "planner_problem"]

REFERENCE_DOCUMENTS = 5_000
"""Documents of the reference corpus the curve is measured on."""
SCALE_POINTS = 14
"""Noise scales on the curve's grid."""
SCALE_DECADES = (-5.0, -1.5)
"""The grid of the M2 stage's aggregate std: 10^a .. 10^b (M2's entries are word co-occurrence frequencies, at most
1, most far smaller)."""
CORPUS_SCALE_DECADES = (-8.0, -2.5)
"""The grid of the M2 stage's std on a real corpus (its M2 entries are the co-occurrence frequencies of D words,
far smaller than a synthetic model's: on the bundled corpus the topic error is already 0.35 at 10^-5)."""
CORPUS_SCALE_POINTS = 20
"""Noise scales on a real corpus's grid."""
METRIC = "topic_error"


@dataclass(frozen=True, eq=False, kw_only=True)
class LdaCorpus:
    """A real corpus as the planner holds it: the ``corpus``, its ``name`` (the file's, or the bundled set's) and the
    loader's ``options`` (JSON values: the exported script reads it again with them)."""

    name: str
    corpus: Corpus
    options: dict = field(default_factory=dict)

    def digest(self) -> str:
        """A short hash of the documents, the vocabulary and the options (the curve cache's key)."""
        h = hashlib.sha256(json.dumps(self.options, sort_keys=True).encode())
        for part in (self.corpus.counts.indptr, self.corpus.counts.indices, self.corpus.counts.data):
            h.update(np.ascontiguousarray(part).tobytes())
        h.update("\n".join(self.corpus.vocabulary).encode())
        return h.hexdigest()[:16]


def load_bundled(name: str = "python-docs") -> LdaCorpus:
    """A bundled corpus with its public vocabulary, as the Topic models page and ``python -m dpcore lda --corpus``
    read it (:func:`dpcore.data.load_bundled_corpus`)."""
    return LdaCorpus(name=name, corpus=load_bundled_corpus(name), options={"name": name})


def load_text(content: bytes | str, name: str, *, rule: str = "bundled", vocab_size: int | None = None,
              vocabulary: list[str] | tuple[str, ...] | None = None) -> LdaCorpus:
    """Your documents, one per line, as the Topic models page and ``python -m dpcore lda --text`` read them
    (:func:`dpcore.data.parse_text_corpus`: stop words removed; the vocabulary by ``rule``: the bundled public list,
    your ``vocabulary``, or the ``vocab_size`` most frequent words, not private)."""
    if isinstance(content, bytes) and len(content) > MAX_TEXT_BYTES:
        raise InputError(f"the file has {len(content):,} bytes, more than the limit of {MAX_TEXT_BYTES:,}", "file")
    words = None if vocabulary is None else tuple(vocabulary)
    corpus = parse_text_corpus(content, rule=rule, vocab_size=vocab_size, vocabulary=words)
    options = {"rule": rule, "vocab_size": None if vocab_size is None else int(vocab_size),
               "vocabulary": None if words is None else list(words)}
    return LdaCorpus(name=str(name), corpus=corpus, options=options)


@dataclass(frozen=True, kw_only=True)
class LdaCorpusData(LdaData):
    """:class:`~dpcore.lda.sweep.LdaData` of a real corpus: D from its vocabulary, ``name`` and ``n`` documents."""

    name: str = ""
    n: int = 0

    def describe(self) -> str:
        return (f"{self.name}: {self.n:,} documents, D = {self.dim} words; K = {self.k}, alpha_0 = {self.alpha0:g}; "
                f"eps split {self.eps_split:g}")


@dataclass(frozen=True)
class _Topics:
    """What the topic error is measured against: K topics over the vocabulary (a model's, or the non-private ones)."""

    topics: np.ndarray


def planner_problem(corpus: Corpus, k: int, alpha0: float, scenario: Scenario, seed: int) -> LdaProblem:
    """The problem of ``scenario`` on a real corpus, as the planner's check runs it: its N = sum N_s documents (below
    all of them, the first N of one permutation, stream (seed, PLANNER_SUBSAMPLE_STREAM), so a smaller N holds a
    subset of a larger N's) dealt to its sites in proportion to N_s as the Topic models page deals a corpus
    (:func:`~dpcore.lda.corpus_lda_problem`, stream (seed, UPLOAD_SPLIT_STREAM))."""
    n = scenario.total_n
    rows = nested_subsample(corpus.n, n, seed, unit="documents", source="the corpus")
    return corpus_lda_problem(corpus.rows(rows), k, alpha0, scenario.sizes / n, stream_rng(seed, UPLOAD_SPLIT_STREAM))


def _prepare_corpus(settings: LdaData, upload: LdaCorpus, seed: int) -> PlannerData:
    """All the documents pooled as one site, their non-private topics (the reference, stream (seed,
    LDA_REFERENCE_STREAM) as a comparison draws it) and what the premise costs on them."""
    corpus = upload.corpus
    pooled = corpus_lda_problem(corpus, settings.k, settings.alpha0, np.ones(1), stream_rng(seed, UPLOAD_SPLIT_STREAM))
    own = LdaCorpusData(dim=corpus.dim, k=pooled.k, alpha0=settings.alpha0, eps_split=settings.eps_split,
                        n_restarts=settings.n_restarts, n_iter=settings.n_iter, path=settings.path,
                        name=upload.name, n=corpus.n)
    ref = run_algorithm("nonpriv", pooled, equal_sites_scenario(1, corpus.n, 1.0, 1e-5), own.settings(),
                        stream_rng(seed, LDA_REFERENCE_STREAM))
    path = own.settings().m3_path(own.dim)
    n = corpus.n
    premise = [f"the curve is measured on all {n:,} documents pooled (the reference size), the topic error against "
               "their non-private topics; an answer with fewer documents has its sites hold a subsample of them, and "
               "the check measures against that subsample's non-private topics (as the Topic models page would)",
               f"an answer beyond the {n:,} documents of the corpus is unreachable, never extrapolated"]
    premise += [note for note in corpus.notes if note == NOT_PRIVATE_VOCABULARY]
    data = PlannerData(payload=(_Topics(ref.topics), pooled, path), available=n, reference=0.0, settings=own,
                       key=f"lda|corpus|{upload.digest()}|{own.describe()}|{seed}", dataset=upload, seed=seed,
                       description=f"{own.describe()}; topic error against the non-private topics of all {n:,}",
                       premise=tuple(premise), unit="documents")
    value = run_at(data, np.zeros(2), planner_rng(seed, -1, 0))
    return replace(data, reference=np.nan if value is None else value, size=n)


def prepare(settings: LdaData, dataset: LdaCorpus | None, seed: int) -> PlannerData:
    """The ground truth (from ``seed``, as a comparison draws it) and a reference corpus of it, pooled; or a real
    corpus (``dataset``, from :func:`load_bundled` or :func:`load_text`), pooled."""
    if dataset is not None:
        if not isinstance(dataset, LdaCorpus):
            raise InputError("capeLDA plans on a corpus read by load_bundled or load_text", "file")
        return _prepare_corpus(settings, dataset, seed)
    model = settings.synthetic().model(stream_rng(seed, LDA_MODEL_STREAM))
    problem = synthetic_lda_problem(model, [REFERENCE_DOCUMENTS], stream_rng(seed, PLANNER_SAMPLE_STREAM),
                                    doc_length=settings.doc_length)
    path = settings.settings().m3_path(settings.dim)
    data = PlannerData(payload=(model, problem, path), available=None, reference=0.0, settings=settings,
                       key=f"lda|{settings.describe()}|{seed}", seed=seed, size=REFERENCE_DOCUMENTS,
                       drawable=max(1, MAX_PLANNER_STUDY_NUMBERS // settings.doc_length),
                       description=f"{settings.describe()}; topics from seed {seed}, each simulated study fresh "
                       "documents of them")
    value = run_at(data, np.zeros(2), planner_rng(seed, -1, 0))
    return replace(data, reference=np.nan if value is None else value)


def study(data: PlannerData, n: int, seed: int, start: Any = None) -> PlannerData:
    """One simulated study of ``n`` documents drawn with ``seed``: fresh documents of the synthetic model's topics
    (the plan's, drawn from its seed as a comparison with that seed draws them); a real corpus subsampled to n
    documents (:func:`~dpcore.family.nested_subsample`; all of them: the corpus itself), the topic error against that
    subsample's non-private topics. ``start`` is not read (nothing to resume)."""
    settings: LdaData = data.settings
    if data.available is None:
        model = data.payload[0]
        problem = synthetic_lda_problem(model, [int(n)], stream_rng(seed, PLANNER_SAMPLE_STREAM),
                                        doc_length=settings.doc_length)
        return replace(data, payload=(model, problem, data.payload[2]), size=int(n))
    corpus = data.dataset.corpus
    if n >= corpus.n:
        return data
    rows = nested_subsample(corpus.n, int(n), seed, unit="documents", source="the corpus")
    pooled = corpus_lda_problem(corpus.rows(rows), settings.k, settings.alpha0, np.ones(1),
                                stream_rng(seed, UPLOAD_SPLIT_STREAM))
    ref = run_algorithm("nonpriv", pooled, equal_sites_scenario(1, int(n), 1.0, 1e-5), settings.settings(),
                        stream_rng(seed, LDA_REFERENCE_STREAM))
    return replace(data, payload=(_Topics(ref.topics), pooled, data.payload[2]), size=int(n), seed=seed)


def scales(data: PlannerData, profile: np.ndarray) -> np.ndarray:
    """:data:`SCALE_POINTS` scales of the M2 stage's std, log-spaced over :data:`SCALE_DECADES` (a real corpus:
    :data:`CORPUS_SCALE_POINTS` over :data:`CORPUS_SCALE_DECADES`)."""
    if data.available is not None:
        return np.logspace(*CORPUS_SCALE_DECADES, CORPUS_SCALE_POINTS)
    return np.logspace(*SCALE_DECADES, SCALE_POINTS)


def run_at(data: PlannerData, stds: np.ndarray, rng: np.random.Generator) -> float | None:
    """The topic error of one run whose M2 and M3 aggregates carry noise stds[0] and stds[1] (the pooled corpus, one
    site of weight 1, through :func:`~dpcore.lda.algorithm.two_stage`); None when whitening fails."""
    model, problem, path = data.payload
    settings: LdaData = data.settings
    ctx = RunContext(name="planner", problem=problem, scenario=None, settings=settings.settings(), rng=rng, path=path)
    mode = "independent" if float(stds[0]) > 0 else "none"
    try:
        result = two_stage(ctx, problem.sites, np.ones(1), StageNoise(mode, stds=np.array([stds[0]])),
                           StageNoise(mode, stds=np.array([stds[1]])))
    except WhiteningError:
        return None
    return float(topic_error(result.topics, model.topics))


def fresh_study(settings: LdaData, model_seed: int, scenario: Scenario, scheme: str, seed: int) -> float | None:
    """The topic error of one fresh study of ``scheme`` on the synthetic model: the topics drawn from ``model_seed``
    (as a comparison with that seed draws them), fresh documents at the scenario's N_s
    (:func:`dpcore.seeding.data_rng` (seed, 0)) and the algorithm's noise (:func:`~dpcore.seeding.run_rng` (seed, 0,
    scheme)), as one run of :func:`dpcore.lda.compare_lda`; None when whitening failed or the result is unusable."""
    model = settings.synthetic().model(stream_rng(model_seed, LDA_MODEL_STREAM))
    problem = synthetic_lda_problem(model, scenario.sizes, data_rng(seed, 0), doc_length=settings.doc_length)
    try:
        res = run_algorithm(scheme, problem, scenario, settings.settings(), run_rng(seed, 0, scheme, "lda"))
    except WhiteningError:
        return None
    return float(topic_error(res.topics, model.topics)) if res.usable else None


def check(data: PlannerData, scenario: Scenario, scheme: str, seed: int) -> float | None:
    """One fresh study of ``scheme`` at ``scenario``, its data and noise drawn from ``seed``: synthetic, fresh
    documents of the plan's topics (:func:`fresh_study`); a real corpus, the scenario's N documents of it
    (:func:`planner_problem` with ``seed``) dealt to its sites (:func:`dpcore.lda.compare_lda`, one run), the topic
    error against their non-private topics. None for a run that failed."""
    settings: LdaData = data.settings
    if data.available is None:
        return fresh_study(settings, data.seed, scenario, scheme, seed)
    problem = planner_problem(data.dataset.corpus, settings.k, settings.alpha0, scenario, seed)
    result = compare_lda(scenario, [scheme], problem=problem, runs=1, seed=seed, settings=settings.settings(),
                         workers=1)
    return next(r.metric(METRIC) for r in result.records if r.algorithm == scheme)


def guarantees(data: PlannerData, scenario: Scenario, names: tuple[str, ...]) -> list[dict]:
    """The guarantee records (every view) of the algorithms ``names`` at ``scenario``."""
    _, problem, _ = data.payload
    settings: LdaData = data.settings
    proxy = _SizesOnly(problem, scenario.sizes)
    return run_guarantee_records({name: lda_guarantees(name, scenario, proxy, settings.settings())
                                  for name in names})


class _SizesOnly:
    """The reference corpus seen with the scenario's document counts (what the guarantees read of a problem: the
    sizes, the vocabulary size and alpha_0)."""

    def __init__(self, problem, sizes: np.ndarray):
        self.sizes = np.asarray(sizes)
        self.dim = problem.dim
        self.alpha0 = problem.alpha0
        self.k = problem.k


def script(data: PlannerData) -> tuple[str, dict[str, Any]]:
    """Python source that repeats :func:`check` (``scenario``, ``scheme``, ``seed``, ``dataset`` and ``SETTINGS``
    defined before it; the metric left in ``value``), and the settings it reads."""
    s: LdaData = data.settings
    fields = {"k": s.k, "alpha0": s.alpha0, "eps_split": s.eps_split, "n_restarts": s.n_restarts, "n_iter": s.n_iter,
              "path": s.path}
    if data.available is not None:
        return ("settings = LdaData(**SETTINGS)\n"
                "problem = planner_problem(dataset.corpus, settings.k, settings.alpha0, scenario, seed)\n"
                "result = compare_lda(scenario, [scheme], problem=problem, runs=1, seed=seed, "
                "settings=settings.settings(), workers=1)\n"
                f"value = next(r.metric({METRIC!r}) for r in result.records if r.algorithm == scheme)\n"), fields
    fields.update(dim=s.dim, alpha_shape=s.alpha_shape, doc_length=s.doc_length)
    return "value = fresh_study(LdaData(**SETTINGS), DATA_SEED, scenario, scheme, seed)\n", fields


SOURCES: dict[str, DataSource] = {
    "synthetic": DataSource(label="synthetic LDA model (ground truth known)"),
    "python-docs": DataSource(label="bundled: Python documentation (2,208 documents, public 600-word vocabulary)",
                                 bundled=load_bundled),
    "upload": DataSource(label="your documents: text, one per line", load=load_text, types=("txt",),
                            options=("rule", "vocab_size", "vocabulary")),
}
"""capeLDA's data sources: its synthetic model, the bundled corpus and your text, as the Topic models page offers."""

PLANNER = FamilyPlanner(metric=METRIC, target_words="topic error", prepare=prepare, scales=scales,
                        run_at=run_at, study=study, check=check, guarantees=guarantees, script=script,
                        imports="from dpcore.lda import compare_lda\nfrom dpcore.lda.planning import fresh_study, "
                        "planner_problem\n"
                        "from dpcore.lda.sweep import LdaData\n", stage_names=("M2", "M3"))
"""capeLDA's planner hooks (``dpcore.lda.FAMILY.planner``)."""
