"""A family's run command, written once for every family (issue 33): ``dpcore pca``, ``dpcore otd`` and ``dpcore
lda`` build their parsers from their family's argument table (``Family.command``, :class:`dpcore.family.FamilyCommand`)
and run through one body, :func:`run_family`, over the single-run contract (``Family.compare``, the
:class:`~dpcore.family.Comparison`) and the family's hooks (:class:`~dpcore.family.CommandJob`,
:class:`~dpcore.family.CommandView`); ``sweep`` and ``plan`` build their data flags from ``Family.flags``. Every value
is typed by :mod:`dpcore.cli.options` (a range from :mod:`dpcore.limits`, refused on one line before any work)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..family import Comparison, Family, Flag, families
from . import print_guarantees, print_json, print_rings, say
from .options import algorithm_choices, integer, real
from .table import metrics_text, table

__all__ = ["add_flags", "flag_arguments", "register_families", "register_family", "run_family"]


def flag_arguments(flag: Flag, table: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """argparse's keywords of one flag (``table``: the family's algorithm table, for a flag of its names)."""
    out: dict[str, Any] = {}
    for key in ("metavar", "nargs", "action"):
        if getattr(flag, key) is not None:
            out[key] = getattr(flag, key)
    if flag.required:
        out["required"] = True
    if flag.default is not None:
        out["default"] = list(flag.default) if isinstance(flag.default, tuple) else flag.default
    if flag.choices is not None:
        out["choices"] = flag.choices
    elif flag.integer is not None:
        out["type"] = integer(*flag.integer)
    elif flag.real is not None:
        out["type"] = real(*flag.real, low_open=flag.low_open, high_open=flag.high_open)
    elif flag.algorithms and table is not None:
        out["choices"] = algorithm_choices(table)
    return out


def add_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup, flags: Iterable[Flag],
              table: Mapping[str, Any] | None = None) -> None:
    """Every flag in order; flags with the same ``exclusive`` key in one mutually exclusive group."""
    groups: dict[str, Any] = {}
    for flag in flags:
        if flag.exclusive is not None and flag.exclusive not in groups:
            groups[flag.exclusive] = parser.add_mutually_exclusive_group()
        where = parser if flag.exclusive is None else groups[flag.exclusive]
        where.add_argument(flag.name, help=flag.help, **flag_arguments(flag, table))


def register_family(sub: argparse._SubParsersAction, family: Family,
                    run: Callable[[argparse.Namespace], int] | None = None) -> argparse.ArgumentParser:
    """The run command of ``family`` (named as the family), its parser built from ``family.command``; it runs
    :func:`run_family` (or ``run``, a command of its own)."""
    command = family.command
    if command is None:
        raise TypeError(f"family {family.name} has no command (Family.command)")
    if run is None and (command.prepare is None or command.view is None):
        raise TypeError(f"family {family.name}'s command has no prepare and view hooks (FamilyCommand)")
    parser = sub.add_parser(family.name, help=command.help,
                            description=command.description.replace("{metrics}", metrics_text(family.metrics)))
    add_flags(parser, command.arguments, family.algorithms)
    parser.set_defaults(func=run or (lambda args: run_family(family, args)))
    return parser


def register_families(sub: argparse._SubParsersAction, *, skip: Iterable[str] = ()) -> None:
    """The run command of every family whose command has its hooks (``Family.command.prepare`` and ``view``), in the
    order of the families, except the names in ``skip`` (commands registered by a module of their own)."""
    skipped = set(skip)
    for family in families().values():
        command = family.command
        if family.name not in skipped and command is not None and command.prepare is not None:
            register_family(sub, family)


def _reasons(family: Family, comparisons: Sequence[Comparison]) -> dict[str, str]:
    """The first reason per algorithm that a run has no metrics (a failed whitening, an unusable configuration), in
    the order of the algorithms."""
    out: dict[str, str] = {}
    for comparison in comparisons:
        for record in comparison.records:
            if record.reason:
                out.setdefault(record.algorithm, record.reason)
    order = [name for c in comparisons for name in c.algorithms]
    return {name: out[name] for name in dict.fromkeys(order) if name in out}


def run_family(family: Family, args: argparse.Namespace) -> int:
    """The one run body of every family's command: the family's ``prepare`` makes the job (every check before any
    work), ``Family.compare`` runs it at each of its scenarios, and the result is printed - ``--json``: the family's
    record; else the notes (stderr), the family's story lines, per comparison its budget line, its table, the bits per
    value and the guarantee of every view, then why an algorithm has no metrics (stderr) and the family's closing
    lines."""
    command = family.command
    assert command is not None and command.prepare is not None and command.view is not None  # register_family
    view = command.view
    job = command.prepare(args)
    comparisons = tuple(family.compare(scenario, job.data, job.algorithms, runs=job.runs, seed=job.seed,
                                       collusion=job.collusion, workers=job.workers) for scenario in job.scenarios)
    if getattr(args, "json", False):
        print_json(view.record(job, comparisons))
        return 0
    for note in dict.fromkeys(n for c in comparisons for n in c.notes):
        say(f"note: {note}")
    for line in view.header(job, comparisons):
        print(line)
    cape = next((name for name, entry in family.algorithms.items() if entry.title == family.cape), None)
    for comparison in comparisons:
        if view.budget is not None:
            print(view.budget(comparison))
        print(table(*view.table(job, comparison)))
        print_rings(comparison.bits_per_value, family.algorithms)
        label = (lambda name: name) if view.names == "name" else (lambda name: family.algorithms[name].title)
        hint = (view.robust_hint and job.collusion is None and cape in comparison.guarantees)
        print_guarantees({label(name): views for name, views in comparison.guarantees.items()},
                         robust_hint=label(cape) if hint and cape is not None else None)
    for name, reason in _reasons(family, comparisons).items():
        say(f"{family.algorithms[name].title}: {reason}")
    for line in () if view.after is None else view.after(job, comparisons):
        print(line)
    return 0
