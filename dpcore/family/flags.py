"""A family's command-line flags as data (issue 33): one :class:`Flag` per flag. ``Family.flags`` set the family's
data settings in ``sweep`` and ``plan`` (its data type's ``OPTIONS`` maps each flag to its field; every family's rows,
in the order of the families, each flag once); ``Family.command`` (:class:`FamilyCommand`) is the argument table of
the family's own run command (``dpcore pca``, ``dpcore otd``, ``dpcore lda``). The command line builds its parsers
from these rows, so a family's flags are declared in the family's package and nowhere else."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..registry import canonical_name
from .command import CommandJob, CommandView

__all__ = ["FamilyCommand", "Flag", "algorithm_names"]


@dataclass(frozen=True, kw_only=True)
class Flag:
    """One flag: ``name`` (``--k``), ``help``; its values: ``choices`` (names), ``integer`` (an integer range, both
    ends allowed), ``real`` (a finite real range, both ends allowed unless ``low_open`` or ``high_open``),
    ``algorithms`` (names of the family's algorithm table, old names accepted), or text; ``metavar``, ``default``
    (a tuple is handed out as a fresh list), ``nargs``, ``required``, ``action`` ("store_true": a switch) and
    ``exclusive`` (flags with the same key exclude each other). A flag several families read in ``sweep``
    (``--k``, ``--d``) is declared by the first family in the list of families, whose help then says what it means
    for the others."""

    name: str
    help: str
    choices: tuple[str, ...] | None = None
    integer: tuple[int, int] | None = None
    real: tuple[float, float] | None = None
    low_open: bool = False
    high_open: bool = False
    algorithms: bool = False
    metavar: str | None = None
    default: Any = None
    nargs: str | None = None
    required: bool = False
    action: str | None = None
    exclusive: str | None = None

    def __post_init__(self) -> None:
        kinds = sum(x is not None for x in (self.choices, self.integer, self.real)) + self.algorithms
        if not self.name.startswith("--") or kinds > 1:
            raise TypeError(f"flag {self.name}: a name --like-this and at most one of choices, integer, real, "
                            "algorithms")

    @property
    def dest(self) -> str:
        """The argparse name of the flag (``--doc-length`` -> ``doc_length``), the key of the data type's
        ``OPTIONS``."""
        return self.name[2:].replace("-", "_")


@dataclass(frozen=True, kw_only=True)
class FamilyCommand:
    """The argument table of a family's run command: its ``help`` (one line in ``dpcore --help``), ``description``
    (``{metrics}`` is replaced by the family's metrics in words) and ``arguments`` (:class:`Flag` rows, in the order
    of its ``--help``); and the family's hooks of the one run body (:func:`dpcore.cli.family_command.run_family`):
    ``prepare(args) -> CommandJob`` (its data forms: the parsed flags to the scenarios, data settings and runs,
    :class:`~dpcore.family.command.CommandJob`, every check before any work) and ``view`` (how it shows a result,
    :class:`~dpcore.family.command.CommandView`). A command without them has a parser only."""

    help: str
    description: str
    arguments: tuple[Flag, ...]
    prepare: Callable[[Any], CommandJob] | None = None
    view: CommandView | None = None


def algorithm_names(items: Iterable[str], table: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(names, unknown) of an algorithm flag's values: split at commas, old names mapped to the table's
    (:func:`dpcore.registry.canonical_name`), in order; the names the table does not know, as typed."""
    typed = [n.strip() for item in items for n in str(item).split(",") if n.strip()]
    names = [canonical_name(n, table) for n in typed]
    return names, [t for t, n in zip(typed, names, strict=True) if n not in table]
