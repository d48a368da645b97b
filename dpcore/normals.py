"""The simulation's large draws of standard normals: keyed chunks, drawn on every core (docs/math/capeagn.md, "Drawing
the noise").

A stage of a message flow needs ``rows`` standard normals for each of ``size`` coordinates (e.g. the helper's, the
aggregator's and the sites' terms for every unique entry of M2: 3S rows). :func:`stage_stream` takes a 128-bit key
from the run's generator (two 64-bit words: the only numbers the stage takes from it) and cuts the coordinates into
chunks of :func:`chunk_width` columns; chunk c is ``SFC64(SeedSequence([k0, k1, c])).standard_normal((rows, w_c))``
(w_c the chunk's columns; every chunk is full but the last). So a coordinate's normals depend on the key, ``rows``,
``size`` and its index only: not on how a caller splits the coordinates into blocks (a block that starts on a chunk
boundary draws exactly its own chunks), nor on how many threads draw them, nor on eps (common random numbers).

Threads: :func:`map_chunks` hands the chunks of one call to :func:`draw_threads` threads (numpy releases the GIL
while it fills an array), each chunk written to its own part of the output, so one thread and eight give the same
bytes. A worker process of :mod:`dpcore.workers` draws on one thread (its siblings have the other cores).

SFC64 draws normals about 15% faster than PCG64 (numpy's ziggurat spends most of its time outside the bit
generator); neither is cryptographically secure, which a simulation does not need (runs across real processes draw
from ChaCha20: :func:`dpcore.seeding.secure_party_rng`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from .limits import MAX_DRAW_THREADS

__all__ = ["CHUNK_NORMALS", "NormalStream", "available_cpus", "chunk_width", "draw_threads", "map_chunks",
           "set_draw_threads", "stage_stream"]

CHUNK_NORMALS = 1 << 17
"""Standard normals per chunk (1 MiB of float64): large enough that making its generator (about 20 us) is a few
percent of drawing it, small enough that a chunk's arithmetic stays in the core's cache."""
_MIN_WIDTH = 16
_KEY_BOUND = 1 << 63

T = TypeVar("T")
_THREADS: int | None = None
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def chunk_width(rows: int) -> int:
    """Columns (coordinates) per chunk for ``rows`` normals per coordinate: CHUNK_NORMALS // rows, at least 16."""
    return max(_MIN_WIDTH, CHUNK_NORMALS // max(int(rows), 1))


@dataclass(frozen=True)
class NormalStream:
    """``rows`` x ``size`` standard normals of one stage, drawn chunk by chunk from generators keyed by ``key`` and
    the chunk's index (module docstring)."""

    key: tuple[int, int]
    rows: int
    size: int

    @property
    def width(self) -> int:
        return chunk_width(self.rows)

    @property
    def chunks(self) -> int:
        return -(-self.size // self.width)

    def bounds(self, chunk: int) -> tuple[int, int]:
        """The columns [start, stop) of chunk ``chunk``."""
        start = chunk * self.width
        return start, min(start + self.width, self.size)

    def chunk(self, chunk: int) -> np.ndarray:
        """The normals of chunk ``chunk`` (rows x its columns)."""
        start, stop = self.bounds(chunk)
        generator = np.random.Generator(np.random.SFC64(np.random.SeedSequence([*self.key, chunk])))
        return generator.standard_normal((self.rows, stop - start))

    def columns(self, start: int, stop: int) -> np.ndarray:
        """The normals of columns [start, stop) (rows x (stop - start)): the chunks they touch, drawn whole and cut."""
        first, last = start // self.width, -(-stop // self.width)
        if last - first == 1 and self.bounds(first) == (start, stop):
            return self.chunk(first)
        out = np.empty((self.rows, stop - start))

        def fill(chunk: int) -> None:
            lo, hi = self.bounds(chunk)
            a, b = max(lo, start), min(hi, stop)
            out[:, a - start:b - start] = self.chunk(chunk)[:, a - lo:b - lo]

        map_chunks(fill, range(first, last))
        return out


def stage_stream(rng: np.random.Generator, rows: int, size: int) -> NormalStream:
    """The stream of one stage: a key of two 63-bit words from ``rng`` (the only draws taken from it)."""
    key = rng.integers(0, _KEY_BOUND, size=2, dtype=np.int64)
    return NormalStream((int(key[0]), int(key[1])), int(rows), int(size))


def set_draw_threads(threads: int | None) -> None:
    """Threads :func:`map_chunks` uses in this process (None: the CPUs this process may use, up to
    MAX_DRAW_THREADS); a worker process of :mod:`dpcore.workers` sets 1."""
    global _THREADS
    _THREADS = None if threads is None else max(1, min(int(threads), MAX_DRAW_THREADS))


def available_cpus() -> int:
    """CPUs this process may run on (the draws' threads here, :mod:`dpcore.workers`' processes there)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def draw_threads() -> int:
    """Threads for one call of :func:`map_chunks` (:func:`set_draw_threads`)."""
    if _THREADS is not None:
        return _THREADS
    return max(1, min(available_cpus(), MAX_DRAW_THREADS))


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(MAX_DRAW_THREADS, thread_name_prefix="dpcore-draw")
        return _POOL


def map_chunks(work: Callable[[int], T], chunks: Sequence[int]) -> list[T]:
    """``work(c)`` for every chunk index, on :func:`draw_threads` threads when there is more than one chunk; results
    in the order of ``chunks``. ``work`` must write only its own chunk's part of any shared output."""
    threads = min(draw_threads(), len(chunks))
    if threads <= 1:
        return [work(c) for c in chunks]
    chunks = list(chunks)
    groups = [chunks[i::threads] for i in range(threads)]  # fixed groups: no scheduling per chunk
    results: dict[int, T] = {}

    def run(group: list[int]) -> None:
        for c in group:
            results[c] = work(c)

    for future in [_pool().submit(run, group) for group in groups]:
        future.result()
    return [results[c] for c in chunks]
