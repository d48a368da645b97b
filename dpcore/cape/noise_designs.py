"""The noise-design table: every module of :mod:`dpcore.cape.solvers` contributes its ``ENTRIES``
(:class:`~dpcore.cape.solver.DesignSolver`), collected by :func:`dpcore.registry.collect_table` and ordered by
``position``. The plan of a scenario, the command line's ``--solver`` choices, the explanations and the Noise design
page read :data:`SOLVERS`; an unknown name is an error."""

from __future__ import annotations

from ..registry import collect_table, table_entry
from . import solvers as _package
from .solver import DesignSolver

__all__ = ["SOLVERS", "solver"]

SOLVERS: dict[str, DesignSolver] = collect_table(_package, DesignSolver, "noise design")
"""Every CAPE solver by name, in table order."""


def solver(name: str) -> DesignSolver:
    """The entry of ``name``; an InputError lists the names when it is unknown."""
    return table_entry(SOLVERS, name, "solver")
