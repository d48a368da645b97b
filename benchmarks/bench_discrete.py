"""Speed of the exact discrete Gaussian sampler and of discrete CAPE (docs/math/discrete.md), beside a floor measured
in the same run (one million SFC64 standard normals, benchmarks/floors.py) and the load average.

Run: ``.venv/bin/python benchmarks/bench_discrete.py [--repeats R]`` (``make bench`` runs it with the others).

* sampler: 307,720 draws (the upper triangle of a D = 784 covariance) of N_Z(0, sigma^2) at sigma^2 = 10^4, 10^10
  and 10^14 (the designs' integer variances are about 10^10 to 10^14), from a PCG64 generator and from the ChaCha20
  generator of a real run (dpcore.seeding.secure_rng); the same number of float64 normals for comparison;
* release: one capePCA release of MNIST's D = 784 second moments by ten sites (release_sum: the ten sites' own
  terms, 3.1 million draws), and the full flow with every message (the w~, F~ and G~ of every site, 9.2 million
  draws) at D = 200.

Target (not a timed test): the 307,720 draws in under 2 s on a quiet core, the capePCA release in under 30 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from floors import load_average, measure_floors, ratio  # noqa: E402

DRAWS = 784 * 785 // 2
TARGET_SAMPLER_SECONDS = 2.0
TARGET_RELEASE_SECONDS = 30.0


def _median(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _release_case(dim: int, full: bool):
    from dpcore.cape import plan_scenario
    from dpcore.cape.discrete import discrete_design
    from dpcore.cape.discrete_flow import keyed_streams, release_messages, release_sum
    from dpcore.privacy.sensitivity import statistic_entries
    from dpcore.scenario import equal_sites_scenario

    scenario = equal_sites_scenario(10, 500, 4.0, 1e-5, calibration="analytic")
    plan = plan_scenario(scenario, "pca")
    n = statistic_entries("pca", dim)
    dd = discrete_design(plan.design, plan.sensitivities, n, value_bound=1.0, terms=500 + dim)
    values = np.random.default_rng(0).uniform(-0.01, 0.01, (10, n))
    run = release_messages if full else release_sum
    return dd, lambda: run(values, dd, keyed_streams(np.random.default_rng(1)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from dpcore.privacy.discrete_gaussian import sample_discrete_gaussian, sampler_law
    from dpcore.seeding import secure_rng

    before = measure_floors()
    print(before.describe())
    print(f"{'case':<58} {'seconds':>8} {'per draw':>9} {'/ floor':>8} {'load':>5}")
    ok = True
    normals = _median(lambda: np.random.default_rng(0).standard_normal(DRAWS), args.repeats)
    print(f"{'float64 normals, ' + format(DRAWS, ',') + ' draws (PCG64)':<58} {normals:8.3f} "
          f"{1e9 * normals / DRAWS:7.0f}ns {ratio(normals, before.normals):>8} {load_average():5.1f}")
    for target in (1e4, 1e10, 1e14):
        law = sampler_law(target)
        for label, make in (("PCG64", lambda: np.random.default_rng(0)), ("ChaCha20", lambda: secure_rng(b"k" * 32))):
            seconds = _median(lambda law=law, make=make: sample_discrete_gaussian(law, DRAWS, make()), args.repeats)
            ok &= seconds <= TARGET_SAMPLER_SECONDS * max(1.0, before.normals / 0.01)
            print(f"{f'discrete Gaussian sigma^2 = {target:.0e}, {DRAWS:,} draws ({label})':<58} {seconds:8.3f} "
                  f"{1e9 * seconds / DRAWS:7.0f}ns {ratio(seconds, before.normals):>8} {load_average():5.1f}")
    for dim, full in ((784, False), (200, True)):
        dd, case = _release_case(dim, full)
        seconds = _median(case, 1)
        draws = dd.n_sites * dd.entries * (3 if full else 1)
        label = f"capePCA release D = {dim}, S = 10, {'every message' if full else 'aggregate'} ({dd.ring_bits} bits)"
        print(f"{label:<58} {seconds:8.3f} {1e9 * seconds / draws:7.0f}ns {ratio(seconds, before.normals):>8} "
              f"{load_average():5.1f}")
        ok &= full or seconds <= TARGET_RELEASE_SECONDS * max(1.0, before.normals / 0.01)
    print(measure_floors().describe().replace("floors:", "floors after:"))
    print("targets met (scaled by the floor against 10 ms per million normals)" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
