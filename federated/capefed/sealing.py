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

__all__ = ["KEY_BYTES", "OVERHEAD_BYTES", "SealError", "new_key_pair", "open_array", "open_bytes", "pair_key",
           "seal_array", "seal_bytes", "seal_context"]

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


def seal_context(round_id: str, stage: str, site: str) -> bytes:
    """The HPKE ``info`` a share is bound to: the round (whose id the aggregator makes unique per run), the stage
    and the site."""
    return "\x1f".join(("capefed-share-v1", round_id, stage, site)).encode()


def seal_array(values: np.ndarray, public_key: bytes, context: bytes) -> bytes:
    """Encrypt a 1-d float64 array (little-endian bytes) to ``public_key``."""
    if len(public_key) != KEY_BYTES:
        raise SealError(f"a site public key has {KEY_BYTES} bytes (got {len(public_key)})")
    plain = np.ascontiguousarray(values, dtype="<f8").tobytes()
    return _SUITE.encrypt(plain, X25519PublicKey.from_public_bytes(public_key), info=context)


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
    """Encrypt bytes to ``public_key`` (HPKE base mode, bound to ``context``)."""
    if len(public_key) != KEY_BYTES:
        raise SealError(f"a public key has {KEY_BYTES} bytes (got {len(public_key)})")
    return _SUITE.encrypt(plain, X25519PublicKey.from_public_bytes(public_key), info=context)


def open_bytes(sealed: bytes, private_key: bytes, context: bytes) -> bytes:
    try:
        return _SUITE.decrypt(sealed, X25519PrivateKey.from_private_bytes(private_key), info=context)
    except (InvalidTag, ValueError) as exc:
        raise SealError("a sealed message could not be opened: it was not sealed to this site's key for this "
                        "round, stage and sender, or it was altered on the way") from exc


def pair_key(private_key: bytes, other_public: bytes, context: bytes) -> bytes:
    """The 32-byte key two sites share for their pairwise masks: X25519 between one's round key and the other's,
    through HKDF-SHA256 bound to ``context`` (the round, the stage and the pair, in a fixed order)."""
    if len(other_public) != KEY_BYTES:
        raise SealError(f"a public key has {KEY_BYTES} bytes (got {len(other_public)})")
    shared = X25519PrivateKey.from_private_bytes(private_key).exchange(X25519PublicKey.from_public_bytes(other_public))
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=context).derive(shared)
