"""A family's command-line flags as data (issue 33): one :class:`Flag` per flag. ``Family.flags`` set the family's
data settings in ``sweep`` and ``plan`` (its data type's ``OPTIONS`` maps each flag to its field; every family's rows,
in the order of the families, each flag once); ``Family.command`` (:class:`FamilyCommand`) is the argument table of
the family's own run command (``dpcore pca``, ``dpcore otd``, ``dpcore lda``). The command line builds its parsers
from these rows, so a family's flags are declared in the family's package and nowhere else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["FamilyCommand", "Flag"]


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
    of its ``--help``)."""

    help: str
    description: str
    arguments: tuple[Flag, ...]
