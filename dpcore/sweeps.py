"""Privacy-utility sweeps (issue 5): vary one parameter over a grid, run algorithms R times, summarise.

A sweep is fully described by a frozen, JSON-serialisable :class:`SweepSpec`: the family (``pca``: capePCA and
its baselines, SPEC 6; ``otd``: capeAGN and its baselines, SPEC 7), the swept parameter and its grid, the
algorithms, the base scenario, the data (:class:`PcaData` or :class:`OtdData`), the number of runs R and the
seed. :func:`run_sweep` returns a :class:`SweepResult` with

* ``table``: the tidy long table, one row per (value, algorithm, run, metric): columns :data:`TABLE_COLUMNS`;
  ``status`` is ``ok`` or says why a run has no result (``whitening failed``: the noisy M2 had non-positive
  top-K eigenvalues, SPEC 9.4; the result is then empty, never a silent NaN);
* ``summary``: per (value, algorithm, metric) the number of finished runs, the mean, the standard deviation,
  the standard error and the 95% interval mean +- t_{0.975, n-1} se (Student t);
* ``gains``: the generalized gain G = sum_s mu_s^2 tau_s^2 / tau_c^2 of the CAPE design used at each grid point.

Swept parameters (:data:`PARAMETERS`); every other setting stays at the base scenario's value:

* ``eps``, ``delta``: every site gets the grid value (the papers' equal-budget figures);
* ``ns``: every site gets N_s = the grid value;
* ``sites``: S sites, site s copying the base scenario's site ((s - 1) mod S0) (so equal sites stay equal);
  given weights cannot be extended and are replaced by N_s / N (a note says so);
* ``c``: capePCA/capeAGN use ``dpcore.cape.design_collusion_robust`` with c colluders (gain S - c for equal
  sites, times 1/1.01 for its safety margin); the other algorithms do not depend on c.
A target ``tau_c`` of the base scenario is not carried along a sweep (it would not fit other budgets): every
grid point uses the DP floor (a note says so).

Common random numbers (CRN): within a run, every grid point and algorithm reuses the same underlying draws
wherever the mathematics allows, so curves are smooth and differences between grid points sharp.

* The noise of one (seed, run, algorithm) comes from its own generator (``pca.algorithm_rng``,
  ``tensor.algorithm_rng``), drawn as standard normals in an order that does not depend on eps, delta or N_s
  and only scaled afterwards: along eps, delta and N_s sweeps every algorithm sees exactly the same standard
  normals at every grid point. Along a c sweep capePCA/capeAGN see the same standard normals too (the
  design's shapes do not depend on c; only its variances do).
* Data: PCA data are prepared once per sweep (the same split as :func:`dpcore.pca.prepare_pca` with the same
  seed) and are the same in every run (runs differ in noise, as in ``compare_pca``); OTD data are drawn afresh
  per run from the same generator as ``tensor.compare_algorithms``. For ``ns`` sweeps the samples are nested:
  every site's data at a smaller N_s are a prefix of its data at the largest N_s (synthetic data are drawn once,
  at the largest size). For ``sites`` sweeps the sites are nested: site s holds the same samples at every S.
* What is **not** shared along a ``sites`` sweep: the noise arrays have S rows, so their layout changes with S.
  The conventional, DPdisPCA and local noise of a site (drawn row by row) is still the same at every S that
  includes it, but capePCA's and capeAGN's helper, aggregator and site draws are laid out by S (e before f
  before g) and are therefore fresh at every S; OTD pooled baselines pool different data at every S.
* Algorithms whose result cannot depend on the swept parameter (non-private and random references along
  eps/delta/c, every baseline along c, the random reference everywhere) are computed once per run and their
  rows repeated at every grid point: the result is identical to recomputing it, only faster.
* For PCA along eps, delta, N_s and c the standard normals of one (run, algorithm) are drawn once and replayed
  at the other grid points (identical numbers, no redraw).

The same spec gives the same table byte for byte (``SweepResult.to_csv``). Results are cached in process by the
spec's JSON (:func:`cache_info`, :func:`clear_cache`). ``progress(done, total, label)`` is called after every
(algorithm, grid point) of every run; ``should_stop()`` is checked after each of them too, and a stopped sweep
returns the runs it finished (a partial run is dropped, so every point has the same runs), marked incomplete.

numpy's generators are fine for simulation, not a cryptographic source for a deployment (SPEC 9.9).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats

from . import pca as pca_mod
from . import tensor as otd_mod
from .cape import NoiseDesign, design_collusion_robust, design_general
from .data import PREPROCESSING, SPECTRA, load_bundled, preprocess, split_sites, synthetic_dataset
from .models import DEFAULT_SIGMA2, ESTIMATORS, MODELS, MogSite, StmSite, mog_norm_bound
from .scenario import MAX_SITES, Scenario, scenario_from_dict
from .tensor import data_rng as otd_data_rng  # the per-run data stream of tensor.compare_algorithms
from .validation import (
    InputError,
    check_choice,
    check_delta,
    check_epsilon,
    check_positive,
    check_positive_int,
    check_rank,
)

__all__ = [
    "FAMILIES",
    "GAIN_COLUMNS",
    "MAX_GRID_POINTS",
    "MAX_SWEEP_RUNS",
    "METRICS",
    "PARAMETERS",
    "PARAMETER_LABELS",
    "PCA_DATASETS",
    "SUMMARY_COLUMNS",
    "TABLE_COLUMNS",
    "OtdData",
    "PcaData",
    "SweepResult",
    "SweepSpec",
    "algorithm_titles",
    "cache_info",
    "cached_result",
    "clear_cache",
    "default_grid",
    "parse_grid",
    "run_sweep",
    "scenario_at",
    "spec_from_dict",
    "spec_from_json",
    "summarise_table",
    "sweep_gains",
    "sweep_result",
    "sweep_runs",
]

FAMILIES: dict[str, str] = {
    "pca": "capePCA and the PCA baselines (SPEC 6)",
    "otd": "capeAGN and the tensor-decomposition baselines (SPEC 7)",
}
PARAMETERS: dict[str, str] = {
    "eps": "eps of every site",
    "delta": "delta of every site",
    "ns": "N_s, the number of samples of every site",
    "sites": "S, the number of sites (site s copies the base scenario's site (s - 1) mod S0)",
    "c": "c, the number of colluding sites the CAPE design is robust to (design_collusion_robust)",
}
PARAMETER_LABELS = {"eps": "eps", "delta": "delta", "ns": "N_s", "sites": "S", "c": "c"}
INTEGER_PARAMETERS = ("ns", "sites", "c")
LOG_PARAMETERS = ("eps", "delta", "ns")
METRICS: dict[str, dict[str, str]] = {
    "pca": {
        "captured_energy": "captured energy q_CE = tr(V^T A V) (higher is better)",
        "captured_energy_ratio": "q_CE / q_CE(non-dp pool) (1 is optimal)",
        "subspace_distance": "subspace distance ||V_K V_K^T - V V^T||_2 (lower is better)",
    },
    "otd": {
        "q_comp": "q_comp = (1/K) sum_k min_k' ||a_hat_k - a_k'||_2 (lower is better)",
        "weight_error": "weight error (1/K) sum_k |w_hat_k - w_m(k)| (lower is better)",
    },
}
HIGHER_IS_BETTER = {"captured_energy": True, "captured_energy_ratio": True, "subspace_distance": False,
                    "q_comp": False, "weight_error": False}
PCA_DATASETS: dict[str, str] = {
    "synthetic": "synthetic zero-mean Gaussian with a fixed covariance (the paper's D = 200, K = 50)",
    "mnist": "MNIST subset, 5,000 images, D = 784 (bundled)",
    "digits": "optical digits, 1,797 images, D = 64 (bundled)",
}
_BUNDLED_DIMS = {"mnist": 784, "digits": 64}
SOLVER_DTYPES = ("float32", "float64")
TABLE_COLUMNS = ("parameter", "value", "algorithm", "run", "metric", "result", "status")
SUMMARY_COLUMNS = ("parameter", "value", "algorithm", "metric", "runs", "failed", "mean", "std", "se", "ci_low",
                   "ci_high")
GAIN_COLUMNS = ("parameter", "value", "design", "gain", "tau_c", "tau_conv")
MAX_SWEEP_RUNS = 200
MAX_GRID_POINTS = 25
MAX_SITE_NUMBERS = 60_000_000
"""Largest S x max N_s x D of a PCA sweep's site data (8 bytes each: 480 MB)."""
MAX_OTD_SAMPLES = 5_000_000
"""Largest S x max N_s of an OTD sweep (samples drawn per run)."""
DEFAULT_GRIDS = {"eps": (0.01, 0.1, 1.0, 10.0), "delta": (1e-4, 1e-3, 1e-2), "ns": (100, 1000, 4000)}
_PCA_INVARIANT = {"eps": {"nondp"}, "delta": {"nondp"}, "ns": set(), "sites": set(),
                  "c": set(pca_mod.ALGORITHMS) - {"cape"}}
_OTD_INVARIANT = {"eps": {"nonpriv", "random"}, "delta": {"nonpriv", "random"}, "ns": {"random"},
                  "sites": {"random"}, "c": set(otd_mod.ALGORITHMS) - {"cape"}}

Progress = Callable[[int, int, str], None]
ShouldStop = Callable[[], bool]


def algorithm_titles(family: str) -> dict[str, str]:
    """Display names of the family's algorithms (capePCA, DPdisPCA, ... / capeAGN, conv, ...)."""
    return dict(pca_mod.ALGORITHM_TITLES) if family == "pca" else dict(otd_mod.LABELS)


def _algorithms(family: str) -> dict[str, str]:
    return pca_mod.ALGORITHMS if family == "pca" else otd_mod.ALGORITHMS


# ----------------------------------------------------------------------------------------------
# The specification
# ----------------------------------------------------------------------------------------------

def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


@dataclass(frozen=True)
class PcaData:
    """The data of a PCA sweep: a bundled data set or the synthetic Gaussian (``dim``, ``spectrum``, ``decay``),
    the subspace dimension K, the (non-private) preprocessing and the DPdisPCA rank R (None: R = K).
    ``solver_dtype``: precision of the eigen-decompositions of the noisy matrices. ``float32`` (default) halves
    the dominant cost; its rounding (about 1e-7 ||A||) is orders of magnitude below the DP noise and moves the
    metrics by about 1e-6 relative. ``float64`` reproduces ``dpcore.pca.compare_pca`` bit for bit.
    Validated and normalised on construction (settings that do not apply are reset to their defaults)."""

    dataset: str = "synthetic"
    k: int = 10
    dim: int = 200
    spectrum: str = "power"
    decay: float = 1.0
    preprocessing: str = "max-norm"
    rank: int | None = None
    solver_dtype: str = "float32"

    def __post_init__(self) -> None:
        _set(self, "solver_dtype", check_choice(self.solver_dtype, "solver precision", SOLVER_DTYPES))
        dataset = check_choice(self.dataset, "dataset", tuple(PCA_DATASETS))
        _set(self, "dataset", dataset)
        if dataset == "synthetic":
            _set(self, "dim", check_positive_int(self.dim, "D", minimum=2))
            _set(self, "spectrum", check_choice(self.spectrum, "spectrum", SPECTRA))
            _set(self, "decay", check_positive(self.decay, "decay"))
        else:
            _set(self, "dim", _BUNDLED_DIMS[dataset])
            _set(self, "spectrum", "power")
            _set(self, "decay", 1.0)
        _set(self, "k", check_rank(self.k, self.dim))
        _set(self, "preprocessing", check_choice(self.preprocessing, "preprocessing", tuple(PREPROCESSING)))
        if self.rank is not None:
            rank = check_positive_int(self.rank, "R")
            if not self.k <= rank <= self.dim:
                raise InputError(f"DPdisPCA rank R must satisfy K = {self.k} <= R <= D = {self.dim} (got {rank})",
                                 "R")
            _set(self, "rank", rank)

    def describe(self) -> str:
        what = (f"synthetic Gaussian, D = {self.dim}, {self.spectrum} spectrum (decay {self.decay:g})"
                if self.dataset == "synthetic" else PCA_DATASETS[self.dataset])
        return f"{what}; K = {self.k}; preprocessing {self.preprocessing}; {self.solver_dtype} eigensolver"


@dataclass(frozen=True)
class OtdData:
    """The model of an OTD sweep (synthetic MOG or STM with D, K, sigma^2 / document length and estimator) and
    the capeAGN settings (eps split between the stages, power-method restarts and iterations, third-moment path
    and noise law). Validated and normalised on construction."""

    model: str = "mog"
    dim: int = 10
    k: int = 5
    sigma2: float = DEFAULT_SIGMA2
    doc_length: int = 3
    estimator: str = "first"
    eps_split: float = 0.5
    n_restarts: int = otd_mod.DEFAULT_RESTARTS
    n_iter: int = otd_mod.DEFAULT_ITERATIONS
    path: str = "auto"
    m3_noise: str = "symmetrized"

    def __post_init__(self) -> None:
        model = check_choice(self.model, "model", MODELS)
        _set(self, "model", model)
        _set(self, "dim", check_positive_int(self.dim, "D", minimum=2))
        _set(self, "k", check_rank(self.k, self.dim))
        if model == "mog":
            _set(self, "sigma2", check_positive(self.sigma2, "sigma^2", allow_zero=True))
            _set(self, "doc_length", 3)
            _set(self, "estimator", "first")
        else:
            _set(self, "sigma2", DEFAULT_SIGMA2)
            _set(self, "doc_length", check_positive_int(self.doc_length, "document length L", minimum=3))
            _set(self, "estimator", check_choice(self.estimator, "estimator", tuple(ESTIMATORS)))
        _set(self, "eps_split", float(self.eps_split))
        self.settings().validated()
        _set(self, "n_restarts", int(self.n_restarts))
        _set(self, "n_iter", int(self.n_iter))

    def synthetic(self) -> otd_mod.SyntheticSpec:
        return otd_mod.SyntheticSpec(self.model, self.dim, self.k, sigma2=self.sigma2, doc_length=self.doc_length,
                                     estimator=self.estimator)

    def settings(self, collusion: int | None = None) -> otd_mod.OtdSettings:
        return otd_mod.OtdSettings(eps_split=self.eps_split, n_restarts=self.n_restarts, n_iter=self.n_iter,
                                   path=self.path, m3_noise=self.m3_noise, collusion=collusion)

    @property
    def scaled_sigma2(self) -> float:
        """sigma^2 / zeta^2 with the public norm bound zeta of :func:`dpcore.models.mog_norm_bound` (MOG)."""
        return self.sigma2 / mog_norm_bound(self.dim, self.sigma2) ** 2 if self.model == "mog" else 0.0

    def describe(self) -> str:
        what = (f"MOG, sigma^2 = {self.sigma2:g}" if self.model == "mog"
                else f"STM, L = {self.doc_length} words, estimator {self.estimator}")
        return f"synthetic {what}; D = {self.dim}, K = {self.k}; eps split {self.eps_split:g}"


def default_grid(parameter: str, scenario: Scenario | None = None) -> tuple[float, ...]:
    """A reasonable grid for ``parameter`` (c: 0..S-1 of the scenario; S: 2..10)."""
    parameter = check_choice(parameter, "parameter", tuple(PARAMETERS))
    if parameter == "c":
        n = 5 if scenario is None else scenario.n_sites
        return tuple(range(max(n, 1)))
    if parameter == "sites":
        return (2, 3, 5, 10)
    return DEFAULT_GRIDS[parameter]


def _check_value(parameter: str, value: Any) -> float | int:
    name = f"grid value ({PARAMETER_LABELS[parameter]})"
    if parameter == "eps":
        return check_epsilon(value, name)
    if parameter == "delta":
        return check_delta(value, name)
    if parameter == "ns":
        return check_positive_int(value, name)
    if parameter == "sites":
        s = check_positive_int(value, name, minimum=2)
        if s > MAX_SITES:
            raise InputError(f"{name} must be at most {MAX_SITES} (got {s})", "grid")
        return s
    return check_positive_int(value, name, minimum=0)


def _normalise_grid(parameter: str, grid: Any) -> tuple[float | int, ...]:
    if isinstance(grid, (str, bytes)) or not isinstance(grid, (Sequence, np.ndarray)):
        raise InputError(f"the grid must be a list of values (got {grid!r})", "grid")
    if len(grid) == 0:
        raise InputError("the grid is empty: give at least one value", "grid")
    values = []
    for v in grid:
        v = v.item() if isinstance(v, np.generic) else v
        try:
            values.append(_check_value(parameter, v))
        except InputError as exc:
            raise InputError(str(exc), "grid") from exc
    if len(set(values)) != len(values):
        repeated = sorted({v for v in values if values.count(v) > 1})
        raise InputError(f"the grid repeats {', '.join(f'{v:g}' for v in repeated)}; give distinct values", "grid")
    if len(values) > MAX_GRID_POINTS:
        raise InputError(f"the grid has {len(values)} values; at most {MAX_GRID_POINTS} are allowed", "grid")
    values.sort()
    if parameter in INTEGER_PARAMETERS:
        return tuple(int(v) for v in values)
    return tuple(float(v) for v in values)


def parse_grid(text: str, parameter: str) -> tuple[float | int, ...]:
    """A grid typed by a user: numbers separated by commas, semicolons or spaces (``1e-3`` allowed), checked for
    ``parameter`` (eps > 0, 0 < delta < 1, integers N_s >= 1, S >= 2, c >= 0), distinct, sorted ascending."""
    parameter = check_choice(parameter, "parameter", tuple(PARAMETERS))
    if text is None or not str(text).strip():
        example = ", ".join(f"{v:g}" for v in default_grid(parameter))
        raise InputError(f"the grid is empty: give the {PARAMETER_LABELS[parameter]} values separated by commas, "
                         f"e.g. {example}", "grid")
    parts = [p for p in str(text).replace(";", ",").replace(" ", ",").split(",") if p.strip()]
    values: list[float | int] = []
    for part in parts:
        try:
            number = float(part)
        except ValueError:
            raise InputError(f"grid value {part.strip()!r} is not a number; separate values by commas, e.g. "
                             "0.1, 1, 10", "grid") from None
        if parameter in INTEGER_PARAMETERS and math.isfinite(number) and number == int(number):
            values.append(int(number))
        else:
            values.append(number)
    return _normalise_grid(parameter, values)


@dataclass(frozen=True)
class SweepSpec:
    """Everything a sweep depends on; validated and normalised on construction (grid sorted, algorithms
    de-duplicated, settings that do not apply reset), so equal sweeps have equal JSON (:meth:`to_json`, the
    cache key). ``scenario`` is the base scenario; ``seed`` seeds data, split and noise."""

    family: str
    parameter: str
    grid: tuple[float | int, ...]
    algorithms: tuple[str, ...]
    scenario: Scenario
    data: PcaData | OtdData
    runs: int = 10
    seed: int = 0

    def __post_init__(self) -> None:
        family = check_choice(self.family, "family", tuple(FAMILIES))
        _set(self, "family", family)
        parameter = check_choice(self.parameter, "parameter", tuple(PARAMETERS))
        _set(self, "parameter", parameter)
        if not isinstance(self.scenario, Scenario):
            raise InputError("the base scenario must be a Scenario", "scenario")
        expected = PcaData if family == "pca" else OtdData
        if not isinstance(self.data, expected):
            raise InputError(f"a {family} sweep needs {expected.__name__} data settings", "data")
        grid = _normalise_grid(parameter, self.grid)
        if parameter == "c":
            too_many = [c for c in grid if c > self.scenario.n_sites - 1]
            if too_many:
                raise InputError(f"collusion bound c must be at most S - 1 = {self.scenario.n_sites - 1} for the "
                                 f"{self.scenario.n_sites} sites of the scenario (got {too_many[0]})", "grid")
        _set(self, "grid", grid)
        if isinstance(self.algorithms, str):
            raise InputError("algorithms must be a list of names", "algorithms")
        algorithms = tuple(dict.fromkeys(self.algorithms))
        if not algorithms:
            raise InputError(f"choose at least one algorithm ({', '.join(_algorithms(family))})", "algorithms")
        for a in algorithms:
            check_choice(a, "algorithm", tuple(_algorithms(family)))
        _set(self, "algorithms", algorithms)
        runs = check_positive_int(self.runs, "runs")
        if runs > MAX_SWEEP_RUNS:
            raise InputError(f"runs must be at most {MAX_SWEEP_RUNS} (got {runs})", "runs")
        _set(self, "runs", runs)
        _set(self, "seed", check_positive_int(self.seed, "seed", minimum=0))
        self._check_size()

    def _check_size(self) -> None:
        largest = scenario_at(self, self.grid[-1]) if self.parameter in ("ns", "sites") else self.scenario
        if self.family == "pca":
            numbers = largest.total_n * self.data.dim
            if numbers > MAX_SITE_NUMBERS:
                raise InputError(f"the largest grid point needs N x D = {largest.total_n:,} x {self.data.dim} = "
                                 f"{numbers:,} numbers of site data, more than the {MAX_SITE_NUMBERS:,} a sweep keeps "
                                 "in memory; use smaller N_s or fewer sites", "grid")
            entries = largest.n_sites * (self.data.dim * (self.data.dim + 1) // 2)
            if entries > pca_mod.MAX_PCA_ENTRIES:
                raise InputError(f"S x D(D+1)/2 = {entries:,} numbers per noise term at the largest grid point is "
                                 f"more than the {pca_mod.MAX_PCA_ENTRIES:,} this tool keeps in memory; use fewer "
                                 "sites or fewer features", "grid")
        elif largest.total_n > MAX_OTD_SAMPLES:
            raise InputError(f"the largest grid point has N = {largest.total_n:,} samples, more than the "
                             f"{MAX_OTD_SAMPLES:,} an OTD sweep draws per run; use smaller N_s or fewer sites", "grid")

    # --- conversions --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "parameter": self.parameter, "grid": list(self.grid),
                "algorithms": list(self.algorithms), "runs": self.runs, "seed": self.seed,
                "scenario": self.scenario.to_dict(), "data": asdict(self.data)}

    def to_json(self, indent: int | None = None) -> str:
        """Canonical JSON (sorted keys): equal specs give equal text."""
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True)

    def replace(self, **changes: Any) -> SweepSpec:
        """A validated copy with fields changed (e.g. ``runs=3``)."""
        return replace(self, **changes)

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(METRICS[self.family])

    @property
    def label(self) -> str:
        return PARAMETER_LABELS[self.parameter]

    def describe(self) -> str:
        values = ", ".join(f"{v:g}" for v in self.grid)
        titles = algorithm_titles(self.family)
        return (f"{self.family.upper()} sweep over {self.label} in {{{values}}}; {self.data.describe()}; "
                f"{', '.join(titles[a] for a in self.algorithms)}; {self.runs} runs, seed {self.seed}")


def spec_from_dict(data: Any) -> SweepSpec:
    """A :class:`SweepSpec` from :meth:`SweepSpec.to_dict` output (validated; unknown keys rejected)."""
    if not isinstance(data, dict):
        raise InputError("a sweep specification must be a JSON object", "spec")
    allowed = {"family", "parameter", "grid", "algorithms", "runs", "seed", "scenario", "data"}
    unknown = set(data) - allowed
    if unknown:
        raise InputError(f"unknown sweep field(s): {', '.join(sorted(unknown))}", "spec")
    missing = {"family", "parameter", "grid", "algorithms", "scenario"} - set(data)
    if missing:
        raise InputError(f"missing sweep field(s): {', '.join(sorted(missing))}", "spec")
    family = check_choice(data["family"], "family", tuple(FAMILIES))
    cls = PcaData if family == "pca" else OtdData
    raw = data.get("data") or {}
    if not isinstance(raw, dict):
        raise InputError("data settings must be a JSON object", "data")
    names = {f for f in cls.__dataclass_fields__}
    bad = set(raw) - names
    if bad:
        raise InputError(f"unknown {family} data setting(s): {', '.join(sorted(bad))}", "data")
    return SweepSpec(family, data["parameter"], tuple(data["grid"]) if isinstance(data["grid"], list) else data["grid"],
                     tuple(data["algorithms"]) if isinstance(data["algorithms"], list) else data["algorithms"],
                     scenario_from_dict(data["scenario"]), cls(**raw), data.get("runs", 10), data.get("seed", 0))


def spec_from_json(text: str) -> SweepSpec:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"the sweep specification is not valid JSON ({exc.msg} at line {exc.lineno})", "spec") from exc
    return spec_from_dict(data)


# ----------------------------------------------------------------------------------------------
# The scenario at a grid point
# ----------------------------------------------------------------------------------------------

def _cyclic_sites(base: Scenario, n_sites: int) -> list[dict[str, Any]]:
    sites = base.sites
    equal = len({(s.n, s.eps, s.delta) for s in sites}) == 1
    out = []
    for i in range(n_sites):
        src = sites[i % len(sites)]
        if equal:
            name = f"s{i + 1}"
        else:
            name = src.name if i < len(sites) else f"{src.name}#{i // len(sites) + 1}"
        out.append({"name": name, "n": src.n, "eps": src.eps, "delta": src.delta})
    return out


def scenario_at(spec: SweepSpec, value: float | int) -> Scenario:
    """The scenario of one grid point: the base scenario with the swept parameter set (see the module
    docstring), tau_c at the DP floor."""
    data = spec.scenario.to_dict()
    data["tau_c"] = None
    if spec.parameter in ("eps", "delta", "ns"):
        key = {"eps": "eps", "delta": "delta", "ns": "n"}[spec.parameter]
        for entry in data["sites"]:
            entry[key] = int(value) if key == "n" else float(value)
    elif spec.parameter == "sites":
        data["sites"] = _cyclic_sites(spec.scenario, int(value))
    return scenario_from_dict(data)


def _pca_design(spec: SweepSpec, scenario: Scenario, value: float | int) -> NoiseDesign:
    tau = scenario.taus("pca")
    mu = scenario.weights()
    if spec.parameter == "c":
        design = design_collusion_robust(tau, mu, int(value), names=scenario.names)
    else:
        design = design_general(tau, mu, None, names=scenario.names)
    if not design.feasible:
        raise InputError(f"no feasible CAPE noise design at {spec.label} = {value:g}: {design.reason}", "grid")
    return design


def _otd_designs(spec: SweepSpec, scenario: Scenario, value: float | int) -> dict[str, NoiseDesign]:
    data: OtdData = spec.data
    sigma2 = data.scaled_sigma2 if data.model == "mog" else None
    taus = otd_mod.agn_stage_taus(scenario, data.model, data.eps_split, dim=data.dim, sigma2=sigma2)
    mu = scenario.weights()
    out = {}
    for stage, tau in zip(("M2 stage", "M3 stage"), taus, strict=True):
        if spec.parameter == "c":
            design = design_collusion_robust(tau, mu, int(value), names=scenario.names)
        else:
            design = design_general(tau, mu, None, names=scenario.names)
        if not design.feasible:
            raise InputError(f"no feasible CAPE noise design for the {stage} at {spec.label} = {value:g}: "
                             f"{design.reason}", "grid")
        out[stage] = design
    return out


def sweep_gains(spec: SweepSpec) -> pd.DataFrame:
    """The generalized gain G = sum mu_s^2 tau_s^2 / tau_c^2 of the CAPE design used at every grid point
    (collusion-robust along c, the plain design otherwise), with its tau_c and the conventional std tau_conv
    (:data:`GAIN_COLUMNS`; OTD: one row per stage). Needs no data."""
    rows = []
    for value in spec.grid:
        scenario = scenario_at(spec, value)
        designs = ({"capePCA": _pca_design(spec, scenario, value)} if spec.family == "pca"
                   else _otd_designs(spec, scenario, value))
        for name, design in designs.items():
            rows.append({"parameter": spec.parameter, "value": float(value), "design": name, "gain": design.gain,
                         "tau_c": float(design.tau_c), "tau_conv": design.tau_conv})
    return pd.DataFrame(rows, columns=list(GAIN_COLUMNS))


# ----------------------------------------------------------------------------------------------
# Preparation (cached): data, problems and privacy per grid point
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _Point:
    value: float | int
    scenario: Scenario
    problem: pca_mod.PcaProblem | None = None
    privacy: pca_mod.PcaPrivacy | None = None
    settings: otd_mod.OtdSettings | None = None


@dataclass(frozen=True, eq=False)
class _Plan:
    """What a sweep needs besides its runs and algorithms (cached by :func:`_plan_key`, which leaves those out:
    use the caller's spec for them, never ``spec`` here)."""

    spec: SweepSpec
    points: tuple[_Point, ...]
    invariant: frozenset[str]
    notes: tuple[str, ...]
    gains: pd.DataFrame
    replay: bool = False
    model: Any = None
    sizes_max: tuple[int, ...] = ()
    path: str | None = None


def _caveats(spec: SweepSpec, scenarios: list[Scenario]) -> list[str]:
    """Scenario.caveats() condensed over the grid: one line per kind naming the eps values or grid points."""
    notes = []
    if spec.scenario.calibration == "classic":
        loose = sorted({float(s.eps) for sc in scenarios for s in sc.sites if s.eps >= 1.0})
        if loose:
            notes.append(f"classic Gaussian calibration at eps = {', '.join(f'{e:g}' for e in loose)} (>= 1) is not a "
                         "valid (eps, delta) guarantee (it is proven only for eps < 1); it is used here to reproduce "
                         "the papers. Use the analytic calibration for a real guarantee.")
    large = [(v, sc) for v, sc in zip(spec.grid, scenarios, strict=True) if any(s.delta >= 1.0 / s.n for s in sc.sites)]
    if large:
        worst = max((s for _, sc in large for s in sc.sites), key=lambda s: s.delta * s.n)
        notes.append(f"delta is not well below 1/N_s at {spec.label} = {', '.join(f'{v:g}' for v, _ in large)} "
                     f"(e.g. delta = {worst.delta:g} with N_s = {worst.n:,}, 1/N_s = {1 / worst.n:.3g}); a mechanism "
                     "could then release a whole record with probability delta")
    return notes


def _common_notes(spec: SweepSpec, scenarios: list[Scenario]) -> list[str]:
    base = spec.scenario
    notes = [f"{base.calibration} calibration, {base.neighbouring} neighbours"
             + (" (the papers' constants)" if base.neighbouring == "as-published" else "")]
    notes.extend(_caveats(spec, scenarios))
    if base.tau_c is not None:
        notes.append(f"the scenario's target tau_c = {base.tau_c:g} is not used along a sweep: every grid point uses "
                     "the DP floor max_s mu_s tau_s")
    if spec.parameter == "sites" and base.weights_given:
        notes.append("the scenario's weights cannot be extended to other numbers of sites: mu_s = N_s / N is used")
    if spec.parameter == "c":
        title = "capePCA" if spec.family == "pca" else "capeAGN"
        notes.append(f"{title} uses the collusion-robust design for c colluders at every grid point (gain S - c for "
                     "equal sites, up to its 1% safety margin); the other algorithms do not depend on c")
    shared = {
        "eps": "every algorithm sees the same standard normals at every eps (common random numbers)",
        "delta": "every algorithm sees the same standard normals at every delta (common random numbers)",
        "ns": "nested samples: each site's data at a smaller N_s are a prefix of its data at the largest N_s, and "
              "every algorithm sees the same standard normals at every N_s",
        "sites": "nested sites: site s holds the same samples at every S; conventional, DPdisPCA and local noise "
                 "of a site is shared across S, CAPE's e, f, g draws are laid out by S and fresh at every S",
        "c": "the data and every draw are the same at every c; only the CAPE design's variances change",
    }[spec.parameter]
    notes.append(shared)
    return notes


def _pca_plan(spec: SweepSpec) -> _Plan:
    data: PcaData = spec.data
    scenarios = [scenario_at(spec, v) for v in spec.grid]
    # Data for the largest grid point (ns, sites) or the scenario's sizes; smaller points use prefixes.
    sizes_max = scenarios[-1].sizes if spec.parameter in ("ns", "sites") else spec.scenario.sizes
    total = int(np.sum(sizes_max))
    if data.dataset == "synthetic":
        dataset = synthetic_dataset(total, np.random.default_rng([spec.seed, 2]), dim=data.dim,
                                    spectrum=data.spectrum, decay=data.decay)
    else:
        dataset = load_bundled(data.dataset)
    prepared = preprocess(dataset.x, data.preprocessing)
    split = split_sites(prepared.x, sizes_max, np.random.default_rng([spec.seed, 1]), labels=dataset.labels,
                        allow_replacement=True)
    notes = _common_notes(spec, scenarios)
    notes.insert(0, f"data: {dataset.description}; preprocessing: {prepared.note}")
    if split.message:
        message = split.message
        if spec.parameter == "ns":
            message += (" Smaller N_s use prefixes of these site samples, so repeats can occur at any N_s.")
        notes.append(message)
    points = []
    shared_problem = None
    crowded = []
    for value, scenario in zip(spec.grid, scenarios, strict=True):
        if spec.parameter == "ns":
            problem = pca_mod.pca_problem([x[:, : int(value)] for x in split.sites], data.k)
        elif spec.parameter == "sites":
            problem = pca_mod.pca_problem(list(split.sites[: int(value)]), data.k)
        else:
            if shared_problem is None:
                shared_problem = pca_mod.pca_problem(list(split.sites), data.k)
            problem = shared_problem
        problem = replace(problem, solver_dtype=data.solver_dtype)
        privacy = pca_mod.pca_privacy(scenario, _pca_design(spec, scenario, value))
        if pca_mod.noise_dominance_note(problem, privacy):
            crowded.append(value)
        points.append(_Point(value, scenario, problem, privacy))
    if crowded:
        notes.append(f"at {spec.label} = {', '.join(f'{v:g}' for v in crowded)} the aggregate's noise (spectral norm "
                     "about 2 sqrt(D) tau_c) exceeds the K-th eigenvalue of A: there even capePCA recovers mostly "
                     "noise directions")
    invariant = frozenset(_PCA_INVARIANT[spec.parameter])
    return _Plan(spec, tuple(points), invariant, tuple(dict.fromkeys(notes)), sweep_gains(spec),
                 replay=spec.parameter != "sites")


def _otd_plan(spec: SweepSpec) -> _Plan:
    data: OtdData = spec.data
    scenarios = [scenario_at(spec, v) for v in spec.grid]
    if spec.parameter in ("ns", "sites"):
        sizes_max = tuple(int(n) for n in scenarios[-1].sizes)
    else:
        sizes_max = tuple(int(n) for n in spec.scenario.sizes)
    model = data.synthetic().model(np.random.default_rng([spec.seed, 0x30DE1]))  # as tensor.compare_algorithms
    choice = otd_mod.choose_path(data.path, data.dim, data.k, len(sizes_max))
    if choice.path == "projected" and data.m3_noise == "published":
        raise InputError("the 'published' third-moment noise needs the dense path; use 'symmetrized'", "m3_noise")
    points = []
    for value, scenario in zip(spec.grid, scenarios, strict=True):
        settings = data.settings(int(value) if spec.parameter == "c" else None)
        points.append(_Point(value, scenario, settings=settings))
    notes = _common_notes(spec, scenarios)
    notes.insert(0, f"data: {data.describe()}; fresh samples in every run, the ground truth drawn once from the seed; "
                    f"third moment on the {choice.path} path ({choice.reason})")
    if data.model == "mog":
        zeta = mog_norm_bound(data.dim, data.sigma2)
        notes.append(f"MOG samples divided by the public bound zeta = 1 + sigma (sqrt(D) + 4) = {zeta:.3g}")
    invariant = frozenset(_OTD_INVARIANT[spec.parameter])
    return _Plan(spec, tuple(points), invariant, tuple(dict.fromkeys(notes)), sweep_gains(spec), model=model,
                 sizes_max=sizes_max, path=choice.path)


_LOCK = threading.Lock()
_PLANS: OrderedDict[str, _Plan] = OrderedDict()
_RESULTS: OrderedDict[str, SweepResult] = OrderedDict()
_PLAN_CACHE_SIZE = 2
_RESULT_CACHE_SIZE = 16
_STATS = {"hits": 0, "misses": 0}


def _plan_key(spec: SweepSpec) -> str:
    data = spec.to_dict()
    del data["runs"]
    del data["algorithms"]
    return json.dumps(data, sort_keys=True)


def _algorithm_notes(spec: SweepSpec) -> tuple[str, ...]:
    notes = []
    if spec.family == "pca":
        if "local" in spec.algorithms:
            notes.append("local: Analyze Gauss on the site with the smallest tau_s (the first site when they are "
                         "equal)")
        if "dpdis" in spec.algorithms:
            notes.append(f"DPdisPCA rank R = {spec.data.rank if spec.data.rank is not None else spec.data.k}")
    elif "local" in spec.algorithms:
        notes.append("local: AGN on the largest site (the first site when they are equal)")
    return tuple(notes)


def _plan(spec: SweepSpec) -> _Plan:
    key = _plan_key(spec)
    with _LOCK:
        plan = _PLANS.get(key)
        if plan is not None:
            _PLANS.move_to_end(key)
            return plan
    plan = _pca_plan(spec) if spec.family == "pca" else _otd_plan(spec)
    with _LOCK:
        _PLANS[key] = plan
        while len(_PLANS) > _PLAN_CACHE_SIZE:
            _PLANS.popitem(last=False)
    return plan


def cache_info() -> dict[str, int]:
    """Hits and misses of the result cache and the number of cached results and prepared sweeps."""
    with _LOCK:
        return {"hits": _STATS["hits"], "misses": _STATS["misses"], "results": len(_RESULTS), "plans": len(_PLANS)}


def clear_cache() -> None:
    """Forget every cached result and prepared sweep (and reset the counters)."""
    with _LOCK:
        _RESULTS.clear()
        _PLANS.clear()
        _STATS.update(hits=0, misses=0)


# ----------------------------------------------------------------------------------------------
# Running
# ----------------------------------------------------------------------------------------------

class _ReplayMismatch(Exception):
    """A later grid point asked for draws of another shape than the first: draw afresh instead."""


def _shape(size: Any) -> tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, (tuple, list)):
        return tuple(int(n) for n in size)
    return (int(size),)


class _ReplayNormals:
    """Stands in for the generator of one (seed, run, algorithm) across the grid points of a PCA sweep: the first
    pass draws from ``rng`` and records every ``standard_normal`` array, later passes (after :meth:`rewind`)
    return copies of the recorded arrays in the same order. The numbers are exactly those a fresh generator
    would give at every grid point (the PCA algorithms draw only standard normals, in an order that does not
    depend on eps, delta, N_s or c), without drawing them again."""

    def __init__(self, rng: np.random.Generator):
        self._rng = rng
        self._draws: list[np.ndarray] = []
        self._position: int | None = None
        self._final = False

    def rewind(self, final: bool = False) -> None:
        """Replay from the start; ``final``: the last replay, which may hand out the recorded arrays themselves."""
        self._position = 0
        self._final = final

    def standard_normal(self, size: Any = None) -> np.ndarray:
        if self._position is None:
            z = self._rng.standard_normal(size)
            self._draws.append(z.copy())
            return z
        if self._position >= len(self._draws) or self._draws[self._position].shape != _shape(size):
            raise _ReplayMismatch()
        self._position += 1
        recorded = self._draws[self._position - 1]
        return recorded if self._final else recorded.copy()


def _rows(spec: SweepSpec, value: float | int, algorithm: str, run: int, metrics: dict[str, float | None],
          status: str) -> list[tuple]:
    return [(spec.parameter, float(value), algorithm, run, m, np.nan if metrics.get(m) is None else metrics[m],
             status) for m in spec.metrics]


def _pca_run(plan: _Plan, spec: SweepSpec, run: int, tick: Callable[[str], bool]) -> list[tuple] | None:
    rank = spec.data.rank
    titles = algorithm_titles("pca")
    rows: list[tuple] = []
    for algorithm in spec.algorithms:
        points = plan.points[:1] if algorithm in plan.invariant else plan.points
        base_rng = pca_mod.algorithm_rng(spec.seed, run, algorithm)
        replay = _ReplayNormals(base_rng) if plan.replay and len(points) > 1 else None
        for i, point in enumerate(points):
            if replay is not None and i > 0:
                replay.rewind(final=i == len(points) - 1)
            rng = replay if replay is not None else (base_rng if i == 0 else
                                                     pca_mod.algorithm_rng(spec.seed, run, algorithm))
            try:
                result = pca_mod.run_algorithm(algorithm, point.problem, point.privacy, rng, rank=rank)
            except _ReplayMismatch:  # pragma: no cover - the designs of one sweep share their shapes
                fresh = pca_mod.algorithm_rng(spec.seed, run, algorithm)
                result = pca_mod.run_algorithm(algorithm, point.problem, point.privacy, fresh, rank=rank)
            metrics = {m: result.metric(m) for m in spec.metrics}
            targets = plan.points if algorithm in plan.invariant else (point,)
            for target in targets:
                rows.extend(_rows(spec, target.value, algorithm, run, metrics, "ok"))
            if tick(f"run {run + 1}/{spec.runs}, {spec.label} = {point.value:g}: {titles[algorithm]}"):
                return None
    return rows


def _slice_problem(problem: otd_mod.OtdProblem, parameter: str, value: float | int) -> otd_mod.OtdProblem:
    if parameter == "sites":
        return replace(problem, sites=problem.sites[: int(value)])
    if parameter != "ns":
        return problem
    n = int(value)
    sites = []
    for site in problem.sites:
        if isinstance(site, MogSite):
            sites.append(MogSite(site.x[:n], site.sigma2))
        else:
            first = None if site.first is None else site.first[:n]
            sites.append(StmSite(site.counts[:n], first, site.estimator))
    return replace(problem, sites=tuple(sites))


def _otd_run(plan: _Plan, spec: SweepSpec, run: int, tick: Callable[[str], bool]) -> list[tuple] | None:
    data: OtdData = spec.data
    titles = algorithm_titles("otd")
    base = otd_mod.synthetic_problem(plan.model, plan.sizes_max, otd_data_rng(spec.seed, run), data.estimator)
    problems = [_slice_problem(base, spec.parameter, p.value) for p in plan.points]
    truth = plan.model
    rows: list[tuple] = []
    for algorithm in spec.algorithms:
        indices = [0] if algorithm in plan.invariant else range(len(plan.points))
        for i in indices:
            point = plan.points[i]
            rng = otd_mod.algorithm_rng(spec.seed, run, algorithm)
            try:
                dec = otd_mod.run_algorithm(algorithm, problems[i], point.scenario, point.settings, rng, path=plan.path)
            except otd_mod.WhiteningError:
                metrics: dict[str, float | None] = {}
                status = "whitening failed"
            else:
                qc, we = otd_mod.evaluate(dec.components, dec.weights, truth.components, truth.weights)
                metrics, status = {"q_comp": qc, "weight_error": we}, "ok"
            targets = plan.points if algorithm in plan.invariant else (point,)
            for target in targets:
                rows.extend(_rows(spec, target.value, algorithm, run, metrics, status))
            if tick(f"run {run + 1}/{spec.runs}, {spec.label} = {point.value:g}: {titles[algorithm]}"):
                return None
    return rows


def _steps_per_run(plan: _Plan, spec: SweepSpec) -> int:
    g = len(plan.points)
    return sum(1 if a in plan.invariant else g for a in spec.algorithms)


def _to_table(spec: SweepSpec, rows: list[tuple] | pd.DataFrame) -> pd.DataFrame:
    table = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    if not len(table):
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in zip(
            TABLE_COLUMNS, (object, float, object, int, object, float, object), strict=True)})
    grid_index = {float(v): i for i, v in enumerate(spec.grid)}
    algorithm_index = {a: i for i, a in enumerate(spec.algorithms)}
    metric_index = {m: i for i, m in enumerate(spec.metrics)}
    order = np.lexsort((table["metric"].map(metric_index).to_numpy(), table["run"].to_numpy(),
                        table["algorithm"].map(algorithm_index).to_numpy(), table["value"].map(grid_index).to_numpy()))
    table = table.iloc[order].reset_index(drop=True)
    table["value"] = table["value"].astype(float)
    table["run"] = table["run"].astype(int)
    table["result"] = table["result"].astype(float)
    return table


def sweep_runs(spec: SweepSpec, runs: Sequence[int] | range | None = None, *, progress: Progress | None = None,
               should_stop: ShouldStop | None = None) -> pd.DataFrame:
    """The tidy rows (:data:`TABLE_COLUMNS`) of the given runs (default all), for running a sweep in pieces (the
    dashboard runs one run per step so that it can be stopped). Stops early when ``should_stop()`` is true,
    returning only the runs it finished. Runs are independent: the rows of run r are the same whichever
    other runs are computed."""
    runs = list(range(spec.runs)) if runs is None else [int(r) for r in runs]
    for r in runs:
        if not 0 <= r < spec.runs:
            raise InputError(f"run index {r} is outside 0..{spec.runs - 1}", "runs")
    plan = _plan(spec)
    if "avn" in spec.algorithms and plan.path != "dense":
        raise InputError(f"AVN needs the dense path, but D = {spec.data.dim} runs on the projected path. Drop avn or "
                         "use a smaller D.", "algorithms")
    per_run = _steps_per_run(plan, spec)
    total = per_run * len(runs)
    done = 0
    stop = {"now": False}

    def tick(label: str) -> bool:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total, label)
        if should_stop is not None and should_stop():
            stop["now"] = True
        return stop["now"]

    run_one = _pca_run if spec.family == "pca" else _otd_run
    rows: list[tuple] = []
    for r in runs:
        got = run_one(plan, spec, r, tick)
        if got is None:
            break
        rows.extend(got)
        if stop["now"]:
            break
    return _to_table(spec, rows)


def summarise_table(spec: SweepSpec, table: pd.DataFrame) -> pd.DataFrame:
    """Per (value, algorithm, metric): finished runs n, failed runs, mean, std (ddof = 1), se = std / sqrt(n)
    and the 95% interval mean +- t_{0.975, n-1} se (:data:`SUMMARY_COLUMNS`). With one run std, se and the
    interval are NaN (no spread to estimate); with none the mean is NaN too and ``failed`` says why."""
    out = []
    for value in spec.grid:
        at_value = table[table["value"] == float(value)]
        for algorithm in spec.algorithms:
            mine = at_value[at_value["algorithm"] == algorithm]
            for metric in spec.metrics:
                rows = mine[mine["metric"] == metric]
                ok = rows.loc[rows["status"] == "ok", "result"].to_numpy(dtype=float)
                n = int(ok.size)
                mean = float(ok.mean()) if n else math.nan
                std = float(ok.std(ddof=1)) if n > 1 else math.nan
                se = std / math.sqrt(n) if n > 1 else math.nan
                half = float(scipy.stats.t.ppf(0.975, n - 1)) * se if n > 1 else math.nan
                out.append((spec.parameter, float(value), algorithm, metric, n, int(len(rows) - n), mean, std, se,
                            mean - half, mean + half))
    return pd.DataFrame(out, columns=list(SUMMARY_COLUMNS))


@dataclass(frozen=True, eq=False)
class SweepResult:
    """A finished (or stopped) sweep: the spec, the tidy table, its summary, the gains per grid point, notes.
    ``complete`` is False when the sweep was stopped; ``runs_done`` runs are then in the table."""

    spec: SweepSpec
    table: pd.DataFrame
    summary: pd.DataFrame
    gains: pd.DataFrame
    notes: tuple[str, ...]
    complete: bool
    runs_done: int
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_csv(self) -> str:
        """The tidy table as CSV text (byte-for-byte reproducible for a spec)."""
        return self.table.to_csv(index=False, lineterminator="\n")

    def summary_csv(self) -> str:
        return self.summary.to_csv(index=False, lineterminator="\n")

    def gains_csv(self) -> str:
        return self.gains.to_csv(index=False, lineterminator="\n")

    def summary_of(self, algorithm: str, metric: str) -> pd.DataFrame:
        """The summary rows of one algorithm and metric, in grid order."""
        s = self.summary
        return s[(s["algorithm"] == algorithm) & (s["metric"] == metric)].reset_index(drop=True)

    def status(self) -> str:
        return ("complete" if self.complete else
                f"stopped after {self.runs_done} of {self.spec.runs} runs (the curves use the finished runs)")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the spec, status, summary and gains records, notes (NaN stays NaN; print_json turns it
        into null)."""
        return {"spec": self.spec.to_dict(), "complete": self.complete, "runs_done": self.runs_done,
                "seconds": self.seconds, "summary": self.summary.to_dict(orient="records"),
                "gains": self.gains.to_dict(orient="records"), "notes": list(self.notes)}


def sweep_result(spec: SweepSpec, tables: Sequence[pd.DataFrame], *, seconds: float = 0.0) -> SweepResult:
    """Combine the tables of :func:`sweep_runs` (e.g. one per run) into a :class:`SweepResult`; complete when
    every run 0..R-1 is present."""
    frames = [t[list(TABLE_COLUMNS)] for t in tables if len(t)]
    table = _to_table(spec, pd.concat(frames, ignore_index=True) if frames else [])
    if table.duplicated(subset=["value", "algorithm", "run", "metric"]).any():
        raise InputError("the same run appears twice in the tables to combine", "runs")
    runs_done = int(table["run"].nunique()) if len(table) else 0
    plan = _plan(spec)
    notes = plan.notes + _algorithm_notes(spec)
    result = SweepResult(spec, table, summarise_table(spec, table), plan.gains.copy(), notes,
                         runs_done == spec.runs, runs_done, float(seconds))
    if result.complete:
        _remember(spec, result)
    return result


def _remember(spec: SweepSpec, result: SweepResult) -> None:
    key = spec.to_json()
    with _LOCK:
        _RESULTS[key] = result
        _RESULTS.move_to_end(key)
        while len(_RESULTS) > _RESULT_CACHE_SIZE:
            _RESULTS.popitem(last=False)


def cached_result(spec: SweepSpec) -> SweepResult | None:
    """The cached complete result of ``spec`` or None (counts as a hit or a miss)."""
    key = spec.to_json()
    with _LOCK:
        result = _RESULTS.get(key)
        if result is None:
            _STATS["misses"] += 1
        else:
            _STATS["hits"] += 1
            _RESULTS.move_to_end(key)
        return result


def run_sweep(spec: SweepSpec, *, progress: Progress | None = None, should_stop: ShouldStop | None = None,
              use_cache: bool = True) -> SweepResult:
    """Run every algorithm of ``spec`` ``spec.runs`` times at every grid point (see the module docstring).

    ``progress(done, total, label)`` after each (run, algorithm, grid point); ``should_stop()`` checked as often:
    when it returns True the finished runs are returned, ``complete`` False. Complete results are cached by the
    spec's JSON (``use_cache=False`` always recomputes, and does not read the cache)."""
    if not isinstance(spec, SweepSpec):
        raise InputError("run_sweep needs a SweepSpec", "spec")
    if use_cache:
        hit = cached_result(spec)
        if hit is not None:
            if progress is not None:
                progress(1, 1, "cached result")
            return hit
    start = time.perf_counter()
    table = sweep_runs(spec, progress=progress, should_stop=should_stop)
    return sweep_result(spec, [table], seconds=time.perf_counter() - start)
