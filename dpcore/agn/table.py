"""The OTD algorithm table: every module of :mod:`dpcore.agn.algorithms` contributes its ``ENTRIES``
(:class:`dpcore.family.Algorithm`), collected by :func:`dpcore.registry.collect_table` and ordered by
``position``. Every list of OTD algorithms - command-line choices, page multiselects, the paper's presets, sweeps,
plot colours and legends - reads :data:`ALGORITHMS`; an unknown name is an error.

Random streams are keyed by name (:func:`dpcore.seeding.run_rng` with family "otd").
"""

from __future__ import annotations

import numpy as np

from ..family import Algorithm, RunContext, Sizes
from ..registry import check_scenario_sizes, collect_table, table_functions
from ..scenario import Scenario
from ..tensor.paths import choose_path
from . import algorithms as _package
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


ALGORITHMS: dict[str, Algorithm] = collect_table(_package, Algorithm, "OTD algorithm")
"""Every OTD algorithm by name, in table order."""


algorithm, check_algorithms, default_algorithms, paper_algorithms = table_functions(ALGORITHMS)
"""The table's lookups (:func:`dpcore.registry.table_functions`, written once for every family)."""


def communication_volume(name: str, n_sites: int, dim: int, k: int, path: str) -> int:
    """Numbers sent by one run of ``name`` on ``path`` ("dense" or "projected"); an unknown name is an error."""
    return algorithm(name).communication(Sizes(n_sites=n_sites, dim=dim, k=k, path=path))


def run_algorithm(
    name: str | Algorithm, problem: OtdProblem, scenario: Scenario, settings: OtdSettings,
    rng: np.random.Generator, *, path: str | None = None,
) -> Decomposition:
    """Run one algorithm (by name, checked, or by its table entry) on ``problem`` with budgets from ``scenario``
    (whose N_s must be the sites' sample counts). Raises :class:`~dpcore.tensor.WhiteningError` when whitening
    fails."""
    entry = name if isinstance(name, Algorithm) else algorithm(name)
    check_scenario_sizes(scenario.sizes, problem.sizes)
    if path is None:
        path = choose_path(settings.path, problem.dim, problem.k, problem.n_sites, settings.memory_budget).path
    return entry.run(RunContext(name=entry.name, problem=problem, scenario=scenario, settings=settings, rng=rng,
                                path=path))
