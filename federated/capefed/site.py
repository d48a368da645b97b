"""A site: its configuration and data, and its answers to the aggregator's hello and release requests.

A site's node configuration (``flower-supernode --node-config``) holds its name, budget (eps, delta), optional
weight mu_s and seed, and for each algorithm its data file and sample count N_s::

    role="site" name="north" eps=1.0 delta=1e-5 pca-data="/data/north-digits.csv" pca-n=800
    agn-data="/data/north-docs.csv" agn-n=20000

Data files are CSV without labels: capePCA one preprocessed sample per row (every norm <= 1); capeAGN with the
single topic model one document per row as word indices 0..D-1 (at least 3 words), with the Gaussian mixture one
sample per row in original units (the site divides by the public norm bound the aggregator names). The site checks
the file against N_s.

Requests (:class:`Payload`), by action:

* ``hello``: the site answers with its name, N_s, eps_s, delta_s, weight, D, a fresh public key for the helper's
  share and the digest of these values (``dpcore.federation.budget_digest``). The private key stays in ``state``.
* ``release``: the site recomputes its values from its configuration and data; if their digest differs from the
  one the design was made for, it refuses and releases nothing. Otherwise it opens the sealed e_s, draws g_s and
  answers with a_hat_s = a_s + e_s + f_s + g_s (capeAGN's M3 stage: (M3_s + E3_s + F3_s + G3_s)(W, W, W); on the
  projected path e, f and g are already projected and the site adds them to M3_s(W, W, W)).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import dp
from .messages import Payload
from .sealing import SealError, new_key_pair, open_array, seal_context

__all__ = ["MAX_DATA_BYTES", "AgnModel", "SiteConfig", "SiteConfigError", "handle_site", "load_mog_data",
           "load_pca_data", "load_site", "load_stm_data"]

MAX_DATA_BYTES = 512 * 1024 * 1024
"""Largest site data file read (bytes, before decompression)."""
_DATA_KEYS = {"capePCA": ("pca-data", "pca-n"), "capeAGN": ("agn-data", "agn-n")}


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


@dataclass(frozen=True, kw_only=True)
class SiteConfig:
    """A site's settings: budget, optional weight and seed (None: fresh entropy), data files and N_s."""

    name: str
    eps: float
    delta: float
    weight: float | None
    seed: int | None
    data: dict[str, tuple[Path, int]]

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
        seed = config.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise SiteConfigError(f"seed must be a non-negative integer (got {seed!r})")
        data = {}
        for algorithm, (path_key, n_key) in _DATA_KEYS.items():
            path = config.get(path_key)
            if path is None:
                continue
            n = config.get(n_key)
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise SiteConfigError(f"{n_key} must be the number of samples in {path_key}, a positive integer "
                                      f"(got {n!r})")
            data[algorithm] = (Path(str(path)), n)
        return cls(name=name.strip(), eps=eps, delta=delta, weight=weight, seed=seed, data=data)

    def source(self, algorithm: str) -> tuple[Path, int]:
        if algorithm not in self.data:
            keys = _DATA_KEYS[algorithm]
            raise SiteConfigError(f"site {self.name} has no data for {algorithm}: set {keys[0]} and {keys[1]}")
        return self.data[algorithm]


def _read_table(path: Path, n: int) -> np.ndarray:
    try:
        size = path.stat().st_size
        if size > MAX_DATA_BYTES:
            raise SiteConfigError(f"{path} has {size:,} bytes, more than the {MAX_DATA_BYTES:,} a site reads")
        content = path.read_bytes()
    except OSError as exc:
        raise SiteConfigError(f"cannot read the data file {path}: {exc.strerror}") from exc
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
        if model == "stm" and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 2):
            raise SiteConfigError("the single topic model needs the vocabulary size D >= 2 from the aggregator")
        sigma2, bound = c.get("sigma2"), c.get("norm_bound")
        if model == "mog" and not (isinstance(sigma2, float) and isinstance(bound, float) and sigma2 >= 0
                                   and bound > 0):
            raise SiteConfigError("the Gaussian mixture needs sigma^2 >= 0 and a norm bound > 0 from the aggregator")
        return AgnModel(model=model, dim=dim if model == "stm" else None, sigma2=sigma2, norm_bound=bound)


def load_site(config: SiteConfig, algorithm: str, agn: AgnModel | None) -> tuple[Any, dp.SiteBudget]:
    """A site's data for ``algorithm`` (capeAGN: with the public model settings) and the budget it reports."""
    path, n = config.source(algorithm)
    if algorithm == "capePCA":
        data = load_pca_data(path, n)
        data_dim = data.shape[0]
    elif agn.model == "stm":
        data = load_stm_data(path, n, agn.dim)
        data_dim = agn.dim
    else:
        data = load_mog_data(path, n, agn.sigma2, agn.norm_bound)
        data_dim = data.dim
    site = dp.Site(name=config.name, n=n, eps=config.eps, delta=config.delta, weight=config.weight)
    return data, dp.SiteBudget(site=site, dim=data_dim)


def _refuse(reason: str, name: str | None = None) -> Payload:
    config = {"status": "refused", "reason": reason}
    if name:
        config["name"] = name
    return Payload(config)


def _seed(config: SiteConfig) -> int:
    return config.seed if config.seed is not None else secrets.randbits(63)


def _request_data(config: SiteConfig, c: Mapping[str, Any]) -> tuple[str, Any, dp.SiteBudget]:
    algorithm = str(c.get("algorithm"))
    if algorithm not in dp.ROUND_STAGES:
        raise SiteConfigError(f"unknown algorithm {algorithm!r}")
    agn = AgnModel.from_request(c) if algorithm == "capeAGN" else None
    data, budget = load_site(config, algorithm, agn)
    return algorithm, data, budget


def site_hello(config: SiteConfig, request: Payload, state: MutableMapping[str, bytes]) -> Payload:
    round_id = str(request.config.get("round"))
    try:
        _, _, budget = _request_data(config, request.config)
    except SiteConfigError as exc:
        return _refuse(f"site {config.name}: {exc}", config.name)
    private, public = new_key_pair()
    state[f"{round_id}/key"] = private
    site = budget.site
    reply = {"status": "ok", "role": "site", "name": site.name, "n": site.n, "eps": site.eps,
             "delta": site.delta, "dim": budget.dim, "public_key": public, "digest": dp.budget_digest(budget)}
    if site.weight is not None:
        reply["weight"] = site.weight
    return Payload(reply)


def _open_inputs(config: SiteConfig, request: Payload, key: bytes, count: int, dim: int, k: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | str:
    """The helper's e_s (opened), the aggregator's f_s and W from a release request, or why they are unusable."""
    c = request.config
    stage = str(c["stage"])
    try:
        e = open_array(bytes(c["sealed_e"]), key, seal_context(str(c["round"]), stage, config.name), count)
    except SealError as exc:
        return str(exc)
    f = np.asarray(request.arrays.get("f", np.empty(0)), dtype=float)
    if f.shape != (count,) or not np.all(np.isfinite(f)):
        return f"the aggregator's noise f must be {count} finite numbers (got shape {f.shape})"
    w = request.arrays.get("w")
    if stage == "M3":
        w = np.asarray(w if w is not None else np.empty((0, 0)), dtype=float)
        if w.shape != (dim, k) or not np.all(np.isfinite(w)):
            return f"the whitening W must be a finite {dim} x {k} matrix (got shape {w.shape})"
    return e, f, w


def site_release(config: SiteConfig, request: Payload, state: MutableMapping[str, bytes]) -> Payload:
    c = request.config
    try:
        algorithm, data, budget = _request_data(config, c)
    except SiteConfigError as exc:
        return _refuse(f"site {config.name}: {exc}")
    digest = dp.budget_digest(budget)
    if digest != c["digest"]:
        site = budget.site
        return _refuse(f"site {config.name}: its budget or data changed since the design (now N_s = {site.n}, "
                       f"eps = {site.eps:g}, delta = {site.delta:g}, weight = {site.weight}, D = {budget.dim}); "
                       "it releases nothing under a design made for other values")
    key = state.get(f"{c['round']}/key")
    if key is None:
        return _refuse(f"site {config.name}: it has no key for round {c['round']} (was it restarted after the hello?)")
    stage, path, law, k, dim = str(c["stage"]), str(c["path"]), str(c["m3_noise"]), int(c["k"]), budget.dim
    try:
        count = dp.noise_unique(stage, path, dim, k)
        size = dp.noise_size(stage, law, path, dim, k)
    except dp.InputError as exc:
        return _refuse(f"site {config.name}: {exc}")
    inputs = _open_inputs(config, request, key, count, dim, k)
    if isinstance(inputs, str):
        return _refuse(f"site {config.name}: {inputs}")
    e, f, w = inputs
    rng = dp.party_rng(_seed(config), int(c["run"]), algorithm, stage, dp.SITE, config.name)
    g = dp.noise_entries(dp.site_noise(float(c["var_g"]), size, rng), stage, law, path, dim, w)
    release = dp.site_stage_release(stage, path, data, e, f, g, w)
    return Payload({"status": "ok", "digest": digest}, {"release": release})


def handle_site(action: str, config: Mapping[str, Any], request: Payload, state: MutableMapping[str, bytes]
                ) -> Payload:
    """Answer one request; a bad configuration is answered with status "refused" and the reason."""
    try:
        site = SiteConfig.from_mapping(config)
    except SiteConfigError as exc:
        name = str(config.get("name", "?"))
        return _refuse(f"site {name}: configuration: {exc}", name)
    if action == "hello":
        return site_hello(site, request, state)
    if action == "release":
        return site_release(site, request, state)
    return _refuse(f"site {site.name}: unknown request {action!r}")
