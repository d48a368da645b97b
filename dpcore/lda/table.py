"""The LDA algorithm table: every module of :mod:`dpcore.lda.algorithms` contributes its ``ALGORITHMS`` entries,
ordered by ``position``. Every list of LDA algorithms - the command line's ``--configuration`` choices, the Topic
models page, the sweep presets, plot colours and legends - reads :data:`ALGORITHMS`; an unknown name is an error.

Random streams are keyed by name (:func:`dpcore.seeding.run_rng` with family "lda").
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

import numpy as np

from ..scenario import Scenario
from ..validation import InputError, check_choice
from . import algorithms as _package
from .algorithm import LdaAlgorithm, RunContext
from .problem import LdaProblem, LdaResult, LdaSettings

__all__ = ["ALGORITHMS", "algorithm", "check_algorithms", "configuration_names", "default_algorithms",
           "run_algorithm"]


def _collect() -> dict[str, LdaAlgorithm]:
    entries: list[LdaAlgorithm] = []
    for info in pkgutil.iter_modules(_package.__path__):
        module = importlib.import_module(f"{_package.__name__}.{info.name}")
        found = getattr(module, "ALGORITHMS", None)
        if not isinstance(found, tuple) or not all(isinstance(e, LdaAlgorithm) for e in found):
            raise TypeError(f"{module.__name__} must define ALGORITHMS = (LdaAlgorithm(...), ...)")
        entries.extend(found)
    entries.sort(key=lambda e: e.position)
    table = {e.name: e for e in entries}
    if len(table) != len(entries) or len({e.position for e in entries}) != len(entries):
        raise TypeError("LDA algorithm names and positions must be unique")
    return table


ALGORITHMS: dict[str, LdaAlgorithm] = _collect()
"""Every LDA algorithm by name, in table order."""


def algorithm(name: str) -> LdaAlgorithm:
    """The entry of ``name``; an InputError lists the names when it is unknown."""
    return ALGORITHMS[check_choice(name, "algorithm", tuple(ALGORITHMS))]


def check_algorithms(names: Iterable[str]) -> tuple[LdaAlgorithm, ...]:
    """The entries of ``names`` (duplicates dropped, order kept), each checked: the boundary of every list of
    algorithms a user chooses."""
    chosen = tuple(algorithm(str(name)) for name in dict.fromkeys(names))
    if not chosen:
        raise InputError(f"choose at least one algorithm ({', '.join(ALGORITHMS)})", "algorithms")
    return chosen


def default_algorithms() -> tuple[str, ...]:
    """The algorithms a comparison runs unless told otherwise (flag ``default``), in table order."""
    return tuple(name for name, e in ALGORITHMS.items() if e.default)


def configuration_names() -> tuple[str, ...]:
    """The entries of paper 004's configurations (1, 2, 2ptr, 3, 4), in table order."""
    return tuple(name for name in ALGORITHMS if name[0].isdigit())


def run_algorithm(
    name: str | LdaAlgorithm, problem: LdaProblem, scenario: Scenario, settings: LdaSettings,
    rng: np.random.Generator, *, path: str | None = None,
) -> LdaResult:
    """Run one algorithm (by name, checked, or by its table entry) on ``problem`` with budgets from ``scenario``
    (whose N_s must be the sites' document counts). Raises :class:`~dpcore.otd.WhiteningError` when a noisy M2 cannot
    be whitened."""
    entry = name if isinstance(name, LdaAlgorithm) else algorithm(name)
    if scenario.n_sites != problem.n_sites or np.any(scenario.sizes != problem.sizes):
        raise InputError(f"the scenario's site sizes {scenario.sizes.tolist()} differ from the data's "
                         f"{problem.sizes.tolist()}; use Scenario.with_sizes()", "scenario")
    path = settings.m3_path(problem.dim) if path is None else path
    return entry.run(RunContext(name=entry.name, problem=problem, scenario=scenario, settings=settings, rng=rng,
                                path=path))
