"""The list of families, in the family layer (issue 33): every subpackage of dpcore with a ``family.py`` that defines
``FAMILY`` (a :class:`~dpcore.family.Family`), in ``position`` order. A new family is its package and nothing else:
this finds it. (The families stand above this layer, so they are found by name at run time, as
:func:`dpcore.registry.collect_table` finds a table's modules, never imported here by a static import.)"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..scenario import Scenario
from ..validation import InputError, check_choice
from .descriptor import Family
from .run import Comparison

__all__ = ["FAMILY_MODULE", "compare", "families"]

FAMILY_MODULE = "family"
"""The module of a family's package that defines ``FAMILY``."""


@lru_cache(maxsize=1)
def _found() -> tuple[Family, ...]:
    root = importlib.import_module(__name__.split(".")[0])
    found = []
    for info in pkgutil.iter_modules(root.__path__):
        if not info.ispkg or not (Path(info.module_finder.path) / info.name / f"{FAMILY_MODULE}.py").is_file():
            continue  # only a family's package is imported: the others stand above this layer
        family = getattr(importlib.import_module(f"{root.__name__}.{info.name}.{FAMILY_MODULE}"), "FAMILY", None)
        if not isinstance(family, Family):
            raise TypeError(f"{root.__name__}.{info.name}.{FAMILY_MODULE} must define FAMILY = Family(...)")
        found.append(family)
    found.sort(key=lambda f: f.position)
    if len({f.name for f in found}) != len(found) or len({f.position for f in found}) != len(found):
        raise TypeError("family names and positions must be unique")
    return tuple(found)


def families() -> dict[str, Family]:
    """Every family by name, in ``position`` order (found once per process)."""
    return {f.name: f for f in _found()}


def compare(family: str, scenario: Scenario, data: Any = None, algorithms: tuple[str, ...] | None = None,
            *, runs: int = 10, seed: int = 0, collusion: int | None = None, workers: int | None = None) -> Comparison:
    """Any family's comparison through its one signature (``Family.compare``; docs/architecture.md, "The family
    contract"): ``runs`` runs of ``algorithms`` (None: the family's defaults) of the family ``family`` (a name of
    :func:`families`: "pca", "otd", "lda", ...) on the data its data settings ``data`` describe (None: their
    defaults), dealt to ``scenario``'s sites; the result carries every metric's summary, every run's record and every
    view's guarantee (:class:`~dpcore.family.Comparison`)."""
    table = families()
    chosen = table[check_choice(family, "family", tuple(table))]
    kind = chosen.sweep.data
    if data is not None and not isinstance(data, kind):
        raise InputError(f"data must be the {family} family's data settings, a {kind.__name__} (from "
                         f"{kind.__module__}), or None for its defaults (got {type(data).__name__})", "data")
    if algorithms is not None:
        algorithms = tuple(algorithms)
    return chosen.compare(scenario, data, algorithms, runs=runs, seed=seed, collusion=collusion, workers=workers)
