"""The PCA algorithm table: every module of :mod:`dpcore.pca.algorithms` contributes its ``ENTRIES``
(:class:`dpcore.family.Algorithm`), collected by :func:`dpcore.registry.collect_table` and ordered by ``position``.
Every list of PCA algorithms - command-line choices, page multiselects, the paper's presets, sweeps, plot colours and
legends - reads :data:`ALGORITHMS`; an unknown name is an error.

Random streams are keyed by name (:func:`dpcore.seeding.run_rng` with family "pca").
"""

from __future__ import annotations

import numpy as np

from ..family import Algorithm, RunContext, Sizes
from ..registry import collect_table, table_functions
from . import algorithms as _package
from .algorithm import PcaOptions
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


ALGORITHMS: dict[str, Algorithm] = collect_table(_package, Algorithm, "PCA algorithm")
"""Every PCA algorithm by name, in table order."""


algorithm, check_algorithms, default_algorithms, paper_algorithms = table_functions(ALGORITHMS)
"""The table's lookups (:func:`dpcore.registry.table_functions`, written once for every family)."""


def communication_volume(name: str, n_sites: int, dim: int, rank: int | None = None) -> int:
    """Numbers sent by one run of ``name`` (its ``communication_text``); a D x D matrix counts D^2 as in the paper
    (a symmetric one could travel as D(D+1)/2). An unknown name is an error."""
    return algorithm(name).communication(Sizes(n_sites=n_sites, dim=dim, rank=rank))


def run_algorithm(name: str | Algorithm, problem: PcaProblem, privacy: PcaPrivacy | None, rng: np.random.Generator,
                  *, rank: int | None = None, local_site: int | None = None, keep_matrix: bool = False) -> PcaResult:
    """Run one algorithm, given by name (checked) or by its table entry (trusted)."""
    entry = name if isinstance(name, Algorithm) else algorithm(name)
    return entry.run(RunContext(name=entry.name, problem=problem, privacy=privacy,
                                scenario=None if privacy is None else privacy.scenario, rng=rng,
                                settings=PcaOptions(rank=rank, local_site=local_site, keep_matrix=keep_matrix)))
