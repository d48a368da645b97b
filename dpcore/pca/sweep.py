"""capePCA in a sweep (docs/experiments.md; the hooks of :class:`dpcore.family.FamilySweep`): the data settings
:class:`PcaData`, the design of a grid point, the preparation of the grid points and one run of them.

Data are prepared once per sweep (the same split as :func:`dpcore.pca.prepare_pca` with the same seed) and are the
same in every run (runs differ in noise). Along ``ns`` every site's data at a smaller N_s are a prefix of its data at
the largest N_s; along ``sites`` site s holds the same samples at every S. Along eps, delta, N_s and c the standard
normals of one (run, algorithm) are drawn once and replayed at the other grid points (:class:`ReplayNormals`:
identical numbers, no redraw).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from ..data import (
    BUNDLED,
    FEATURE_SCALINGS,
    PREPROCESSING,
    SPECTRA,
    Dataset,
    load_bundled,
    preprocess,
    split_sites,
    synthetic_dataset,
)
from ..family import FamilyPlan, FamilySweep, GridPoint, result_rows
from ..limits import MAX_PCA_ENTRIES, MAX_REPLAY_NUMBERS, MAX_SITE_NUMBERS
from ..privacy.symmetric import unique_count_matrix
from ..scenario import Scenario
from ..seeding import PCA_SPLIT_STREAM, PCA_SYNTHETIC_STREAM, run_rng, stream_rng
from ..validation import InputError, check_choice, check_positive, check_positive_int, check_rank
from .guarantees import privacy_guarantees
from .problem import SOLVER_DTYPES, pca_privacy, pca_problem
from .setup import noise_dominance_note
from .table import ALGORITHMS, run_algorithm

__all__ = ["MAX_REGISTERED_UPLOADS", "PCA_DATASETS", "SWEEP", "PcaData", "ReplayNormals", "data_set",
           "register_upload", "registered_upload"]

PCA_DATASETS: dict[str, str] = {
    "synthetic": "synthetic zero-mean Gaussian with a fixed covariance (the paper's D = 200, K = 50)",
    **{name: info.label for name, info in BUNDLED.items()},
}
"""The sweeps' data sets: the synthetic Gaussian and every bundled one (dpcore.data.BUNDLED, with its D)."""
_SHORT_NAMES = {"mnist": "MNIST", "digits": "digits 8x8", "synthetic": "synthetic"}
MAX_REGISTERED_UPLOADS = 4
"""Uploaded data sets a process keeps for sweeps (the oldest is forgotten first)."""
_UPLOADS: OrderedDict[str, Dataset] = OrderedDict()


def register_upload(dataset: Dataset) -> str:
    """Keep an uploaded data set for sweeps of this process and return its key (the first 16 hex digits of the
    SHA-256 of its values and shape), which :class:`PcaData` ``upload`` names; at most
    :data:`MAX_REGISTERED_UPLOADS` are kept."""
    digest = hashlib.sha256(np.ascontiguousarray(dataset.x).tobytes() + repr(dataset.x.shape).encode()).hexdigest()
    key = digest[:16]
    _UPLOADS[key] = dataset
    _UPLOADS.move_to_end(key)
    while len(_UPLOADS) > MAX_REGISTERED_UPLOADS:
        _UPLOADS.popitem(last=False)
    return key


def registered_upload(key: str) -> Dataset:
    """The uploaded data set of ``key`` (an InputError when this process no longer has it)."""
    if key not in _UPLOADS:
        raise InputError("the uploaded data set is no longer in memory (or was never uploaded here); upload it again",
                         "upload")
    return _UPLOADS[key]


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


@dataclass(frozen=True, kw_only=True)
class PcaData:
    """The data of a PCA sweep: a bundled data set or the synthetic Gaussian (``dim``, ``spectrum``, ``decay``),
    the subspace dimension K, the (non-private) preprocessing and the DPdisPCA rank R (None: R = K).
    ``solver_dtype``: precision of the eigen-decompositions of the noisy matrices. ``float32`` (default) halves
    the dominant cost; its rounding (about 1e-7 ||A||) is orders of magnitude below the DP noise and moves the
    metrics by about 1e-6 relative. ``float64`` reproduces ``dpcore.pca.compare_pca`` bit for bit.
    Validated and normalised on construction (settings that do not apply are reset to their defaults)."""

    OPTIONS: ClassVar[dict[str, str]] = {"dataset": "dataset", "k": "k", "dim": "dim", "spectrum": "spectrum",
                                         "decay": "decay", "preprocess": "preprocessing", "features": "features",
                                         "rank": "rank", "precision": "solver_dtype"}
    """The command line's sweep flags (argparse names) that set these fields."""

    dataset: str = "synthetic"
    k: int = 10
    dim: int = 200
    spectrum: str = "power"
    decay: float = 1.0
    preprocessing: str = "max-norm"
    features: str = "centre"
    rank: int | None = None
    solver_dtype: str = "float32"
    upload: str | None = None

    def __post_init__(self) -> None:
        _set(self, "solver_dtype", check_choice(self.solver_dtype, "solver precision", SOLVER_DTYPES))
        dataset = check_choice(self.dataset, "dataset", tuple(PCA_DATASETS))
        _set(self, "dataset", dataset)
        if self.upload is not None:
            _set(self, "dim", registered_upload(self.upload).dim)
            _set(self, "spectrum", "power")
            _set(self, "decay", 1.0)
        elif dataset == "synthetic":
            _set(self, "dim", check_positive_int(self.dim, "D", minimum=2))
            _set(self, "spectrum", check_choice(self.spectrum, "spectrum", SPECTRA))
            _set(self, "decay", check_positive(self.decay, "decay"))
        else:
            _set(self, "dim", BUNDLED[dataset].dim)
            _set(self, "spectrum", "power")
            _set(self, "decay", 1.0)
        _set(self, "k", check_rank(self.k, self.dim))
        _set(self, "preprocessing", check_choice(self.preprocessing, "preprocessing", tuple(PREPROCESSING)))
        _set(self, "features", check_choice(self.features, "features", tuple(FEATURE_SCALINGS)))
        if self.rank is not None:
            rank = check_positive_int(self.rank, "R")
            if not self.k <= rank <= self.dim:
                raise InputError(f"DPdisPCA rank R must satisfy K = {self.k} <= R <= D = {self.dim} (got {rank})",
                                 "R")
            _set(self, "rank", rank)

    def describe(self) -> str:
        if self.upload is not None:
            upload = registered_upload(self.upload)
            what = f"uploaded {upload.name}, {upload.n_samples:,} samples, D = {self.dim}"
        else:
            what = (f"synthetic Gaussian, D = {self.dim}, {self.spectrum} spectrum (decay {self.decay:g})"
                    if self.dataset == "synthetic" else PCA_DATASETS[self.dataset])
        features = "" if self.features == "centre" else f" after features {self.features}"
        return f"{what}; K = {self.k}; preprocessing {self.preprocessing}{features}; {self.solver_dtype} eigensolver"

    def short_name(self) -> str:
        """The data set in a few words (the reduced variants' names)."""
        return "upload" if self.upload is not None else _SHORT_NAMES[self.dataset]

    def quick(self) -> PcaData | None:
        """The reduced variant's data (docs/experiments.md, "--quick"): MNIST -> digits, synthetic D > 50 -> D = 50,
        K at most 10; None when nothing is reduced (an upload is kept as it is)."""
        if self.upload is not None:
            return None
        if self.dataset == "mnist":
            return PcaData(dataset="digits", k=min(self.k, 10), preprocessing=self.preprocessing,
                           features=self.features)
        if self.dataset == "synthetic" and self.dim > 50:
            return PcaData(dataset="synthetic", k=min(self.k, 10), dim=50, spectrum=self.spectrum, decay=self.decay,
                           preprocessing=self.preprocessing, features=self.features)
        if self.k > 10:
            return PcaData(dataset=self.dataset, k=10, dim=self.dim, spectrum=self.spectrum, decay=self.decay,
                           preprocessing=self.preprocessing, features=self.features)
        return None

    def check_size(self, largest: Scenario, smallest_n: int) -> None:
        """Refuse a sweep whose largest grid point keeps more site data or noise than this tool holds in memory."""
        numbers = largest.total_n * self.dim
        if numbers > MAX_SITE_NUMBERS:
            raise InputError(f"the largest grid point needs N x D = {largest.total_n:,} x {self.dim} = "
                             f"{numbers:,} numbers of site data, more than the {MAX_SITE_NUMBERS:,} a sweep keeps "
                             "in memory; use smaller N_s or fewer sites", "grid")
        entries = largest.n_sites * (self.dim * (self.dim + 1) // 2)
        if entries > MAX_PCA_ENTRIES:
            raise InputError(f"S x D(D+1)/2 = {entries:,} numbers per noise term at the largest grid point is "
                             f"more than the {MAX_PCA_ENTRIES:,} this tool keeps in memory; use fewer "
                             "sites or fewer features", "grid")


def data_set(data: PcaData, total: int, seed: int) -> Dataset:
    """The data set ``data`` names: a registered upload, ``total`` synthetic samples drawn from the stream (seed,
    PCA_SYNTHETIC_STREAM), or a bundled data set."""
    if data.upload is not None:
        return registered_upload(data.upload)
    if data.dataset == "synthetic":
        return synthetic_dataset(total, stream_rng(seed, PCA_SYNTHETIC_STREAM), dim=data.dim, spectrum=data.spectrum,
                                 decay=data.decay)
    return load_bundled(data.dataset)


def stage_taus(scenario: Scenario, data: PcaData) -> dict[str, np.ndarray]:
    """capePCA's one design: tau_s of the second-moment matrix."""
    return {"capePCA": scenario.taus("pca")}


def plan(spec: Any, scenarios: Sequence[Scenario], design: Callable[[Scenario, float | int], dict]) -> FamilyPlan:
    """The data of the largest grid point (ns, sites) or of the scenario's sizes, split once; each grid point's
    problem (prefixes of it) and privacy set-up with its design."""
    data: PcaData = spec.data
    sizes_max = scenarios[-1].sizes if spec.parameter in ("ns", "sites") else spec.scenario.sizes
    dataset = data_set(data, int(np.sum(sizes_max)), spec.seed)
    prepared = preprocess(dataset.x, data.preprocessing, features=data.features)
    split = split_sites(prepared.x, sizes_max, stream_rng(spec.seed, PCA_SPLIT_STREAM), labels=dataset.labels,
                        allow_replacement=True)
    after = []
    if split.message:
        message = split.message
        if spec.parameter == "ns":
            message += (" Smaller N_s use prefixes of these site samples, so repeats can occur at any N_s.")
        after.append(message)
    points = []
    shared_problem = None
    crowded = []
    for value, scenario in zip(spec.grid, scenarios, strict=True):
        if spec.parameter == "ns":
            problem = pca_problem([x[:, : int(value)] for x in split.sites], data.k)
        elif spec.parameter == "sites":
            problem = pca_problem(list(split.sites[: int(value)]), data.k)
        else:
            if shared_problem is None:
                shared_problem = pca_problem(list(split.sites), data.k)
            problem = shared_problem
        problem = replace(problem, solver_dtype=data.solver_dtype)
        privacy = pca_privacy(scenario, design(scenario, value)["capePCA"], dim=problem.dim)
        if noise_dominance_note(problem, privacy):
            crowded.append(value)
        points.append(GridPoint(value=value, scenario=scenario, problem=problem, privacy=privacy))
    if crowded:
        after.append(f"at {spec.label} = {', '.join(f'{v:g}' for v in crowded)} the aggregate's noise (spectral norm "
                     "about 2 sqrt(D) tau_c) exceeds the K-th eigenvalue of A: there even capePCA recovers mostly "
                     "noise directions")
    recorded = 3 * len(sizes_max) * unique_count_matrix(points[0].problem.dim)  # capePCA's normals of one run
    return FamilyPlan(points=tuple(points), notes_before=(f"data: {dataset.description}; preprocessing: "
                                                          f"{prepared.note}",),
                      notes_after=tuple(after), replay=spec.parameter != "sites" and recorded <= MAX_REPLAY_NUMBERS)


class _ReplayMismatch(Exception):
    """A later grid point asked for draws of another shape than the first: draw afresh instead."""


def _shape(size: Any) -> tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, (tuple, list)):
        return tuple(int(n) for n in size)
    return (int(size),)


class ReplayNormals:
    """Stands in for the generator of one (seed, run, algorithm) across the grid points of a PCA sweep: the first
    pass draws from ``rng`` and records every ``standard_normal`` array, later passes (after :meth:`rewind`)
    return the recorded arrays in the same order. The numbers are exactly those a fresh generator would give at
    every grid point (the PCA algorithms draw only standard normals, in an order that does not depend on eps,
    delta, N_s or c), without drawing them again.

    The recorded arrays are handed out read-only, not copied: a consumer that only reads them (the conventional
    scheme, DPdisPCA, local, central, pooled) costs no copy, and one that scales its normals in place (capePCA's
    noise terms) copies a read-only array first - writing into one raises, so no grid point can change another's
    numbers. The last replay (``rewind(final=True)``) hands them out writable: nothing reads them afterwards."""

    def __init__(self, rng: np.random.Generator):
        self._rng = rng
        self._draws: list[np.ndarray] = []
        self._position: int | None = None
        self._final = False

    def rewind(self, final: bool = False) -> None:
        """Replay from the start; ``final``: the last replay, which may hand out writable arrays."""
        self._position = 0
        self._final = final

    def standard_normal(self, size: Any = None) -> np.ndarray:
        if self._position is None:
            z = np.asarray(self._rng.standard_normal(size))
            z.setflags(write=False)
            self._draws.append(z)
            return z
        if self._position >= len(self._draws) or self._draws[self._position].shape != _shape(size):
            raise _ReplayMismatch()
        self._position += 1
        recorded = self._draws[self._position - 1]
        if self._final:
            recorded.setflags(write=True)
        return recorded


def run(prepared: Any, spec: Any, run_index: int, tick: Callable[[str], bool]) -> list[tuple] | None:
    """One run of every algorithm at every grid point (an algorithm that cannot change along the parameter once,
    its rows repeated); None when ``tick`` asks to stop."""
    rank = spec.data.rank
    rows: list[tuple] = []
    for algorithm in spec.algorithms:  # names checked by SweepSpec: the entries below are trusted
        entry = ALGORITHMS[algorithm]
        points = prepared.points[:1] if algorithm in prepared.invariant else prepared.points
        base_rng = run_rng(spec.seed, run_index, algorithm, "pca")
        replay = ReplayNormals(base_rng) if prepared.replay and len(points) > 1 else None
        for i, point in enumerate(points):
            if replay is not None and i > 0:
                replay.rewind(final=i == len(points) - 1)
            rng = replay if replay is not None else (base_rng if i == 0 else
                                                     run_rng(spec.seed, run_index, algorithm, "pca"))
            try:
                result = run_algorithm(entry, point.problem, point.privacy, rng, rank=rank)
            except _ReplayMismatch:  # pragma: no cover - the designs of one sweep share their shapes
                fresh = run_rng(spec.seed, run_index, algorithm, "pca")
                result = run_algorithm(entry, point.problem, point.privacy, fresh, rank=rank)
            metrics = {m: float(result.metrics[m]) for m in spec.metrics}
            targets = prepared.points if algorithm in prepared.invariant else (point,)
            for target in targets:
                rows.extend(result_rows(spec, target.value, algorithm, run_index, metrics, "ok"))
            if tick(f"run {run_index + 1}/{spec.runs}, {spec.label} = {point.value:g}: {entry.title}"):
                return None
    return rows


def notes(data: PcaData, algorithms: Sequence[str]) -> tuple[str, ...]:
    """What ``local`` and DPdisPCA do in this sweep."""
    out = []
    if "local" in algorithms:
        out.append("local: Analyze Gauss on the site with the smallest tau_s (the first site when they are equal)")
    if "dpdis" in algorithms:
        out.append(f"DPdisPCA rank R = {data.rank if data.rank is not None else data.k}")
    return tuple(out)


def guarantees(spec: Any, scenario: Scenario, value: float | int, designs: Any) -> dict[str, tuple]:
    """Every algorithm's guarantees at one grid point (:func:`dpcore.pca.guarantees.pca_guarantees` with the
    point's design and the data's D, which the discrete design's guarantee depends on; along c the coalition view has
    c colluders)."""
    privacy = pca_privacy(scenario, designs["capePCA"], dim=spec.data.dim)
    collusion = int(value) if spec.parameter == "c" else None
    return privacy_guarantees(privacy, spec.algorithms, collusion=collusion)


SWEEP = FamilySweep(data=PcaData, stage_taus=stage_taus, plan=plan, run=run, notes=notes, guarantees=guarantees)
"""capePCA's sweep hooks (``dpcore.pca.FAMILY.sweep``)."""
