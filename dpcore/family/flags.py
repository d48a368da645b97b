"""A family's command-line flags as data (issue 33): one :class:`Flag` per flag that sets a field of the family's data
settings (``Family.sweep.flags``; its data type's ``OPTIONS`` maps each flag to its field). The command line builds
its parsers from these rows - every family's rows, in the order of the families, each flag once - so a family's flags
are declared in the family's package and nowhere else (``sweep``, ``plan``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Flag"]


@dataclass(frozen=True, kw_only=True)
class Flag:
    """One flag: ``name`` (``--k``), ``help``; its values: ``choices`` (names), ``integer`` (an integer range, both
    ends allowed), ``real`` (a finite real range, both ends allowed unless ``low_open``), or text; ``metavar``. A flag
    several families read (``--k``, ``--d``) is declared by the first family in the list of families, whose help
    then says what it means for the others."""

    name: str
    help: str
    choices: tuple[str, ...] | None = None
    integer: tuple[int, int] | None = None
    real: tuple[float, float] | None = None
    low_open: bool = False
    metavar: str | None = None

    def __post_init__(self) -> None:
        if not self.name.startswith("--") or sum(x is not None for x in (self.choices, self.integer, self.real)) > 1:
            raise TypeError(f"flag {self.name}: a name --like-this and at most one of choices, integer, real")

    @property
    def dest(self) -> str:
        """The argparse name of the flag (``--doc-length`` -> ``doc_length``), the key of the data type's
        ``OPTIONS``."""
        return self.name[2:].replace("-", "_")
