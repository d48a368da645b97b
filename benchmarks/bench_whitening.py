"""The whitening above EIGH_MAX_DIM (issue 34): block Krylov with a fixed number of blocks against the former
ARPACK Lanczos eigenpairs, judged by what a run reports (the recovery errors), not by eigenpair agreement.

Run: ``.venv/bin/python benchmarks/bench_whitening.py [--seeds 2000 2001 ...] [--dim 10000]``.

capeAGN, STM, K = 10, S = 5, N_s = 2,000, eps = 1, delta = 0.01 (the ``agn10000`` case), projected path. For each
seed (a fresh truth, data and noise), the run's M2_hat is released once; then each whitening is followed by the
same M3 release and tensor power method (the run's generator reset to the same state), so the two results are
paired: they differ only by the eigensolver. The table gives, per metric, the mean of each solver, the mean paired
difference with its 95 % t-interval, and the run-to-run standard deviation, and the CPU seconds of each solver.
At D = 10,000 the top eigenvalues of the noisy M2 lie in the noise bulk (no signal eigenvalue stands out), so the
exact eigenvectors carry no more of the truth than the Krylov space's: the recovery errors should agree in
distribution (an interval that contains 0, narrow against the run-to-run spread). One BLAS thread.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import stdtrit  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpcore import linalg  # noqa: E402
from dpcore.agn import OtdSettings, SyntheticSpec, synthetic_problem  # noqa: E402
from dpcore.agn.algorithm import decomposition, m3_law, tpm  # noqa: E402
from dpcore.agn.evaluation import METRICS, evaluate_metrics  # noqa: E402
from dpcore.cape import stage_taus  # noqa: E402
from dpcore.cli.table import table  # noqa: E402
from dpcore.family import RunContext  # noqa: E402
from dpcore.limits import EIGH_MAX_DIM  # noqa: E402
from dpcore.scenario import equal_sites_scenario  # noqa: E402
from dpcore.seeding import data_rng, run_rng  # noqa: E402
from dpcore.tensor.release import cape_stage_noise, release_m2, release_m3  # noqa: E402
from dpcore.tensor.whitening import Whitening, block_krylov  # noqa: E402

SOLVERS = {
    "block Krylov": block_krylov,
    "ARPACK": lambda m2, k: linalg.top_eigenpairs(m2, k, lanczos_above=EIGH_MAX_DIM),
}


def paired_run(seed: int, dim: int) -> dict[str, tuple[dict[str, float], float]]:
    """{solver: (metrics, solver CPU seconds)} of one seed, the two runs paired (module docstring)."""
    scenario = equal_sites_scenario(5, 2000, 1.0, 0.01)
    settings = OtdSettings(path="projected")
    model = SyntheticSpec(kind="stm", dim=dim, k=10).model(np.random.default_rng([seed, 99]))
    problem = synthetic_problem(model, scenario.sizes, data_rng(seed, 0))
    rng = run_rng(seed, 0, "cape", "otd")
    ctx = RunContext(name="cape", problem=problem, scenario=scenario, settings=settings, rng=rng, path="projected")
    tau2, tau3 = stage_taus(scenario, "stm", settings.eps_split, dim=dim)
    stage2, stage3, _ = cape_stage_noise(scenario, tau2, tau3, split=settings.eps_split, collusion=None, relation="")
    mu = scenario.weights()
    m2, _ = release_m2(problem.sites, mu, stage2, rng)
    state = rng.bit_generator.state
    out = {}
    for name, solver in SOLVERS.items():
        rng.bit_generator.state = state
        cpu = time.process_time()
        vals, vecs = solver(m2, problem.k)
        cpu = time.process_time() - cpu
        wh = Whitening(vecs / np.sqrt(vals), vecs, vals)
        m3, _ = release_m3(problem.sites, mu, wh.w, stage3, rng, path="projected", law=m3_law(ctx))
        dec = decomposition(ctx, wh, tpm(ctx, m3))
        out[name] = (evaluate_metrics(dec.components, dec.weights, model.components, model.weights), cpu)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(2000, 2010)), help="fresh seeds")
    parser.add_argument("--dim", type=int, default=10_000, help="D (above EIGH_MAX_DIM)")
    args = parser.parse_args()
    print(f"capeAGN STM D = {args.dim}, K = 10, S = 5, N_s = 2,000, eps = 1; seeds {args.seeds[0]}.."
          f"{args.seeds[-1]} ({len(args.seeds)}); load average {os.getloadavg()[0]:.1f}", flush=True)
    runs = []
    for seed in args.seeds:
        runs.append(paired_run(seed, args.dim))
        print(f"  seed {seed}: " + "; ".join(f"{name} " + ", ".join(f"{m} {v:.5g}" for m, v in r[0].items())
                                          for name, r in runs[-1].items()), flush=True)
    first, second = SOLVERS
    rows = []
    for metric in METRICS:
        a = [r[first][0][metric] for r in runs]
        b = [r[second][0][metric] for r in runs]
        diff = [x - y for x, y in zip(a, b, strict=True)]
        n = len(diff)
        half = float(stdtrit(n - 1, 0.975)) * statistics.stdev(diff) / math.sqrt(n) if n > 1 else math.nan
        mean = statistics.mean(diff)
        rows.append([metric, f"{statistics.mean(a):.5g}", f"{statistics.mean(b):.5g}",
                     f"{mean:+.3g} [{mean - half:+.3g}, {mean + half:+.3g}]",
                     f"{statistics.stdev(b) if n > 1 else math.nan:.3g}",
                     "contains 0" if abs(mean) <= half else "EXCLUDES 0"])
    print(table(["metric", f"mean {first}", f"mean {second}", "paired difference, 95 % interval",
                 f"run-to-run SD ({second})", "interval"], rows))
    print("solver CPU seconds (median): " + ", ".join(f"{name} {statistics.median(r[name][1] for r in runs):.2f}"
                                                   for name in SOLVERS))


if __name__ == "__main__":
    main()
