"""``python -m dpcore design SCENARIO.json``: noise design, gain and privacy audit of a scenario."""

from __future__ import annotations

import argparse

from ..cape import OBJECTIVES, SOLVERS, plan_scenario
from ..cape.noise_compare import compare_noise
from ..limits import E_SCALE_RANGE, MAX_OTD_DIM, MAX_SITES
from ..privacy import STATISTICS
from ..scenario import load_scenario
from ..textio import printable
from . import print_json, say
from .options import E_SCALE, OTD_DIM, SIGMA2, integer
from .table import fmt, table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "design",
        help="design the CAPE noise of a scenario and audit it",
        description="Per-site noise (tau_s, tau_e, tau_f, tau_g), tau_c, the gain and the privacy audit of a "
        "scenario. The statistic is the mean of values in [0, 1] (Delta_s = 1/N_s) unless --statistic says "
        "otherwise.",
    )
    p.add_argument("scenario", help="scenario JSON file (format: docs/cli.md, section 'The scenario file')")
    p.add_argument("--solver", choices=tuple(SOLVERS), default="general",
                   help="; ".join(f"{name}: {entry.title.lower()}" + (" (default)" if name == "general" else "")
                                  + (" for --collusion" if entry.collusion_robust else "")
                                  for name, entry in SOLVERS.items()))
    p.add_argument("--objective", choices=tuple(OBJECTIVES), default="balanced", help="objective of the general solver")
    p.add_argument("--last", metavar="NAME", help="closed form: the site playing site S (default: the last listed)")
    p.add_argument("--collusion", type=integer(0, MAX_SITES - 1), metavar="C",
                   help="coalition bound of the audit, 0..S-1 (default ceil(S/3) - 1)")
    p.add_argument("--e-scale", type=E_SCALE, default=1.0,
                   help=f"multiply the helper's noise variance ({E_SCALE_RANGE[0]:g} to {E_SCALE_RANGE[1]:g})")
    p.add_argument("--statistic", choices=STATISTICS, default="mean", help="statistic whose sensitivity is used")
    p.add_argument("--dim", type=OTD_DIM, default=10,
                   help=f"dimension D (mog-m3, and the entries of a matrix or tensor for --compare-noise; 2 to "
                   f"{MAX_OTD_DIM:,})")
    p.add_argument("--sigma2", type=SIGMA2, default=0.05, help="scaled MOG component variance (mog-m3 only)")
    p.add_argument("--compare-noise", action="store_true",
                   help="also compare every noise variant (continuous CAPE with and without a helper, discrete CAPE on "
                   "the integers) and the conventional scheme: aggregate noise, gain, each view's eps, bits per value "
                   "(matrix and tensor statistics of dimension --dim)")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario)
    plan = plan_scenario(
        scenario, args.statistic, solver=args.solver, objective=args.objective, last=args.last,
        collusion=args.collusion, e_scale=args.e_scale, dim=args.dim, sigma2=args.sigma2,
    )
    comparison = (compare_noise(plan, dim=args.dim, sigma2=args.sigma2)
                  if args.compare_noise and plan.design.feasible else None)
    if args.json:
        out = plan.to_dict()
        if comparison is not None:
            out["noise_comparison"] = [row.to_dict() for row in comparison]
        print_json(out)
        return 0
    for w in plan.warnings:
        say(f"warning: {w}")
    d = plan.design
    print(f"statistic {plan.statistic}, {scenario.neighbouring} neighbours, {scenario.calibration} calibration, "
          f"solver {d.method}" + (f" ({d.objective})" if d.objective else ""))
    std_e, std_f, std_g = d.std(d.var_e), d.std(d.var_f), d.std(d.var_g)
    rows = [[name, s.n, s.eps, s.delta, float(d.weights[i]), float(plan.sensitivities[i]), float(d.tau[i]),
             float(std_e[i]), float(std_f[i]), float(std_g[i])]
            for i, (name, s) in enumerate(zip(d.names, scenario.sites, strict=True))]
    print(table(["site", "N_s", "eps", "delta", "mu", "Delta", "tau", "tau_e", "tau_f", "tau_g"], rows))
    print()
    print(f"tau_c     {fmt(d.tau_c)}   (DP floor max mu_s tau_s = {fmt(d.tau_floor)}"
          + (", BELOW the floor)" if d.below_floor else ")"))
    print(f"tau_conv  {fmt(d.tau_conv)}   (conventional scheme)")
    print(f"gain      {fmt(d.gain)}   (tau_conv^2 / tau_c^2)")
    print(printable(f"feasible  {fmt(d.feasible)}" + (f": {d.reason}" if d.reason else "")))
    if plan.robust is not None:
        r = plan.robust
        print(printable(f"collusion-robust calibration for c = {r.collusion}: "
                        + (f"gain {fmt(r.gain)}, tau_c {fmt(r.tau_c)}, helper noise x{fmt(r.e_scale)}" if r.feasible
                           else f"infeasible: {r.reason}")))
    if plan.audit is not None:
        print()
        print(f"privacy audit (coalitions of up to {plan.collusion} other sites)")
        rows = [[r.site, r.view, ",".join(r.coalition) or "-", r.sigma_eff, r.eps_eff, r.delta_eff, r.eps, r.delta,
                 r.ok] for r in plan.audit.rows]
        print(table(["site", "view", "coalition", "sigma_eff", "eps_eff", "delta_eff", "eps", "delta", "ok"], rows))
    if comparison is not None:
        print()
        print(f"noise variants and the conventional scheme (eps of the worst site per view, coalitions of up to "
              f"{plan.collusion})")
        print(table(["scheme", "aggregate std", "gain", "release eps", "aggregator eps", "coalition eps",
                     "bits/value"], [_comparison_row(row) for row in comparison]))
        for row in comparison:
            if row.reason:
                say(f"{row.scheme}: {row.reason}")
    return 0 if d.feasible else 1


def _comparison_row(row) -> list:
    def eps(view: str) -> float | None:
        g = row.view(view)
        return None if g is None else g.eps

    return [row.scheme, row.aggregate_std, row.gain, eps("release"), eps("aggregator"), eps("coalition"), row.bits]
