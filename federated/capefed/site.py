"""A site: its configuration and data, and its answers to the aggregator's hello and release requests.

A site's node configuration (``flower-supernode --node-config``) holds its name, budget (eps, delta), optional
weight mu_s and seed, and for each algorithm its data file and sample count N_s::

    role="site" name="north" eps=1.0 delta=1e-5 pca-data="/data/north-digits.csv" pca-n=800
    agn-data="/data/north-docs.csv" agn-n=20000

Data files are CSV without labels: capePCA one preprocessed sample per row (every norm <= 1), capeAGN one
document per row as word indices 0..D-1 (at least 3 words). The site checks the file against N_s.

Requests (:class:`Payload`), by action:

* ``hello``: the site answers with its name, N_s, eps_s, delta_s, weight, D, a fresh public key for the helper's
  share and the digest of these values (``dpcore.federation.budget_digest``). The private key stays in ``state``.
* ``release``: the site recomputes its values from its configuration and data; if their digest differs from the
  one the design was made for, it refuses and releases nothing. Otherwise it opens the sealed e_s, draws g_s and
  answers with a_hat_s = a_s + e_s + f_s + g_s (capeAGN's M3 stage: the whitened (M3_s + E3_s + F3_s + G3_s)(W, W, W)).
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

__all__ = ["MAX_DATA_BYTES", "SiteConfig", "SiteConfigError", "handle_site", "load_pca_data", "load_stm_data"]

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


def _load(config: SiteConfig, algorithm: str, dim: int | None) -> tuple[Any, dp.SiteBudget]:
    path, n = config.source(algorithm)
    if algorithm == "capePCA":
        data = load_pca_data(path, n)
        data_dim = data.shape[0]
    else:
        if dim is None:
            raise SiteConfigError("capeAGN needs the vocabulary size D from the aggregator")
        data = load_stm_data(path, n, dim)
        data_dim = dim
    budget = dp.SiteBudget(name=config.name, n=n, eps=config.eps, delta=config.delta, weight=config.weight,
                           dim=data_dim)
    return data, budget


def _refuse(reason: str, name: str | None = None) -> Payload:
    config = {"status": "refused", "reason": reason}
    if name:
        config["name"] = name
    return Payload(config)


def _seed(config: SiteConfig) -> int:
    return config.seed if config.seed is not None else secrets.randbits(63)


def site_hello(config: SiteConfig, request: Payload, state: MutableMapping[str, bytes]) -> Payload:
    algorithm = str(request.config.get("algorithm"))
    round_id = str(request.config.get("round"))
    dim = request.config.get("dim")
    try:
        if algorithm not in dp.ROUND_STAGES:
            raise SiteConfigError(f"unknown algorithm {algorithm!r}")
        _, budget = _load(config, algorithm, None if dim is None else int(dim))
    except SiteConfigError as exc:
        return _refuse(f"site {config.name}: {exc}", config.name)
    private, public = new_key_pair()
    state[f"{round_id}/key"] = private
    reply = {"status": "ok", "role": "site", "name": budget.name, "n": budget.n, "eps": budget.eps,
             "delta": budget.delta, "dim": budget.dim, "public_key": public, "digest": dp.budget_digest(budget)}
    if budget.weight is not None:
        reply["weight"] = budget.weight
    return Payload(reply)


def site_release(config: SiteConfig, request: Payload, state: MutableMapping[str, bytes]) -> Payload:
    c = request.config
    algorithm, round_id, stage = str(c["algorithm"]), str(c["round"]), str(c["stage"])
    dim = int(c["dim"])
    try:
        data, budget = _load(config, algorithm, dim)
    except SiteConfigError as exc:
        return _refuse(f"site {config.name}: {exc}")
    digest = dp.budget_digest(budget)
    if digest != c["digest"]:
        return _refuse(f"site {config.name}: its budget or data changed since the design (now N_s = {budget.n}, "
                       f"eps = {budget.eps:g}, delta = {budget.delta:g}, weight = {budget.weight}, D = {budget.dim}); "
                       "it releases nothing under a design made for other values")
    key = state.get(f"{round_id}/key")
    if key is None:
        return _refuse(f"site {config.name}: it has no key for round {round_id} (was it restarted after the hello?)")
    kind = str(c["kind"])
    count = dp.unique_count(kind, dim)
    try:
        e = open_array(bytes(c["sealed_e"]), key, seal_context(round_id, stage, config.name), count)
    except SealError as exc:
        return _refuse(f"site {config.name}: {exc}")
    f = np.asarray(request.arrays.get("f", np.empty(0)), dtype=float)
    if f.shape != (count,) or not np.all(np.isfinite(f)):
        return _refuse(f"site {config.name}: the aggregator's noise f must be {count} finite numbers (got shape "
                       f"{f.shape})")
    w = np.asarray(request.arrays.get("w", np.empty((0, 0))), dtype=float)
    if stage == "M3" and (w.ndim != 2 or w.shape[0] != dim or not np.all(np.isfinite(w))):
        return _refuse(f"site {config.name}: the whitening W must be a finite D x K matrix with D = {dim} (got shape "
                       f"{w.shape})")
    var_g = float(c["var_g"])
    rng = dp.party_rng(_seed(config), int(c["run"]), algorithm, stage, dp.SITE, config.name)
    g = dp.site_noise(var_g, kind, dim, rng)
    if algorithm == "capePCA":
        release = dp.site_release(dp.site_statistic_pca(data), e, f, g)
    elif stage == "M2":
        release = dp.site_release(dp.site_statistic_m2(data), e, f, g)
    else:
        release = dp.site_release_m3(data.m3(), e, f, g, w)
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
