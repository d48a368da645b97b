"""capePCA's planner hooks (:class:`dpcore.family.FamilyPlanner`; docs/planner.md).

The released aggregate of capePCA and of the conventional scheme is the pooled A plus symmetric Gaussian noise of std
sigma per unique entry (capePCA: sigma = tau_c, the DP floor max_s mu_s tau_s unless the scenario sets a larger
tau_c; conventional: sigma = sqrt(sum_s mu_s^2 tau_s^2); docs/math/capepca.md). For a fixed data set the captured
energy ratio of a run therefore depends on the scenario only through sigma, up to the sampling of the samples that the
sites hold: the utility curve is measured on the whole (preprocessed) data set as one pooled A, the noise added
directly (the last step of every run, :func:`dpcore.pca.result.decompose`).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

from ..cape import conventional_std, dp_floor
from ..cape.guarantee import run_guarantee_records
from ..data import (
    Dataset,
    load_bundled,
    parse_numeric_csv,
    preprocess,
    sniff_columns,
    synthetic_covariance,
    synthetic_dataset,
    table_to_dataset,
)
from ..family import FamilyPlanner, PlannerData, PlannerSource
from ..limits import MAX_SITE_NUMBERS
from ..scenario import Scenario
from ..seeding import PCA_SYNTHETIC_STREAM
from ..validation import InputError, check_positive_int
from .compare import compare_pca
from .guarantees import privacy_guarantees
from .problem import pca_privacy, pca_problem
from .result import decompose
from .setup import prepare_pca
from .sweep import PCA_DATASETS, PcaData

__all__ = ["PLANNER", "REFERENCE_SAMPLES", "SCALE_DECADES", "SCALE_POINTS", "SOURCES", "pca_noise", "planner_dataset",
           "upload_dataset"]

REFERENCE_SAMPLES = 20_000
"""Synthetic data: samples of the pooled A the curve is measured on (fewer when N x D would pass MAX_SITE_NUMBERS)."""
SCALE_POINTS = 32
"""Noise levels on the curve's grid."""
SCALE_DECADES = (-2.0, 0.5)
"""The grid spans sigma_K x 10^a .. sigma_1 x 10^b, sigma_i = lambda_i(A) / (2 sqrt(D)) (the noise whose spectral
norm, about 2 sqrt(D) sigma, equals the i-th eigenvalue: where direction i starts to drown)."""
METRIC = "captured_energy_ratio"
SYNTHETIC_BLOCK = 4096
"""Synthetic samples per block of the planner's nested draws."""
CANDIDATES = 16
"""Samples of largest raw norm whose centred norm decides the max-norm scale of a nested synthetic draw."""


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


def prepare(settings: PcaData, dataset: Dataset | None, seed: int) -> PlannerData:
    """The pooled problem of the whole preprocessed data set (the planner's reference A)."""
    raw = planner_dataset(settings, dataset, seed)
    prepared = preprocess(raw.x, settings.preprocessing, features=settings.features)
    problem = pca_problem([prepared.x], settings.k, solver_dtype=settings.solver_dtype)
    uploaded = dataset is not None
    available = None if settings.dataset == "synthetic" and not uploaded else raw.n_samples
    key = f"pca|{settings.describe()}|{raw.name}|{_digest(raw) if uploaded else seed}"
    what = raw.name if uploaded else PCA_DATASETS[settings.dataset].split(",")[0]
    return PlannerData(payload=problem, available=available, key=key, reference=1.0, settings=settings, dataset=raw,
                       seed=seed, scale=prepared.scale,
                       description=f"{what}; {raw.n_samples:,} samples x D = {raw.dim}; K = {problem.k}; "
                       f"preprocessing: {prepared.note}")


def pca_noise(scenario: Scenario, settings: PcaData | None = None) -> dict[str, np.ndarray]:
    """The aggregate noise std per unique entry of capePCA (tau_c: the scenario's, or the DP floor max_s mu_s tau_s,
    whichever is larger) and of the conventional scheme (sqrt(sum_s mu_s^2 tau_s^2)), tau_s = Delta(N_s) c(eps_s,
    delta_s) (docs/math/capepca.md). Closed form: no solver runs."""
    tau = scenario.taus("pca")
    mu = scenario.weights()
    cape = max(dp_floor(mu, tau), float(scenario.tau_c or 0.0))
    return {"cape": np.array([cape]), "conv": np.array([conventional_std(mu, tau)])}


def _block_z(dim: int, spectrum: str, decay: float, seed: int, b: int) -> np.ndarray:
    """Block b of the nested synthetic draw in the covariance's eigenbasis: w * z (D x SYNTHETIC_BLOCK, w the square
    roots of the eigenvalues): the standard normals :func:`dpcore.data.synthetic_dataset` draws first and then rotates
    (the rotation keeps norms and commutes with centring)."""
    eigenvalues, _ = synthetic_covariance(dim, spectrum, decay)
    z = np.random.default_rng([int(seed), PCA_SYNTHETIC_STREAM, b]).standard_normal((dim, SYNTHETIC_BLOCK))
    z *= np.sqrt(eigenvalues)[:, None]
    return z


@lru_cache(maxsize=1024)
def _block_stats(dim: int, spectrum: str, decay: float, seed: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """A whole block's column sum and its :data:`CANDIDATES` columns of largest norm (D x CANDIDATES): a few KiB."""
    z = _block_z(dim, spectrum, decay, seed, b)
    top = np.argsort(np.einsum("ij,ij->j", z, z))[-CANDIDATES:]
    return z.sum(axis=1), z[:, top].copy()


def _scale_at(settings: PcaData, seed: int, n: int) -> float:
    """The largest norm that max-norm divides the first ``n`` nested synthetic samples by, after centring (or none):
    max_i ||x_i - m||, in the eigenbasis (||B v|| = ||v||), over the :data:`CANDIDATES` samples of largest raw norm
    of every block (the centring moves a norm by far less than the gaps between them; tests/test_planner.py checks
    it against the full draw)."""
    key = (settings.dim, settings.spectrum, settings.decay, seed)
    whole, last = divmod(n, SYNTHETIC_BLOCK)
    sums, columns = [], []
    for b in range(whole):
        total, top = _block_stats(*key, b)
        sums.append(total)
        columns.append(top)
    if last:
        z = _block_z(*key, whole)[:, :last]
        sums.append(z.sum(axis=1))
        columns.append(z[:, np.argsort(np.einsum("ij,ij->j", z, z))[-CANDIDATES:]])
    mean = np.sum(sums, axis=0) / n if settings.features == "centre" else np.zeros(settings.dim)
    candidates = np.concatenate(columns, axis=1)
    return float(np.linalg.norm(candidates - mean[:, None], axis=0).max())


def _exact_scale(settings: PcaData, seed: int, n: int) -> float:
    raw = planner_dataset(settings, None, seed, n)
    return preprocess(raw.x, settings.preprocessing, features=settings.features).scale


def data_scale(data: PlannerData, scenario: Scenario) -> float:
    """(m / m_ref)^2 for synthetic data under max-norm (m the largest norm of the data drawn at the scenario's N, as the
    check and the ``pca`` command draw them; the captured energy ratio of A / m^2 + sigma Z equals that of
    A / m_ref^2 + sigma (m / m_ref)^2 Z); 1 for a bundled or uploaded set (preprocessed whole, before the split) and
    for clipping (a public scale)."""
    settings: PcaData = data.settings
    if data.available is not None or settings.preprocessing != "max-norm":
        return 1.0
    fast = settings.features in ("none", "centre")
    scale = (_scale_at if fast else _exact_scale)(settings, data.seed, scenario.total_n)
    return (scale / data.scale) ** 2


def scales(data: PlannerData, profile: np.ndarray) -> np.ndarray:
    """:data:`SCALE_POINTS` noise levels, log-spaced from sigma_K 10^a to sigma_1 10^b (:data:`SCALE_DECADES`), sigma_i
    = lambda_i(A) / (2 sqrt(D)): from where even the K-th direction stands far above the noise to where the noise
    drowns the first."""
    problem = data.payload
    edge = 2.0 * np.sqrt(problem.dim)
    low = max(float(problem.eigenvalues[problem.k - 1]), 1e-12 * float(problem.eigenvalues[0])) / edge
    high = float(problem.eigenvalues[0]) / edge
    return np.logspace(np.log10(low) + SCALE_DECADES[0], np.log10(high) + SCALE_DECADES[1], SCALE_POINTS)


def run_at(data: PlannerData, stds: np.ndarray, rng: np.random.Generator) -> float:
    """The captured energy ratio of the top-K subspace of A + sigma Z (Z symmetric standard normal per unique
    entry): one run of any scheme whose aggregate carries noise sigma."""
    problem = data.payload
    z = rng.standard_normal(problem.pooled_unique.size)
    z *= float(stds[0])
    z += problem.pooled_unique
    return float(decompose("planner", problem, z, 0, float(stds[0]), False).metrics[METRIC])


def _setup(data: PlannerData, scenario: Scenario):
    """The data dealt to the scenario's sites as :func:`dpcore.pca.prepare_pca` does, drawn (synthetic) and split with
    the seed the planner's data were prepared with (so the data scale the answer counted is the check's)."""
    settings: PcaData = data.settings
    raw = data.dataset if data.available is not None else planner_dataset(settings, None, data.seed, scenario.total_n)
    return prepare_pca(raw, scenario, settings.k, preprocessing=settings.preprocessing, features=settings.features,
                       seed=data.seed, solver_dtype=settings.solver_dtype)


def check(data: PlannerData, scenario: Scenario, scheme: str, runs: int, seed: int) -> list[float | None]:
    """``runs`` real runs of ``scheme`` (capePCA's message flow, or the conventional scheme) at ``scenario``: the data
    preprocessed and dealt to its sites as the capePCA page does (:func:`dpcore.pca.prepare_pca`; synthetic data drawn
    at the scenario's N; both with the data's seed), each run's noise on its stream (``seed``, run, name)."""
    setup = _setup(data, scenario)
    comparison = compare_pca(setup.problem, setup.privacy, [scheme], runs, seed, workers=1)
    return [float(r.metrics[METRIC]) for r in comparison.results[scheme]]


def guarantees(data: PlannerData, scenario: Scenario) -> list[dict]:
    """The guarantee records (every view) of capePCA and the conventional scheme at ``scenario``."""
    return run_guarantee_records(privacy_guarantees(pca_privacy(scenario), ("cape", "conv")))


def script(data: PlannerData, scenario: Scenario, scheme: str, runs: int, seed: int) -> str:
    """Python source that repeats :func:`check` with dpcore (the exported script's body; ``scenario`` and ``data``
    are defined by the script's head: the scenario from its JSON, an upload from its CSV)."""
    s: PcaData = data.settings
    return (
        f"settings = PcaData(dataset={s.dataset!r}, k={s.k}, dim={s.dim}, spectrum={s.spectrum!r}, decay={s.decay!r}, "
        f"preprocessing={s.preprocessing!r}, features={s.features!r}, solver_dtype={s.solver_dtype!r})\n"
        f"raw = planner_dataset(settings, dataset, {data.seed}, None if dataset is not None or settings.dataset != "
        "'synthetic' else scenario.total_n)\n"
        f"setup = prepare_pca(raw, scenario, settings.k, preprocessing=settings.preprocessing, "
        f"features=settings.features, seed={data.seed}, solver_dtype=settings.solver_dtype)\n"
        f"comparison = compare_pca(setup.problem, setup.privacy, [{scheme!r}], {runs}, {seed}, workers=1)\n"
        f"values = [float(r.metrics[{METRIC!r}]) for r in comparison.results[{scheme!r}]]\n"
    )


SOURCES: dict[str, PlannerSource] = {
    **{name: PlannerSource(label=label, fields={"dataset": name}) for name, label in PCA_DATASETS.items()},
    "upload": PlannerSource(label="your own CSV (one sample per row)", fields={"features": "standardise"},
                            load=upload_dataset, types=("csv", "txt", "gz")),
}
"""capePCA's data sources: the sweeps' data sets (synthetic and every bundled one) and an uploaded CSV (features
standardised, as the sweeps of uploads do)."""

PLANNER = FamilyPlanner(metric=METRIC, target_words="share of the non-private captured energy", prepare=prepare,
                        noise=pca_noise, scales=scales, run_at=run_at, check=check, guarantees=guarantees,
                        script=script, imports="from dpcore.pca import compare_pca, prepare_pca\n"
                        "from dpcore.pca.planning import planner_dataset\nfrom dpcore.pca.sweep import PcaData\n",
                        percent=True, data_scale=data_scale, sources=SOURCES)
"""capePCA's planner hooks (``dpcore.pca.FAMILY.planner``)."""
