"""The entry type of the PCA algorithm table (:mod:`dpcore.pca.table`) and the options a runner receives.

An entry says everything every list of PCA algorithms needs: the name (the key of its random stream and of
every table), the title shown in tables and legends, a description, the communication cost as a formula (text)
and as a function, the runner, whether it runs by default, whether (and where) it is one of the journal paper's
curves, and its colour. docs/adding-a-baseline.md shows how to add one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .problem import PcaPrivacy, PcaProblem
from .result import PcaResult

__all__ = ["PcaAlgorithm", "PcaOptions", "Runner"]


@dataclass(frozen=True, kw_only=True)
class PcaOptions:
    """Settings some algorithms read: DPdisPCA's rank R (None: R = K), the local site (None: the site with the
    smallest tau_s), and whether to keep the decomposed matrix (for the scree plot)."""

    rank: int | None = None
    local_site: int | None = None
    keep_matrix: bool = False


Runner = Callable[[PcaProblem, PcaPrivacy, np.random.Generator, PcaOptions], PcaResult]


@dataclass(frozen=True, kw_only=True)
class PcaAlgorithm:
    """One row of the PCA algorithm table.

    ``communication(S, D, R)`` is the number of values one run sends (a D x D matrix counts D^2, as in the paper);
    ``communication_text`` the same as a formula with who sends what. ``position`` orders the table (and the
    default lists); ``paper_order`` is the position in the journal paper's Fig. 2 legend, None for an algorithm the
    figures do not show. ``private`` (the result depends on eps and delta), ``uses_data`` and ``collusion_robust``
    (it uses the collusion bound c) tell a sweep along which parameters the result cannot change."""

    name: str
    title: str
    description: str
    communication_text: str
    communication: Callable[[int, int, int | None], int]
    run: Runner
    colour: str
    position: int
    default: bool = True
    paper_order: int | None = None
    private: bool = True
    uses_data: bool = True
    collusion_robust: bool = False
