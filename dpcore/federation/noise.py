"""The noise every party of a real round draws and how the aggregator recovers from drop-outs, written once for the
parties in separate processes (``federated/``) and the in-process simulation of the same round
(:func:`dpcore.federation.simulate_round`), so the two stay byte-identical (docs/federated.md).

* :func:`party_generator`: a party's generator, "secure" (ChaCha20 keyed from the party's secret,
  :func:`dpcore.seeding.secure_party_rng`; every real run) or "fast" (the seeded PCG64 streams of simulations).
* Helper-free (:mod:`dpcore.cape.helper_free`): a site's noise seed for one stage (:func:`noise_seed`, the secret it
  shares t-of-S), its draw w_s (:func:`site_draw`), the fixed-point encoding of the stage (:func:`stage_encoding`),
  and its term e_s from its own draw and the secure sum (:func:`site_term`).
* Drop-outs: :func:`recovered_aggregate` adds the vanished sites' terms (which the survivors' terms no longer cancel)
  and renormalises by the survivors' weight.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..cape.helper_free import FixedPoint, decode_sum, encode_fixed, fixed_point, helper_free_terms
from ..seeding import party_key, party_rng, secure_party_rng, secure_rng
from ..validation import InputError
from .plan import RoundPlan, RoundStage
from .ring import ring_secure_sum, ring_site_draw, ring_site_term

__all__ = ["GENERATORS", "NOISE_SEED", "party_generator", "recovered_aggregate", "secure_sum", "site_draw",
           "site_term", "stage_encoding", "noise_seed", "sum_from_wire", "sum_to_wire"]

GENERATORS = ("secure", "fast")
"""A party's bit generator: "secure" (ChaCha20, every real run) or "fast" (PCG64, simulations only)."""
NOISE_SEED = "noise-seed"
"""The role name under which a site's per-stage noise seed is derived from its secret (helper-free)."""


def party_generator(generator: str, secret: bytes | int | str, run: int, algorithm: str, stage: str, role: str,
                    site: str | None = None) -> np.random.Generator:
    """The generator of one party in one stage: ChaCha20 keyed from ``secret`` ("secure") or
    :func:`dpcore.seeding.party_rng` seeded by the integer ``secret`` ("fast")."""
    if generator == "secure":
        return secure_party_rng(secret, run, algorithm, stage, role, site)
    if generator == "fast":
        return party_rng(int(secret), run, algorithm, stage, role, site)
    raise InputError(f"generator must be one of {', '.join(GENERATORS)} (got {generator!r})")


def noise_seed(secret: bytes | int | str, run: int, algorithm: str, stage: str, site: str) -> bytes:
    """A site's 256-bit noise seed of one stage (helper-free): its w_s is drawn from ChaCha20 keyed by it, and it is
    what the site shares t-of-S so that survivors can remove its term if it vanishes."""
    return party_key(secret, run, algorithm, stage, NOISE_SEED, site)


def stage_encoding(plan: RoundPlan, stage: RoundStage) -> FixedPoint:
    """The secure sum's fixed-point encoding of a stage (public: every party derives it from the plan)."""
    return fixed_point(stage.design.e_law.var_w, len(plan.budgets))


def site_draw(seed: bytes, plan: RoundPlan, stage: RoundStage, index: int) -> tuple[np.ndarray, np.ndarray]:
    """Site ``index``'s draw w_s ~ N(0, var_w,s) (``stage.size`` numbers) from its noise seed, as its fixed-point
    encoding q_s (uint64) and the value it encodes. A site with weight 0 is not in the sum: its w_s is its e_s. A
    stage of the integer variant draws w~_s on its ring (:func:`dpcore.federation.ring.ring_site_draw`)."""
    if stage.discrete is not None:
        return ring_site_draw(seed, stage.discrete, index)
    std = math.sqrt(max(float(stage.design.e_law.var_w[index]), 0.0))
    row = secure_rng(seed).standard_normal(stage.size)
    row *= std
    if stage.design.weights[index] <= 0:
        return np.zeros(stage.size, dtype=np.uint64), row
    encoding = stage_encoding(plan, stage)
    encoded = encode_fixed(row, encoding)
    return encoded, decode_sum(encoded, encoding)


def secure_sum(shares: Sequence[np.ndarray], plan: RoundPlan, stage: RoundStage) -> np.ndarray:
    """W from the sites' masked shares (or their encodings): their sum mod 2^64, decoded (the integer variant: W~,
    int64, checked against the sum's bound)."""
    if stage.discrete is not None:
        return ring_secure_sum(shares, stage.discrete)
    total = np.zeros(stage.size, dtype=np.uint64)
    for share in shares:
        total += np.asarray(share, dtype=np.uint64)
    return decode_sum(total, stage_encoding(plan, stage))


def site_term(own: np.ndarray, total: np.ndarray, stage: RoundStage, index: int) -> np.ndarray:
    """Site ``index``'s row e_s: (q_s - c_s W) / mu_s, or its own draw when its weight is 0 (the integer variant:
    E~_s = A w~_s - a_s W~, int64)."""
    if stage.discrete is not None:
        return ring_site_term(own, total, stage.discrete, index)
    mu = float(stage.design.weights[index])
    if mu <= 0:
        return np.asarray(own, dtype=float)
    return helper_free_terms(own, total, float(stage.design.e_law.common[index]), mu)


def sum_to_wire(total: np.ndarray) -> np.ndarray:
    """The secure sum as it travels and is kept: float64, or the integer variant's W~ (int64) as uint64 ring
    elements (the array types a message may carry)."""
    total = np.asarray(total)
    return total.view(np.uint64) if total.dtype == np.int64 else total.astype(np.float64)


def sum_from_wire(values: np.ndarray | bytes, stage: RoundStage) -> np.ndarray:
    """The inverse of :func:`sum_to_wire` for ``stage`` (bytes as kept, or a received array): int64 for the integer
    variant, float64 otherwise."""
    if isinstance(values, bytes):
        values = np.frombuffer(values, dtype="<u8" if stage.discrete is not None else "<f8")
    values = np.asarray(values)
    return values.astype(np.uint64).view(np.int64) if stage.discrete is not None else values.astype(float)


def recovered_aggregate(partial: np.ndarray, missing: Sequence[np.ndarray], weights: np.ndarray,
                        survivors: Sequence[int]) -> np.ndarray:
    """The survivors' aggregate: partial = sum_(s survived) mu_s (a_hat_s - f_s) still carries
    sum_(s survived) mu_s e_s = -sum_(v dropped) mu_v e_v, so each dropped site's weighted term ``missing`` (mu_v e_v,
    projected like the releases) is added back; the sum is divided by the survivors' weight (post-processing: the
    estimate of the survivors' pooled statistic). Without drop-outs the partial aggregate is returned unchanged."""
    if not missing:
        return partial
    out = np.array(partial, dtype=float, copy=True)
    for term in missing:
        out += term
    out /= math.fsum(float(weights[i]) for i in survivors)
    return out
