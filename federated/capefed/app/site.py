"""A site's configuration and data: what its node configuration says and how it reads its data files, with every
value checked once and every file read with a bound. What the site does with a request is :mod:`capefed.app.siteflow`.

A site's node configuration (``flower-supernode --node-config``) holds its name, budget (eps, delta), optional
weight mu_s and seed, its identity key and the consortium's roster (:mod:`capefed.app.trust`), its privacy ledger (made
at enrolment: ``python -m capefed.ops.ledger create``) and the ledger's key, optionally the totals the ledger must have
been made with and the folder for the results it receives, the colluders it requires protection against, and for each
algorithm its data file and sample count N_s::

    role="site" name="north" eps=1.0 delta=1e-5 identity="/etc/capefed/identity.key"
    roster="/etc/capefed/roster.json" ledger="/var/lib/capefed/ledger.json" ledger-key="/etc/capefed/ledger.key"
    collusion=1 dropouts=1 deadline=300 pca-data="/data/north-digits.csv" pca-n=800

``collusion`` and ``dropouts`` are the site's own limits: it refuses a plan that protects against fewer colluders
(without ``collusion``: fewer than the promise's default ceil(S/3) - 1), or survives more drop-outs (each drop-out
reveals that site's noise term), than it says. ``deadline`` is the most
seconds it accepts between two steps of one round (its answer to one request and the next request); a later
request is refused.

Data files are CSV without labels: capePCA one preprocessed sample per row (every norm <= 1); capeAGN with the
single topic model one document per row as word indices 0..D-1 (at least 3 words), with the Gaussian mixture one
sample per row in original units (the site divides by the public norm bound the aggregator names). The site checks
the file against N_s; it reads only regular files and at most MAX_DATA_BYTES of them (a device or a FIFO is refused
before anything is read).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import dp

__all__ = ["DEFAULT_DEADLINE", "MAX_DATA_BYTES", "AgnModel", "SiteConfig", "SiteConfigError", "load_mog_data",
           "load_pca_data", "load_site", "load_stm_data", "step_deadline"]

MAX_DATA_BYTES = 512 * 1024 * 1024
"""Largest site data file read (bytes, before decompression)."""
DEFAULT_DEADLINE = 600.0
"""Seconds a party accepts between two steps of a round unless its configuration says ``deadline``."""
MAX_DEADLINE = 86_400.0


class SiteConfigError(ValueError):
    """A site's configuration or data file is not usable; the message says what is wrong and what is allowed."""


def _number(config: Mapping[str, Any], key: str, *, required: bool = True) -> float | None:
    value = config.get(key)
    if value is None:
        if required:
            raise SiteConfigError(f"the site configuration needs {key}")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise SiteConfigError(f"{key} must be a finite number (got {value!r})")
    return float(value)


def _path(config: Mapping[str, Any], key: str) -> Path:
    value = config.get(key)
    if not isinstance(value, str) or not value.strip() or len(value) > 4096:
        raise SiteConfigError(f"the site configuration needs {key}, a file path")
    return Path(value)


def data_keys(algorithm: str) -> tuple[str, str]:
    """The node configuration's keys of a site's data file and sample count for ``algorithm`` (its entry's key)."""
    key = dp.federated_algorithm(algorithm).key
    return f"{key}-data", f"{key}-n"


def step_deadline(config: Mapping[str, Any]) -> float:
    """The node configuration's ``deadline`` (seconds between two steps of a round), checked; DEFAULT_DEADLINE when
    absent."""
    value = config.get("deadline", DEFAULT_DEADLINE)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < float(value) <= MAX_DEADLINE:
        raise SiteConfigError(f"deadline must be a number of seconds in (0, {MAX_DEADLINE:g}] (got {value!r:.40})")
    return float(value)


def _seed(value: Any) -> int | str | None:
    if value is None:
        return None
    try:
        dp.secret_bytes(value)
    except ValueError as exc:
        raise SiteConfigError(f"seed: {exc}; leave it out in a real run (fresh 256-bit secrets)") from exc
    return value


@dataclass(frozen=True, kw_only=True)
class SiteConfig:
    """A site's settings: budget, optional weight and seed (None: fresh 256-bit secrets), identity key and roster,
    ledger and its total budget, the colluders it requires protection against, data files and N_s."""

    name: str
    eps: float
    delta: float
    weight: float | None
    seed: int | str | None
    data: dict[str, tuple[Path, int]]
    identity: Path | None = None
    roster: Path | None = None
    ledger: Path | None = None
    ledger_key: Path | None = None
    results: Path | None = None
    budget_eps: float | None = None
    budget_delta: float | None = None
    collusion: int | None = None
    dropouts: int = 0
    deadline: float = DEFAULT_DEADLINE

    @classmethod
    def from_mapping(cls, config: Mapping[str, Any]) -> SiteConfig:
        name = config.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 64:
            raise SiteConfigError(f"name must be a non-empty string of at most 64 characters (got {name!r})")
        eps = _number(config, "eps")
        delta = _number(config, "delta")
        if eps <= 0:
            raise SiteConfigError(f"eps must be > 0 (got {eps:g})")
        if not 0 < delta < 1:
            raise SiteConfigError(f"delta must be in (0, 1) (got {delta:g})")
        weight = _number(config, "weight", required=False)
        if weight is not None and weight < 0:
            raise SiteConfigError(f"weight must be >= 0 (got {weight:g})")
        seed = _seed(config.get("seed"))
        collusion = config.get("collusion")
        if collusion is not None and (isinstance(collusion, bool) or not isinstance(collusion, int)
                                      or not 0 <= collusion <= dp.MAX_SITES):
            raise SiteConfigError(f"collusion must be an integer in 0..{dp.MAX_SITES} (got {collusion!r})")
        dropouts = config.get("dropouts", 0)
        if isinstance(dropouts, bool) or not isinstance(dropouts, int) or not 0 <= dropouts <= dp.MAX_SITES:
            raise SiteConfigError(f"dropouts must be an integer in 0..{dp.MAX_SITES} (got {dropouts!r})")
        deadline = step_deadline(config)
        budget_eps = _number(config, "budget-eps", required=False)
        budget_delta = _number(config, "budget-delta", required=False)
        if (budget_eps is None) != (budget_delta is None) or budget_eps is not None and (
                budget_eps <= 0 or not 0 < budget_delta < 1):
            raise SiteConfigError(f"budget-eps and budget-delta (optional: the totals the ledger must have been made "
                                  f"with) need budget-eps > 0 and budget-delta in (0, 1), both or neither (got "
                                  f"{budget_eps}, {budget_delta})")
        data = {}
        for algorithm in dp.FEDERATED_ALGORITHMS:
            path_key, n_key = data_keys(algorithm)
            path = config.get(path_key)
            if path is None:
                continue
            n = config.get(n_key)
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise SiteConfigError(f"{n_key} must be the number of samples in {path_key}, a positive integer "
                                      f"(got {n!r})")
            data[algorithm] = (Path(str(path)), n)
        return cls(name=name.strip(), eps=eps, delta=delta, weight=weight, seed=seed, data=data,
                   identity=_path(config, "identity"), roster=_path(config, "roster"),
                   ledger=_path(config, "ledger"), ledger_key=_path(config, "ledger-key"),
                   results=_path(config, "results") if "results" in config else None,
                   budget_eps=budget_eps, budget_delta=budget_delta,
                   collusion=collusion, dropouts=dropouts, deadline=deadline)

    def source(self, algorithm: str) -> tuple[Path, int]:
        if algorithm not in self.data:
            keys = data_keys(algorithm)
            raise SiteConfigError(f"site {self.name} has no data for {algorithm}: set {keys[0]} and {keys[1]}")
        return self.data[algorithm]


def read_bounded(path: Path, limit: int = MAX_DATA_BYTES) -> bytes:
    """A regular file's bytes, at most ``limit`` of them, read as every file input is (:func:`dpcore.textio.read_file`:
    a device, FIFO, socket or directory is refused before anything is read, without blocking)."""
    try:
        return dp.read_file(path, limit, "the data file")
    except dp.InputError as exc:
        raise SiteConfigError(f"{exc}; a site reads only regular files of at most {limit:,} bytes") from None


def _read_table(path: Path, n: int) -> np.ndarray:
    content = read_bounded(path)
    try:
        table = dp.parse_numeric_csv(content, header=False, max_cells=10**9, max_bytes=10 * MAX_DATA_BYTES)
    except dp.InputError as exc:
        raise SiteConfigError(f"{path}: {exc}") from exc
    values = np.asarray(table.values, dtype=float)
    if values.shape[0] != n:
        raise SiteConfigError(f"{path} holds {values.shape[0]:,} samples but the configuration says N_s = {n:,}")
    return values


def load_pca_data(path: str | Path, n: int) -> np.ndarray:
    """Samples as columns (D x N_s); every sample must have norm <= 1 (the sensitivity assumes it)."""
    x = _read_table(Path(path), n).T
    largest = float(np.linalg.norm(x, axis=0).max())
    if largest > 1.0 + 1e-9:
        raise SiteConfigError(f"{path}: a sample has norm {largest:.4g} > 1; preprocess (centre and clip to a public "
                              "norm bound) before the round")
    return np.ascontiguousarray(x)


def load_stm_data(path: str | Path, n: int, dim: int):
    """Documents (N_s x L word indices in 0..D-1, L >= 3) as a dpcore STM site."""
    words = _read_table(Path(path), n)
    if words.shape[1] < 3:
        raise SiteConfigError(f"{path}: every document needs at least 3 words (got {words.shape[1]} columns)")
    if np.any(words != np.round(words)) or np.any(words < 0) or np.any(words >= dim):
        raise SiteConfigError(f"{path}: word indices must be integers in 0..{dim - 1} (the vocabulary has D = {dim})")
    return dp.stm_site(words.astype(np.int64), dim)


def load_mog_data(path: str | Path, n: int, sigma2: float, norm_bound: float):
    """Samples (N_s x D, original units) as a dpcore MOG site, divided by the public norm bound (a longer sample
    is clipped to it)."""
    samples = _read_table(Path(path), n)
    if samples.shape[1] < 2:
        raise SiteConfigError(f"{path}: a Gaussian-mixture sample needs at least 2 features")
    return dp.mog_site(samples, sigma2, norm_bound)


@dataclass(frozen=True, kw_only=True)
class AgnModel:
    """The public capeAGN settings a site needs to read its data: the model, D (the STM vocabulary), and the MOG
    component variance and norm bound."""

    model: str = "stm"
    dim: int | None = None
    sigma2: float | None = None
    norm_bound: float | None = None

    @staticmethod
    def from_request(c: Mapping[str, Any]) -> AgnModel:
        model = c.get("model", "stm")
        if model not in ("stm", "mog"):
            raise SiteConfigError(f"unknown capeAGN model {model!r} (stm or mog)")
        dim = c.get("dim")
        if model == "stm" and (isinstance(dim, bool) or not isinstance(dim, int)
                               or not 2 <= dim <= dp.MAX_FEDERATED_MATRIX_DIM):
            raise SiteConfigError("the single topic model needs the vocabulary size D in "
                                  f"2..{dp.MAX_FEDERATED_MATRIX_DIM} "
                                  f"from the aggregator (got {dim!r:.40})")
        sigma2, bound = c.get("sigma2"), c.get("norm_bound")
        if model == "mog" and not (isinstance(sigma2, float) and isinstance(bound, float) and math.isfinite(sigma2)
                                   and math.isfinite(bound) and 1e-300 < bound < 1e300 and 0 <= sigma2 < 1e300):
            raise SiteConfigError("the Gaussian mixture needs sigma^2 >= 0 and a norm bound > 0 from the aggregator")
        return AgnModel(model=model, dim=dim if model == "stm" else None, sigma2=sigma2, norm_bound=bound)


def _samples(path: Path, n: int, agn: AgnModel | None) -> tuple[Any, int]:
    data = load_pca_data(path, n)
    return data, data.shape[0]


def _documents(path: Path, n: int, agn: AgnModel) -> tuple[Any, int]:
    return load_stm_data(path, n, agn.dim), agn.dim


def _mixture(path: Path, n: int, agn: AgnModel) -> tuple[Any, int]:
    data = load_mog_data(path, n, agn.sigma2, agn.norm_bound)
    return data, data.dim


DATA_FORMS: dict[str, Callable[[Path, int, Any], tuple[Any, int]]] = {
    "samples": _samples, "stm": _documents, "mog": _mixture}
"""How a site reads each form of data (:attr:`dpcore.federation.FederatedAlgorithm.data_form`): the data and D."""


def agn_model(algorithm: str, settings: dp.RoundSettings, dim: int | None) -> AgnModel | None:
    """The public model settings a site reads its data with, for an algorithm whose entry reads them
    (``public_model``), else None."""
    entry = dp.federated_algorithm(algorithm)
    if not entry.public_model:
        return None
    return AgnModel(model=settings.model, dim=dim if entry.fixed_dim(settings) else None, sigma2=settings.sigma2,
                    norm_bound=settings.norm_bound)


def load_site(config: SiteConfig, algorithm: str, agn: AgnModel | None) -> tuple[Any, dp.SiteBudget]:
    """A site's data for ``algorithm`` (with the public model settings when its entry reads them) and the budget it
    reports."""
    path, n = config.source(algorithm)
    form = dp.federated_algorithm(algorithm).data_form(agn.model if agn is not None else "")
    data, data_dim = DATA_FORMS[form](Path(path), n, agn)
    site = dp.Site(name=config.name, n=n, eps=config.eps, delta=config.delta, weight=config.weight)
    return data, dp.SiteBudget(site=site, dim=data_dim)
