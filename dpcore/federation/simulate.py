"""A whole federated round in one process (docs/federated.md): every party's computation in the order of the
real message flow, with the same functions (:mod:`dpcore.cape.parties`, :mod:`~dpcore.federation.site`,
:mod:`~dpcore.federation.outputs`) and the same streams (:func:`dpcore.seeding.party_rng`), so a run with the
parties in separate processes and the same seeds gives byte-identical aggregates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cape.parties import AGGREGATOR, HELPER, SITE, aggregator_noise, combine, helper_noise, site_noise, site_release
from ..seeding import party_rng
from ..validation import InputError
from .outputs import pca_output, tensor_output, whitening_output
from .plan import RoundPlan, RoundSettings, RoundStage, SiteBudget, plan_round
from .site import project_tensor, site_release_m3, site_statistic_m2, site_statistic_pca

__all__ = ["SimulatedRound", "simulate_round"]


@dataclass(frozen=True, kw_only=True)
class SimulatedRound:
    """The in-process run of a round: the plan, each stage's aggregate (unique entries) and the outputs
    (capePCA: eigenvalues, V_K; capeAGN: W, components, weights, eigenvalues)."""

    plan: RoundPlan
    aggregates: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]


@dataclass(frozen=True, kw_only=True)
class _Streams:
    """Every party's seed and the round's keys: the generator of any party in any stage."""

    plan: RoundPlan
    seeds: Mapping[str, int]

    def rng(self, stage: str, role: str, seed_of: str, site: str | None = None) -> np.random.Generator:
        s = self.plan.settings
        return party_rng(int(self.seeds[seed_of]), s.run, s.algorithm, stage, role, site)

    def helper(self, p: RoundStage) -> np.ndarray:
        return helper_noise(p.design.weights, p.design.var_e, p.kind, p.dim, self.rng(p.stage, HELPER, HELPER))

    def site_terms(self, p: RoundStage, i: int, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(f_s, g_s) of site ``name`` (index i) in stage ``p``: the aggregator's stream for that site, the site's."""
        f = aggregator_noise(p.design.var_f[i], p.kind, p.dim, self.rng(p.stage, AGGREGATOR, AGGREGATOR, name))
        g = site_noise(p.design.var_g[i], p.kind, p.dim, self.rng(p.stage, SITE, name, name))
        return f, g


def _matrix_stage(streams: _Streams, p: RoundStage, statistics: Mapping[str, np.ndarray]) -> np.ndarray:
    """One matrix stage (capePCA's A, capeAGN's M2): every site's release and the aggregate."""
    e = streams.helper(p)
    releases, fs = [], []
    for i, name in enumerate(streams.plan.names):
        f, g = streams.site_terms(p, i, name)
        releases.append(site_release(statistics[name], e[i], f, g))
        fs.append(f)
    return combine(releases, fs, p.design.weights)


def _m3_stage(streams: _Streams, p: RoundStage, site_data: Mapping[str, Any], w: np.ndarray) -> np.ndarray:
    """capeAGN's M3 stage: every site's whitened release, the aggregator's projected f_s removed."""
    e = streams.helper(p)
    releases, fs = [], []
    for i, name in enumerate(streams.plan.names):
        f, g = streams.site_terms(p, i, name)
        releases.append(site_release_m3(site_data[name].m3(), e[i], f, g, w))
        fs.append(project_tensor(f, p.dim, w))
    return combine(releases, fs, p.design.weights)


def simulate_round(settings: RoundSettings, budgets: Sequence[SiteBudget],
                   site_data: Mapping[str, Any], seeds: Mapping[str, int]) -> SimulatedRound:
    """Every party's computation in one process, in the order of the real message flow. ``site_data`` maps a site
    name to its D x N_s samples (capePCA) or :class:`~dpcore.otd.StmSite` (capeAGN); ``seeds`` maps "helper",
    "aggregator" and every site name to that party's seed. Raises InputError when the round would be refused."""
    plan = plan_round(budgets, settings)
    if plan.refusal:
        raise InputError(plan.refusal)
    s = plan.settings
    dim = plan.budgets[0].dim
    streams = _Streams(plan=plan, seeds=seeds)
    if s.algorithm == "capePCA":
        statistics = {name: site_statistic_pca(site_data[name]) for name in plan.names}
        aggregate = _matrix_stage(streams, plan.stage("A"), statistics)
        values, vectors = pca_output(aggregate, dim, s.k)
        return SimulatedRound(plan=plan, aggregates={"A": aggregate},
                              outputs={"eigenvalues": values, "components": vectors})
    statistics = {name: site_statistic_m2(site_data[name]) for name in plan.names}
    m2 = _matrix_stage(streams, plan.stage("M2"), statistics)
    wh = whitening_output(m2, dim, s.k)
    m3 = _m3_stage(streams, plan.stage("M3"), site_data, wh.w)
    comps, weights, values = tensor_output(m3, wh, streams.rng("M3", AGGREGATOR, AGGREGATOR),
                                           n_restarts=s.n_restarts, n_iter=s.n_iter)
    return SimulatedRound(plan=plan, aggregates={"M2": m2, "M3": m3},
                          outputs={"whitening": wh.w, "components": comps, "weights": weights, "eigenvalues": values})
