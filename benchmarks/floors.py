"""Floors measured in the same run as a benchmark, so that its times mean something on a loaded machine.

Every time a benchmark reports is also given as a ratio to a floor of the same kind, measured in this process just
before (and, with :func:`floors`, again after) the case:

* ``eigensolve``: one float32 top-50 eigensolve of a 784 x 784 symmetric matrix (MNIST's D, Fig. 2(b)'s K), the
  dense solver every PCA algorithm uses (``dpcore.linalg.top_eigenpairs``), median of several;
* ``normals``: one million float64 standard normals from numpy's SFC64 generator (the simulation's noise draws,
  ``dpcore.normals``), median of several.

Both are one core's work (one BLAS thread). A machine twice as busy roughly doubles both a case and its floor, so
the ratio moves much less than the seconds; the load average (1 minute) is printed beside them.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one BLAS thread, as every floor is one core's work

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpcore import linalg  # noqa: E402

EIGEN_DIM, EIGEN_K = 784, 50
NORMALS = 1_000_000


@dataclass(frozen=True)
class Floors:
    """Seconds of one eigensolve and of one million normals (medians), and the load average when measured."""

    eigensolve: float
    normals: float
    load: float

    def describe(self) -> str:
        return (f"floors: one float32 top-{EIGEN_K} eigensolve at D = {EIGEN_DIM} {1e3 * self.eigensolve:.1f} ms, "
                f"one million normals {1e3 * self.normals:.1f} ms; load average {self.load:.1f} on "
                f"{os.cpu_count()} CPUs")


def load_average() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def eigensolve_matrix(seed: int = 0) -> np.ndarray:
    """A noisy second-moment-like float32 matrix: a decaying spectrum plus a symmetric Gaussian perturbation."""
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.standard_normal((EIGEN_DIM, EIGEN_DIM)))
    spectrum = 1.0 / np.arange(1, EIGEN_DIM + 1)
    noise = rng.standard_normal((EIGEN_DIM, EIGEN_DIM)) * 1e-3
    return ((basis * spectrum) @ basis.T + (noise + noise.T) / 2).astype(np.float32)


def measure_floors(repeats: int = 7) -> Floors:
    """Both floors in this process (medians of ``repeats``)."""
    matrix = eigensolve_matrix()
    eig = _median_seconds(lambda: linalg.top_eigenpairs(matrix.copy(), EIGEN_K, overwrite=True), repeats)
    generator = np.random.Generator(np.random.SFC64(0))
    out = np.empty(NORMALS)
    normals = _median_seconds(lambda: generator.standard_normal(out=out), repeats)
    return Floors(eigensolve=eig, normals=normals, load=load_average())


def ratio(seconds: float, floor: float) -> str:
    return f"{seconds / floor:.1f}x" if floor > 0 else "-"


BUSY_CODE = "while True: pass"
"""The fixed background load of a ``busy`` condition (issue 34): one process spinning on one core."""


def busy_core() -> int:
    """Start the fixed background load (:data:`BUSY_CODE`); its pid (stop it with :func:`stop_busy`). Started through a
    shell that exits at once, so it is not among the caller's descendants (whose CPU a benchmark may count)."""
    import subprocess  # noqa: PLC0415

    out = subprocess.run(["sh", "-c", f'"$0" -c "{BUSY_CODE}" >/dev/null 2>&1 & echo $!', sys.executable],
                         capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def stop_busy(pid: int) -> None:
    """Stop the background load started by :func:`busy_core`."""
    import signal  # noqa: PLC0415

    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
