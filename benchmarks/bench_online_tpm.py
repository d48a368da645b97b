"""Peak memory and time of three ways to decompose the whitened LDA third moment (K = 5, N = 5,000 documents of
50 words, alpha_0 = 1): the batch dense path, the batch projected path and the online tensor power method of
paper 001 (Algorithm 2).

Run: ``.venv/bin/python benchmarks/bench_online_tpm.py [--dims 100 1000 5000] [--threads 1]``.

* dense: M2_hat (D x D), whitening, the dense M3_hat (D^3, only for D <= 60 here: dpcore.lda.moments allows no
  more: dpcore.limits.MAX_DENSE_M3_DIM; the D^3 array is the point), projection, robust tensor power method;
* projected: M2_hat (D x D), whitening, M3_hat(W, W, W) from the counts (K^3), robust tensor power method;
* online: whitening from products M2_hat v (Lanczos, no D x D array), then Algorithm 2 reading all documents at
  every iteration (the exact power method).

"Peak" is the tracemalloc peak of the Python/numpy allocations made by the method, after the corpus (sparse
counts) exists; every case runs in its own subprocess. Time is wall-clock. BLAS threads default to 1 (see
bench_otd.py). Not a test: it prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASE = r"""
import json, sys, time, tracemalloc
import numpy as np
sys.path.insert(0, {root!r})
from dpcore.lda.corpus import make_lda_model, sample_lda_corpus
from dpcore.lda.moments import lda_m2, lda_m3_dense, lda_m3_projected, prepare_counts
from dpcore.lda.recovery import eigen_whitening
from dpcore.lda.online import lda_oracle, lda_streaming_whitening
from dpcore.tensor import multilinear, online_tensor_power_method, tensor_power_method
dim, method, k = {dim}, {method!r}, 5
model = make_lda_model(dim, k, np.random.default_rng(1), alpha0=1.0)
counts = prepare_counts(sample_lda_corpus(model, 5000, np.random.default_rng(2), doc_length=50))
tracemalloc.start()
start = time.perf_counter()
if method == "online":
    wh = lda_streaming_whitening(counts, k, 1.0)
    result = online_tensor_power_method(lda_oracle(counts, wh.w, 1.0), np.random.default_rng(3))
else:
    wh = eigen_whitening(lda_m2(counts, 1.0), k, noisy=False)
    tensor = (multilinear(lda_m3_dense(counts, 1.0), wh.w) if method == "dense"
              else lda_m3_projected(counts, 1.0, wh.w))
    result = tensor_power_method(tensor, k, np.random.default_rng(3))
seconds = time.perf_counter() - start
_, peak = tracemalloc.get_traced_memory()
print(json.dumps({{"seconds": seconds, "peak": peak, "lambda_max": float(result.eigenvalues.max())}}))
"""


def run_case(dim: int, method: str, threads: int) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", CASE.format(root=str(ROOT), dim=dim, method=method)],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _mib(n: float) -> str:
    return f"{n / 2**20:9.2f} MiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[50, 1000, 5000])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    print(f"{'D':>6} {'method':>10} {'time':>9} {'peak memory':>14} {'D x D float64':>14} {'lambda_max':>11}")
    for dim in args.dims:
        for method in ("dense", "projected", "online"):
            if method == "dense" and dim > 60:
                print(f"{dim:>6} {method:>10} {'-':>9} {'(D^3 = ' + format(dim**3 * 8 / 2**30, '.1f') + ' GiB)':>14}")
                continue
            r = run_case(dim, method, args.threads)
            print(f"{dim:>6} {method:>10} {r['seconds']:8.2f}s {_mib(r['peak']):>14} {_mib(8 * dim * dim):>14} "
                  f"{r['lambda_max']:11.4f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
