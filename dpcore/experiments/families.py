"""The algorithm families a sweep can run, listed once (:data:`FAMILIES`, each the :class:`dpcore.family.Family` its
package defines): names, titles, colours, the default curves, metrics, and which results cannot change along a swept
parameter, all read from the families' own tables. The list itself is the family layer's
(:func:`dpcore.family.families`: every subpackage with a ``family.py``); a new family is its package and nothing
else."""

from __future__ import annotations

from ..family import Algorithm, Family, Metric, families

__all__ = ["FAMILIES", "METRICS", "PLANNED", "algorithm_colours", "algorithm_table", "algorithm_titles",
           "default_algorithms", "family", "headline_metric", "invariant_algorithms", "metric"]

FAMILIES: dict[str, Family] = families()
"""Every family by name (its ``description`` says what it is)."""
PLANNED: dict[str, Family] = {name: f for name, f in FAMILIES.items() if f.planner is not None}
"""The families the planner answers for (those with planner hooks), in the same order."""
METRICS: dict[str, dict[str, Metric]] = {name: f.metrics for name, f in FAMILIES.items()}
"""Every family's metric table (:class:`dpcore.family.Metric` by name)."""


def family(name: str) -> Family:
    """The family ``name`` (checked where a sweep specification enters)."""
    return FAMILIES[name]


def metric(name: str) -> Metric:
    """The metric ``name`` of whichever family defines it."""
    for table in METRICS.values():
        if name in table:
            return table[name]
    raise KeyError(name)


def algorithm_table(name: str) -> dict[str, Algorithm]:
    """The family's algorithm table (name -> entry)."""
    return FAMILIES[name].algorithms


def algorithm_titles(name: str) -> dict[str, str]:
    """Display names of the family's algorithms (capePCA, DPdisPCA, ... / capeAGN, conv, ...)."""
    return {key: entry.title for key, entry in algorithm_table(name).items()}


def algorithm_colours(name: str) -> dict[str, str]:
    """Plot colour of each of the family's algorithms."""
    return {key: entry.colour for key, entry in algorithm_table(name).items()}


def default_algorithms(name: str) -> tuple[str, ...]:
    """A sweep's default curves (the family's ``sweep_algorithms``): the journal paper's figures for PCA and OTD, in
    its legend order; for LDA the table's defaults (capeLDA, conventional, local, non-private, random)."""
    return FAMILIES[name].sweep_algorithms


def invariant_algorithms(name: str, parameter: str) -> frozenset[str]:
    """The algorithms whose result cannot depend on ``parameter``: along eps and delta those that are not private,
    along N_s and S those that use no data, along c every algorithm that is not collusion-robust."""
    table = algorithm_table(name)
    if parameter in ("eps", "delta"):
        return frozenset(key for key, e in table.items() if not e.private)
    if parameter in ("ns", "sites"):
        return frozenset(key for key, e in table.items() if not e.uses_data)
    return frozenset(key for key, e in table.items() if not e.collusion_robust)


def headline_metric(family: Family) -> str:
    """The family's headline metric: its planner's, else the first of its metric table."""
    return family.planner.metric if family.planner is not None else next(iter(family.metrics))
