"""The numbers each CAPE party computes, independent of how its messages travel (journal paper, Algorithms 1-3 and
generalized CAPE; the message flow with real processes: docs/federated.md).

One round of capePCA (one stage, "A") or capeAGN (two stages, "M2" then "M3") has three kinds of party:

* the **helper** draws e_1..e_S jointly with sum_s mu_s e_s = 0 (:func:`helper_noise`);
* the **aggregator** draws f_s for each site (:func:`aggregator_noise`), removes it again and combines
  a = sum_s mu_s (a_hat_s - f_s) (:func:`combine`), then decomposes the aggregate
  (:func:`pca_output`, :func:`whitening_output`, :func:`tensor_output`);
* every **site** s draws its own g_s (:func:`site_noise`) and releases a_hat_s = a_s + e_s + f_s + g_s
  (:func:`site_release`; :func:`site_release_m3` for the whitened third moment).

Every symmetric object travels as its unique entries (colex order of :mod:`dpcore.mechanisms`): D(D+1)/2 for a
D x D matrix, C(D+2, 3) for a D x D x D tensor. Matrix noise is i.i.d. per unique entry; tensor noise follows
the "symmetrized" law of :mod:`dpcore.tensor` (sqrt(6) tau Sym(Z), unique-entry variance >= tau^2).

Random streams are keyed by name (:func:`party_rng`): (seed, run, algorithm, stage, role, site name), each
party with its own seed. A deployment gives every party its own secret seed (or none: fresh entropy); the
demonstration and the tests give all parties known seeds, so :func:`simulate_round` (everything in one
process) and a run with real processes give byte-identical aggregates. All arithmetic that combines
several arrays is written as element-wise sums in a fixed order (no BLAS reductions), so the result does
not depend on the number of threads. numpy's generators are not cryptographically secure: fine for simulation,
not a source for a deployment's noise.
"""

from __future__ import annotations

import hashlib
import json
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .audit import AuditReport
from .cape import NoiseDesign
from .mechanisms import (
    symmetric_matrix,
    symmetric_tensor,
    unique_count_matrix,
    unique_count_tensor,
    unique_entries_matrix,
    unique_entries_tensor,
    weighted_zero_sum_mixing,
)
from .models import StmSite, stm_site_from_words, symmetrize
from .pca import top_eigenpairs
from .plan import SOLVERS, plan_scenario
from .scenario import ScenarioError, scenario_from_dict
from .tensor import DEFAULT_ITERATIONS, DEFAULT_RESTARTS, Whitening, multilinear, recover, tensor_power_method, whiten
from .validation import InputError, check_choice, check_positive_int, check_rank

__all__ = [
    "ALGORITHMS",
    "HELPER",
    "AGGREGATOR",
    "SITE",
    "MAX_MATRIX_DIM",
    "MAX_TENSOR_DIM",
    "RoundPlan",
    "RoundSettings",
    "SiteBudget",
    "SimulatedRound",
    "StagePlan",
    "aggregator_noise",
    "budget_digest",
    "combine",
    "helper_noise",
    "noise_size",
    "party_rng",
    "pca_output",
    "plan_round",
    "project_tensor",
    "simulate_round",
    "site_noise",
    "site_release",
    "site_release_m3",
    "site_statistic_m2",
    "site_statistic_pca",
    "stm_site",
    "tensor_output",
    "unique_count",
    "whitening_output",
]

HELPER = "helper"
AGGREGATOR = "aggregator"
SITE = "site"

ALGORITHMS: dict[str, tuple[str, ...]] = {"capePCA": ("A",), "capeAGN": ("M2", "M3")}
"""The stages of each algorithm, in order."""
_STATISTICS = {("capePCA", "A"): "pca", ("capeAGN", "M2"): "stm-m2", ("capeAGN", "M3"): "stm-m3"}
_KINDS = {"A": "matrix", "M2": "matrix", "M3": "tensor"}

MAX_MATRIX_DIM = 2000
"""Largest D of a federated matrix stage: D(D+1)/2 = 2,001,000 numbers (16 MB) per message."""
MAX_TENSOR_DIM = 60
"""Largest D of a federated dense third-moment stage: D^3 = 216,000 noise draws per site, C(D+2, 3) = 39,711
unique entries per message."""


# ----------------------------------------------------------------------------------------------
# Streams and budgets
# ----------------------------------------------------------------------------------------------

def _code(text: str) -> int:
    return zlib.crc32(text.encode())


def party_rng(seed: int, run: int, algorithm: str, stage: str, role: str, site: str | None = None
              ) -> np.random.Generator:
    """The generator of one party in one stage: SeedSequence([seed, run, crc32(algorithm), crc32(stage),
    crc32(role), crc32(site)]) (the site entry only for per-site streams). Keyed by names, so it does not depend on
    which other parties or stages exist or in what order they are served."""
    key = [int(seed), int(run), _code(algorithm), _code(stage), _code(role)]
    if site is not None:
        key.append(_code(site))
    return np.random.default_rng(np.random.SeedSequence(key))


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


# ----------------------------------------------------------------------------------------------
# Planning: the design and audit of every stage
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class RoundSettings:
    """Public settings of a round. ``split`` is the share of eps_s and delta_s spent on the capeAGN M2 stage;
    ``solver`` picks the design (:data:`dpcore.plan.SOLVERS`); ``collusion`` None means ceil(S/3) - 1."""

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
        check_choice(self.algorithm, "algorithm", tuple(ALGORITHMS))
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
class StagePlan:
    """One stage: its statistic, the kind and size of the object that travels, its design and audit."""

    stage: str
    statistic: str
    kind: str  # "matrix" or "tensor"
    dim: int
    design: NoiseDesign
    audit: AuditReport | None


@dataclass(frozen=True, kw_only=True)
class RoundPlan:
    """The designs of a round, or the reason the aggregator refuses to run it (``refusal``)."""

    settings: RoundSettings
    budgets: tuple[SiteBudget, ...]
    digests: tuple[str, ...]
    stages: tuple[StagePlan, ...]
    refusal: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.budgets)

    def stage(self, name: str) -> StagePlan:
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


def plan_round(budgets: Sequence[SiteBudget], settings: RoundSettings) -> RoundPlan:
    """Design and audit every stage of a round for the reported budgets (``dpcore.plan.plan_scenario``).

    capePCA: tau_s for A = X X^T / N_s at (eps_s, delta_s). capeAGN (single topic model): M2 at
    (split eps_s, split delta_s), M3 at the rest. The round is refused (``refusal`` says why, naming the sites and
    views) when a budget is invalid, the sites disagree on D, a design is infeasible or its audit fails."""
    settings = settings.validated()
    budgets = tuple(budgets)
    digests = tuple(budget_digest(b) for b in budgets)
    stages_out: list[StagePlan] = []

    def refuse(reason: str) -> RoundPlan:
        return RoundPlan(settings=settings, budgets=budgets, digests=digests, stages=tuple(stages_out),
                         refusal=reason)

    if len(budgets) < 2:
        return refuse(f"CAPE needs at least two sites (got {len(budgets)})")
    names = [b.name for b in budgets]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        return refuse("two sites reported the same name: " + ", ".join(twice))
    dims = {b.dim for b in budgets}
    if len(dims) != 1:
        return refuse("the sites disagree on D: " + ", ".join(f"site {b.name} has D = {b.dim}" for b in budgets))
    dim = dims.pop()
    limit = MAX_MATRIX_DIM if settings.algorithm == "capePCA" else MAX_TENSOR_DIM
    if not 2 <= dim <= limit:
        return refuse(f"D = {dim} is outside 2..{limit}, the range a federated {settings.algorithm} round allows")
    try:
        check_rank(settings.k, dim)
    except InputError as exc:
        return refuse(str(exc))
    notes: list[str] = []
    stages = ALGORITHMS[settings.algorithm]
    shares = (1.0,) if len(stages) == 1 else (settings.split, 1.0 - settings.split)
    for stage, share in zip(stages, shares, strict=True):
        statistic = _STATISTICS[(settings.algorithm, stage)]
        kind = _KINDS[stage]
        try:
            scenario = scenario_from_dict(_stage_scenario_dict(budgets, settings, share))
            plan = plan_scenario(scenario, statistic, solver=settings.solver, collusion=settings.collusion, dim=dim)
        except (ScenarioError, InputError) as exc:
            return refuse(f"stage {stage}: {exc}")
        # dim is D for every stage: the M3 noise is dense D x D x D (its release is K x K x K)
        stages_out.append(StagePlan(stage=stage, statistic=statistic, kind=kind, dim=dim, design=plan.design,
                                    audit=plan.audit))
        notes.extend(f"stage {stage}: {w}" for w in plan.warnings)
        if not plan.design.feasible:
            return refuse(f"stage {stage}: no feasible noise design: {plan.design.reason}")
        if plan.audit is None or not plan.audit.all_ok:
            return refuse(_audit_failures(stage, plan.audit))
    return RoundPlan(settings=settings, budgets=budgets, digests=digests, stages=tuple(stages_out),
                     notes=tuple(dict.fromkeys(notes)))


# ----------------------------------------------------------------------------------------------
# Noise
# ----------------------------------------------------------------------------------------------

def unique_count(kind: str, dim: int) -> int:
    """Unique entries of the symmetric object that travels: D(D+1)/2 (matrix) or C(D+2, 3) (tensor)."""
    return unique_count_matrix(dim) if kind == "matrix" else unique_count_tensor(dim)


def noise_size(kind: str, dim: int) -> int:
    """Standard normals drawn per site and term: one per unique entry (matrix), D^3 (tensor, symmetrized law)."""
    return unique_count_matrix(dim) if kind == "matrix" else dim**3


def _shape(rows: np.ndarray, kind: str, dim: int) -> np.ndarray:
    """Map i.i.d. rows (variance v) to the unique entries of the noise object: unchanged for a matrix;
    sqrt(6) Sym(Z) for a tensor (unique-entry variances v, 2 v, 6 v for 3, 2, 1 distinct indices)."""
    if kind == "matrix":
        return rows
    out = np.empty((rows.shape[0], unique_count_tensor(dim)))
    for s in range(rows.shape[0]):
        out[s] = unique_entries_tensor(math.sqrt(6.0) * symmetrize(rows[s].reshape(dim, dim, dim)))
    return out


def helper_noise(weights: np.ndarray, var_e: np.ndarray, kind: str, dim: int, rng: np.random.Generator
                 ) -> np.ndarray:
    """The helper's e_s for every site (S, unique entries): e = M z with z ~ N(0, I) (m x size) and M the
    weighted zero-sum mixing of the design's weights mu_s and helper variances tau_e,s^2, so
    sum_s mu_s e_s = 0 (to rounding) and var(e_s) = tau_e,s^2 (``dpcore.mechanisms.weighted_zero_sum_mixing``,
    which raises InputError when no such law exists)."""
    mixing = weighted_zero_sum_mixing(np.asarray(weights, dtype=float), np.asarray(var_e, dtype=float))
    z = rng.standard_normal((mixing.shape[1], noise_size(kind, dim)))
    e = np.zeros((mixing.shape[0], z.shape[1]))
    for s in range(mixing.shape[0]):
        for j in range(mixing.shape[1]):
            if mixing[s, j] != 0.0:
                e[s] += mixing[s, j] * z[j]
    return _shape(e, kind, dim)


def _independent(var: float, kind: str, dim: int, rng: np.random.Generator) -> np.ndarray:
    z = rng.standard_normal(noise_size(kind, dim))
    return _shape((math.sqrt(max(float(var), 0.0)) * z)[None, :], kind, dim)[0]


def aggregator_noise(var_f: float, kind: str, dim: int, rng: np.random.Generator) -> np.ndarray:
    """The aggregator's f_s for one site (unique entries), std tau_f,s; drawn from that site's stream."""
    return _independent(var_f, kind, dim, rng)


def site_noise(var_g: float, kind: str, dim: int, rng: np.random.Generator) -> np.ndarray:
    """A site's own g_s (unique entries), std tau_g,s."""
    return _independent(var_g, kind, dim, rng)


# ----------------------------------------------------------------------------------------------
# Sites
# ----------------------------------------------------------------------------------------------

def site_statistic_pca(x: np.ndarray) -> np.ndarray:
    """Unique entries of A_s = (1/N_s) X_s X_s^T for samples as columns of ``x`` (D x N_s, ||x|| <= 1)."""
    return unique_entries_matrix(x @ x.T / x.shape[1])


def site_statistic_m2(site: StmSite) -> np.ndarray:
    """Unique entries of a capeAGN site's second moment M2_s."""
    return unique_entries_matrix(site.m2())


def stm_site(words: np.ndarray, dim: int) -> StmSite:
    """A site's single-topic-model documents (N_s x L word indices, L >= 3), with the paper's estimator (the
    first three words of each document)."""
    return stm_site_from_words(words, dim, "first")


def site_release(statistic: np.ndarray, e: np.ndarray, f: np.ndarray, g: np.ndarray) -> np.ndarray:
    """a_hat_s = a_s + e_s + f_s + g_s (unique entries, added in this order)."""
    release = statistic + e
    release += f
    release += g
    return release


def project_tensor(unique: np.ndarray, dim: int, w: np.ndarray) -> np.ndarray:
    """Unique entries of T(W, W, W) (K x K x K) for the symmetric D x D x D tensor T with these unique entries."""
    return unique_entries_tensor(multilinear(symmetric_tensor(unique, dim), w))


def site_release_m3(m3: np.ndarray, e: np.ndarray, f: np.ndarray, g: np.ndarray, w: np.ndarray) -> np.ndarray:
    """M3~_s = (M3_s + E3_s + F3_s + G3_s)(W, W, W), unique entries of the K x K x K result (Algorithm 3, step 3).
    ``m3`` is the dense D x D x D moment; e, f, g are unique entries."""
    dim = m3.shape[0]
    tensor = m3 + symmetric_tensor(e, dim)
    tensor += symmetric_tensor(f, dim)
    tensor += symmetric_tensor(g, dim)
    return unique_entries_tensor(multilinear(tensor, w))


# ----------------------------------------------------------------------------------------------
# Aggregator
# ----------------------------------------------------------------------------------------------

def combine(releases: Sequence[np.ndarray], subtract: Sequence[np.ndarray], weights: np.ndarray) -> np.ndarray:
    """a = sum_s mu_s (a_hat_s - f_s), summed site by site in the given order (the helper noise cancels because
    sum_s mu_s e_s = 0)."""
    out = np.zeros_like(np.asarray(releases[0], dtype=float))
    for mu, release, f in zip(weights, releases, subtract, strict=True):
        out += float(mu) * (release - f)
    return out


def pca_output(aggregate: np.ndarray, dim: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The top-K eigenvalues and eigenvectors (D x K) of the symmetric aggregate (capePCA's output V_K)."""
    return top_eigenpairs(symmetric_matrix(aggregate, dim), k)


def whitening_output(aggregate: np.ndarray, dim: int, k: int) -> Whitening:
    """W = U D^(-1/2) from the top-K eigenpairs of the aggregated M2 (raises ``WhiteningError``, never NaN)."""
    return whiten(symmetric_matrix(aggregate, dim), k)


def tensor_output(aggregate: np.ndarray, whitening: Whitening, rng: np.random.Generator, *, n_restarts: int,
                  n_iter: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Robust tensor power method on the aggregated K x K x K M3~ and recovery (single topic model):
    (components K x D, weights K, eigenvalues K)."""
    k = whitening.w.shape[1]
    power = tensor_power_method(symmetric_tensor(aggregate, k), k, rng, n_restarts=n_restarts, n_iter=n_iter)
    comps, weights, _ = recover(whitening, power, "stm")
    return comps, weights, power.eigenvalues


# ----------------------------------------------------------------------------------------------
# The whole round in one process
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class SimulatedRound:
    """The in-process run of a round: the plan, each stage's aggregate (unique entries) and the outputs
    (capePCA: eigenvalues, V_K; capeAGN: W, components, weights, eigenvalues)."""

    plan: RoundPlan
    aggregates: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]


def simulate_round(settings: RoundSettings, budgets: Sequence[SiteBudget], site_data: Mapping[str, Any],
                   seeds: Mapping[str, int]) -> SimulatedRound:
    """Every party's computation in one process, in the order of the real message flow, with the same functions
    and streams. ``site_data`` maps a site name to its D x N_s samples (capePCA) or :class:`StmSite` (capeAGN);
    ``seeds`` maps "helper", "aggregator" and every site name to that party's seed.
    Raises InputError when the round would be refused."""
    plan = plan_round(budgets, settings)
    if plan.refusal:
        raise InputError(plan.refusal)
    s = plan.settings
    names = plan.names
    dim = budgets[0].dim
    helper_seed, agg_seed = int(seeds[HELPER]), int(seeds[AGGREGATOR])
    aggregates: dict[str, np.ndarray] = {}
    outputs: dict[str, np.ndarray] = {}
    helper = {p.stage: helper_noise(p.design.weights, p.design.var_e, p.kind, p.dim,
                                    party_rng(helper_seed, s.run, s.algorithm, p.stage, HELPER))
              for p in plan.stages}

    def noise_terms(p: StagePlan, i: int, name: str) -> tuple[np.ndarray, np.ndarray]:
        f = aggregator_noise(p.design.var_f[i], p.kind, p.dim,
                             party_rng(agg_seed, s.run, s.algorithm, p.stage, AGGREGATOR, name))
        g = site_noise(p.design.var_g[i], p.kind, p.dim,
                       party_rng(int(seeds[name]), s.run, s.algorithm, p.stage, SITE, name))
        return f, g

    if s.algorithm == "capePCA":
        p = plan.stage("A")
        releases, fs = [], []
        for i, name in enumerate(names):
            f, g = noise_terms(p, i, name)
            releases.append(site_release(site_statistic_pca(site_data[name]), helper["A"][i], f, g))
            fs.append(f)
        aggregates["A"] = combine(releases, fs, p.design.weights)
        outputs["eigenvalues"], outputs["components"] = pca_output(aggregates["A"], dim, s.k)
        return SimulatedRound(plan=plan, aggregates=aggregates, outputs=outputs)
    p2, p3 = plan.stage("M2"), plan.stage("M3")
    releases, fs = [], []
    for i, name in enumerate(names):
        f, g = noise_terms(p2, i, name)
        releases.append(site_release(site_statistic_m2(site_data[name]), helper["M2"][i], f, g))
        fs.append(f)
    aggregates["M2"] = combine(releases, fs, p2.design.weights)
    wh = whitening_output(aggregates["M2"], dim, s.k)
    releases, fs = [], []
    for i, name in enumerate(names):
        f, g = noise_terms(p3, i, name)
        releases.append(site_release_m3(site_data[name].m3(), helper["M3"][i], f, g, wh.w))
        fs.append(project_tensor(f, dim, wh.w))
    aggregates["M3"] = combine(releases, fs, p3.design.weights)
    comps, weights, values = tensor_output(aggregates["M3"], wh, party_rng(agg_seed, s.run, s.algorithm, "M3",
                                                                            AGGREGATOR),
                                           n_restarts=s.n_restarts, n_iter=s.n_iter)
    outputs.update(whitening=wh.w, components=comps, weights=weights, eigenvalues=values)
    return SimulatedRound(plan=plan, aggregates=aggregates, outputs=outputs)
