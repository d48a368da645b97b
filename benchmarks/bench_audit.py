"""Speed and memory of a scenario's noise design and privacy audit for many sites (issue 12 item 4, issue 15 item 6).

Run: ``.venv/bin/python benchmarks/bench_audit.py`` (``make bench`` runs it with the others). Every case runs in a
process of its own with one BLAS thread, so its peak memory is that process's ru_maxrss:

* plan: ``plan_scenario`` - the general design, its audit with c colluders (default ceil(S/3) - 1, and 5) and
  the collusion-robust design for the same c; what the Noise design page computes on a cache miss;
* cli: ``python -m dpcore design FILE --collusion c`` as a user runs it (wall time includes starting Python);
* curve: ``robust_gain_curve`` for every c = 0..S-1 (the Noise design page's chart).

The scenarios have unequal sizes, budgets and deltas (dpcore.scenario, seeded by S), analytic calibration.
Targets: plan and cli at S = 100 well under 5 s and under 1 GiB; the curve at S = 20 under 1 s.
``--root DIR`` measures another checkout of the project (for example an older commit unpacked with
``git archive``) with the same cases, for before/after tables; ``--timeout`` stops a case that runs longer.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_PLAN_SECONDS = 5.0
TARGET_PLAN_BYTES = 1 << 30
TARGET_CURVE_SECONDS = 1.0
PLAN_SITES = (20, 50, 100)
CURVE_SITES = (10, 20, 50)


def scenario_dict(n_sites: int) -> dict:
    """Unequal sizes (200..5,000), budgets (eps 0.2..1.0) and deltas, seeded by S."""
    import numpy as np

    rng = np.random.default_rng(n_sites)
    sites = [{"name": f"s{i + 1}", "n": int(rng.integers(200, 5000)), "eps": round(float(rng.uniform(0.2, 1.0)), 3),
              "delta": float(rng.choice([1e-6, 1e-5]))} for i in range(n_sites)]
    return {"sites": sites, "calibration": "analytic", "seed": 1}


def child(case: str, n_sites: int, collusion: int | None) -> None:
    """Run one case in this process and print its seconds (wall and CPU) as JSON."""
    from dpcore.cape import plan_scenario
    from dpcore.cape.explain import robust_gain_curve
    from dpcore.scenario import scenario_from_dict

    scenario = scenario_from_dict(scenario_dict(n_sites))
    start, cpu = time.perf_counter(), time.process_time()
    if case == "plan":
        plan = plan_scenario(scenario, "mean", collusion=collusion)
        inexact = sum(not r.exact for r in plan.audit.rows) if plan.audit else 0
        extra = {"inexact": inexact, "robust_gain": plan.robust.gain if plan.robust else None}
    else:
        points = robust_gain_curve(scenario.taus(), scenario.weights())
        extra = {"points": len(points)}
    print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, **extra}))


def _run(command: list[str], root: Path, timeout: float) -> dict:
    """Run ``command`` in its own process; its wall seconds, CPU seconds, peak memory and stdout."""
    env = dict(os.environ, PYTHONPATH=str(root), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime,
            "rss": usage.ru_maxrss * 1024, "out": out, "killed": proc.returncode < 0}


def _row(label: str, result: dict, target_s: float | None, target_bytes: int | None, key: str = "seconds") -> bool:
    if result["killed"]:
        print(f"{label:<28} {'> timeout':>10} {'':>8} {result['rss'] / 2**20:9.0f}  TIMEOUT", flush=True)
        return False
    data = json.loads(result["out"]) if key == "seconds" else {"seconds": result["wall"], "cpu": result["cpu"]}
    slow = target_s is not None and data["seconds"] > target_s
    big = target_bytes is not None and result["rss"] > target_bytes
    note = ("  SLOW" if slow else "") + ("  BIG" if big else "")
    detail = f"  inexact rows {data['inexact']}" if "inexact" in data else ""
    print(f"{label:<28} {data['seconds']:10.2f} {data['cpu']:8.2f} {result['rss'] / 2**20:9.0f}{detail}{note}",
          flush=True)
    return not (slow or big)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout of the project to measure")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a case is stopped")
    parser.add_argument("--child", nargs=3, metavar=("CASE", "S", "C"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        case, n_sites, collusion = args.child
        sys.path.insert(0, str(args.root))
        child(case, int(n_sites), None if collusion == "default" else int(collusion))
        return 0
    root = args.root.resolve()
    me = [sys.executable, str(Path(__file__).resolve()), "--root", str(root), "--child"]
    print(f"measuring {root}; one process per case, one BLAS thread")
    print(f"{'case':<28} {'seconds':>10} {'cpu s':>8} {'peak MiB':>9}")
    ok = True
    for n_sites in PLAN_SITES:
        for collusion in ("default", "5"):
            result = _run(me + ["plan", str(n_sites), collusion], root, args.timeout)
            target = (TARGET_PLAN_SECONDS, TARGET_PLAN_BYTES) if n_sites == 100 else (None, None)
            ok &= _row(f"plan S={n_sites} c={collusion}", result, *target)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.json"
        path.write_text(json.dumps(scenario_dict(100)))
        for collusion in ("33", "5"):
            command = [sys.executable, "-m", "dpcore", "design", str(path), "--collusion", collusion]
            result = _run(command, root, args.timeout)
            ok &= _row(f"cli design S=100 c={collusion}", result, TARGET_PLAN_SECONDS, TARGET_PLAN_BYTES, key="wall")
    for n_sites in CURVE_SITES:
        result = _run(me + ["curve", str(n_sites), "default"], root, args.timeout)
        ok &= _row(f"curve S={n_sites} (c = 0..S-1)", result, TARGET_CURVE_SECONDS if n_sites == 20 else None, None)
    print(f"targets: plan and cli at S = 100 < {TARGET_PLAN_SECONDS:g} s and < 1 GiB; curve at S = 20 < "
          f"{TARGET_CURVE_SECONDS:g} s")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
