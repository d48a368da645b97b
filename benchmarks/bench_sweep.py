"""Wall time of privacy-utility sweeps: the Fig. 2(b) preset (MNIST subset, 5 eps values, 5 algorithms, 10 runs)
and, for comparison, its quick version and an OTD preset.

Run: ``.venv/bin/python benchmarks/bench_sweep.py [--repeats 1] [--float64] [--presets NAME ...]``.

"total" is what a user waits for from a cold start: loading and preprocessing the data, splitting it into sites,
the site and pooled matrices (the "prepare" column) and every run. "eigensolver" is the time spent inside
``dpcore.linalg.top_eigenpairs`` (wrapped with a timer), which dominates PCA sweeps. ``--float64`` adds the
Fig. 2(b) preset with the float64 eigensolver (bit-identical to ``python -m dpcore pca``; about 1.5x slower).
Target (issue 5): Fig. 2(b) in under 30 s with one BLAS thread.

BLAS threads: one unless OPENBLAS_NUM_THREADS is set (see bench_pca.py for why).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.timing import EigenTimer  # noqa: E402
from dpcore import experiments  # noqa: E402
from dpcore.cli.table import table  # noqa: E402
from dpcore.experiments import get_preset, quick_spec  # noqa: E402
from dpcore.experiments.prepare import sweep_plan  # noqa: E402

TARGET_SECONDS = 30.0
MAIN = "fig2b-mnist-eps"


def measure(spec: experiments.SweepSpec) -> tuple[float, float, float, int]:
    """(total, prepare, eigensolver seconds, eigensolver calls) of one cold run."""
    experiments.clear_cache()
    with EigenTimer() as timer:
        start = time.perf_counter()
        sweep_plan(spec)  # the cached preparation that run_sweep would do first
        prepared = time.perf_counter() - start
        result = experiments.run_sweep(spec, use_cache=False)
        total = time.perf_counter() - start
    assert result.complete
    return total, prepared, timer.seconds, timer.calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=1, help="repeat each measurement, report the median")
    parser.add_argument("--float64", action="store_true", help="also time Fig. 2(b) with the float64 eigensolver")
    parser.add_argument("--presets", nargs="*", default=["fig3-mog-d50-eps"], help="further presets to time")
    args = parser.parse_args()

    main_spec = get_preset(MAIN).spec
    cases = [(f"{MAIN} (paper size)", main_spec)]
    if args.float64:
        cases.append((f"{MAIN}, float64 eigensolver",
                       main_spec.replace(data=experiments.PcaData(dataset="mnist", k=50, solver_dtype="float64"))))
    cases.append((f"{MAIN} --quick", quick_spec(main_spec)))
    cases.extend((name, get_preset(name).spec) for name in args.presets)

    rows = []
    main_total = None
    for label, spec in cases:
        runs = [measure(spec) for _ in range(args.repeats)]
        total = statistics.median(r[0] for r in runs)
        prepare = statistics.median(r[1] for r in runs)
        eig = statistics.median(r[2] for r in runs)
        evaluations = spec.runs * len(spec.grid) * len(spec.algorithms)
        rows.append([label, len(spec.grid), len(spec.algorithms), spec.runs, evaluations, total, prepare,
                     eig if runs[0][3] else "-", runs[0][3]])
        if label.endswith("(paper size)"):
            main_total = total
    print(f"OPENBLAS_NUM_THREADS = {os.environ['OPENBLAS_NUM_THREADS']}; median of {args.repeats}; cold caches")
    print(table(["sweep", "values", "algorithms", "runs", "algorithm runs", "total s", "prepare s", "eigensolver s",
                 "eigensolver calls"], rows))
    verdict = "meets" if main_total is not None and main_total <= TARGET_SECONDS else "MISSES"
    print(f"{MAIN}: {main_total:.1f} s: {verdict} the target of {TARGET_SECONDS:g} s")


if __name__ == "__main__":
    main()
