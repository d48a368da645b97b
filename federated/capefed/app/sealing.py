"""Sealing the helper's noise to one site: HPKE (RFC 9180) from the ``cryptography`` library, nothing home-made.

Suite: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305, base mode (single-shot ``Suite.encrypt``):
only the holder of the site's private key can open a share, and any change to the ciphertext or to the
context it was sealed for (run, round, stage, site) makes opening fail. Each site makes a fresh key pair for
every round and sends the public half in its hello; the helper seals e_s to it and the ciphertext passes
through the SuperLink and the aggregator. The aggregator forwards the keys it received: against an aggregator
that actively swaps keys the sites' keys must be pinned out of band (see docs/federated.md).
"""

from __future__ import annotations

import numpy as np
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, hpke, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = ["KEY_BYTES", "OVERHEAD_BYTES", "SealError", "check_public_key", "new_key_pair", "open_array", "open_bytes",
           "pair_key", "seal_array", "seal_bytes", "seal_context"]

_SUITE = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.CHACHA20_POLY1305)
KEY_BYTES = 32
OVERHEAD_BYTES = 32 + 16
"""Ciphertext length minus plaintext length: the encapsulated key (32 bytes) and the AEAD tag (16 bytes)."""
_RAW = serialization.Encoding.Raw


class SealError(ValueError):
    """A sealed share could not be opened or does not hold what was expected."""


def new_key_pair() -> tuple[bytes, bytes]:
    """A fresh X25519 key pair as raw bytes (private, public), from the operating system's secure source."""
    private = X25519PrivateKey.generate()
    private_raw = private.private_bytes(_RAW, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    return private_raw, private.public_key().public_bytes(_RAW, serialization.PublicFormat.Raw)


def check_public_key(public_key: object) -> X25519PublicKey:
    """A party's X25519 round key, checked at the boundary: 32 bytes and not a point of small order. A low-order
    point (the all-zero key among them) makes every shared secret one of eight known values; X25519 with it gives the
    all-zero secret for every private key, which the library refuses, so a trial exchange with a fresh key detects
    it (RFC 7748, section 6.1). Raises SealError naming the check; a shared secret of such a key is never used."""
    if not isinstance(public_key, bytes) or len(public_key) != KEY_BYTES:
        got = len(public_key) if isinstance(public_key, bytes) else type(public_key).__name__
        raise SealError(f"a round key has {KEY_BYTES} bytes (got {got})")
    key = X25519PublicKey.from_public_bytes(public_key)
    try:
        X25519PrivateKey.generate().exchange(key)
    except ValueError as exc:
        raise SealError("the round key is a point of small order (its shared secrets would be known to anyone); a "
                        "party never seals to it or derives a key from it") from exc
    return key


def seal_context(round_id: str, stage: str, site: str, plan: str = "") -> bytes:
    """The HPKE ``info`` a share is bound to: the round (whose id the aggregator makes unique per run), the stage,
    the site and the digest of the round's plan (its settings and the sites' signed statements)."""
    return "\x1f".join(("capefed-share-v2", round_id, plan, stage, site)).encode()


def seal_array(values: np.ndarray, public_key: bytes, context: bytes) -> bytes:
    """Encrypt a 1-d float64 array (little-endian bytes) to ``public_key``."""
    return seal_bytes(np.ascontiguousarray(values, dtype="<f8").tobytes(), public_key, context)


def open_array(sealed: bytes, private_key: bytes, context: bytes, count: int) -> np.ndarray:
    """Decrypt a share sealed by :func:`seal_array` and check that it holds ``count`` finite numbers."""
    try:
        plain = _SUITE.decrypt(sealed, X25519PrivateKey.from_private_bytes(private_key), info=context)
    except (InvalidTag, ValueError) as exc:
        raise SealError("the helper's share could not be opened: it was not sealed to this site's key for this "
                        "round and stage, or it was altered on the way") from exc
    if len(plain) != 8 * count:
        raise SealError(f"the helper's share holds {len(plain) // 8} numbers, expected {count}")
    values = np.frombuffer(plain, dtype="<f8").astype(float)
    if not np.all(np.isfinite(values)):
        raise SealError("the helper's share contains non-finite numbers")
    return values


def seal_bytes(plain: bytes, public_key: bytes, context: bytes) -> bytes:
    """Encrypt bytes to ``public_key`` (HPKE base mode, bound to ``context``), a key checked by
    :func:`check_public_key`."""
    key = check_public_key(public_key)
    try:
        return _SUITE.encrypt(plain, key, info=context)
    except ValueError as exc:
        raise SealError(f"cannot seal to this round key: {exc}") from exc


def open_bytes(sealed: bytes, private_key: bytes, context: bytes) -> bytes:
    try:
        return _SUITE.decrypt(sealed, X25519PrivateKey.from_private_bytes(private_key), info=context)
    except (InvalidTag, ValueError) as exc:
        raise SealError("a sealed message could not be opened: it was not sealed to this site's key for this "
                        "round, stage and sender, or it was altered on the way") from exc


def pair_key(private_key: bytes, other_public: bytes, context: bytes) -> bytes:
    """The 32-byte key two sites share for their pairwise masks: X25519 between one's round key and the other's,
    through HKDF-SHA256 bound to ``context`` (the round, the stage and the pair, in a fixed order)."""
    try:
        shared = X25519PrivateKey.from_private_bytes(private_key).exchange(check_public_key(other_public))
    except ValueError as exc:  # SealError included: no key is derived from a low-order point
        raise SealError(f"no pairwise key with this round key: {exc}") from exc
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=context).derive(shared)
