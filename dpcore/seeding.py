"""Random streams of the runs: one generator per (seed, run, algorithm), keyed by the algorithm's name.

Every algorithm of a comparison or a sweep draws its noise from its own generator, seeded by
``SeedSequence([seed, run, crc32(name)])``. The stream depends on the seed, the run and the algorithm's name
only - never on eps, delta, N_s, on the other algorithms chosen, or on an algorithm's position in a table - so
adding a baseline changes no other algorithm's noise, and a sweep over eps reuses the same standard normals at
every grid point (common random numbers).

Bit generators: every family's streams use PCG64 (numpy's default, :data:`BIT_GENERATOR`) unless
:data:`FAST_BIT_GENERATORS` names another: PCA uses SFC64, which draws normals about 15% faster (a PCA run draws up to
S D(D+1)/2 = 8 million normals per noise term). A new family needs no entry. Neither is
cryptographically secure: fine for simulation and teaching, not for a deployment (docs/math/corrections.md,
item 9).

The parties of one CAPE round run party by party (:mod:`dpcore.cape.parties`, :mod:`dpcore.federation`, the
Flower app in ``federated/``) each draw from their own stream, :func:`party_rng`, keyed by (seed, run, algorithm,
stage, role, site name): the same draws whether the parties share a process or not (docs/federated.md).

Runs across real processes draw from a cryptographically secure generator instead (:func:`secure_party_rng`):
ChaCha20 (20 rounds, 256-bit key) from ``randomgen``, whose raw output is the RFC 8439 keystream (tests compare it
with the ``cryptography`` library's ChaCha20), behind numpy's ``Generator``, so every noise function takes it
unchanged. Its key is derived from the party's secret (256 fresh bits in a deployment) and the same names by keyed
BLAKE2b. The in-process simulation of a real run uses the same function with the same secrets, so the two stay
byte-identical; the dashboard's and CLI's simulations keep the fast seeded streams above.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import zlib

import numpy as np
from randomgen import ChaCha

__all__ = [
    "BIT_GENERATOR",
    "FAST_BIT_GENERATORS",
    "DATA_STREAM",
    "LDA_MODEL_STREAM",
    "LDA_REFERENCE_STREAM",
    "OTD_MODEL_STREAM",
    "OTD_REFERENCE_STREAM",
    "PCA_SPLIT_STREAM",
    "PCA_SYNTHETIC_STREAM",
    "PLANNER_SAMPLE_STREAM",
    "PLANNER_CURVE_STREAM",
    "PLANNER_CHECK_STREAM",
    "PLANNER_STUDY_STREAM",
    "PLANNER_SUBSAMPLE_STREAM",
    "SECRET_BYTES",
    "SITE_SIZES_STREAM",
    "UPLOAD_SPLIT_STREAM",
    "data_rng",
    "fresh_secret",
    "name_key",
    "party_key",
    "party_rng",
    "planner_rng",
    "run_rng",
    "secret_bytes",
    "secure_party_rng",
    "secure_rng",
    "stream_rng",
    "study_seed",
]

BIT_GENERATOR: type[np.random.BitGenerator] = np.random.PCG64
"""The bit generator of an algorithm family's streams (module docstring)."""
FAST_BIT_GENERATORS: dict[str, type[np.random.BitGenerator]] = {"pca": np.random.SFC64}
"""The families whose streams use another bit generator, for speed (module docstring)."""

DATA_STREAM = 0xDA7A
"""Third entropy word of the per-run synthetic-data stream (independent of every algorithm's noise stream)."""

# The streams drawn once per seed, each ``default_rng([seed, WORD])`` (:func:`stream_rng`); every word is defined
# here and nowhere else (docs/architecture.md, "Random streams and worker processes").
PCA_SPLIT_STREAM = 1
"""PCA: the shuffled deal of samples to sites (dpcore.pca.prepare_pca, the sweeps)."""
PCA_SYNTHETIC_STREAM = 2
"""PCA: the synthetic Gaussian data set."""
SITE_SIZES_STREAM = 3
"""The command line's skewed site sizes (Dirichlet proportions)."""
UPLOAD_SPLIT_STREAM = 0x5B117
"""Uploaded OTD or LDA data dealt out to the sites."""
OTD_MODEL_STREAM = 0x30DE1
"""The OTD ground truth (MOG or STM model) of a synthetic comparison or sweep."""
OTD_REFERENCE_STREAM = 0x4EF
"""The non-private reference run on uploaded OTD data (no ground truth)."""
LDA_MODEL_STREAM = 0x1DA
"""The LDA ground truth (topics and alpha) of a synthetic comparison, curve or sweep."""
LDA_REFERENCE_STREAM = 0x1DA4EF
"""The non-private reference run on a text corpus (no ground truth)."""
PLANNER_SAMPLE_STREAM = 0x91A4
"""The planner's reference sample of a synthetic OTD or LDA model (the data its utility curve is measured on)."""
PLANNER_CURVE_STREAM = 0x91A5C
"""The noise of the planner's utility curve: stream_rng of [seed, PLANNER_CURVE_STREAM, point, run] per point."""
PLANNER_SUBSAMPLE_STREAM = 0x91A55
"""The planner on uploaded or bundled OTD or LDA data: which of the user's samples or documents the sites hold at an
answer below all of them (a prefix of one permutation, so a smaller N holds a subset of a larger N's)."""
PLANNER_STUDY_STREAM = 0x91A57
"""The simulated studies of the planner's curve: study r draws all its data (a synthetic ground truth and samples, or
the subsample of a fixed data set) from the seed :func:`study_seed` (seed, PLANNER_STUDY_STREAM, r)."""
PLANNER_CHECK_STREAM = 0x91AC4
"""The fresh studies of the planner's check (data and noise): :func:`study_seed` (seed, PLANNER_CHECK_STREAM, r), a
stream the answer was not built from."""


def name_key(name: str) -> int:
    """crc32 of the algorithm's name: the stream key."""
    return zlib.crc32(name.encode())


def run_rng(seed: int, run: int, name: str, family: str) -> np.random.Generator:
    """The generator of algorithm ``name`` of ``family`` ("pca", "otd", "lda", ...) in run ``run``: the family's bit
    generator (:data:`FAST_BIT_GENERATORS`, else :data:`BIT_GENERATOR`) on
    ``SeedSequence([seed, run, crc32(name)])``."""
    sequence = np.random.SeedSequence([int(seed), int(run), name_key(name)])
    return np.random.Generator(FAST_BIT_GENERATORS.get(family, BIT_GENERATOR)(sequence))


def data_rng(seed: int, run: int) -> np.random.Generator:
    """The generator of one run's synthetic data: PCG64(SeedSequence([seed, run, DATA_STREAM]))."""
    return np.random.default_rng([int(seed), int(run), DATA_STREAM])


def stream_rng(seed: int, word: int) -> np.random.Generator:
    """The generator of a stream drawn once per seed: PCG64(SeedSequence([seed, word])), ``word`` one of the
    ``*_STREAM`` constants above."""
    return np.random.default_rng([int(seed), int(word)])


def planner_rng(seed: int, point: int, run: int) -> np.random.Generator:
    """The noise of one run at one grid point of the planner's utility curve: PCG64(SeedSequence([seed,
    PLANNER_CURVE_STREAM, point, run])); point -1 is a family's non-private reference run."""
    return np.random.default_rng([int(seed), PLANNER_CURVE_STREAM, int(point) + 1, int(run)])


def study_seed(seed: int, word: int, draw: int) -> int:
    """The seed of one simulated study of the planner (``word``: PLANNER_STUDY_STREAM for the curve,
    PLANNER_CHECK_STREAM for the check): the first 32-bit word of SeedSequence([seed, word, draw]), used as any run's
    seed is (its data and its noise streams)."""
    return int(np.random.SeedSequence([int(seed), int(word), int(draw)]).generate_state(1)[0])


def party_rng(seed: int, run: int, algorithm: str, stage: str, role: str, site: str | None = None
              ) -> np.random.Generator:
    """The generator of one party of a CAPE round in one stage:
    PCG64(SeedSequence([seed, run, crc32(algorithm), crc32(stage), crc32(role), crc32(site)])), the site entry only
    for per-site streams. Keyed by names, so it does not depend on which other parties or stages exist or in what
    order they are served; each party has its own ``seed`` (none at all in a deployment: docs/federated.md)."""
    key = [int(seed), int(run), name_key(algorithm), name_key(stage), name_key(role)]
    if site is not None:
        key.append(name_key(site))
    return np.random.default_rng(np.random.SeedSequence(key))


SECRET_BYTES = 32
"""Bytes of a party's secret in a real run (256 bits; at least 128 are required of a secret given as text)."""
_MIN_SECRET_HEX = 32
_CHACHA_ROUNDS = 20


def fresh_secret() -> bytes:
    """256 bits from the operating system's secure source."""
    return secrets.token_bytes(SECRET_BYTES)


def secret_bytes(secret: bytes | int | str) -> bytes:
    """A party's secret as bytes: raw bytes (16 to 64), a hexadecimal string of at least 32 digits (128 bits), or an
    integer (a demonstration's reproducible seed: as secure as the integer is unpredictable)."""
    if isinstance(secret, bytes):
        if not 16 <= len(secret) <= 64:
            raise ValueError(f"a secret has 16 to 64 bytes (got {len(secret)})")
        return secret
    if isinstance(secret, str):
        text = secret.strip().lower()
        if len(text) < _MIN_SECRET_HEX or len(text) > 128 or len(text) % 2 or any(c not in "0123456789abcdef"
                                                                                   for c in text):
            raise ValueError("a secret given as text is 32 to 128 hexadecimal digits (128 to 512 bits)")
        return bytes.fromhex(text)
    if isinstance(secret, bool) or not isinstance(secret, int) or secret < 0:
        raise ValueError(f"a seed is a non-negative integer (got {secret!r})")
    return hashlib.sha256(b"capefed-integer-seed" + str(int(secret)).encode()).digest()


def secure_rng(key: bytes) -> np.random.Generator:
    """numpy's Generator on ChaCha20 (randomgen.ChaCha, 20 rounds) with the 256-bit ``key``, counter 0."""
    if len(key) != SECRET_BYTES:
        raise ValueError(f"a ChaCha20 key has {SECRET_BYTES} bytes (got {len(key)})")
    return np.random.Generator(ChaCha(key=int.from_bytes(key, "little"), counter=0, rounds=_CHACHA_ROUNDS))


def party_key(secret: bytes | int | str, run: int, algorithm: str, stage: str, role: str,
              site: str | None = None) -> bytes:
    """BLAKE2b(key = the party's secret, message = [run, algorithm, stage, role, site]): 256 bits, keyed by names."""
    message = json.dumps([int(run), algorithm, stage, role, site], separators=(",", ":")).encode()
    return hashlib.blake2b(message, key=secret_bytes(secret), digest_size=SECRET_BYTES,
                           person=b"capefed-noise").digest()


def secure_party_rng(secret: bytes | int | str, run: int, algorithm: str, stage: str, role: str,
                     site: str | None = None) -> np.random.Generator:
    """The cryptographically secure generator of one party of a real CAPE round: :func:`secure_rng` keyed by
    :func:`party_key`, keyed by names like :func:`party_rng`."""
    return secure_rng(party_key(secret, run, algorithm, stage, role, site))
