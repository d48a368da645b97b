"""A federated round of the integer variant (the noise-variant table's entry with ``integer``; docs/federated.md,
"The integer variant"; the mathematics in docs/math/discrete.md): what every party computes, written once for the
parties in separate processes (``federated/``) and the in-process run (:func:`dpcore.federation.simulate_round`),
so that both give the same integers.

Per stage the plan carries the discrete design of the stage's continuous design (:func:`stage_design`, from
:func:`dpcore.cape.discrete.discrete_design`; every party recomputes it from the public plan). Then, with the party
functions of :mod:`dpcore.cape.discrete_flow`:

* site s draws w~_s from its noise seed (ChaCha20 keyed by the seed it shares t-of-S, as the helper-free variant
  does: survivors can rebuild a dropped site's w~ exactly; :func:`ring_site_draw`) and adds it, masked, to the
  secure sum W~ (the masks cancel mod 2^64; :func:`ring_secure_sum` decodes the sum once, checked against the sum's
  bound); E~_s = A w~_s - a_s W~ (:func:`ring_site_term`); its own G~_s from its secret (role ``discrete-g``);
* the aggregator draws every site's F~_s from its secret (role ``discrete-f``) and sends it;
* site s sends y_s = a~_s + E~_s + F~_s + G~_s mod 2^b (:func:`ring_release`), a~_s = round(gamma mu_s a_s) of the
  unique entries of its *dense* statistic (:func:`dpcore.federation.site.dense_statistic`), plus its self-mask;
* the aggregator, with the survivors' unmasked y_s (each a ring element: :func:`ring_release_problem`), subtracts
  their F~_s, adds every dropped site's E~_v, and decodes the exact integer sum once (:func:`ring_aggregate`; refused
  beyond the design's no-wrap bound): sum over the survivors of a~_s + G~_s, divided by gamma and (with drop-outs) by
  the survivors' weight, then projected on W on the third moment (the aggregator projects; docs/math/discrete.md).

Every term is drawn block by block (:func:`dpcore.cape.discrete_flow.blocks`), the same blocks in every party.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..cape.design import NoiseDesign
from ..cape.discrete import DiscreteDesign, discrete_design
from ..cape.discrete_flow import blocks, encode, ring_decode, ring_sum, site_message, term_draw, zero_sum_term
from ..privacy.discrete_gaussian import DiscreteGaussianLaw
from ..privacy.sensitivity import statistic_bound, statistic_entries
from ..seeding import secure_rng

__all__ = ["RING_ROLES", "RingSum", "ring_aggregate", "ring_draw", "ring_release", "ring_release_problem",
           "ring_secure_sum", "ring_site_draw", "ring_site_term", "stage_design"]

RING_ROLES = {"f": "discrete-f", "g": "discrete-g"}
"""The role names of the aggregator's F~ and a site's G~ streams (:func:`dpcore.federation.party_generator`)."""


@dataclass(frozen=True, kw_only=True)
class RingSum:
    """One stage's aggregate of the integer variant: the exact integer sum over the survivors of a~_s + G~_s
    (int64, unique entries of the dense statistic), the ring's bits, and the aggregate as the round uses it."""

    exact: np.ndarray
    bits: int
    aggregate: np.ndarray


def stage_design(design: NoiseDesign, statistic: str, sensitivities: np.ndarray, dim: int, sizes: Sequence[int],
                 sigma2: float | None) -> DiscreteDesign:
    """The discrete design of one stage (docs/math/discrete.md, "What a real run calls", 1.): for the unique entries
    of the dense ``statistic`` of D = ``dim``, bounded by :func:`~dpcore.privacy.sensitivity.statistic_bound`, from
    at most max N_s + D terms. Raises InputError (with the reason) when no ring of 64 bits holds it."""
    return discrete_design(design, sensitivities, statistic_entries(statistic, dim),
                           value_bound=statistic_bound(statistic, sigma2), terms=int(max(sizes)) + int(dim))


def ring_draw(law: DiscreteGaussianLaw | None, rng: np.random.Generator, n_sites: int, size: int) -> np.ndarray:
    """``size`` draws of one term (int64), block by block from one stream (zeros for an absent term)."""
    parts = [term_draw(law, rng, c1 - c0) for c0, c1 in blocks(n_sites, size)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def ring_site_draw(seed: bytes, dd: DiscreteDesign, index: int) -> tuple[np.ndarray, np.ndarray]:
    """Site ``index``'s w~ from its noise seed (ChaCha20 keyed by it): (its ring element for the secure sum, uint64;
    the integers, int64)."""
    own = ring_draw(dd.laws.w[index], secure_rng(seed), dd.n_sites, dd.entries)
    return own.view(np.uint64), own


def ring_secure_sum(shares: Sequence[np.ndarray], dd: DiscreteDesign) -> np.ndarray:
    """W~ from the sites' masked shares (or their ring elements): their sum mod 2^64 read on the sum's ring, refused
    beyond its bound (int64)."""
    total = np.zeros(dd.entries, dtype=np.uint64)
    for share in shares:
        total += np.asarray(share, dtype=np.uint64)
    return ring_decode(total, dd.sum_bits, dd.sum_bound)


def ring_site_term(own: np.ndarray, total: np.ndarray, dd: DiscreteDesign, index: int) -> np.ndarray:
    """E~_s = A w~_s - a_s W~ (int64)."""
    return zero_sum_term(own, total, dd, index)


def ring_release(statistic: np.ndarray, e: np.ndarray, f: np.ndarray, g: np.ndarray, dd: DiscreteDesign,
                 index: int) -> np.ndarray:
    """y_s = a~_s + E~_s + F~_s + G~_s mod 2^b (uint64), the statistic encoded once (refused beyond its bound)."""
    return site_message(encode(statistic, dd, index), e, f, g, dd.ring_bits)


def ring_release_problem(values: np.ndarray, dd: DiscreteDesign) -> str | None:
    """Why an unmasked release is not an element of the stage's ring (entries below 2^b), or None."""
    values = np.asarray(values, dtype=np.uint64)
    largest = int(np.max(values, initial=0))
    if largest >> dd.ring_bits:
        return (f"an entry of {largest:,} is not an element of the ring of integers mod 2^{dd.ring_bits} the "
                "design's releases travel on")
    return None


def ring_aggregate(releases: Sequence[np.ndarray], f: Sequence[np.ndarray], missing: Sequence[np.ndarray],
                   dd: DiscreteDesign, survivors: Sequence[int]) -> RingSum:
    """The aggregator: sum over the survivors of (y_s - F~_s) plus every dropped site's E~_v, mod 2^b, decoded once
    (InputError beyond the design's no-wrap bound: a value wrapped or a party sent something else): the exact sum of
    the survivors' a~_s + G~_s, divided by gamma and, when a site is missing, by the survivors' weight (their pooled
    statistic, as :func:`dpcore.federation.recovered_aggregate`)."""
    negated = [-np.asarray(x, dtype=np.int64) for x in f]
    exact = ring_decode(ring_sum([*releases, *negated, *missing], dd.ring_bits), dd.ring_bits, dd.ring_bound)
    value = exact.astype(float) / dd.scale
    if missing:
        value /= math.fsum(float(dd.design.weights[i]) for i in survivors)
    return RingSum(exact=exact, bits=dd.ring_bits, aggregate=value)

