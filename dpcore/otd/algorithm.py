"""The entry type of the OTD algorithm table (:mod:`dpcore.otd.table`), the context a runner receives, and the
steps every capeAGN-style runner shares (the third-moment noise law, the power method, the recovery).

An entry carries the name (the key of its random stream and of every table), title, description, the
communication cost as a formula (text) and as a function of (S, D, K, path), the runner, the default and paper
flags, its colour, and what its result depends on (a privacy budget, the data, the collusion bound c), which the
sweeps use to compute a result once when it cannot change along the swept parameter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..scenario import Scenario
from ..tensor.power import PowerResult, recover, tensor_power_method
from ..tensor.release import check_m3_law
from ..tensor.whitening import Whitening
from .problem import Decomposition, OtdProblem, OtdSettings

__all__ = ["OtdAlgorithm", "RunContext", "Runner"]


@dataclass(frozen=True, kw_only=True)
class RunContext:
    """One algorithm in one run: the data, the budgets (``scenario``, whose N_s are the sites' sample counts), the
    settings, the algorithm's own generator and the third-moment path ("dense" or "projected")."""

    name: str
    problem: OtdProblem
    scenario: Scenario
    settings: OtdSettings
    rng: np.random.Generator
    path: str

    @property
    def relation(self) -> str:
        return f"{self.scenario.neighbouring} neighbours, {self.scenario.calibration} calibration"

    def m3_law(self, law: str | None = None) -> str:
        """The third-moment noise law (the settings' unless ``law``), checked against the path and K
        (:func:`~dpcore.tensor.release.check_m3_law`)."""
        return check_m3_law(self.settings.m3_noise if law is None else law, self.path, self.problem.k)

    def tpm(self, tensor: np.ndarray) -> PowerResult:
        """The robust tensor power method with the settings' restarts and iterations, on this run's stream."""
        return tensor_power_method(tensor, self.problem.k, self.rng, n_restarts=self.settings.n_restarts,
                                   n_iter=self.settings.n_iter)

    def decomposition(self, whitening: Whitening, power: PowerResult, privacy: str) -> Decomposition:
        """Recover components and weights (:func:`~dpcore.tensor.power.recover`) into this run's result."""
        comps, weights, notes = recover(whitening, power, self.problem.kind, self.problem.scale)
        return Decomposition(algorithm=self.name, components=comps, weights=weights, eigenvalues=power.eigenvalues,
                             whitening_eigenvalues=whitening.eigenvalues, path=self.path, privacy=privacy,
                             notes=tuple(notes))


Runner = Callable[[RunContext], Decomposition]


@dataclass(frozen=True, kw_only=True)
class OtdAlgorithm:
    """One row of the OTD algorithm table.

    ``communication(S, D, K, path)`` is the number of values one run sends (``communication_text``: the formula).
    ``position`` orders the table; ``paper_order`` is the position in the journal paper's Figs. 3-5 legend (None:
    not in the figures). ``private`` (the result depends on eps and delta), ``uses_data`` and ``collusion_robust``
    (it uses the collusion bound c) tell a sweep along which parameters the result cannot change.
    ``dense_only``: the algorithm has no projected third-moment sampler."""

    name: str
    title: str
    description: str
    communication_text: str
    communication: Callable[[int, int, int, str], int]
    run: Runner
    colour: str
    position: int
    default: bool = False
    paper_order: int | None = None
    private: bool = True
    uses_data: bool = True
    collusion_robust: bool = False
    dense_only: bool = False
