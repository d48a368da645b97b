"""The LDA algorithm table: every module of :mod:`dpcore.lda.algorithms` contributes its ``ENTRIES``
(:class:`dpcore.family.Algorithm`), collected by :func:`dpcore.registry.collect_table` and ordered by
``position``. Every list of LDA algorithms - the command line's ``--configuration`` choices, the Topic
models page, the sweep presets, plot colours and legends - reads :data:`ALGORITHMS`; an unknown name is an error.

Random streams are keyed by name (:func:`dpcore.seeding.run_rng` with family "lda").
"""

from __future__ import annotations

import numpy as np

from ..family import Algorithm, RunContext
from ..registry import check_scenario_sizes, collect_table, table_functions
from ..scenario import Scenario
from . import algorithms as _package
from .problem import LdaProblem, LdaResult, LdaSettings

__all__ = ["ALGORITHMS", "algorithm", "check_algorithms", "configuration_names", "default_algorithms",
           "paper_algorithms", "run_algorithm"]


ALGORITHMS: dict[str, Algorithm] = collect_table(_package, Algorithm, "LDA algorithm")
"""Every LDA algorithm by name, in table order."""


algorithm, check_algorithms, default_algorithms, paper_algorithms = table_functions(ALGORITHMS)
"""The table's lookups (:func:`dpcore.registry.table_functions`, written once for every family)."""


def configuration_names() -> tuple[str, ...]:
    """The entries of paper 004's configurations (1, 2, 2ptr, 3, 4), in table order."""
    return tuple(name for name in ALGORITHMS if name[0].isdigit())


def run_algorithm(
    name: str | Algorithm, problem: LdaProblem, scenario: Scenario, settings: LdaSettings,
    rng: np.random.Generator, *, path: str | None = None,
) -> LdaResult:
    """Run one algorithm (by name, checked, or by its table entry) on ``problem`` with budgets from ``scenario``
    (whose N_s must be the sites' document counts). Raises :class:`~dpcore.tensor.WhiteningError` when a noisy M2 cannot
    be whitened."""
    entry = name if isinstance(name, Algorithm) else algorithm(name)
    check_scenario_sizes(scenario.sizes, problem.sizes)
    path = settings.m3_path(problem.dim) if path is None else path
    return entry.run(RunContext(name=entry.name, problem=problem, scenario=scenario, settings=settings, rng=rng,
                                path=path))
