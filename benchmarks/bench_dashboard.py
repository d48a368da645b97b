"""How long the dashboard's design pages wait for dpcore (uncached), by number of sites, and page render times.

Run: ``.venv/bin/python benchmarks/bench_dashboard.py [--sites 5 10 20 40] [--no-pages]``.

* plan: ``plan_scenario`` (design + audit with the default ceil(S/3) - 1 colluders + collusion-robust design),
  what the Noise design page computes on a cache miss;
* curve: ``robust_gain_curve`` for every c = 0..S-1 (the page draws it by itself up to 10 sites, else on a
  button);
* pages: one AppTest run of each dashboard page in one process, default scenario (the first run also
  imports streamlit and plotly).
Target: plan under 2 s up to 20 sites (the page caches it afterwards).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from dpcore.cape import plan_scenario  # noqa: E402
from dpcore.cape.explain import robust_gain_curve  # noqa: E402
from dpcore.scenario import scenario_from_dict  # noqa: E402

TARGET_PLAN_SECONDS = 2.0
PAGES = ("pages/home.py", "pages/sites.py", "pages/noise_design.py", "pages/gain.py", "pages/protocol.py")


def _scenario(n_sites: int):
    rng = np.random.default_rng(n_sites)
    sites = [{"name": f"s{i + 1}", "n": int(rng.integers(200, 2000)), "eps": float(rng.uniform(0.2, 1.0)),
              "delta": 1e-6} for i in range(n_sites)]
    return scenario_from_dict({"sites": sites, "seed": 1})


def _seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, nargs="*", default=[5, 10, 20, 40])
    parser.add_argument("--curve-max-sites", type=int, default=10, help="skip the c-curve above this S")
    parser.add_argument("--no-pages", action="store_true")
    args = parser.parse_args()
    print(f"{'S':>4} {'plan s':>8} {'curve s':>8}  target plan < {TARGET_PLAN_SECONDS:g} s up to S = 20")
    slow = False
    for s in args.sites:
        scenario = _scenario(s)
        plan_s = _seconds(lambda sc=scenario: plan_scenario(sc, "mean"))
        curve = "skip"
        if s <= args.curve_max_sites:
            curve = f"{_seconds(lambda sc=scenario: robust_gain_curve(sc.taus(), sc.weights())):8.2f}"
        flag = "  SLOW" if s <= 20 and plan_s > TARGET_PLAN_SECONDS else ""
        slow |= bool(flag)
        print(f"{s:>4} {plan_s:8.2f} {curve:>8}{flag}", flush=True)
    if not args.no_pages:
        from conftest import app_test

        print(f"\n{'page':<24} {'AppTest run s':>14}  (the first includes importing streamlit and plotly)")
        for page in PAGES:
            seconds = _seconds(lambda p=page: app_test(None if p == "pages/home.py" else p))
            print(f"{page:<24} {seconds:14.2f}", flush=True)
    return 1 if slow else 0


if __name__ == "__main__":
    raise SystemExit(main())
