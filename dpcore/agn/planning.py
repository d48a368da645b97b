"""capeAGN's planner hooks (:class:`dpcore.family.FamilyPlanner`; docs/planner.md).

Both stages of capeAGN and of the conventional scheme release an aggregate that is the pooled statistic plus Gaussian
noise per unique entry: M2 with std sigma_2 and the projected M3 with std sigma_3 (capeAGN: the DP floor
max_s mu_s tau_s of each stage; conventional: sqrt(sum_s mu_s^2 tau_s^2); tau_s from the budget split,
docs/math/capeagn.md). At a fixed split the two stages scale together, so the planner's curve is measured along a
common scale s of the stage profile (sigma_2, sigma_3) = s (1, rho), the noise added directly to one pooled site:
one conventional release with a single site of std s and s rho (the same code path as every run,
:mod:`dpcore.tensor.release`), on

* a reference sample of the synthetic model (:data:`REFERENCE_SAMPLES` samples; q_comp against the true components),
  or
* the user's own data, as the capeAGN page and ``python -m dpcore otd --data`` read them (:func:`load_samples`: a
  numeric CSV of MOG samples; :func:`load_documents`: text or a document-term count CSV for the single topic model),
  all of them pooled (the reference size); q_comp against the non-private result, as on that page. At an answer with
  fewer samples the sites hold a subsample of them (:func:`planner_problem`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..cape.guarantee import run_guarantee_records
from ..data import Corpus, parse_numeric_csv, parse_uploaded_documents
from ..family import DataSource, FamilyPlanner, PlannerData, RunContext, nested_subsample
from ..limits import MAX_PLANNER_STUDY_NUMBERS, MAX_TEXT_BYTES, MAX_UPLOAD_BYTES
from ..scenario import Scenario, equal_sites_scenario
from ..seeding import (
    OTD_MODEL_STREAM,
    OTD_REFERENCE_STREAM,
    PLANNER_SAMPLE_STREAM,
    data_rng,
    planner_rng,
    run_rng,
    stream_rng,
)
from ..tensor import ESTIMATORS, WhiteningError, choose_path, whiten
from ..tensor.release import StageNoise, release_m2, release_m3
from ..validation import InputError, check_choice, check_positive
from .algorithm import decomposition, m3_law, tpm
from .compare import compare_algorithms
from .evaluation import evaluate_metrics
from .guarantees import otd_guarantees
from .problem import OtdProblem, synthetic_problem, upload_problem
from .sweep import OtdData
from .table import run_algorithm

__all__ = ["PLANNER", "REFERENCE_SAMPLES", "SCALE_DECADES", "SCALE_POINTS", "SOURCES", "OtdUpload", "OtdUploadData",
           "fresh_study", "load_documents", "load_samples", "planner_problem", "refuses"]

REFERENCE_SAMPLES = 20_000
"""Samples of the reference sample the curve is measured on."""
SCALE_POINTS = 16
"""Noise scales on the curve's grid."""
SCALE_DECADES = (-4.0, -0.5)
"""The grid of the M2 stage's aggregate std: 10^a .. 10^b (samples are scaled to norm <= 1, so M2's entries are at
most 1; past 10^-0.5 whitening fails for every D the tool allows)."""
METRIC = "q_comp"


@dataclass(frozen=True, eq=False, kw_only=True)
class OtdUpload:
    """The user's data for capeAGN as the planner holds them: MOG samples (``values``, N x D, original units) or a
    corpus (``corpus``, the single topic model), the file's ``name``, and the loader's ``options`` (JSON values: the
    exported script reads the file again with them)."""

    kind: str
    name: str
    values: np.ndarray | None = None
    corpus: Corpus | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.values.shape[0]) if self.kind == "mog" else self.corpus.n

    def digest(self) -> str:
        """A short hash of the data and the options (the curve cache's key)."""
        h = hashlib.sha256(json.dumps(self.options, sort_keys=True).encode())
        if self.kind == "mog":
            h.update(np.ascontiguousarray(self.values).tobytes())
            h.update(repr(self.values.shape).encode())
        else:
            for part in (self.corpus.counts.indptr, self.corpus.counts.indices, self.corpus.counts.data):
                h.update(np.ascontiguousarray(part).tobytes())
            h.update("\n".join(self.corpus.vocabulary).encode())
        return h.hexdigest()[:16]


def load_samples(content: bytes | str, name: str, *, sigma2: float | None = None,
                 norm_bound: float | None = None) -> OtdUpload:
    """An uploaded numeric CSV of MOG samples, one per row, read as the capeAGN page and ``python -m dpcore otd --data``
    read it (:func:`dpcore.data.parse_numeric_csv`). ``sigma2``: the components' variance in the data's units (None:
    estimated from the data, not private); ``norm_bound``: a public bound on the samples' norms (None: their largest
    norm, not private)."""
    if isinstance(content, bytes) and len(content) > MAX_UPLOAD_BYTES:
        raise InputError(f"the file has {len(content):,} bytes, more than the limit of {MAX_UPLOAD_BYTES:,}", "file")
    options = {"sigma2": None if sigma2 is None else check_positive(sigma2, "sigma^2", allow_zero=True),
               "norm_bound": None if norm_bound is None else check_positive(norm_bound, "norm bound")}
    return OtdUpload(kind="mog", name=str(name), values=parse_numeric_csv(content).values, options=options)


def load_documents(content: bytes | str, name: str, *, vocab_size: int | None = None,
                   vocabulary: list[str] | tuple[str, ...] | None = None, estimator: str | None = None) -> OtdUpload:
    """Uploaded documents for the single topic model, read as the capeAGN page and ``python -m dpcore otd --model stm
    --data`` read them (:func:`dpcore.data.parse_uploaded_documents`: text with one document per line, or a ``.csv``
    document-term count table): ``vocabulary`` a public word list, else the ``vocab_size`` most frequent words (not
    private). ``estimator``: the moment estimator (None: first three words for text, all words for counts)."""
    if isinstance(content, bytes) and len(content) > MAX_TEXT_BYTES:
        raise InputError(f"the file has {len(content):,} bytes, more than the limit of {MAX_TEXT_BYTES:,}", "file")
    if estimator is not None:
        estimator = check_choice(estimator, "estimator", tuple(ESTIMATORS))
    words = None if vocabulary is None else tuple(vocabulary)
    if words is None and vocab_size is None:
        raise InputError("uploaded documents need a vocabulary size D (the D most frequent words) or a vocabulary "
                         "file", "D")
    corpus = parse_uploaded_documents(content, name, vocab_size=vocab_size, vocabulary=words)
    if estimator == "first" and corpus.first is None:
        raise InputError("the 'first' estimator needs documents as text (a count table has no word order); use "
                         "'all'", "estimator")
    options = {"vocab_size": None if words is not None else int(vocab_size),
               "vocabulary": None if words is None else list(words), "estimator": estimator}
    return OtdUpload(kind="stm", name=str(name), corpus=corpus, options=options)


@dataclass(frozen=True, kw_only=True)
class OtdUploadData(OtdData):
    """:class:`~dpcore.agn.sweep.OtdData` of the user's data: D and the estimator from the data, and for MOG the
    bound the samples are divided by (``bound``) and sigma^2 in the data's units (the user's, or estimated from all
    of them), held at every size the planner asks about (so the same noise weighs the same at the answer as on the
    curve). ``name``: the file's."""

    bound: float = 1.0
    name: str = ""

    @property
    def scaled_sigma2(self) -> float:
        """sigma^2 / bound^2: the variance of the scaled samples (what the MOG sensitivities read)."""
        return self.sigma2 / self.bound**2 if self.model == "mog" else 0.0

    def describe(self) -> str:
        what = (f"MOG samples divided by {self.bound:.4g}, sigma^2 = {self.sigma2:.4g}" if self.model == "mog"
                else f"documents (single topic model, estimator {self.estimator})")
        return f"{self.name}: {what}; D = {self.dim}, K = {self.k}; eps split {self.eps_split:g}"


def _one_site(n: int) -> Scenario:
    """A scenario of one site holding ``n`` samples (only its size is read: the pooled data's deal)."""
    return equal_sites_scenario(1, n, 1.0, 1e-5)


def _scale(upload: OtdUpload, k: int, seed: int) -> tuple[OtdProblem, float, float]:
    """All the samples pooled as one site (:func:`~dpcore.agn.upload_problem`), the bound they were divided by and
    sigma^2 in the data's units (MOG; the user's, or read from all of them as the capeAGN page reads them)."""
    if upload.kind == "mog":
        pooled = upload_problem(upload.values, k, _one_site(upload.n), seed, sigma2=upload.options.get("sigma2"),
                                norm_bound=upload.options.get("norm_bound"))
        return pooled, float(pooled.scale), float(pooled.sigma2 * pooled.scale**2)
    pooled = upload_problem(upload.corpus, k, _one_site(upload.n), seed, estimator=upload.options.get("estimator"))
    return pooled, 1.0, 0.0


def planner_problem(upload: OtdUpload, k: int, scenario: Scenario, seed: int) -> OtdProblem:
    """The problem of ``scenario`` on the user's data, as the planner's check runs it: its N = sum N_s samples (a
    subsample below all of them: :data:`~dpcore.seeding.PLANNER_SUBSAMPLE_STREAM`; all of them: the file as it is)
    dealt to its sites as the capeAGN page deals an upload (:func:`~dpcore.agn.upload_problem`); MOG samples divided
    by the bound of all of them, with the sigma^2 of all of them (so a subsample is not rescaled by its own largest
    norm)."""
    rows = nested_subsample(upload.n, scenario.total_n, seed, unit="samples", source=upload.name)
    _, bound, sigma2 = _scale(upload, k, seed)
    if upload.kind == "mog":
        return upload_problem(upload.values[rows], k, scenario, seed, sigma2=sigma2, norm_bound=bound)
    return upload_problem(upload.corpus.rows(rows), k, scenario, seed, estimator=upload.options.get("estimator"))


@dataclass(frozen=True)
class _Reference:
    """What q_comp is measured against: components (K x D, original units) and weights."""

    components: np.ndarray
    weights: np.ndarray


def _prepare_upload(settings: OtdData, upload: OtdUpload, seed: int) -> PlannerData:
    """All the user's samples pooled, the non-private result on them (the reference, from the stream (seed,
    OTD_REFERENCE_STREAM) as a comparison draws it), and what the premise costs on them."""
    pooled, bound, sigma2 = _scale(upload, settings.k, seed)
    site = pooled.sites[0]
    estimator = getattr(site, "estimator", None) or settings.estimator
    own = OtdUploadData(model=upload.kind, dim=pooled.dim, k=pooled.k, sigma2=sigma2 if upload.kind == "mog" else
                        settings.sigma2, estimator=estimator, eps_split=settings.eps_split,
                        n_restarts=settings.n_restarts, n_iter=settings.n_iter, path=settings.path,
                        m3_noise=settings.m3_noise, bound=bound, name=upload.name)
    path = choose_path(own.path, own.dim, own.k, 1).path
    ref = run_algorithm("nonpriv", pooled, _one_site(upload.n), own.settings(), stream_rng(seed, OTD_REFERENCE_STREAM),
                        path=path)
    n = upload.n
    unit = "samples" if upload.kind == "mog" else "documents"
    premise = [f"the curve is measured on all {n:,} of your {unit} pooled (the reference size), q_comp against their "
               f"non-private result; an answer with fewer {unit} has its sites hold a subsample of them, and the "
               "check measures against that subsample's non-private result (as the capeAGN page would): how far a "
               f"subsample's result lies from all {n:,}'s (sampling error) is in neither",
               f"an answer beyond the {n:,} {unit} you have is unreachable, never extrapolated"]
    if upload.kind == "mog":
        chosen = [] if upload.options.get("norm_bound") is not None else ["the bound (their largest norm)"]
        if upload.options.get("sigma2") is None:
            chosen.append("sigma^2 (the smallest eigenvalue of their covariance)")
        premise.append(f"samples are divided by {bound:.4g} and sigma^2 = {sigma2:.4g} at every size, read from all "
                       f"{n:,} samples, so the same noise weighs the same at the answer as on the curve"
                       + (f"; {' and '.join(chosen)} come from the data and are not private: give public values"
                          if chosen else ""))
    elif upload.corpus.vocabulary_source == "data":
        premise.append("the vocabulary (the most frequent words of your documents) is not private")
    what = (f"{n:,} samples x D = {own.dim}" if upload.kind == "mog" else
            f"{n:,} documents, D = {own.dim} words (single topic model)")
    data = PlannerData(payload=(_Reference(ref.components, ref.weights), pooled, path), available=n, reference=0.0,
                       settings=own, key=f"otd|upload|{upload.digest()}|{own.describe()}|{seed}", dataset=upload,
                       seed=seed, description=f"{upload.name}: {what}; K = {own.k}; q_comp against the non-private "
                       f"result on all {n:,}", premise=tuple(premise), unit=unit)
    value = run_at(replace(data, size=n), np.zeros(2), planner_rng(seed, -1, 0))
    return replace(data, reference=np.nan if value is None else value, size=n)


def prepare(settings: OtdData, dataset: OtdUpload | None, seed: int) -> PlannerData:
    """The ground truth (from ``seed``, as a comparison draws it) and a reference sample of it, pooled; or the user's
    data (``dataset``, from :func:`load_samples` or :func:`load_documents`), pooled."""
    if dataset is not None:
        if not isinstance(dataset, OtdUpload):
            raise InputError("capeAGN plans on data read by load_samples (MOG) or load_documents (STM)", "file")
        return _prepare_upload(settings, dataset, seed)
    model = settings.synthetic().model(stream_rng(seed, OTD_MODEL_STREAM))
    problem = synthetic_problem(model, [REFERENCE_SAMPLES], stream_rng(seed, PLANNER_SAMPLE_STREAM), settings.estimator)
    path = choose_path(settings.path, settings.dim, settings.k, 1).path
    data = PlannerData(payload=(model, problem, path), available=None, reference=0.0, settings=settings,
                       key=f"otd|{settings.describe()}|{seed}", seed=seed, drawable=_drawable(settings),
                       size=REFERENCE_SAMPLES, description=f"{settings.describe()}; ground truth from seed {seed}, "
                       "each simulated study fresh samples of it")
    value = run_at(data, np.zeros(2), planner_rng(seed, -1, 0))
    return replace(data, reference=np.nan if value is None else value)


def _drawable(settings: OtdData) -> int:
    """The most samples (documents) one simulated study of the synthetic model holds: N x D (N x L words) at most
    :data:`~dpcore.limits.MAX_PLANNER_STUDY_NUMBERS`."""
    width = settings.dim if settings.model == "mog" else settings.doc_length
    return max(1, MAX_PLANNER_STUDY_NUMBERS // max(int(width), 1))


def study(data: PlannerData, n: int, seed: int, start: Any = None) -> PlannerData:
    """One simulated study of ``n`` samples drawn with ``seed``: fresh samples of the synthetic model's ground truth
    (the plan's: the source is the model drawn from the plan's seed, as a comparison with that seed draws it); the
    user's data subsampled to n (:func:`~dpcore.family.nested_subsample` with ``seed``; all of them: the data
    themselves), q_comp against that subsample's non-private result. ``start`` is not read (nothing to resume)."""
    settings: OtdData = data.settings
    if data.available is None:
        model = data.payload[0]
        problem = synthetic_problem(model, [int(n)], stream_rng(seed, PLANNER_SAMPLE_STREAM), settings.estimator)
        return replace(data, payload=(model, problem, data.payload[2]), size=int(n))
    upload: OtdUpload = data.dataset
    if n >= upload.n:
        return data
    rows = nested_subsample(upload.n, int(n), seed, unit=data.unit, source=upload.name)
    one = _one_site(int(n))
    if upload.kind == "mog":
        pooled = upload_problem(upload.values[rows], settings.k, one, seed, sigma2=settings.sigma2,
                                norm_bound=settings.bound)
    else:
        pooled = upload_problem(upload.corpus.rows(rows), settings.k, one, seed,
                                estimator=upload.options.get("estimator"))
    path = data.payload[2]
    ref = run_algorithm("nonpriv", pooled, one, settings.settings(), stream_rng(seed, OTD_REFERENCE_STREAM), path=path)
    return replace(data, payload=(_Reference(ref.components, ref.weights), pooled, path), size=int(n), seed=seed)


def scales(data: PlannerData, profile: np.ndarray) -> np.ndarray:
    """:data:`SCALE_POINTS` scales of the M2 stage's std, log-spaced over :data:`SCALE_DECADES`."""
    return np.logspace(*SCALE_DECADES, SCALE_POINTS)


def run_at(data: PlannerData, stds: np.ndarray, rng: np.random.Generator) -> float | None:
    """q_comp of one run whose M2 and M3 aggregates carry noise stds[0] and stds[1]: the pooled sample released once
    with that noise (one site, weight 1), whitened, the power method, recovery; None when whitening fails."""
    reference, problem, path = data.payload
    settings: OtdData = data.settings
    ctx = RunContext(name="planner", problem=problem, scenario=None, settings=settings.settings(), rng=rng, path=path)
    one = np.ones(1)
    try:
        m2, _ = release_m2(problem.sites, one, StageNoise("independent", stds=np.array([stds[0]])), rng)
        wh = whiten(m2, problem.k)
        m3, _ = release_m3(problem.sites, one, wh.w, StageNoise("independent", stds=np.array([stds[1]])), rng,
                           path=path, law=m3_law(ctx))
    except WhiteningError:
        return None
    dec = decomposition(ctx, wh, tpm(ctx, m3))
    return float(evaluate_metrics(dec.components, dec.weights, reference.components, reference.weights)[METRIC])


def fresh_study(settings: OtdData, model_seed: int, scenario: Scenario, scheme: str, seed: int) -> float | None:
    """q_comp of one fresh study of ``scheme`` on the synthetic model: the ground truth drawn from ``model_seed`` (as
    a comparison with that seed draws it), fresh samples at the scenario's N_s (:func:`dpcore.seeding.data_rng`
    (seed, 0)) and the algorithm's noise (:func:`~dpcore.seeding.run_rng` (seed, 0, scheme)), as one run of
    :func:`dpcore.agn.compare_algorithms` draws them; None when whitening failed."""
    model = settings.synthetic().model(stream_rng(model_seed, OTD_MODEL_STREAM))
    problem = synthetic_problem(model, scenario.sizes, data_rng(seed, 0), settings.estimator)
    try:
        dec = run_algorithm(scheme, problem, scenario, settings.settings(), run_rng(seed, 0, scheme, "otd"))
    except WhiteningError:
        return None
    return float(evaluate_metrics(dec.components, dec.weights, model.components, model.weights)[METRIC])


def check(data: PlannerData, scenario: Scenario, scheme: str, seed: int) -> float | None:
    """One fresh study of ``scheme`` at ``scenario``, its data and noise drawn from ``seed``: synthetic, fresh samples
    of the plan's ground truth (:func:`fresh_study`); the user's data, the scenario's N samples of them
    (:func:`planner_problem` with ``seed``) dealt to its sites (:func:`dpcore.agn.compare_algorithms`, one run), q_comp
    against their non-private result. None when whitening failed."""
    settings: OtdData = data.settings
    if data.available is None:
        return fresh_study(settings, data.seed, scenario, scheme, seed)
    problem = planner_problem(data.dataset, settings.k, scenario, seed)
    result = compare_algorithms(scenario, [scheme], problem=problem, runs=1, seed=seed,
                                settings=settings.settings(), workers=1)
    return next(r.metric(METRIC) for r in result.records if r.algorithm == scheme)


def guarantees(data: PlannerData, scenario: Scenario, names: tuple[str, ...]) -> list[dict]:
    """The guarantee records (every view) of the algorithms ``names`` at ``scenario``."""
    _, problem, _ = data.payload
    settings: OtdData = data.settings
    return run_guarantee_records({name: otd_guarantees(name, scenario, problem, settings.settings())
                                  for name in names})


def refuses(data: PlannerData, entry: Any) -> str | None:
    """A dense-only entry (no projected third-moment sampler: discrete capeAGN) on data whose third moment takes the
    projected path (docs/math/discrete.md, "Where it runs")."""
    if entry.dense_only and data.payload[2] != "dense":
        return (f"{entry.title} runs on the dense path only (its sites send every unique entry of the dense M3), and "
                f"these data (D = {data.settings.dim}, K = {data.settings.k}) take the projected path")
    return None


def script(data: PlannerData) -> tuple[str, dict[str, Any]]:
    """Python source that repeats :func:`check` (``scenario``, ``scheme``, ``seed``, ``dataset`` and ``SETTINGS``
    defined before it; the metric left in ``value``), and the settings it reads."""
    s: OtdData = data.settings
    fields = {"model": s.model, "dim": s.dim, "k": s.k, "estimator": s.estimator, "eps_split": s.eps_split,
              "n_restarts": s.n_restarts, "n_iter": s.n_iter, "path": s.path, "m3_noise": s.m3_noise}
    if data.available is not None:
        return ("settings = OtdData(**SETTINGS)\nproblem = planner_problem(dataset, settings.k, scenario, seed)\n"
                "result = compare_algorithms(scenario, [scheme], problem=problem, runs=1, seed=seed, "
                "settings=settings.settings(), workers=1)\n"
                f"value = next(r.metric({METRIC!r}) for r in result.records if r.algorithm == scheme)\n"), fields
    fields.update(sigma2=s.sigma2, doc_length=s.doc_length, truth=s.truth)
    return "value = fresh_study(OtdData(**SETTINGS), DATA_SEED, scenario, scheme, seed)\n", fields


SOURCES: dict[str, DataSource] = {
    "synthetic": DataSource(label="synthetic model (ground truth known)"),
    "upload-mog": DataSource(label="your samples: numeric CSV, one per row (mixture of Gaussians)",
                                fields={"model": "mog"}, load=load_samples, types=("csv", "txt", "tsv"),
                                options=("sigma2", "norm_bound")),
    "upload-stm": DataSource(label="your documents: text, one per line, or a count CSV (single topic model)",
                                fields={"model": "stm"}, load=load_documents, types=("txt", "csv"),
                                options=("vocab_size", "vocabulary", "estimator")),
}
"""capeAGN's data sources: its synthetic model, and the uploads the capeAGN page and the otd command accept."""

PLANNER = FamilyPlanner(metric=METRIC, target_words="component error q_comp", prepare=prepare, refuses=refuses,
                        scales=scales, run_at=run_at, study=study, check=check, guarantees=guarantees, script=script,
                        imports="from dpcore.agn import compare_algorithms\nfrom dpcore.agn.planning import "
                        "fresh_study, planner_problem\nfrom dpcore.agn.sweep import OtdData\n",
                        stage_names=("M2", "M3"))
"""capeAGN's planner hooks (``dpcore.agn.FAMILY.planner``)."""
