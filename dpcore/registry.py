"""Algorithm tables (docs/adding-a-baseline.md): what the OTD and LDA tables share. Each family's table module
collects the entries its ``algorithms`` subpackage declares, and every list of that family's algorithms reads the
table; the helpers here give the collection, the checked lookup by name and the default selection once.

Entries are duck-typed: each has ``name``, ``position`` and ``default``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any, TypeVar

import numpy as np

from .validation import InputError, check_choice

__all__ = ["check_scenario_sizes", "checked_entries", "collect_table", "default_names", "table_entry"]

Entry = TypeVar("Entry")


def collect_table(package: ModuleType, entry_type: type[Entry], family: str) -> dict[str, Entry]:
    """Every module of ``package`` contributes its ``ALGORITHMS`` tuple of ``entry_type``; the table maps names to
    entries in ``position`` order. A module without such a tuple, or a repeated name or position, is a TypeError
    (a programming error, found at import)."""
    entries: list[Any] = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found = getattr(module, "ALGORITHMS", None)
        if not isinstance(found, tuple) or not all(isinstance(e, entry_type) for e in found):
            raise TypeError(f"{module.__name__} must define ALGORITHMS = ({entry_type.__name__}(...), ...)")
        entries.extend(found)
    entries.sort(key=lambda e: e.position)
    table = {e.name: e for e in entries}
    if len(table) != len(entries) or len({e.position for e in entries}) != len(entries):
        raise TypeError(f"{family} algorithm names and positions must be unique")
    return table


def table_entry(table: dict[str, Entry], name: str) -> Entry:
    """The entry of ``name``; an InputError lists the names when it is unknown."""
    return table[check_choice(name, "algorithm", tuple(table))]


def checked_entries(table: dict[str, Entry], names: Iterable[str]) -> tuple[Entry, ...]:
    """The entries of ``names`` (duplicates dropped, order kept), each checked: the boundary of every list of
    algorithms a user chooses."""
    chosen = tuple(table_entry(table, str(name)) for name in dict.fromkeys(names))
    if not chosen:
        raise InputError(f"choose at least one algorithm ({', '.join(table)})", "algorithms")
    return chosen


def default_names(table: dict[str, Any]) -> tuple[str, ...]:
    """The algorithms a comparison runs unless told otherwise (flag ``default``), in table order."""
    return tuple(name for name, e in table.items() if e.default)


def check_scenario_sizes(scenario_sizes: Sequence[int] | np.ndarray, data_sizes: Sequence[int] | np.ndarray) -> None:
    """A run's budgets come from a scenario whose N_s must be the sites' data sizes."""
    expected, given = np.asarray(data_sizes), np.asarray(scenario_sizes)
    if expected.shape != given.shape or np.any(expected != given):
        raise InputError(f"the scenario's site sizes {given.tolist()} differ from the data's {expected.tolist()}; use "
                         "Scenario.with_sizes()", "scenario")
