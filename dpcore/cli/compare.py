"""``python -m dpcore compare --family NAME``: any family's comparison through the single-run contract
(``Family.compare``; docs/cli.md, "compare"), written once for every family. The family's data settings (its
``Family.sweep.data`` dataclass) are set field by field with ``--set FIELD=VALUE`` (each value converted by the field's
type and checked by the data type itself); the table's columns are the family's metric table, the algorithms its
algorithm table, the privacy every view's computed guarantee."""

from __future__ import annotations

import argparse
import dataclasses
import typing
from typing import Any

from ..family import families
from ..limits import MAX_RUNS
from ..privacy import CALIBRATIONS, NEIGHBOURING
from ..scenario import Scenario, equal_sites_scenario, load_scenario
from ..validation import InputError
from . import print_guarantees, print_json, print_rings
from .options import DELTA, EPS, RUNS, SEED, SITE_SIZE, SITES, WORKERS
from .table import fmt, table

__all__ = ["data_settings", "register", "run"]

DEFAULTS = {"sites": 5, "ns": 1000, "eps": 1.0, "delta": 1e-5}
"""Equal sites without --scenario."""


def register(sub: argparse._SubParsersAction) -> None:
    names = tuple(families())
    p = sub.add_parser("compare", help="any family's algorithms on its data settings, through the one contract",
                       description="Runs the chosen algorithms of one family (" + ", ".join(
                           f"{n}: {f.label}" for n, f in families().items()) + ") R times on the data its data "
                       "settings describe (--set FIELD=VALUE, the fields of the family's data type) and prints, per "
                       "algorithm, the mean and std of every metric of the family and the guarantee of every view.")
    p.add_argument("--family", required=True, choices=names, help="the family (" + ", ".join(names) + ")")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="a field of the family's data settings (repeatable), e.g. --set k=3")
    p.add_argument("--algorithms", nargs="+", metavar="NAME", help="algorithms of the family's table (default: its "
                   "default ones)")
    p.add_argument("--scenario", metavar="FILE", help="scenario JSON: sites, sizes, budgets")
    p.add_argument("--sites", type=SITES, help=f"equal sites S without --scenario (default {DEFAULTS['sites']})")
    p.add_argument("--ns", type=SITE_SIZE, help=f"samples per site (default {DEFAULTS['ns']})")
    p.add_argument("--eps", type=EPS, help=f"eps of every site (default {DEFAULTS['eps']:g})")
    p.add_argument("--delta", type=DELTA, help=f"delta of every site (default {DEFAULTS['delta']:g})")
    p.add_argument("--calibration", choices=CALIBRATIONS, help="Gaussian calibration (default: the scenario's)")
    p.add_argument("--neighbouring", choices=NEIGHBOURING, help="neighbouring relation (default: the scenario's)")
    p.add_argument("--runs", type=RUNS, default=10, help=f"runs R (default 10, at most {MAX_RUNS:,})")
    p.add_argument("--seed", type=SEED, default=0, help="seed of data, split and noise (default 0)")
    p.add_argument("--workers", type=WORKERS, metavar="W", help="worker processes (default: the CPUs)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def _scenario(args: argparse.Namespace) -> Scenario:
    if args.scenario:
        scenario = load_scenario(args.scenario)
        changes = {k: v for k, v in (("n", args.ns), ("eps", args.eps), ("delta", args.delta)) if v is not None}
        scenario = scenario.with_sites(**changes) if changes else scenario
    else:
        given = {key: DEFAULTS[key] if getattr(args, key) is None else getattr(args, key) for key in DEFAULTS}
        scenario = equal_sites_scenario(given["sites"], given["ns"], given["eps"], given["delta"], name_prefix="site")
    extra = {k: v for k, v in (("calibration", args.calibration), ("neighbouring", args.neighbouring))
             if v is not None}
    return scenario.replace(**extra) if extra else scenario


def _convert(kind: Any, text: str, name: str) -> Any:
    """``text`` as the field's type (int, float, str, bool, or an optional of one)."""
    options = [k for k in typing.get_args(kind) if k is not type(None)] or [kind]
    if text.lower() == "none" and type(None) in typing.get_args(kind):
        return None
    for option in options:
        try:
            if option is bool:
                if text.lower() in ("true", "false"):
                    return text.lower() == "true"
                continue
            return option(text)
        except (TypeError, ValueError):
            continue
    raise InputError(f"--set {name}: {text!r} is not a {' or '.join(getattr(o, '__name__', str(o)) for o in options)}",
                     name)


def data_settings(data_type: type, pairs: list[str]) -> Any:
    """The family's data settings from ``FIELD=VALUE`` pairs (the data type checks the values it is built with)."""
    hints = typing.get_type_hints(data_type)
    fields = {f.name for f in dataclasses.fields(data_type) if f.init}
    values: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or name not in fields:
            raise InputError(f"--set {pair!r}: give FIELD=VALUE with FIELD one of {', '.join(sorted(fields))}", "set")
        values[name] = _convert(hints[name], text, name)
    return data_type(**values)


def run(args: argparse.Namespace) -> int:
    family = families()[args.family]
    data = data_settings(family.sweep.data, args.set)
    scenario = _scenario(args)
    result = family.compare(scenario, data, args.algorithms, runs=args.runs, seed=args.seed, workers=args.workers)
    if args.json:
        print_json({**result.to_dict(), "data": dataclasses.asdict(data)})
        return 0
    metrics = family.metrics
    print(f"{family.label}: {data.describe()}; {scenario.n_sites} sites, N = {scenario.total_n:,}; "
          f"{result.runs} run(s), seed {result.seed}")
    rows = []
    for name in result.algorithms:
        cells = []
        for metric in metrics:
            s = result.summary(name, metric)
            cells.append("failed" if s.mean is None else f"{fmt(s.mean)} ± {fmt(s.std or 0.0, 2)}")
        rows.append([family.algorithms[name].title, *cells])
    print(table(["algorithm", *(m.label for m in metrics.values())], rows))
    print_guarantees({family.algorithms[name].title: views for name, views in result.guarantees.items()})
    print_rings(result.bits_per_value, family.algorithms)
    for note in result.notes:
        print(f"note: {note}")
    return 0
