"""The plan of a federated round: what every site reports (:class:`SiteBudget`), the public settings
(:class:`RoundSettings`), and every stage's noise design and audit (:func:`plan_round`), or the reason the
aggregator refuses to run the round (docs/federated.md, "One round, message by message")."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cape.audit import AuditReport
from ..cape.design import NoiseDesign
from ..cape.parties import NoiseKind
from ..cape.plan import SOLVERS, plan_scenario
from ..limits import MAX_FEDERATED_MATRIX_DIM, MAX_FEDERATED_TENSOR_DIM
from ..otd.power import DEFAULT_ITERATIONS, DEFAULT_RESTARTS
from ..scenario import ScenarioError, scenario_from_dict
from ..validation import InputError, check_choice, check_positive_int, check_rank

__all__ = ["ROUND_STAGES", "RoundPlan", "RoundSettings", "RoundStage", "SiteBudget", "budget_digest", "plan_round"]

ROUND_STAGES: dict[str, tuple[str, ...]] = {"capePCA": ("A",), "capeAGN": ("M2", "M3")}
"""The algorithms a federated round runs and their stages, in order."""
_STATISTICS = {("capePCA", "A"): "pca", ("capeAGN", "M2"): "stm-m2", ("capeAGN", "M3"): "stm-m3"}
_KINDS: dict[str, NoiseKind] = {"A": "matrix", "M2": "matrix", "M3": "tensor"}


@dataclass(frozen=True, kw_only=True)
class SiteBudget:
    """What a site reports before a round: its name, N_s, (eps_s, delta_s), weight mu_s (None: N_s / N) and D."""

    name: str
    n: int
    eps: float
    delta: float
    weight: float | None
    dim: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "n": int(self.n), "eps": float(self.eps), "delta": float(self.delta),
                "weight": None if self.weight is None else float(self.weight), "dim": int(self.dim)}


def budget_digest(budget: SiteBudget) -> str:
    """SHA-256 of the canonical JSON of a site's reported values: a design made for them names this digest, and a
    site whose values changed since then recomputes a different one."""
    text = json.dumps(budget.to_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, kw_only=True)
class RoundSettings:
    """Public settings of a round. ``split`` is the share of eps_s and delta_s spent on the capeAGN M2 stage;
    ``solver`` picks the design (:data:`dpcore.cape.SOLVERS`); ``collusion`` None means ceil(S/3) - 1;
    ``n_restarts`` and ``n_iter`` are capeAGN's tensor power method's L and N."""

    algorithm: str
    k: int
    neighbouring: str = "replace-one"
    calibration: str = "analytic"
    solver: str = "collusion-robust"
    collusion: int | None = None
    split: float = 0.5
    n_restarts: int = DEFAULT_RESTARTS
    n_iter: int = DEFAULT_ITERATIONS
    run: int = 0

    def validated(self) -> RoundSettings:
        check_choice(self.algorithm, "algorithm", tuple(ROUND_STAGES))
        check_positive_int(self.k, "K")
        check_choice(self.solver, "solver", SOLVERS)
        if not 0.0 < float(self.split) < 1.0:
            raise InputError(f"the budget split must be strictly between 0 and 1 (got {self.split!r})", "split")
        check_positive_int(self.n_restarts, "restarts L")
        check_positive_int(self.n_iter, "iterations N")
        check_positive_int(self.run, "run", minimum=0)
        return self

    def to_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "k": self.k, "neighbouring": self.neighbouring,
                "calibration": self.calibration, "solver": self.solver, "collusion": self.collusion,
                "split": self.split, "n_restarts": self.n_restarts, "n_iter": self.n_iter, "run": self.run}


@dataclass(frozen=True, kw_only=True)
class RoundStage:
    """One stage of a round: its statistic, the kind and D of the noise object, its design and audit."""

    stage: str
    statistic: str
    kind: NoiseKind
    dim: int
    design: NoiseDesign
    audit: AuditReport | None


@dataclass(frozen=True, kw_only=True)
class RoundPlan:
    """The designs of a round, or the reason the aggregator refuses to run it (``refusal``)."""

    settings: RoundSettings
    budgets: tuple[SiteBudget, ...]
    digests: tuple[str, ...]
    stages: tuple[RoundStage, ...]
    refusal: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.budgets)

    def stage(self, name: str) -> RoundStage:
        for plan in self.stages:
            if plan.stage == name:
                return plan
        raise KeyError(name)


def _stage_scenario_dict(budgets: Sequence[SiteBudget], settings: RoundSettings, share: float) -> dict[str, Any]:
    sites = []
    for b in budgets:
        entry: dict[str, Any] = {"name": b.name, "n": b.n, "eps": b.eps * share, "delta": b.delta * share}
        if b.weight is not None:
            entry["weight"] = b.weight
        sites.append(entry)
    return {"sites": sites, "neighbouring": settings.neighbouring, "calibration": settings.calibration}


def _audit_failures(stage: str, audit: AuditReport, shown: int = 4) -> str:
    rows = audit.failing()
    listed = "; ".join(f"site {r.site}, {r.view} view"
                       + (f" (with {', '.join(r.coalition)})" if r.coalition else "")
                       + f": eps_eff = {r.eps_eff:.3g} > promised {r.eps:.3g}" for r in rows[:shown])
    more = f" and {len(rows) - shown} more" if len(rows) > shown else ""
    return (f"stage {stage}: the privacy audit fails for {len(rows)} view(s): {listed}{more}. The plain design does "
            "not protect a site's release against the aggregator who sees every release; use the collusion-robust "
            "solver")


def _shape_problem(budgets: tuple[SiteBudget, ...], settings: RoundSettings) -> str | None:
    """Why these budgets cannot make a round (too few sites, a name twice, D disagrees or is out of range, K),
    or None."""
    if len(budgets) < 2:
        return f"CAPE needs at least two sites (got {len(budgets)})"
    names = [b.name for b in budgets]
    if len(set(names)) != len(names):
        return "two sites reported the same name: " + ", ".join(sorted({n for n in names if names.count(n) > 1}))
    dims = {b.dim for b in budgets}
    if len(dims) != 1:
        return "the sites disagree on D: " + ", ".join(f"site {b.name} has D = {b.dim}" for b in budgets)
    dim = dims.pop()
    limit = MAX_FEDERATED_MATRIX_DIM if settings.algorithm == "capePCA" else MAX_FEDERATED_TENSOR_DIM
    if not 2 <= dim <= limit:
        return f"D = {dim} is outside 2..{limit}, the range a federated {settings.algorithm} round allows"
    try:
        check_rank(settings.k, dim)
    except InputError as exc:
        return str(exc)
    return None


def plan_round(budgets: Sequence[SiteBudget], settings: RoundSettings) -> RoundPlan:
    """Design and audit every stage of a round for the reported budgets (:func:`dpcore.cape.plan_scenario`).

    capePCA: tau_s for A = X X^T / N_s at (eps_s, delta_s). capeAGN (single topic model): M2 at
    (split eps_s, split delta_s), M3 at the rest. The round is refused (``refusal`` says why, naming the sites and
    views) when a budget is invalid, the sites disagree on D, a design is infeasible or its audit fails."""
    settings = settings.validated()
    budgets = tuple(budgets)
    digests = tuple(budget_digest(b) for b in budgets)
    stages_out: list[RoundStage] = []

    def refuse(reason: str) -> RoundPlan:
        return RoundPlan(settings=settings, budgets=budgets, digests=digests, stages=tuple(stages_out),
                         refusal=reason)

    problem = _shape_problem(budgets, settings)
    if problem is not None:
        return refuse(problem)
    dim = budgets[0].dim
    notes: list[str] = []
    stages = ROUND_STAGES[settings.algorithm]
    shares = (1.0,) if len(stages) == 1 else (settings.split, 1.0 - settings.split)
    for stage, share in zip(stages, shares, strict=True):
        statistic = _STATISTICS[(settings.algorithm, stage)]
        try:
            scenario = scenario_from_dict(_stage_scenario_dict(budgets, settings, share))
            plan = plan_scenario(scenario, statistic, solver=settings.solver, collusion=settings.collusion, dim=dim)
        except (ScenarioError, InputError) as exc:
            return refuse(f"stage {stage}: {exc}")
        # dim is D for every stage: the M3 noise is dense D x D x D (its release is K x K x K)
        stages_out.append(RoundStage(stage=stage, statistic=statistic, kind=_KINDS[stage], dim=dim,
                                     design=plan.design, audit=plan.audit))
        notes.extend(f"stage {stage}: {w}" for w in plan.warnings)
        if not plan.design.feasible:
            return refuse(f"stage {stage}: no feasible noise design: {plan.design.reason}")
        if plan.audit is None or not plan.audit.all_ok:
            return refuse(_audit_failures(stage, plan.audit))
    return RoundPlan(settings=settings, budgets=budgets, digests=digests, stages=tuple(stages_out),
                     notes=tuple(dict.fromkeys(notes)))
