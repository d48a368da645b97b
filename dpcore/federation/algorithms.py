"""The federated-algorithm table: every module of :mod:`dpcore.federation.families` contributes its ``ENTRIES``
(:class:`~dpcore.federation.entry.FederatedAlgorithm`), collected by :func:`dpcore.registry.collect_table` and
ordered by ``position``. The plan, the in-process round, the message log and the Flower app read it; an unknown title
is an error."""

from __future__ import annotations

from ..registry import collect_table, table_entry
from . import families as _package
from .entry import FederatedAlgorithm

__all__ = ["FEDERATED_ALGORITHMS", "federated_algorithm"]

FEDERATED_ALGORITHMS: dict[str, FederatedAlgorithm] = collect_table(_package, FederatedAlgorithm,
                                                                    "federated algorithm")
"""Every algorithm a federated round runs, by title, in table order."""


def federated_algorithm(name: str) -> FederatedAlgorithm:
    """The entry of ``name``; an InputError lists the titles when it is unknown."""
    return table_entry(FEDERATED_ALGORITHMS, name, "federated algorithm")
