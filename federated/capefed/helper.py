"""The helper: on a ``shares`` request it draws the zero-sum noise e_1..e_S of every stage and seals each e_s to
site s's public key, so that only site s can read it; the aggregator only forwards ciphertext.

Node configuration: ``role="helper"`` and optionally ``seed`` (a deployment leaves it out: fresh entropy).
The request names the round, the sites with their public keys and, per stage, the object (kind, D) and the
design's weights mu_s and helper variances tau_e,s^2; the helper checks that a zero-sum law exists for them
(``dpcore.privacy.weighted_zero_sum_mixing``) before drawing.
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


def sealed_key(stage: str, site: str) -> str:
    """Where the share of ``site`` for ``stage`` sits in the helper's answer."""
    return f"sealed/{stage}/{site}"


def _refuse(reason: str) -> Payload:
    return Payload({"status": "refused", "reason": reason})


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
    reply: dict[str, Any] = {"status": "ok"}
    for stage, kind, dim in zip(c["stages"], c["kinds"], c["dims"], strict=True):
        weights = np.asarray(request.arrays[f"weights/{stage}"], dtype=float)
        var_e = np.asarray(request.arrays[f"var_e/{stage}"], dtype=float)
        if weights.shape != (len(names),) or var_e.shape != (len(names),):
            return _refuse(f"helper: stage {stage} needs one weight and one helper variance per site")
        rng = dp.party_rng(seed, run, algorithm, str(stage), dp.HELPER)
        try:
            e = dp.helper_noise(weights, var_e, str(kind), int(dim), rng)
        except dp.InputError as exc:
            return _refuse(f"helper: stage {stage}: {exc}")
        for name, key, row in zip(names, keys, e, strict=True):
            try:
                reply[sealed_key(str(stage), name)] = seal_array(row, key, seal_context(round_id, str(stage), name))
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
