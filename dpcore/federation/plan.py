"""The plan of a federated round: what every site reports (:class:`SiteBudget`), the public settings
(:class:`RoundSettings`), and every stage's noise design, audit and noise object (:func:`plan_round`), or the reason
the aggregator refuses to run the round (docs/federated.md, "One round, message by message")."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..agn.problem import OtdSettings
from ..cape import SOLVERS
from ..cape.audit import AuditReport, default_collusion
from ..cape.design import NoiseDesign
from ..cape.discrete import DiscreteDesign
from ..cape.helper_free import fixed_point, scaled_for_variant, variant_audit
from ..cape.noise_variants import federated_variant, noise_variant
from ..cape.stages import AGN_MODELS
from ..scenario import ScenarioError, Site, scenario_from_dict
from ..tensor.power import DEFAULT_ITERATIONS, DEFAULT_RESTARTS
from ..tensor.release import M3_NOISE
from ..validation import (
    InputError,
    check_choice,
    check_positive_int,
    check_rank,
    check_split,
)
from .algorithms import FEDERATED_ALGORITHMS, federated_algorithm
from .ring import stage_design
from .site import noise_shape, noise_size, noise_unique

__all__ = ["AGN_PATHS", "DEFAULT_M3_NOISE", "ROUND_OUTPUTS", "ROUND_STAGES", "RoundPlan", "RoundSettings", "RoundStage",
           "SiteBudget", "budget_digest", "plan_round"]

ROUND_STAGES: dict[str, tuple[str, ...]] = {name: entry.stages for name, entry in FEDERATED_ALGORITHMS.items()}
"""The algorithms a federated round runs and their stages, in order (read from :data:`FEDERATED_ALGORITHMS`)."""
ROUND_OUTPUTS: dict[str, str] = {name: entry.output for name, entry in FEDERATED_ALGORITHMS.items()}
"""What a federated round of each algorithm publishes, in words (a study's review prints it)."""
DEFAULT_M3_NOISE: str = OtdSettings.__dataclass_fields__["m3_noise"].default
"""The third-moment noise law a federated round draws unless told otherwise: the in-process capeAGN's default."""
AGN_PATHS = ("dense", "projected")
"""capeAGN's third-moment paths in a federated round: ``dense`` (the helper and the aggregator send D x D x D noise,
D <= MAX_FEDERATED_TENSOR_DIM) or ``projected`` (K x K x K noise projected on W; the helper receives W)."""


@dataclass(frozen=True, kw_only=True)
class SiteBudget:
    """What a site reports before a round: its :class:`~dpcore.scenario.Site` (name, N_s, eps_s, delta_s, weight
    mu_s or None for N_s / N) and D, the dimension of its data."""

    site: Site
    dim: int

    @property
    def name(self) -> str:
        return self.site.name

    def to_dict(self) -> dict[str, Any]:
        s = self.site
        return {"name": s.name, "n": int(s.n), "eps": float(s.eps), "delta": float(s.delta),
                "weight": None if s.weight is None else float(s.weight), "dim": int(self.dim)}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> SiteBudget:
        """The inverse of :meth:`to_dict` (values as written there; checked where a round is planned)."""
        site = Site(name=data["name"], n=data["n"], eps=data["eps"], delta=data["delta"], weight=data["weight"])
        return SiteBudget(site=site, dim=data["dim"])


def budget_digest(budget: SiteBudget) -> str:
    """SHA-256 of the canonical JSON of a site's reported values: a design made for them names this digest, and a
    site whose values changed since then recomputes a different one."""
    text = json.dumps(budget.to_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, kw_only=True)
class RoundSettings:
    """Public settings of a round. ``split`` is the share of eps_s and delta_s spent on the capeAGN M2 stage;
    ``solver`` picks the design (:data:`dpcore.cape.SOLVERS`); ``collusion`` None means ceil(S/3) - 1; ``model``
    is capeAGN's latent-variable model ("stm" or "mog"; MOG needs the component variance ``sigma2`` and the public
    norm bound ``norm_bound`` zeta every site divides its samples by); ``path`` is capeAGN's third-moment path
    (:data:`AGN_PATHS`) and ``m3_noise`` its noise law (:data:`dpcore.tensor.M3_NOISE`); ``n_restarts`` and
    ``n_iter`` are the tensor power method's L and N. ``noise`` is who makes the zero-sum noise
    (:data:`dpcore.cape.noise_variants.NOISE_VARIANTS`: the helper, or the sites by a secure sum); ``dropouts`` the
    sites that may vanish after the noise was set up without weakening any promise: the design is made for
    ``collusion`` + ``dropouts`` colluders (:mod:`dpcore.cape.helper_free`)."""

    algorithm: str
    k: int
    neighbouring: str = "replace-one"
    calibration: str = "analytic"
    solver: str = "collusion-robust"
    collusion: int | None = None
    split: float = 0.5
    model: str = "stm"
    sigma2: float | None = None
    norm_bound: float | None = None
    path: str = "dense"
    m3_noise: str = DEFAULT_M3_NOISE
    n_restarts: int = DEFAULT_RESTARTS
    n_iter: int = DEFAULT_ITERATIONS
    run: int = 0
    noise: str = "helper"
    dropouts: int = 0

    def validated(self) -> RoundSettings:
        check_choice(self.algorithm, "algorithm", tuple(ROUND_STAGES))
        check_positive_int(self.k, "K")
        check_choice(self.solver, "solver", SOLVERS)
        check_split(self.split)
        check_choice(self.model, "model", tuple(AGN_MODELS))
        check_choice(self.path, "path", AGN_PATHS)
        check_choice(self.m3_noise, "m3_noise", tuple(M3_NOISE))
        federated_algorithm(self.algorithm).check(self)
        check_positive_int(self.n_restarts, "restarts L")
        check_positive_int(self.n_iter, "iterations N")
        check_positive_int(self.run, "run", minimum=0)
        federated_variant(self.noise)
        check_positive_int(self.dropouts, "dropouts", minimum=0)
        if self.collusion is not None:
            check_positive_int(self.collusion, "collusion", minimum=0)
        return self

    @property
    def scaled_sigma2(self) -> float | None:
        """sigma^2 / zeta^2: the component variance of the samples every MOG site divides by zeta (None: STM)."""
        if self.model != "mog" or self.sigma2 is None or self.norm_bound is None:
            return None
        return float(self.sigma2) / float(self.norm_bound) ** 2

    def to_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "k": self.k, "neighbouring": self.neighbouring,
                "calibration": self.calibration, "solver": self.solver, "collusion": self.collusion,
                "split": self.split, "model": self.model, "sigma2": self.sigma2, "norm_bound": self.norm_bound,
                "path": self.path, "m3_noise": self.m3_noise, "n_restarts": self.n_restarts, "n_iter": self.n_iter,
                "run": self.run, "noise": self.noise, "dropouts": self.dropouts}


@dataclass(frozen=True, kw_only=True)
class RoundStage:
    """One stage of a round: its statistic, design and audit, and the noise object every party draws: ``size``
    standard normals per site and term, shaped into ``shape`` (D x D, D x D x D, or K x K x K projected on W) and
    sent as its ``unique`` entries. ``needs_w``: the helper needs W before it can draw (projected M3).
    ``discrete``: the stage's discrete design when the round's noise variant is the integer one (its terms are
    integers of the dense statistic's ``unique`` entries, ``size`` of them; :mod:`dpcore.federation.ring`), else
    None."""

    stage: str
    statistic: str
    design: NoiseDesign
    audit: AuditReport | None
    shape: tuple[int, ...]
    unique: int
    size: int
    needs_w: bool = False
    sensitivities: np.ndarray | None = None
    eps: np.ndarray | None = None
    delta: np.ndarray | None = None
    discrete: DiscreteDesign | None = None

    @property
    def bits_per_value(self) -> int | None:
        """The ring's bits of the integer variant's releases (None: fixed point on the 64-bit ring)."""
        return None if self.discrete is None else self.discrete.ring_bits

    @property
    def iid(self) -> bool:
        """Whether the noise object's unique entries are i.i.d. N(0, var): one standard normal per unique entry,
        not projected on W (every matrix stage; the dense third moment under the published law)."""
        return not self.needs_w and self.size == self.unique

    @property
    def kind(self) -> str:
        """"matrix" or "tensor": the order of the noise object."""
        return "matrix" if len(self.shape) == 2 else "tensor"


@dataclass(frozen=True, kw_only=True)
class RoundPlan:
    """The designs of a round, or the reason the aggregator refuses to run it (``refusal``)."""

    settings: RoundSettings
    budgets: tuple[SiteBudget, ...]
    digests: tuple[str, ...]
    stages: tuple[RoundStage, ...]
    refusal: str | None = None
    notes: tuple[str, ...] = field(default=())
    collusion: int = 0

    @property
    def design_collusion(self) -> int:
        """The colluders every design is made for: the promise's c plus the drop-outs the round survives."""
        return self.collusion + self.settings.dropouts

    @property
    def threshold(self) -> int:
        """t of the t-of-S sharing of every site's seeds (self-mask, and helper-free noise): the S - dropouts sites of
        any survivor set the sites accept can rebuild them, while no coalition of c colluders plus the dropouts dropped
        sites reaches t (plan_round refuses a round where S - dropouts <= c + dropouts)."""
        return len(self.budgets) - self.settings.dropouts

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.budgets)

    @property
    def dim(self) -> int:
        return self.budgets[0].dim

    def stage(self, name: str) -> RoundStage:
        for plan in self.stages:
            if plan.stage == name:
                return plan
        raise KeyError(name)


def _scenario_dict(budgets: Sequence[SiteBudget], settings: RoundSettings) -> dict[str, Any]:
    sites = []
    for b in budgets:
        entry: dict[str, Any] = {"name": b.site.name, "n": b.site.n, "eps": b.site.eps, "delta": b.site.delta}
        if b.site.weight is not None:
            entry["weight"] = b.site.weight
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
    entry = federated_algorithm(settings.algorithm)
    limit = entry.dim_limit(settings)
    if not 2 <= dim <= limit:
        path = entry.dim_words(settings)
        return f"D = {dim} is outside 2..{limit}, the range a federated {settings.algorithm} round allows{path}"
    try:
        check_rank(settings.k, dim)
    except InputError as exc:
        return str(exc)
    return None


def _noise_object(stage: str, settings: RoundSettings, dim: int) -> dict[str, Any]:
    """Shape, unique entries and standard normals of one stage's noise object (M3: by path and law)."""
    args = (stage, settings.path, dim, settings.k)
    return {"shape": noise_shape(*args), "unique": noise_unique(*args),
            "size": noise_size(stage, settings.m3_noise, settings.path, dim, settings.k),
            "needs_w": stage == "M3" and settings.path == "projected"}


def _collusion_problem(n_sites: int, settings: RoundSettings) -> str | None:
    c = default_collusion(n_sites) if settings.collusion is None else settings.collusion
    if c + settings.dropouts > n_sites - 2 and settings.dropouts > 0:
        return (f"a round of {n_sites} sites cannot survive {settings.dropouts} drop-out(s) with up to {c} "
                f"colluder(s): "
                f"colluders plus drop-outs must be at most S - 2 = {n_sites - 2}, so that at least two sites release "
                "and the secret-shared noise seeds stay out of the colluders' reach")
    if c > n_sites - 1:
        return f"collusion must be at most S - 1 = {n_sites - 1} (got {c})"
    k = settings.dropouts
    if n_sites - k <= c + k:
        return (f"the Shamir threshold of the seeds' shares, t = S - dropouts = {n_sites - k}, would be reached by "
                f"{c} colluder(s) plus {k} dropped site(s): a round of {n_sites} sites needs S >= c + 2 dropouts + 1 = "
                f"{c + 2 * k + 1}, so that the survivors can always rebuild a seed and no such coalition can")
    return None


def _integer(name: str, statistic: str, design: NoiseDesign, sens: np.ndarray, noise: dict[str, Any],
             budgets: tuple[SiteBudget, ...], settings: RoundSettings) -> dict[str, Any]:
    """The noise object of a stage of the integer variant: the unique entries of the dense statistic, with the
    stage's discrete design (InputError: the projected path, which the integer terms cannot take, or no ring)."""
    if not noise_variant(settings.noise).integer or not design.feasible:
        return noise
    if noise["needs_w"]:
        raise InputError(f"the {settings.noise} variant's sites send the unique entries of the dense statistic; it "
                         "runs on the dense path only (path='dense')")
    dim = budgets[0].dim
    sigma2 = settings.scaled_sigma2
    dd = stage_design(design, statistic, sens, dim, [b.site.n for b in budgets], sigma2)
    return noise | {"size": dd.entries, "unique": dd.entries, "discrete": dd}


def _variant(name: str, settings: RoundSettings, n_sites: int, collusion: int, statistic: str, design: NoiseDesign,
             audit: AuditReport | None, budget: tuple[Any, Any, Any]):
    """The design and audit of one stage for the round's noise variant (a variant whose views are the audit's, as the
    helper's: as planned)."""
    if noise_variant(settings.noise).audit_without_dropouts or not design.feasible:
        return design, audit
    design = scaled_for_variant(design, *budget, collusion, settings.noise)
    fixed_point(design.e_law.var_w, n_sites)  # raises InputError when the secure sum cannot carry the design
    return design, variant_audit(design, *budget, collusion, variant=settings.noise)


def plan_round(budgets: Sequence[SiteBudget], settings: RoundSettings) -> RoundPlan:
    """Design and audit every stage of a round for the reported budgets.

    capePCA: :func:`dpcore.cape.plan_scenario` for A = X X^T / N_s at (eps_s, delta_s). capeAGN:
    :func:`dpcore.cape.agn_stage_plans` (M2 at (split eps_s, split delta_s), M3 at the rest). The round is refused
    (``refusal`` says why, naming the sites and views) when a budget is invalid, the sites disagree on D, a design is
    infeasible or its audit fails; before any noise is drawn."""
    settings = settings.validated()
    budgets = tuple(budgets)
    digests = tuple(budget_digest(b) for b in budgets)

    def refuse(reason: str, stages: tuple[RoundStage, ...] = ()) -> RoundPlan:
        return RoundPlan(settings=settings, budgets=budgets, digests=digests, stages=stages, refusal=reason)

    problem = _shape_problem(budgets, settings) or _collusion_problem(len(budgets), settings)
    if problem is not None:
        return refuse(problem)
    dim = budgets[0].dim
    c = default_collusion(len(budgets)) if settings.collusion is None else settings.collusion
    collusion = c + settings.dropouts
    try:
        scenario = scenario_from_dict(_scenario_dict(budgets, settings))
        plans = federated_algorithm(settings.algorithm).plan_stages(scenario, settings, dim, collusion)
        plans = [(name, stat, *_variant(name, settings, len(budgets), collusion, stat, design, audit, budget),
                  warnings, budget) for name, stat, design, audit, warnings, budget in plans]
    except (ScenarioError, InputError) as exc:
        return refuse(str(exc))
    stages: list[RoundStage] = []
    notes: list[str] = []
    for name, statistic, design, audit, warnings, budget in plans:
        sens, eps, delta = (np.broadcast_to(np.asarray(x, dtype=float), (len(budgets),)).copy() for x in budget)
        try:
            noise = _integer(name, statistic, design, sens, _noise_object(name, settings, dim), budgets, settings)
        except InputError as exc:
            return refuse(f"stage {name}: {exc}", tuple(stages))
        stages.append(RoundStage(stage=name, statistic=statistic, design=design, audit=audit, sensitivities=sens,
                                 eps=eps, delta=delta, **noise))
        notes.extend(f"stage {name}: {w}" for w in warnings)
        if not design.feasible:
            return refuse(f"stage {name}: no feasible noise design: {design.reason}", tuple(stages))
        if audit is None or not audit.all_ok:
            return refuse(_audit_failures(name, audit), tuple(stages))
    return RoundPlan(settings=settings, budgets=budgets, digests=digests, stages=tuple(stages),
                     notes=tuple(dict.fromkeys(notes)), collusion=c)
