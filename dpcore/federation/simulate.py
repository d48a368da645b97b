"""A whole federated round in one process (docs/federated.md): every party's computation in the order of the
real message flow, with the same functions (:mod:`dpcore.cape.parties`, :mod:`~dpcore.federation.site`,
:mod:`~dpcore.federation.outputs`) and the same streams (:func:`dpcore.seeding.party_rng`), so a run with the
parties in separate processes and the same seeds gives byte-identical aggregates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cape.parties import AGGREGATOR, HELPER, SITE, aggregator_noise, combine, helper_noise, site_noise
from ..seeding import party_rng
from ..validation import InputError
from .outputs import pca_output, tensor_output, whitening_output
from .plan import RoundPlan, RoundSettings, RoundStage, SiteBudget, plan_round
from .site import aggregator_subtract, noise_entries, site_stage_release

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

    def entries(self, p: RoundStage, rows: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        s = self.plan.settings
        return noise_entries(rows, p.stage, s.m3_noise, s.path, self.plan.dim, w)


def _stage(streams: _Streams, p: RoundStage, site_data: Mapping[str, Any], w: np.ndarray | None) -> np.ndarray:
    """One stage: the helper's e_s, each site's f_s (aggregator) and g_s (site), the releases and the aggregate."""
    path = streams.plan.settings.path
    e = streams.entries(p, helper_noise(p.design.e_mixing, p.size, streams.rng(p.stage, HELPER, HELPER)), w)
    releases, subtract = [], []
    for i, name in enumerate(streams.plan.names):
        f_rng = streams.rng(p.stage, AGGREGATOR, AGGREGATOR, name)
        f = streams.entries(p, aggregator_noise(p.design.var_f[i], p.size, f_rng), w)
        g = streams.entries(p, site_noise(p.design.var_g[i], p.size, streams.rng(p.stage, SITE, name, name)), w)
        releases.append(site_stage_release(p.stage, path, site_data[name], e[i], f, g, w))
        subtract.append(aggregator_subtract(p.stage, path, f, w))
    return combine(releases, subtract, p.design.weights)


def simulate_round(settings: RoundSettings, budgets: Sequence[SiteBudget],
                   site_data: Mapping[str, Any], seeds: Mapping[str, int]) -> SimulatedRound:
    """Every party's computation in one process, in the order of the real message flow. ``site_data`` maps a site
    name to its D x N_s samples (capePCA) or its :class:`~dpcore.tensor.StmSite` / :class:`~dpcore.tensor.MogSite`
    (capeAGN); ``seeds`` maps "helper", "aggregator" and every site name to that party's seed. Raises InputError
    when the round would be refused."""
    plan = plan_round(budgets, settings)
    if plan.refusal:
        raise InputError(plan.refusal)
    s = plan.settings
    streams = _Streams(plan=plan, seeds=seeds)
    if s.algorithm == "capePCA":
        aggregate = _stage(streams, plan.stage("A"), site_data, None)
        values, vectors = pca_output(aggregate, plan.dim, s.k)
        return SimulatedRound(plan=plan, aggregates={"A": aggregate},
                              outputs={"eigenvalues": values, "components": vectors})
    m2 = _stage(streams, plan.stage("M2"), site_data, None)
    wh = whitening_output(m2, plan.dim, s.k)
    m3 = _stage(streams, plan.stage("M3"), site_data, wh.w)
    comps, weights, values = tensor_output(m3, wh, streams.rng("M3", AGGREGATOR, AGGREGATOR), model=s.model,
                                           scale=s.norm_bound or 1.0, n_restarts=s.n_restarts, n_iter=s.n_iter)
    return SimulatedRound(plan=plan, aggregates={"M2": m2, "M3": m3},
                          outputs={"whitening": wh.w, "components": comps, "weights": weights, "eigenvalues": values})
