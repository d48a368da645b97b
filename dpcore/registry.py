"""Tables of entries collected from a package (docs/architecture.md, "Tables"): the algorithms of every family and the
CAPE noise designs. Each module of the package declares its entries as ``ENTRIES = (Entry(...), ...)``; the table maps
names to entries in ``position`` order, and every list of that kind reads it. The checked lookup by name (with the
old names a table still accepts, :data:`ALIASES`), the default selection and the paper's order are here once.

Entries are duck-typed: each has ``name`` and ``position`` (and ``default``, ``paper_order`` where used).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any, TypeVar

import numpy as np

from .validation import InputError, check_choice

__all__ = ["ALIASES", "canonical_name", "check_scenario_sizes", "checked_entries", "collect_table", "default_names",
           "paper_names", "table_entry", "table_functions"]

Entry = TypeVar("Entry")

ALIASES: Mapping[str, str] = {"nondp": "nonpriv"}
"""Old names a user may still type (command line, sweep specifications, remembered widget values), and the name each
now has: PCA's non-private reference was ``nondp`` until the three families shared the name ``nonpriv``."""


def collect_table(package: ModuleType, entry_type: type[Entry], kind: str) -> dict[str, Entry]:
    """Every module of ``package`` contributes its ``ENTRIES`` tuple of ``entry_type``; the table maps names to
    entries in ``position`` order. A module without such a tuple, or a repeated name or position, is a TypeError
    (a programming error, found at import)."""
    entries: list[Any] = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found = getattr(module, "ENTRIES", None)
        if not isinstance(found, tuple) or not found or not all(isinstance(e, entry_type) for e in found):
            raise TypeError(f"{module.__name__} must define ENTRIES = ({entry_type.__name__}(...), ...)")
        entries.extend(found)
    entries.sort(key=lambda e: e.position)
    table = {e.name: e for e in entries}
    if len(table) != len(entries) or len({e.position for e in entries}) != len(entries):
        raise TypeError(f"{kind} names and positions must be unique")
    return table


def canonical_name(name: str, table: Mapping[str, Any]) -> str:
    """``name``, or the name it has now when it is an old one (:data:`ALIASES`) the table knows."""
    new = ALIASES.get(name)
    return new if name not in table and new in table else name


def table_entry(table: dict[str, Entry], name: str, what: str = "algorithm") -> Entry:
    """The entry of ``name`` (an old name is accepted); an InputError lists the names when it is unknown."""
    return table[check_choice(canonical_name(str(name), table), what, tuple(table))]


def checked_entries(table: dict[str, Entry], names: Iterable[str]) -> tuple[Entry, ...]:
    """The entries of ``names`` (duplicates dropped, order kept), each checked: the boundary of every list of
    algorithms a user chooses."""
    chosen = tuple(dict.fromkeys(table_entry(table, str(name)) for name in names))
    if not chosen:
        raise InputError(f"choose at least one algorithm ({', '.join(table)})", "algorithms")
    return chosen


def default_names(table: dict[str, Any]) -> tuple[str, ...]:
    """The entries that run unless told otherwise (flag ``default``), in table order."""
    return tuple(name for name, e in table.items() if e.default)


def paper_names(table: dict[str, Any]) -> tuple[str, ...]:
    """The entries shown in the paper's figures, in its legend order (``paper_order``)."""
    shown = [e for e in table.values() if e.paper_order is not None]
    return tuple(e.name for e in sorted(shown, key=lambda e: e.paper_order))


def table_functions(table: dict[str, Entry]) -> tuple[Any, Any, Any, Any]:
    """The four lookups every algorithm table offers, written once for every family (``algorithm``,
    ``check_algorithms``, ``default_algorithms``, ``paper_algorithms`` of ``dpcore.<family>``):

    * ``algorithm(name)``: the entry of ``name`` (an old name accepted); an InputError lists the names when unknown;
    * ``check_algorithms(names)``: the entries of ``names`` (duplicates dropped, order kept), each checked - the
      boundary of every list of algorithms a user chooses;
    * ``default_algorithms()``: the names that run unless told otherwise (flag ``default``), in table order;
    * ``paper_algorithms()``: the curves of the paper's figures in its legend order (``paper_order``): the presets
      and the sweep defaults."""

    def algorithm(name: str) -> Entry:
        return table_entry(table, name)

    def check_algorithms(names: Iterable[str]) -> tuple[Entry, ...]:
        return checked_entries(table, names)

    def default_algorithms() -> tuple[str, ...]:
        return default_names(table)

    def paper_algorithms() -> tuple[str, ...]:
        return paper_names(table)

    for function in (algorithm, check_algorithms, default_algorithms, paper_algorithms):
        function.__doc__ = f"See :func:`dpcore.registry.table_functions` ({function.__name__})."
    return algorithm, check_algorithms, default_algorithms, paper_algorithms


def check_scenario_sizes(scenario_sizes: Sequence[int] | np.ndarray, data_sizes: Sequence[int] | np.ndarray) -> None:
    """A run's budgets come from a scenario whose N_s must be the sites' data sizes."""
    expected, given = np.asarray(data_sizes), np.asarray(scenario_sizes)
    if expected.shape != given.shape or np.any(expected != given):
        raise InputError(f"the scenario's site sizes {given.tolist()} differ from the data's {expected.tolist()}; use "
                         "Scenario.with_sizes()", "scenario")
