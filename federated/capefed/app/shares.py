"""The seeds every site secret-shares, and the bytes they travel in, stated once (docs/federated.md, "Masked releases
and one agreed survivor set").

Per stage each site s holds a **self-mask seed** m_s (32 fresh bytes from the operating system; its release travels
plus the self-mask, :func:`self_mask`) and, helper-free, its **noise seed** n_s (``dpcore.federation.noise_seed``;
its w_s is drawn from it). Both are shared t-of-S with Shamir's scheme over GF(2^128) (pycryptodome's
``Crypto.Protocol.SecretSharing.Shamir``; a 32-byte seed is two 16-byte secrets shared with the same x), t =
``RoundPlan.threshold``. The holder of share x is the site at position x - 1 of the plan's sorted names; a site keeps
its own share of its own seeds.

Byte layout (every length fixed; nothing else is ever in these messages):

* a **share**, SHARE_BYTES = 33: ``x`` (1 byte, 1..S) | share of the seed's bytes 0..15 (16) | of bytes 16..31 (16);
* a **set-up message** from site s to site r, before HPKE sealing to r's round key, per stage:
  helper-free ``masked W share`` (8 * size bytes, little-endian uint64) | r's share of n_s (33) | r's share of m_s
  (33); helper variant: r's share of m_s (33) only;
* the **held shares** a site keeps in its node state from its set-up to its reveal, per stage, HELD_BYTES = 66 per
  site of the plan, in the plan's order: the share of that site's n_s it holds (33 zero bytes with a helper) | of its
  m_s (33); its own entry holds its own shares;
* a **commitment** to a seed, 32 bytes: SHA-256 of ``capefed-seed-v1`` | kind | round | stage | site | seed, each part
  length-prefixed (8 bytes, big-endian). A site signs its commitments in its set-up answer; the aggregator checks every
  seed it rebuilds against them, so a wrong share cannot silently change a result;
* a **self-mask**: the first ``size`` 64-bit words of ChaCha20 keyed by m_s (``dpcore.seeding.secure_rng``), added to
  the encoded release mod 2^64.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence

import numpy as np
from Crypto.Protocol.SecretSharing import Shamir

from . import dp

__all__ = ["COMMITMENT_BYTES", "HELD_BYTES", "KINDS", "SEED_BYTES", "SHARE_BYTES", "ShareError", "combine",
           "commitment", "held_by", "held_pair", "mask", "new_seed", "pack_held", "pack_setup", "parse_setup",
           "self_mask", "setup_bytes", "share_index", "split", "unmask", "unpack_held"]

SEED_BYTES = 32
SHARE_BYTES = 1 + 16 + 16
HELD_BYTES = 2 * SHARE_BYTES
COMMITMENT_BYTES = 32
KINDS = ("mask", "noise")
"""What a seed is for: the self-mask of a release, or the noise term (helper-free)."""
_HALF = 16


class ShareError(ValueError):
    """A share, set-up message or seed that is malformed or does not rebuild what was committed to."""


def new_seed() -> bytes:
    """A fresh self-mask seed (256 bits from the operating system)."""
    return secrets.token_bytes(SEED_BYTES)


def split(seed: bytes, threshold: int, count: int) -> list[bytes]:
    """``count`` shares of ``seed`` (t-of-count); share i (0-based) carries x = i + 1."""
    if len(seed) != SEED_BYTES or not 1 <= threshold <= count <= 255:
        raise ShareError(f"cannot share a {len(seed)}-byte seed {threshold}-of-{count}")
    halves = [Shamir.split(threshold, count, seed[i:i + _HALF]) for i in (0, _HALF)]
    return [bytes([x]) + a + b for (x, a), (_, b) in zip(*halves, strict=True)]


def share_index(share: bytes) -> int:
    """The 0-based plan position of the holder of ``share``."""
    if not isinstance(share, bytes) or len(share) != SHARE_BYTES or share[0] == 0:
        raise ShareError(f"a share has {SHARE_BYTES} bytes and x >= 1")
    return share[0] - 1


def held_by(share: object, index: int) -> bool:
    """Whether ``share`` is a well-formed share held by the site at 0-based plan position ``index``."""
    return isinstance(share, bytes) and len(share) == SHARE_BYTES and share[0] == index + 1


def combine(shares: Sequence[bytes], threshold: int) -> bytes:
    """The seed from at least ``threshold`` shares with distinct x (the first ``threshold`` by x are used)."""
    by_x = {}
    for share in shares:
        by_x.setdefault(share_index(share), share)
    if len(by_x) < threshold:
        raise ShareError(f"{len(by_x)} distinct share(s); {threshold} are needed")
    chosen = [by_x[x] for x in sorted(by_x)[:threshold]]
    halves = [Shamir.combine([(s[0], s[1 + h * _HALF:1 + (h + 1) * _HALF]) for s in chosen]) for h in (0, 1)]
    return halves[0] + halves[1]


def commitment(kind: str, round_id: str, stage: str, site: str, seed: bytes) -> bytes:
    """SHA-256 of the seed, bound to what it is for (module docstring)."""
    digest = hashlib.sha256(b"capefed-seed-v1")
    for part in (kind.encode(), round_id.encode(), stage.encode(), site.encode(), seed):
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.digest()


def self_mask(seed: bytes, size: int) -> np.ndarray:
    """The self-mask of ``size`` entries: ChaCha20 words keyed by the seed."""
    return dp.secure_rng(seed).bit_generator.random_raw(size).astype(np.uint64)


def mask(encoded: np.ndarray, seed: bytes) -> np.ndarray:
    """encoded + self-mask (mod 2^64)."""
    encoded = np.asarray(encoded, dtype=np.uint64)
    return encoded + self_mask(seed, encoded.size)


def unmask(masked: np.ndarray, seed: bytes) -> np.ndarray:
    """masked - self-mask (mod 2^64)."""
    masked = np.asarray(masked, dtype=np.uint64)
    return masked - self_mask(seed, masked.size)


def setup_bytes(size: int, helper_free: bool) -> int:
    """Length of a set-up message before sealing."""
    return (8 * size + 2 * SHARE_BYTES) if helper_free else SHARE_BYTES


def pack_setup(masked_w: np.ndarray | None, noise_share: bytes | None, mask_share: bytes) -> bytes:
    """A set-up message (module docstring): helper-free with the masked W share and the noise-seed share."""
    if masked_w is None:
        return mask_share
    return np.asarray(masked_w, dtype="<u8").tobytes() + noise_share + mask_share


def parse_setup(plain: bytes, size: int, helper_free: bool) -> tuple[np.ndarray | None, bytes | None, bytes]:
    """(masked W share or None, noise-seed share or None, self-mask-seed share) of a set-up message, every length
    checked."""
    if len(plain) != setup_bytes(size, helper_free):
        raise ShareError(f"a set-up message holds {len(plain)} bytes, expected {setup_bytes(size, helper_free)}")
    if not helper_free:
        share_index(plain)
        return None, None, plain
    masked = np.frombuffer(plain[: 8 * size], dtype="<u8").astype(np.uint64)
    noise, own = plain[8 * size: 8 * size + SHARE_BYTES], plain[8 * size + SHARE_BYTES:]
    share_index(noise)
    share_index(own)
    return masked, noise, own


def held_pair(noise_share: bytes | None, mask_share: bytes) -> bytes:
    """One site's entry of the held shares (module docstring): its noise-seed share (zeros with a helper) | its
    self-mask-seed share."""
    noise = noise_share or bytes(SHARE_BYTES)
    if len(noise) != SHARE_BYTES or len(mask_share) != SHARE_BYTES:
        raise ShareError(f"a held pair is two {SHARE_BYTES}-byte shares")
    return noise + mask_share


def pack_held(pairs: Sequence[bytes]) -> bytes:
    """The held shares of a stage from every plan site's :func:`held_pair`, in the plan's order."""
    if any(len(p) != HELD_BYTES for p in pairs):
        raise ShareError(f"every held pair has {HELD_BYTES} bytes")
    return b"".join(pairs)


def unpack_held(held: bytes, count: int) -> list[tuple[bytes, bytes]]:
    """(noise-seed share, self-mask-seed share) per plan site of the held shares of ``count`` sites (the noise share
    is zeros with a helper)."""
    if len(held) != count * HELD_BYTES:
        raise ShareError(f"the held shares of {count} sites are {count * HELD_BYTES} bytes, not {len(held)}")
    pairs = [held[i * HELD_BYTES:(i + 1) * HELD_BYTES] for i in range(count)]
    return [(p[:SHARE_BYTES], p[SHARE_BYTES:]) for p in pairs]
