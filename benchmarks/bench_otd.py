"""Time and peak memory of one capeAGN run on STM (K = 10, S = 5, 2,000 documents per site) for D = 50, 500, 5,000.

Run: ``.venv/bin/python benchmarks/bench_otd.py [--dims 50 500 5000] [--threads 1]``.

Each case runs in its own subprocess, so the peak resident set size (ru_maxrss) belongs to that case alone;
"RSS before" is the process after imports and data generation, so the difference is what the run added.
The dense path is measured where its arrays fit the default 1 GiB memory budget; the projected path always.
Target (issue 4): D = 5,000 on the projected path in under 10 s and under 1 GiB.

BLAS threads: on a small shared machine OpenBLAS threads that busy-wait for a busy core can make small
matrix products 100x slower, so the subprocesses use ``--threads`` BLAS threads (default 1).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 10.0
TARGET_BYTES = 2**30

CASE = r"""
import json, resource, sys, time
import numpy as np
sys.path.insert(0, {root!r})
from dpcore.scenario import scenario_from_dict
from dpcore.agn import OtdSettings, SyntheticSpec, run_algorithm, synthetic_problem
from dpcore.tensor import WhiteningError
from dpcore.seeding import run_rng
dim, path = {dim}, {path!r}
sites = [{{"name": f"s{{i}}", "n": 2000, "eps": 1.0, "delta": 0.01}} for i in range(5)]
scenario = scenario_from_dict({{"sites": sites}})
model = SyntheticSpec(kind="stm", dim=dim, k=10).model(np.random.default_rng(1))
start = time.perf_counter()
problem = synthetic_problem(model, scenario.sizes, np.random.default_rng(2))
data_seconds = time.perf_counter() - start
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
start = time.perf_counter()
status = "ok"
try:
    run_algorithm("cape", problem, scenario, OtdSettings(path=path), run_rng(0, 0, "cape", "otd"))
except WhiteningError:
    status = "whitening failed"
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"seconds": seconds, "data_seconds": data_seconds, "rss_before": before, "rss_peak": peak,
                  "status": status}}))
"""


def run_case(dim: int, path: str, threads: int) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    code = CASE.format(root=str(ROOT), dim=dim, path=path)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=1800)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from dpcore.cli.table import table
    from dpcore.limits import DEFAULT_MEMORY_BUDGET
    from dpcore.tensor import choose_path
    from dpcore.validation import InputError

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[50, 500, 5000], help="dimensions D to measure")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads in each case (default 1)")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"capeAGN, STM, K = 10, S = 5, N_s = 2,000, eps = 1, delta = 0.01; {args.threads} BLAS thread(s); "
          f"{os.cpu_count()} CPUs, load average {load:.1f}")
    rows = []
    for dim in args.dims:
        for path in ("dense", "projected"):
            try:
                choose_path(path, dim, 10, 5, DEFAULT_MEMORY_BUDGET)
            except InputError:
                rows.append([dim, path, "-", "-", "-", "-", "does not fit the 1 GiB budget"])
                continue
            r = run_case(dim, path, args.threads)
            if "error" in r:
                rows.append([dim, path, "-", "-", "-", "-", r["error"][:60]])
                continue
            ok = r["seconds"] < TARGET_SECONDS and r["rss_peak"] < TARGET_BYTES
            note = r["status"] + (("; target met" if ok else "; TARGET MISSED") if dim == 5000 and path == "projected"
                                  else "")
            rows.append([dim, path, f"{r['seconds']:.2f}", f"{r['data_seconds']:.2f}", f"{r['rss_before'] / 2**20:.0f}",
                         f"{r['rss_peak'] / 2**20:.0f}", note])
            print(f"  D = {dim}, {path}: {r['seconds']:.2f} s, peak RSS {r['rss_peak'] / 2**20:.0f} MiB", flush=True)
    print(table(["D", "path", "run s", "data s", "RSS before MiB", "peak RSS MiB", "note"], rows))
    print(f"target: D = 5000 projected under {TARGET_SECONDS:g} s and under {TARGET_BYTES / 2**30:g} GiB peak")


if __name__ == "__main__":
    main()
