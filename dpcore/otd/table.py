"""The OTD algorithm table: every module of :mod:`dpcore.otd.algorithms` contributes its ``ALGORITHMS`` entries,
ordered by ``position``. Every list of OTD algorithms - command-line choices, page multiselects, the paper's
presets, sweeps, plot colours and legends - reads :data:`ALGORITHMS`; an unknown name is an error.

Random streams are keyed by name (:func:`dpcore.seeding.run_rng` with family "otd").
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

import numpy as np

from ..scenario import Scenario
from ..validation import InputError, check_choice
from . import algorithms as _package
from .algorithm import OtdAlgorithm, RunContext
from .paths import choose_path
from .problem import Decomposition, OtdProblem, OtdSettings

__all__ = [
    "ALGORITHMS",
    "algorithm",
    "check_algorithms",
    "communication_volume",
    "default_algorithms",
    "paper_algorithms",
    "run_algorithm",
]


def _collect() -> dict[str, OtdAlgorithm]:
    entries: list[OtdAlgorithm] = []
    for info in pkgutil.iter_modules(_package.__path__):
        module = importlib.import_module(f"{_package.__name__}.{info.name}")
        found = getattr(module, "ALGORITHMS", None)
        if not isinstance(found, tuple) or not all(isinstance(e, OtdAlgorithm) for e in found):
            raise TypeError(f"{module.__name__} must define ALGORITHMS = (OtdAlgorithm(...), ...)")
        entries.extend(found)
    entries.sort(key=lambda e: e.position)
    table = {e.name: e for e in entries}
    if len(table) != len(entries) or len({e.position for e in entries}) != len(entries):
        raise TypeError("OTD algorithm names and positions must be unique")
    return table


ALGORITHMS: dict[str, OtdAlgorithm] = _collect()
"""Every OTD algorithm by name, in table order."""


def algorithm(name: str) -> OtdAlgorithm:
    """The entry of ``name``; an InputError lists the names when it is unknown."""
    return ALGORITHMS[check_choice(name, "algorithm", tuple(ALGORITHMS))]


def check_algorithms(names: Iterable[str]) -> tuple[OtdAlgorithm, ...]:
    """The entries of ``names`` (duplicates dropped, order kept), each checked: the boundary of every list of
    algorithms a user chooses."""
    chosen = tuple(algorithm(name) for name in dict.fromkeys(names))
    if not chosen:
        raise InputError(f"choose at least one algorithm ({', '.join(ALGORITHMS)})", "algorithms")
    return chosen


def default_algorithms() -> tuple[str, ...]:
    """The algorithms a comparison runs unless told otherwise (flag ``default``), in table order."""
    return tuple(name for name, e in ALGORITHMS.items() if e.default)


def paper_algorithms() -> tuple[str, ...]:
    """The curves of the journal paper's Figs. 3-5, in its legend order: the presets and the sweep defaults."""
    shown = [e for e in ALGORITHMS.values() if e.paper_order is not None]
    return tuple(e.name for e in sorted(shown, key=lambda e: e.paper_order))


def communication_volume(name: str, n_sites: int, dim: int, k: int, path: str) -> int:
    """Numbers sent by one run of ``name`` on ``path`` ("dense" or "projected"); an unknown name is an error."""
    return algorithm(name).communication(n_sites, dim, k, path)


def run_algorithm(
    name: str | OtdAlgorithm, problem: OtdProblem, scenario: Scenario, settings: OtdSettings,
    rng: np.random.Generator, *, path: str | None = None,
) -> Decomposition:
    """Run one algorithm (by name, checked, or by its table entry) on ``problem`` with budgets from ``scenario``
    (whose N_s must be the sites' sample counts). Raises :class:`~dpcore.otd.WhiteningError` when whitening
    fails."""
    entry = name if isinstance(name, OtdAlgorithm) else algorithm(name)
    if scenario.n_sites != problem.n_sites or np.any(scenario.sizes != problem.sizes):
        raise InputError(f"the scenario's site sizes {scenario.sizes.tolist()} differ from the data's "
                         f"{problem.sizes.tolist()}; use Scenario.with_sizes()", "scenario")
    if path is None:
        path = choose_path(settings.path, problem.dim, problem.k, problem.n_sites, settings.memory_budget).path
    return entry.run(RunContext(name=entry.name, problem=problem, scenario=scenario, settings=settings, rng=rng,
                                path=path))
