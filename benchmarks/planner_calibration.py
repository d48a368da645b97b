"""The planner's calibration on fresh seeds (docs/planner.md, "Calibration"): the three calibration cases of
tests/test_planner.py (capePCA on the synthetic Gaussian solving N_s, capePCA on the bundled digits solving eps,
capeAGN on its synthetic MOG solving eps) planned at each seed given, then checked on fresh studies of every scheme's
own algorithm at the answer and at 0.8 x. Prints one JSON line per point and, per case, scheme and point, the share of
all fresh studies that met the target and at how many seeds the test's criterion held. Not a timed benchmark (its
name does not start with ``bench_``, so ``make bench`` leaves it out): it takes several minutes.

Run: ``.venv/bin/python benchmarks/planner_calibration.py [--seeds 0-10] [--studies 40] [--cases ...]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

from scipy.stats import binom  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpcore.agn.sweep import OtdData  # noqa: E402
from dpcore.pca.sweep import PcaData  # noqa: E402
from dpcore.planner import check_plan, plan_target, prepare_data, question  # noqa: E402
from dpcore.scenario import equal_sites_scenario  # noqa: E402

P = 0.9
FIVE = equal_sites_scenario(5, 1000, 1.0, 1e-5)
DIGITS = equal_sites_scenario(5, 300, 1.0, 1e-5)
CASES = {
    "pca-synthetic": lambda s: ("pca", prepare_data("pca", PcaData(dim=50, k=5), None, s), FIVE,
                                question("n", 0.8, FIVE)),
    "pca-digits": lambda s: ("pca", prepare_data("pca", PcaData(dataset="digits", k=5), None, s), DIGITS,
                             question("eps", 0.7, DIGITS)),
    "otd-synthetic": lambda s: ("otd", prepare_data("otd", OtdData(), None, s), FIVE, question("eps", 0.8, FIVE)),
}
"""The calibration cases of tests/test_planner.py."""


def _seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0-10", help="plan seeds, e.g. 0-10")
    parser.add_argument("--studies", type=int, default=40, help="fresh studies per point")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    floor = int(binom.ppf(0.01, args.studies, P))
    totals: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for case in args.cases.split(","):
        for seed in _seeds(args.seeds):
            family, data, scenario, q = CASES[case](seed)
            plan = plan_target(family, data, scenario, q, seed=seed, workers=args.workers)
            check = check_plan(plan, runs=args.studies, workers=args.workers)
            for p in check.points:
                held = (p.met_count >= floor and p.met) if p.where == "answer" else (p.hi < P and not p.met)
                print(json.dumps({"case": case, "seed": seed, "scheme": p.scheme, "where": p.where, "value": p.value,
                                  "met": p.met_count, "studies": len(p.values), "hi": round(p.hi, 3),
                                  "criterion": held}), flush=True)
                total = totals[(case, p.scheme, p.where)]
                total[0] += p.met_count
                total[1] += len(p.values)
                total[2] += int(held)
                total[3] += 1
    for (case, scheme, where), (met, studies, held, seeds) in totals.items():
        print(f"{case:14s} {scheme:14s} {where:6s} {met}/{studies} = {met / studies:.3f} met the target; "
              f"the test's criterion held at {held} of {seeds} seeds")


if __name__ == "__main__":
    main()
