"""The steps every capeAGN-style runner shares (the third-moment noise law, the power method, the recovery), as
functions of the family contract's :class:`~dpcore.family.RunContext` (``ctx.problem`` an
:class:`~dpcore.agn.OtdProblem`, ``ctx.settings`` the :class:`~dpcore.agn.OtdSettings`, ``ctx.path`` the
third-moment path). The table entries are :class:`dpcore.family.Algorithm`, collected by :mod:`dpcore.agn.table`.
"""

from __future__ import annotations

import numpy as np

from ..family import RunContext
from ..tensor.power import PowerResult, recover, tensor_power_method
from ..tensor.release import check_m3_law
from ..tensor.whitening import Whitening
from .problem import Decomposition

__all__ = ["decomposition", "m3_law", "tpm"]


def m3_law(ctx: RunContext, law: str | None = None) -> str:
    """The third-moment noise law (the settings' unless ``law``), checked against the path and K
    (:func:`~dpcore.tensor.release.check_m3_law`)."""
    return check_m3_law(ctx.settings.m3_noise if law is None else law, ctx.path, ctx.problem.k)


def tpm(ctx: RunContext, tensor: np.ndarray) -> PowerResult:
    """The robust tensor power method with the settings' restarts and iterations, on this run's stream."""
    return tensor_power_method(tensor, ctx.problem.k, ctx.rng, n_restarts=ctx.settings.n_restarts,
                               n_iter=ctx.settings.n_iter)


def decomposition(ctx: RunContext, whitening: Whitening, power: PowerResult) -> Decomposition:
    """Recover components and weights (:func:`~dpcore.tensor.power.recover`) into this run's result (its privacy is
    the entry's computed guarantee, :meth:`dpcore.family.Algorithm.guarantees_of`)."""
    comps, weights, notes = recover(whitening, power, ctx.problem.kind, ctx.problem.scale)
    return Decomposition(algorithm=ctx.name, components=comps, weights=weights, eigenvalues=power.eigenvalues,
                         whitening_eigenvalues=whitening.eigenvalues, path=ctx.path,
                         notes=tuple(notes))
