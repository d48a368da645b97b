"""The helper: on a ``shares`` request it draws the zero-sum noise e_1..e_S of the requested stages and seals each
e_s to site s's public key, so that only site s can read it; the aggregator only forwards ciphertext.

Node configuration: ``role="helper"`` and optionally ``seed`` (a deployment leaves it out: fresh entropy).
The request names the round, the sites with their public keys, the stages with the noise object of each (D, K,
the capeAGN path and third-moment law) and, per stage, the design's mixing M (e = M z), weights mu_s and helper
variances tau_e,s^2. The helper checks that M cancels and gives those variances
(``dpcore.cape.parties.mixing_problem``) before drawing. On capeAGN's projected path the M3 request comes after
stage 1 and carries W: the helper draws E3_s already projected on W (K x K x K).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import dp
from .messages import Payload
from .sealing import SealError, seal_array, seal_context

__all__ = ["handle_helper", "sealed_key"]

MAX_MIXING_COLUMNS = 1024
"""Columns of a design's mixing the helper accepts (a design has at most S + 1; S <= dpcore's MAX_SITES)."""


def sealed_key(stage: str, site: str) -> str:
    """Where the share of ``site`` for ``stage`` sits in the helper's answer."""
    return f"sealed/{stage}/{site}"


def _refuse(reason: str) -> Payload:
    return Payload({"status": "refused", "reason": reason})


def _stage_rows(request: Payload, stage: str, names: list[str], size: int, rng: np.random.Generator
                ) -> np.ndarray | str:
    """The helper's rows of one stage, or why it refuses to draw them."""
    mixing = np.asarray(request.arrays.get(f"mixing/{stage}", np.empty((0, 0))), dtype=float)
    weights = np.asarray(request.arrays.get(f"weights/{stage}", np.empty(0)), dtype=float)
    var_e = np.asarray(request.arrays.get(f"var_e/{stage}", np.empty(0)), dtype=float)
    if weights.shape != (len(names),) or mixing.ndim != 2 or mixing.shape[1] > MAX_MIXING_COLUMNS:
        return f"helper: stage {stage} needs one weight per site and a mixing of at most {MAX_MIXING_COLUMNS} columns"
    problem = dp.mixing_problem(mixing, weights, var_e)
    if problem:
        return f"helper: stage {stage}: {problem}"
    return dp.helper_noise(mixing, size, rng)


def helper_shares(config: Mapping[str, Any], request: Payload) -> Payload:
    c = request.config
    seed = config.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        return _refuse(f"helper: seed must be a non-negative integer (got {seed!r})")
    seed = seed if seed is not None else secrets.randbits(63)
    names = [str(n) for n in c["names"]]
    keys = [bytes(k) for k in c["public_keys"]]
    if len(keys) != len(names):
        return _refuse(f"helper: got {len(keys)} public keys for {len(names)} sites")
    round_id, algorithm, run = str(c["round"]), str(c["algorithm"]), int(c["run"])
    law, path, dim, k = str(c["m3_noise"]), str(c["path"]), int(c["dim"]), int(c["k"])
    w = request.arrays.get("w")
    reply: dict[str, Any] = {"status": "ok"}
    for stage in map(str, c["stages"]):
        projected = stage == "M3" and path == "projected"
        if projected and (w is None or w.shape != (dim, k) or not np.all(np.isfinite(w))):
            return _refuse(f"helper: stage M3 on the projected path needs W, a finite {dim} x {k} matrix")
        try:
            size = dp.noise_size(stage, law, path, dim, k)
            rows = _stage_rows(request, stage, names, size, dp.party_rng(seed, run, algorithm, stage, dp.HELPER))
            if isinstance(rows, str):
                return _refuse(rows)
            e = dp.noise_entries(rows, stage, law, path, dim, w if projected else None)
        except dp.InputError as exc:
            return _refuse(f"helper: stage {stage}: {exc}")
        for name, key, row in zip(names, keys, e, strict=True):
            try:
                reply[sealed_key(stage, name)] = seal_array(row, key, seal_context(round_id, stage, name))
            except SealError as exc:
                return _refuse(f"helper: site {name}: {exc}")
    return Payload(reply)


def handle_helper(action: str, config: Mapping[str, Any], request: Payload) -> Payload:
    """Answer one request (``hello`` or ``shares``)."""
    if action == "hello":
        return Payload({"status": "ok", "role": "helper", "name": str(config.get("name", "helper"))})
    if action == "shares":
        return helper_shares(config, request)
    return _refuse(f"helper: unknown request {action!r}")
