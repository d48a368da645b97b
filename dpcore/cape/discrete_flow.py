"""One release of a discrete design, party by party (docs/math/discrete.md, "The flow"): what a site encodes, draws
and sends, what the aggregator sums on the ring and decodes once. A real run calls the same party functions with its
own streams (a site's from its ChaCha20 generator, :func:`dpcore.seeding.secure_party_rng`); a simulation keys every
(term, site) stream from one run generator (:func:`keyed_streams`).

Site s (``s`` its index): a~_s = :func:`encode` (round(gamma mu_s a_s), checked against the ring's bound);
w~_s, g~_s from its streams ("w", "g"); W~ = the secure sum of the w~ on the ring of ``sum_bits`` (:func:`ring_sum`,
masks cancel: the sum is exact); E~_s = A w~_s - a_s W~ (:func:`zero_sum_term`); F~_s from the aggregator's stream
("f"); it sends y_s = a~_s + E~_s + F~_s + G~_s mod 2^b (:func:`site_message`). The aggregator sums
sum_s (y_s - F~_s) mod 2^b = sum_s a~_s + sum_s G~_s exactly (sum_s E~_s = 0 on the integers), reads it as a signed
integer, refuses it beyond the ring's bound (a wrap, or a party that sent something else) and decodes once, divided
by gamma (:func:`aggregate`).

Every term is drawn in blocks of entries (:func:`blocks`: a function of S and n only), each block of each (term, site)
from that stream in order, so the full flow (:func:`release_messages`) and the aggregate alone (:func:`release_sum`,
which draws only the g: the e and f cancel exactly) give the same integers.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..privacy.discrete_gaussian import DiscreteGaussianLaw, sample_discrete_gaussian
from ..seeding import secure_party_rng
from ..validation import InputError
from .discrete import TAIL_SIGMAS, DiscreteDesign

__all__ = ["BLOCK_NUMBERS", "TERMS", "DiscreteMessages", "DiscreteRelease", "TermStreams", "aggregate", "blocks",
           "encode", "keyed_streams", "release_messages", "release_sum", "ring_decode", "ring_sum", "secure_streams",
           "site_message", "term_draw", "zero_sum_term"]

TERMS = ("w", "f", "g")
"""The drawn terms: the sites' w~ (making the zero-sum E~), the aggregator's F~, the sites' own G~."""
BLOCK_NUMBERS = 1 << 20
"""Integers per term and block over all sites (S x block width): 8 MiB per term, whatever S and n."""

TermStreams = Callable[[str, int], np.random.Generator]
"""``streams(term, site)``: the generator of one term of one site (the same object on every call)."""


def keyed_streams(rng: np.random.Generator) -> TermStreams:
    """A simulation's streams: one key from ``rng``, then PCG64(SeedSequence([key, crc32(term), site])) per (term,
    site), made once and kept, so a term's draws do not depend on which other terms are drawn. The key is the bit
    pattern of two standard normals, the one kind of draw the PCA sweep's replay of a run generator records
    (:class:`dpcore.pca.sweep.ReplayNormals`): every grid point of a sweep then gets the same streams."""
    key = [int(x) for x in np.asarray(rng.standard_normal(2), dtype=np.float64).view(np.uint64)]
    made: dict[tuple[str, int], np.random.Generator] = {}

    def streams(term: str, site: int) -> np.random.Generator:
        if (term, site) not in made:
            made[(term, site)] = np.random.default_rng([*key, zlib.crc32(term.encode()), int(site)])
        return made[(term, site)]

    return streams


def secure_streams(secrets: dict[str, bytes | int | str], names: tuple[str, ...], *, run: int, algorithm: str,
                   stage: str) -> TermStreams:
    """A real run's streams: term "w" and "g" of site s from site s's secret, "f" from the aggregator's
    (``secrets["aggregator"]``), each :func:`dpcore.seeding.secure_party_rng` keyed by (run, algorithm, stage, role
    "discrete-<term>", site name): ChaCha20, one independent stream per (term, site), the same whether the parties
    share a process or not."""
    made: dict[tuple[str, int], np.random.Generator] = {}

    def streams(term: str, site: int) -> np.random.Generator:
        if (term, site) not in made:
            owner = "aggregator" if term == "f" else names[site]
            made[(term, site)] = secure_party_rng(secrets[owner], run, algorithm, stage, f"discrete-{term}",
                                                  names[site])
        return made[(term, site)]

    return streams


def blocks(n_sites: int, size: int) -> list[tuple[int, int]]:
    """Consecutive blocks [c0, c1) of the ``size`` entries, at most BLOCK_NUMBERS // S wide."""
    width = max(1, BLOCK_NUMBERS // max(n_sites, 1))
    return [(c0, min(c0 + width, size)) for c0 in range(0, size, width)]


def _mask(bits: int) -> np.uint64:
    return np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(2**64 - 1)


def encode(values: np.ndarray, dd: DiscreteDesign, site: int) -> np.ndarray:
    """a~_s = round(gamma mu_s a_s) (int64), refused when an entry exceeds the bound the ring was sized for."""
    scaled = np.rint(np.asarray(values, dtype=float) * dd.site_scale(site))
    limit = np.floor(dd.site_scale(site) * (dd.value_bound + dd.float_error)) + 1
    if scaled.size and (not np.all(np.isfinite(scaled)) or float(np.max(np.abs(scaled))) > limit):
        raise InputError(f"site {dd.design.names[site]}: a statistic entry exceeds the bound |a| <= "
                         f"{dd.value_bound:g} the ring was sized for", "data")
    return scaled.astype(np.int64)


def term_draw(law: DiscreteGaussianLaw | None, rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` draws of one term (int64; zeros for an absent term), refused beyond TAIL_SIGMAS standard deviations
    (probability below 2 exp(-800): the ring's bound counts on it)."""
    if law is None:
        return np.zeros(size, dtype=np.int64)
    draws = sample_discrete_gaussian(law, size, rng)
    limit = TAIL_SIGMAS * (int(np.sqrt(float(law.sigma2))) + 1)
    if draws.size and int(np.max(np.abs(draws))) > limit:
        raise InputError("a noise draw beyond 40 standard deviations: refused (the ring's bound counts on it)")
    return draws


def ring_sum(parts: list[np.ndarray], bits: int) -> np.ndarray:
    """sum of int64 (or ring) arrays mod 2^bits, as uint64 (two's complement wraps are exact mod 2^64)."""
    total = np.zeros(parts[0].shape, dtype=np.uint64)
    for part in parts:
        total += np.asarray(part).astype(np.int64, copy=False).view(np.uint64)
    return total & _mask(bits)


def ring_decode(total: np.ndarray, bits: int, bound: int) -> np.ndarray:
    """A ring element mod 2^bits read as a signed integer in (-2^(bits-1), 2^(bits-1)] (int64), refused when beyond
    ``bound`` (the checked bound: the sum wrapped, or a party sent what it should not)."""
    values = np.asarray(total, dtype=np.uint64) & _mask(bits)
    if bits == 64:
        signed = values.view(np.int64)
    else:  # sign extension: (v xor h) - h with h = 2^(bits-1)
        half = np.int64(1 << (bits - 1))
        signed = (values.astype(np.int64) ^ half) - half
    if signed.size and int(np.max(np.abs(signed))) > bound:
        raise InputError(f"the ring sum exceeds its bound {bound:,}: a value wrapped or a party sent something else")
    return signed


def zero_sum_term(own: np.ndarray, total: np.ndarray, dd: DiscreteDesign, site: int) -> np.ndarray:
    """E~_s = A w~_s - a_s W~ (int64 ring values; sum_s E~_s = 0 exactly)."""
    shares = dd.laws.shares
    out = np.int64(sum(shares)) * np.asarray(own, dtype=np.int64) - np.int64(shares[site]) * np.asarray(
        total, dtype=np.int64)
    return out


def site_message(encoded: np.ndarray, e: np.ndarray, f: np.ndarray, g: np.ndarray, bits: int) -> np.ndarray:
    """y_s = a~_s + E~_s + F~_s + G~_s mod 2^bits (uint64)."""
    return ring_sum([encoded, e, f, g], bits)


def aggregate(messages: list[np.ndarray], f: list[np.ndarray], dd: DiscreteDesign) -> tuple[np.ndarray, np.ndarray]:
    """The aggregator: sum_s (y_s - F~_s) mod 2^b, decoded once. Returns (the exact integer sum sum_s a~_s + G~_s,
    int64; the aggregate in statistic units, that sum / gamma)."""
    negated = [(-np.asarray(x, dtype=np.int64)) for x in f]
    exact = ring_decode(ring_sum([*messages, *negated], dd.ring_bits), dd.ring_bits, dd.ring_bound)
    return exact, exact.astype(float) / dd.scale


@dataclass(frozen=True, kw_only=True)
class DiscreteRelease:
    """One discrete release: the aggregate (statistic units, per entry), the exact integer sum it was decoded from,
    and the ring's width (bits per value)."""

    aggregate: np.ndarray
    exact: np.ndarray
    bits: int


@dataclass(frozen=True, kw_only=True)
class DiscreteMessages:
    """Everything that travels in one discrete release (S x n each): the sites' w~, the secure sum W~ (n), E~, the
    aggregator's F~, the sites' G~ and the messages y_s (ring values), with the release."""

    w: np.ndarray
    total_w: np.ndarray
    e: np.ndarray
    f: np.ndarray
    g: np.ndarray
    messages: np.ndarray
    release: DiscreteRelease


def _check(values: np.ndarray, dd: DiscreteDesign) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or values.shape[0] != dd.n_sites or values.shape[1] != dd.entries:
        raise InputError(f"the discrete design is for {dd.n_sites} sites of {dd.entries} entries (got the shape "
                         f"{values.shape})", "design")
    return values


def release_messages(values: np.ndarray, dd: DiscreteDesign, streams: TermStreams) -> DiscreteMessages:
    """The full flow for the sites' statistics ``values`` (S x n, statistic units), keeping every message."""
    values = _check(values, dd)
    n_sites, size = values.shape
    terms = {name: np.zeros((n_sites, size), dtype=np.int64) for name in ("w", "e", "f", "g")}
    messages = np.zeros((n_sites, size), dtype=np.uint64)
    total_w = np.zeros(size, dtype=np.int64)
    exact = np.zeros(size, dtype=np.int64)
    for c0, c1 in blocks(n_sites, size):
        width = c1 - c0
        for s in range(n_sites):
            terms["w"][s, c0:c1] = term_draw(dd.laws.w[s], streams("w", s), width)
            terms["f"][s, c0:c1] = term_draw(dd.laws.f[s], streams("f", s), width)
            terms["g"][s, c0:c1] = term_draw(dd.laws.g[s], streams("g", s), width)
        total_w[c0:c1] = ring_decode(ring_sum(list(terms["w"][:, c0:c1]), dd.sum_bits), dd.sum_bits, dd.sum_bound)
        for s in range(n_sites):
            terms["e"][s, c0:c1] = zero_sum_term(terms["w"][s, c0:c1], total_w[c0:c1], dd, s)
            messages[s, c0:c1] = site_message(encode(values[s, c0:c1], dd, s), terms["e"][s, c0:c1],
                                              terms["f"][s, c0:c1], terms["g"][s, c0:c1], dd.ring_bits)
        exact[c0:c1], _ = aggregate(list(messages[:, c0:c1]), list(terms["f"][:, c0:c1]), dd)
    release = DiscreteRelease(aggregate=exact.astype(float) / dd.scale, exact=exact, bits=dd.ring_bits)
    return DiscreteMessages(w=terms["w"], total_w=total_w, e=terms["e"], f=terms["f"], g=terms["g"],
                            messages=messages, release=release)


def release_sum(values: np.ndarray, dd: DiscreteDesign, streams: TermStreams) -> DiscreteRelease:
    """The aggregate of :func:`release_messages` from the same streams, drawing only the sites' g (the E~ and F~
    cancel exactly on the integers): sum_s a~_s + G~_s per block, checked against the ring's bound and decoded once.
    Memory: one block of S x width integers."""
    values = _check(values, dd)
    n_sites, size = values.shape
    exact = np.zeros(size, dtype=np.int64)
    for c0, c1 in blocks(n_sites, size):
        parts = []
        for s in range(n_sites):
            parts.append(encode(values[s, c0:c1], dd, s))
            parts.append(term_draw(dd.laws.g[s], streams("g", s), c1 - c0))
        exact[c0:c1] = ring_decode(ring_sum(parts, dd.ring_bits), dd.ring_bits, dd.ring_bound)
    return DiscreteRelease(aggregate=exact.astype(float) / dd.scale, exact=exact, bits=dd.ring_bits)
