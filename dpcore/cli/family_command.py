"""A family's flags as argparse arguments, written once for every family (issue 33): ``dpcore pca``, ``dpcore otd``
and ``dpcore lda`` build their parsers from their family's argument table (``Family.command``,
:class:`dpcore.family.FamilyCommand`), ``sweep`` and ``plan`` their data flags from ``Family.flags``. Every value is
typed by :mod:`dpcore.cli.options` (a range from :mod:`dpcore.limits`, refused on one line before any work)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..family import Family, Flag
from .options import algorithm_choices, integer, real
from .table import metrics_text

__all__ = ["add_flags", "flag_arguments", "register_family"]


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
                    run: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    """The run command of ``family`` (named as the family), its parser built from ``family.command``."""
    command = family.command
    if command is None:
        raise TypeError(f"family {family.name} has no command (Family.command)")
    parser = sub.add_parser(family.name, help=command.help,
                            description=command.description.replace("{metrics}", metrics_text(family.metrics)))
    add_flags(parser, command.arguments, family.algorithms)
    parser.set_defaults(func=run)
    return parser
