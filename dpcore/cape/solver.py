"""The entry of the noise-design table (:mod:`dpcore.cape.noise_designs`; docs/architecture.md, "Tables"): one
:class:`DesignSolver` per way of solving the CAPE variances (the general solver, the published closed form, the
collusion-robust calibration). Each module of :mod:`dpcore.cape.solvers` defines ``ENTRIES``; the plan of a scenario
(:func:`dpcore.cape.plan_scenario`), the command line's ``design --solver``, the explanations
(:mod:`dpcore.cape.explain`) and the Noise design page read the table, so a new solver is one module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .design import NoiseDesign, Objective, SiteBudgets

__all__ = ["OPTIONS", "DesignRequest", "DesignSolver", "FeasibleSettings"]

OPTIONS: Mapping[str, str] = {
    "objective": "the objective of a linear program (balanced or min-noise)",
    "last": "the site that plays 'site S' in the published formulas",
    "e_scale": "a factor on the helper's noise variances (>= 1)",
}
"""The settings a solver may read besides the budgets, tau_c and the collusion bound (its ``options``)."""


@dataclass(frozen=True, kw_only=True)
class DesignRequest:
    """What a plan asks a solver for, validated where it entered (:func:`dpcore.cape.plan_scenario`): the target
    ``tau_c`` (None: the DP floor), the ``objective``, the index of the ``last`` site, the helper-noise ``e_scale``
    and the ``collusion`` bound c of the audit."""

    tau_c: float | None
    objective: Objective
    last: int
    e_scale: float
    collusion: int


@dataclass(frozen=True, kw_only=True)
class FeasibleSettings:
    """Where an infeasible solver would work, as a table: a ``caption``, one row per alternative (column name ->
    value; numbers are shown in scientific notation) and the conditions as LaTeX."""

    caption: str
    rows: Sequence[Mapping[str, Any]]
    conditions_latex: str


@dataclass(frozen=True, kw_only=True)
class DesignSolver:
    """One row of the noise-design table.

    ``name``: the key (``--solver``, the page's choice, ``NoiseDesign.method``); ``title`` and ``help``: what the
    page shows; ``position`` orders the table; ``solve(budgets, request)``: the design (never raises for an
    infeasible one: ``feasible`` False with the reason); ``options``: which of :data:`OPTIONS` it reads (the page
    shows only their widgets, the plan checks only them); ``collusion_robust``: its design already keeps every
    audited view with up to c colluders (it is then its own robust alternative); ``gain_name``: its gain in
    sentences; ``explain_infeasible(design)``: sentences after the reason of an infeasible design;
    ``feasible_settings(design)``: the table of where it would work (or None)."""

    name: str
    title: str
    help: str
    position: int
    solve: Callable[[SiteBudgets, DesignRequest], NoiseDesign]
    options: frozenset[str] = field(default_factory=frozenset)
    collusion_robust: bool = False
    gain_name: str = "CAPE gain G"
    explain_infeasible: Callable[[NoiseDesign], list[str]] | None = None
    feasible_settings: Callable[[NoiseDesign], FeasibleSettings | None] | None = None

    def __post_init__(self) -> None:
        unknown = set(self.options) - set(OPTIONS)
        if unknown:
            raise TypeError(f"solver {self.name}: unknown options {', '.join(sorted(unknown))}")
