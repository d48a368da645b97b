"""capePCA's planner hooks (:class:`dpcore.family.FamilyPlanner`; docs/planner.md).

The released aggregate of capePCA and of the conventional scheme is the pooled A plus symmetric Gaussian noise of std
sigma per unique entry (capePCA: sigma = tau_c, the DP floor max_s mu_s tau_s unless the scenario sets a larger
tau_c; conventional: sigma = sqrt(sum_s mu_s^2 tau_s^2); docs/math/capepca.md). For one study (its data and its
noise) the captured energy ratio therefore depends on the scenario only through sigma: the planner's curve adds the
noise directly to the pooled A of simulated studies of the answer's size (:func:`study`: fresh synthetic draws, or
subsamples of a fixed set), the last step of every run (:func:`dpcore.pca.result.decompose`).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import numpy as np

from .. import linalg
from ..cape.guarantee import run_guarantee_records
from ..data import (
    Dataset,
    load_bundled,
    parse_numeric_csv,
    preprocess,
    sniff_columns,
    synthetic_dataset,
    table_to_dataset,
)
from ..family import DataSource, FamilyPlanner, PlannerData
from ..limits import MAX_PLANNER_STUDY_NUMBERS, MAX_SITE_NUMBERS
from ..privacy.symmetric import symmetric_matrix
from ..scenario import Scenario
from ..seeding import PCA_SPLIT_STREAM, PCA_SYNTHETIC_STREAM, stream_rng
from ..validation import InputError, check_positive_int
from .compare import compare_pca
from .guarantees import privacy_guarantees
from .metrics import METRICS
from .problem import pca_privacy, pca_problem, scatter_problem
from .result import top_subspace
from .setup import prepare_pca
from .studies import synthetic_study
from .sweep import PCA_DATASETS, PcaData, register_upload
from .table import ALGORITHMS

__all__ = ["LANCZOS_ABOVE", "PLANNER", "REFERENCE_SAMPLES", "SCALE_DECADES", "SCALE_POINTS", "SOURCES", "drawable",
           "pca_noise", "planner_dataset", "source_label", "study", "upload_dataset"]

REFERENCE_SAMPLES = 20_000
"""Synthetic data: samples of the reference draw that sets the curve's grid (fewer when N x D would pass
MAX_SITE_NUMBERS)."""
SCALE_POINTS = 20
"""Noise levels on the curve's grid."""
SCALE_DECADES = (-2.0, 0.5)
"""The grid spans sigma_K x 10^a .. sigma_1 x 10^b, sigma_i = lambda_i(A) / (2 sqrt(D)) (the noise whose spectral
norm, about 2 sqrt(D) sigma, equals the i-th eigenvalue: where direction i starts to drown)."""
METRIC = "captured_energy_ratio"
SYNTHETIC_BLOCK = 4096
"""Synthetic samples per block of the planner's nested draws."""
LANCZOS_ABOVE = 300
"""The curve's runs take the top-K eigenpairs by Lanczos above this D (MNIST's 784: 18 ms against 190 ms)."""


def upload_dataset(content: bytes | str, name: str) -> Dataset:
    """An uploaded numeric CSV as the planner reads it (header and label column detected as the capePCA page's
    defaults do: :func:`dpcore.data.sniff_columns`); the exported script reads the file the same way."""
    label = sniff_columns(content).label
    return table_to_dataset(parse_numeric_csv(content, label_column=label), name)


def planner_dataset(settings: PcaData, dataset: Dataset | None, seed: int, n: int | None = None) -> Dataset:
    """The raw data the planner and its check use: ``dataset`` (an upload) when given, else the bundled set, else
    ``n`` synthetic samples (default :data:`REFERENCE_SAMPLES`). Synthetic samples are drawn in blocks of
    :data:`SYNTHETIC_BLOCK`, block b from ``default_rng([seed, PCA_SYNTHETIC_STREAM, b])``, so the data at a smaller N
    are a prefix of those at a larger N (the largest norm, which max-norm divides by, then grows with N)."""
    if dataset is not None:
        return dataset
    if settings.dataset != "synthetic":
        return load_bundled(settings.dataset)
    n = min(REFERENCE_SAMPLES, MAX_SITE_NUMBERS // settings.dim) if n is None else check_positive_int(n, "N")
    if n * settings.dim > MAX_SITE_NUMBERS:
        raise InputError(f"{n:,} samples of D = {settings.dim:,} are more than the {MAX_SITE_NUMBERS:,} numbers this "
                         "tool keeps in memory; use fewer or smaller sites or a smaller D", "N")
    blocks = []
    for b in range(-(-n // SYNTHETIC_BLOCK)):
        rng = np.random.default_rng([int(seed), PCA_SYNTHETIC_STREAM, b])
        x = synthetic_dataset(SYNTHETIC_BLOCK, rng, dim=settings.dim, spectrum=settings.spectrum,
                              decay=settings.decay).x
        blocks.append(x[:, : n - b * SYNTHETIC_BLOCK])
    return Dataset(name="synthetic", x=np.concatenate(blocks, axis=1),
                   description=f"synthetic zero-mean Gaussian, D = {settings.dim}, N = {n:,}, {settings.spectrum} "
                   f"spectrum (decay {settings.decay:g}), nested blocks of {SYNTHETIC_BLOCK:,}")


def _digest(dataset: Dataset) -> str:
    h = hashlib.sha256(np.ascontiguousarray(dataset.x).tobytes())
    h.update(repr(dataset.x.shape).encode())
    return h.hexdigest()[:16]


def _pooled(settings: PcaData, x: np.ndarray) -> tuple[Any, float, str]:
    """The pooled problem of raw samples ``x`` (D x N) preprocessed as a run preprocesses them, its max-norm scale
    and the preprocessing's note."""
    prepared = preprocess(x, settings.preprocessing, features=settings.features)
    return pca_problem([prepared.x], settings.k, solver_dtype=settings.solver_dtype), prepared.scale, prepared.note


def drawable(settings: PcaData) -> int:
    """The most samples one simulated study of the synthetic Gaussian holds: N x D at most
    :data:`~dpcore.limits.MAX_PLANNER_STUDY_NUMBERS` (checked before any draw)."""
    return max(1, MAX_PLANNER_STUDY_NUMBERS // settings.dim)


def prepare(settings: PcaData, dataset: Dataset | None, seed: int) -> PlannerData:
    """The data the planner describes and plans on: a bundled or uploaded set (preprocessed whole, before any split,
    as :func:`dpcore.pca.prepare_pca` does), or the synthetic Gaussian's reference draw of
    :data:`REFERENCE_SAMPLES` (its studies are fresh draws, :func:`study`)."""
    raw = planner_dataset(settings, dataset, seed)
    uploaded = dataset is not None
    synthetic = settings.dataset == "synthetic" and not uploaded
    if synthetic:
        problem, scale, note = _pooled(settings, raw.x)
        payload = (problem, None)
    else:
        prepared = preprocess(raw.x, settings.preprocessing, features=settings.features)
        problem = pca_problem([prepared.x], settings.k, solver_dtype=settings.solver_dtype)
        scale, note = prepared.scale, prepared.note
        payload = (problem, prepared.x.astype(np.float32))  # a study reads its subsample in float32
    available = None if synthetic else raw.n_samples
    key = f"pca|{settings.describe()}|{raw.name}|{_digest(raw) if uploaded else seed}"
    what = raw.name if uploaded else source_label(settings).split(" (")[0]
    excluded = "" if not uploaded or "excluded" not in raw.description else "; " + raw.description.split(", ")[-1]
    return PlannerData(payload=payload, available=available, key=key, reference=1.0, settings=settings, dataset=raw,
                       seed=seed, scale=scale, drawable=drawable(settings) if synthetic else None,
                       size=raw.n_samples,
                       description=f"{what}; {raw.n_samples:,} samples x D = {raw.dim}; K = {problem.k}; "
                       f"preprocessing: {note}{excluded}")


def study(data: PlannerData, n: int, seed: int, start: Any = None) -> PlannerData:
    """One simulated study of ``n`` samples drawn with ``seed`` (docs/planner.md, "The method"): the synthetic
    Gaussian drawn afresh at that size and preprocessed on its own (max-norm divides by its own largest norm, as a
    run's does; :func:`dpcore.pca.studies.synthetic_study`, continuing ``start``, the ``state`` of a smaller study of
    this seed, when given); a fixed set (bundled or uploaded, preprocessed whole) subsampled to ``n`` of its samples
    (all of them: the set itself)."""
    settings: PcaData = data.settings
    problem, whole = data.payload
    if whole is None:
        if settings.features in ("none", "centre") and settings.preprocessing == "max-norm":
            scatter, scale, state = synthetic_study(settings.dim, settings.spectrum, settings.decay,
                                                    settings.features == "centre", n, seed, start)
            pooled = scatter_problem(scatter, int(n), settings.k, settings.solver_dtype, top_only=True,
                                     lanczos_above=LANCZOS_ABOVE)
            return replace(data, payload=(pooled, None), scale=scale, size=n, seed=seed, state=state)
        pooled, scale, _ = _pooled(settings, planner_dataset(settings, None, seed, n).x)
        return replace(data, payload=(pooled, None), scale=scale, size=n, seed=seed)
    if n >= whole.shape[1]:
        return data
    rows = np.sort(stream_rng(seed, PCA_SPLIT_STREAM).permutation(whole.shape[1])[:n])
    single = whole[:, rows].astype(np.float32)
    pooled = scatter_problem((single @ single.T).astype(np.float64) / n, n, settings.k, settings.solver_dtype,
                             top_only=True, lanczos_above=LANCZOS_ABOVE)
    return replace(data, payload=(pooled, whole), size=n, seed=seed)


def for_studies(data: PlannerData) -> PlannerData:
    """What the curve's worker processes read of ``data`` (:func:`study`, :func:`run_at`): not the raw data set
    (the check's and the exports'), so a curve does not send MNIST's 31 MB to every worker."""
    return replace(data, dataset=None)


def pca_noise(scenario: Scenario, settings: PcaData | None = None) -> dict[str, np.ndarray]:
    """The aggregate noise std per unique entry of every scheme the planner answers for (the entries of capePCA's
    table with a ``planner``: capePCA's tau_c, the DP floor max_s mu_s tau_s or the scenario's larger tau_c; discrete
    capePCA's bound; the conventional sqrt(sum_s mu_s^2 tau_s^2); docs/math/capepca.md), by name. Closed form."""
    own = PcaData() if settings is None else settings
    return {name: np.asarray(entry.planner.noise(scenario, own), dtype=float) for name, entry in ALGORITHMS.items()
            if entry.planner is not None}


def scales(data: PlannerData, profile: np.ndarray) -> np.ndarray:
    """:data:`SCALE_POINTS` noise levels, log-spaced from sigma_K 10^a to sigma_1 10^b (:data:`SCALE_DECADES`), sigma_i
    = lambda_i(A) / (2 sqrt(D)): from where even the K-th direction stands far above the noise to where the noise
    drowns the first."""
    problem = data.payload[0]
    edge = 2.0 * np.sqrt(problem.dim)
    low = max(float(problem.eigenvalues[problem.k - 1]), 1e-12 * float(problem.eigenvalues[0])) / edge
    high = float(problem.eigenvalues[0]) / edge
    return np.logspace(np.log10(low) + SCALE_DECADES[0], np.log10(high) + SCALE_DECADES[1], SCALE_POINTS)


def run_at(data: PlannerData, stds: np.ndarray, rng: np.random.Generator) -> float:
    """The captured energy ratio of the top-K subspace of A + sigma Z (Z symmetric standard normal per unique
    entry, drawn by SFC64 keyed by two words of ``rng``, as :mod:`dpcore.normals` keys its chunks: faster than
    PCG64): one run of any scheme whose aggregate carries noise sigma. Above D = :data:`LANCZOS_ABOVE` the top-K
    eigenpairs come from Lanczos (:func:`dpcore.linalg.top_eigenpairs`; the vectors agree with the exact solver's to
    about 1e-6, far below the noise)."""
    problem = data.payload[0]
    key = rng.integers(0, 1 << 63, size=2, dtype=np.int64)
    z = np.random.Generator(np.random.SFC64(np.random.SeedSequence([int(key[0]), int(key[1])]))).standard_normal(
        problem.pooled_unique.size)
    z *= float(stds[0])
    z += problem.pooled_unique
    if problem.dim <= LANCZOS_ABOVE:
        _, vectors = top_subspace(z, problem.dim, problem.k, problem.solver_dtype)
    else:
        matrix = symmetric_matrix(z, problem.dim).astype(np.float32)
        _, vectors = linalg.top_eigenpairs(matrix, problem.k, lanczos_above=LANCZOS_ABOVE)
    return float(METRICS[METRIC].compute(problem, vectors))


def check(data: PlannerData, scenario: Scenario, scheme: str, seed: int) -> float | None:
    """One fresh study of ``scheme`` (capePCA's message flow, or the conventional scheme) at ``scenario``, all drawn
    from ``seed``: the synthetic Gaussian drawn at the scenario's N, or the fixed set dealt to its sites (a fresh
    subsample when they hold fewer than all), preprocessed and dealt as the capePCA page does
    (:func:`dpcore.pca.prepare_pca`), and the run's noise."""
    settings: PcaData = data.settings
    raw = data.dataset if data.available is not None else planner_dataset(settings, None, seed, scenario.total_n)
    setup = prepare_pca(raw, scenario, settings.k, preprocessing=settings.preprocessing, features=settings.features,
                        seed=seed, solver_dtype=settings.solver_dtype)
    comparison = compare_pca(setup.problem, setup.privacy, [scheme], 1, seed, workers=1)
    return float(comparison.results[scheme][0].metrics[METRIC])


def guarantees(data: PlannerData, scenario: Scenario, names: tuple[str, ...]) -> list[dict]:
    """The guarantee records (every view) of the algorithms ``names`` at ``scenario`` (with the data's D, which the
    discrete design's guarantee needs)."""
    return run_guarantee_records(privacy_guarantees(pca_privacy(scenario, dim=data.settings.dim), names))


def script(data: PlannerData) -> tuple[str, dict[str, Any]]:
    """Python source that repeats :func:`check` with dpcore for ``scenario``, ``scheme`` and ``seed`` (the exported
    script's loop; ``dataset`` defined by its head: None, or the bundled or uploaded set read again), leaving the
    metric in ``value``; and the settings it reads from ``SETTINGS`` (embedded by the exporter as a literal)."""
    s: PcaData = data.settings
    fields = {"dataset": s.dataset, "k": s.k, "dim": s.dim, "spectrum": s.spectrum, "decay": s.decay,
              "preprocessing": s.preprocessing, "features": s.features, "solver_dtype": s.solver_dtype}
    return (
        "settings = PcaData(**SETTINGS)\n"
        "raw = dataset if dataset is not None else planner_dataset(settings, None, seed, scenario.total_n)\n"
        "setup = prepare_pca(raw, scenario, settings.k, preprocessing=settings.preprocessing, "
        "features=settings.features, seed=seed, solver_dtype=settings.solver_dtype)\n"
        "comparison = compare_pca(setup.problem, setup.privacy, [scheme], 1, seed, workers=1)\n"
        f"value = float(comparison.results[scheme][0].metrics[{METRIC!r}])\n"
    ), fields


def source_label(settings: PcaData | None = None) -> str:
    """The synthetic source's label, from the settings that run (issue 36: never a paper's K the planner does not
    use)."""
    s = settings if settings is not None else PcaData()
    return f"synthetic zero-mean Gaussian (D = {s.dim}, K = {s.k}, {s.spectrum} spectrum)"


SOURCES: dict[str, DataSource] = {
    **{name: DataSource(label=source_label() if name == "synthetic" else label, fields={"dataset": name})
       for name, label in PCA_DATASETS.items()},
    "upload": DataSource(label="your own CSV (one sample per row)", fields={"features": "standardise"},
                            load=upload_dataset, types=("csv", "txt", "gz"),
                            register=lambda dataset: {"dataset": "synthetic", "upload": register_upload(dataset)}),
}
"""capePCA's data sources: the sweeps' data sets (synthetic and every bundled one) and an uploaded CSV (features
standardised, as the sweeps of uploads do)."""

PLANNER = FamilyPlanner(metric=METRIC, target_words="share of the non-private captured energy", prepare=prepare,
                        scales=scales, run_at=run_at, study=study, check=check,
                        guarantees=guarantees, script=script,
                        imports="from dpcore.pca import compare_pca, prepare_pca\n"
                        "from dpcore.pca.planning import planner_dataset\nfrom dpcore.pca.sweep import PcaData\n",
                        percent=True, for_studies=for_studies)
"""capePCA's planner hooks (``dpcore.pca.FAMILY.planner``)."""
