"""The PCA algorithm table: every module of :mod:`dpcore.pca.algorithms` contributes its ``ALGORITHM`` entry,
ordered by ``position``. Every list of PCA algorithms - command-line choices, page multiselects, the paper's
presets, sweeps, plot colours and legends - reads :data:`ALGORITHMS`; an unknown name is an error.

Random streams are keyed by name (:func:`dpcore.seeding.run_rng` with family "pca").
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

import numpy as np

from ..validation import InputError, check_choice
from . import algorithms as _package
from .algorithm import PcaAlgorithm, PcaOptions
from .problem import PcaPrivacy, PcaProblem
from .result import PcaResult

__all__ = [
    "ALGORITHMS",
    "algorithm",
    "check_algorithms",
    "communication_volume",
    "default_algorithms",
    "paper_algorithms",
    "run_algorithm",
]


def _collect() -> dict[str, PcaAlgorithm]:
    entries = []
    for info in pkgutil.iter_modules(_package.__path__):
        module = importlib.import_module(f"{_package.__name__}.{info.name}")
        entry = getattr(module, "ALGORITHM", None)
        if not isinstance(entry, PcaAlgorithm):
            raise TypeError(f"{module.__name__} must define ALGORITHM = PcaAlgorithm(...)")
        entries.append(entry)
    entries.sort(key=lambda e: e.position)
    table = {e.name: e for e in entries}
    if len(table) != len(entries) or len({e.position for e in entries}) != len(entries):
        raise TypeError("PCA algorithm names and positions must be unique")
    return table


ALGORITHMS: dict[str, PcaAlgorithm] = _collect()
"""Every PCA algorithm by name, in table order."""


def algorithm(name: str) -> PcaAlgorithm:
    """The entry of ``name``; an InputError lists the names when it is unknown."""
    return ALGORITHMS[check_choice(name, "algorithm", tuple(ALGORITHMS))]


def check_algorithms(names: Iterable[str]) -> tuple[PcaAlgorithm, ...]:
    """The entries of ``names`` (duplicates dropped, order kept), each name checked: the boundary of every list of
    algorithms a user chooses."""
    chosen = tuple(algorithm(name) for name in dict.fromkeys(names))
    if not chosen:
        raise InputError("choose at least one algorithm", "algorithms")
    return chosen


def default_algorithms() -> tuple[str, ...]:
    """The algorithms a comparison runs unless told otherwise (flag ``default``), in table order."""
    return tuple(name for name, e in ALGORITHMS.items() if e.default)


def paper_algorithms() -> tuple[str, ...]:
    """The curves of the journal paper's Fig. 2, in its legend order (``paper_order``): the presets and the
    sweep defaults."""
    shown = [e for e in ALGORITHMS.values() if e.paper_order is not None]
    return tuple(e.name for e in sorted(shown, key=lambda e: e.paper_order))


def communication_volume(name: str, n_sites: int, dim: int, rank: int | None = None) -> int:
    """Numbers sent by one run of ``name`` (its ``communication_text``); a D x D matrix counts D^2 as in the paper
    (a symmetric one could travel as D(D+1)/2). An unknown name is an error."""
    return algorithm(name).communication(n_sites, dim, rank)


def run_algorithm(name: str | PcaAlgorithm, problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
                  rank: int | None = None, local_site: int | None = None, keep_matrix: bool = False) -> PcaResult:
    """Run one algorithm, given by name (checked) or by its table entry (trusted)."""
    entry = name if isinstance(name, PcaAlgorithm) else algorithm(name)
    return entry.run(problem, privacy, rng, PcaOptions(rank=rank, local_site=local_site, keep_matrix=keep_matrix))
