"""A whole federated round in one process (docs/federated.md): every party's computation in the order of the
real message flow, with the same functions (:mod:`dpcore.cape.parties`, :mod:`~dpcore.federation.site`,
:mod:`~dpcore.federation.noise`, :mod:`~dpcore.federation.outputs`) and the same streams, so a run with the
parties in separate processes and the same secrets gives byte-identical aggregates: for every noise variant
(helper, helper-free, and the integer variant's exact ring sums) and with sites that dropped out after the noise was
set up."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..cape.noise_variants import NOISE_VARIANTS
from ..cape.parties import AGGREGATOR, HELPER, SITE, aggregator_noise, combine, helper_noise, site_noise
from ..validation import InputError
from .algorithms import federated_algorithm
from .masking import quantised_release, release_encoding
from .noise import noise_seed, party_generator, recovered_aggregate, secure_sum, site_draw, site_term
from .plan import RoundPlan, RoundSettings, RoundStage, SiteBudget, plan_round
from .ring import (
    RING_ROLES,
    RingSum,
    ring_aggregate,
    ring_draw,
    ring_release,
    ring_secure_sum,
    ring_site_draw,
    ring_site_term,
)
from .site import aggregator_subtract, dense_statistic, noise_entries, site_stage_release

__all__ = ["SimulatedRound", "simulate_round"]


@dataclass(frozen=True, kw_only=True)
class SimulatedRound:
    """The in-process run of a round: the plan, each stage's aggregate (unique entries) and the outputs
    (capePCA: eigenvalues, V_K; capeAGN: W, components, weights, eigenvalues); with the integer variant also each
    stage's exact integer sum (``exact``, int64: :class:`dpcore.federation.ring.RingSum`)."""

    plan: RoundPlan
    aggregates: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    exact: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class _Streams:
    """Every party's secret (or seed) and the round's keys: the generator of any party in any stage."""

    plan: RoundPlan
    seeds: Mapping[str, Any]
    generator: str

    def rng(self, stage: str, role: str, seed_of: str, site: str | None = None) -> np.random.Generator:
        s = self.plan.settings
        return party_generator(self.generator, self.seeds[seed_of], s.run, s.algorithm, stage, role, site)

    def entries(self, p: RoundStage, rows: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        s = self.plan.settings
        return noise_entries(rows, p.stage, s.m3_noise, s.path, self.plan.dim, w)

    def helper_rows(self, p: RoundStage) -> np.ndarray:
        """Every site's row of e: the helper's draw, or the sites' own draws and their secure sum."""
        if NOISE_VARIANTS[self.plan.settings.noise].helper:
            return helper_noise(p.design.e_mixing, p.size, self.rng(p.stage, HELPER, HELPER))
        s = self.plan.settings
        draws = [site_draw(noise_seed(self.seeds[name], s.run, s.algorithm, p.stage, name), self.plan, p, i)
                 for i, name in enumerate(self.plan.names)]
        total = secure_sum([encoded for encoded, _ in draws], self.plan, p)
        return np.stack([site_term(own, total, p, i) for i, (_, own) in enumerate(draws)])


def _stage(streams: _Streams, p: RoundStage, site_data: Mapping[str, Any], w: np.ndarray | None,
           dropped: Sequence[str]) -> np.ndarray:
    """One stage: every e_s, each site's f_s (aggregator) and g_s (site), the survivors' releases (quantised as
    they travel in the ring: :mod:`~dpcore.federation.masking`) and the aggregate, with the dropped sites' terms
    added back."""
    path = streams.plan.settings.path
    e = streams.entries(p, streams.helper_rows(p), w)
    releases, subtract, survivors, missing = [], [], [], []
    for i, name in enumerate(streams.plan.names):
        f_rng = streams.rng(p.stage, AGGREGATOR, AGGREGATOR, name)
        f = streams.entries(p, aggregator_noise(p.design.var_f[i], p.size, f_rng), w)
        if name in dropped:
            missing.append(float(p.design.weights[i]) * aggregator_subtract(p.stage, path, e[i], w))
            continue
        g = streams.entries(p, site_noise(p.design.var_g[i], p.size, streams.rng(p.stage, SITE, name, name)), w)
        release = site_stage_release(p.stage, path, site_data[name], e[i], f, g, w)
        releases.append(quantised_release(release, release_encoding(streams.plan, p, i, w)))
        subtract.append(aggregator_subtract(p.stage, path, f, w))
        survivors.append(i)
    partial = combine(releases, subtract, p.design.weights[survivors])
    return recovered_aggregate(partial, missing, p.design.weights, survivors)


def _ring_stage(streams: _Streams, p: RoundStage, site_data: Mapping[str, Any], dropped: Sequence[str]
                ) -> RingSum:
    """One stage of the integer variant (:mod:`dpcore.federation.ring`): every site's w~ from its noise seed, the
    secure sum W~, every E~_s; the aggregator's F~_s, the survivors' G~_s and releases on the ring; the exact sum with
    the dropped sites' E~_v added back, decoded once."""
    dd, s, names = p.discrete, streams.plan.settings, streams.plan.names
    draws = [ring_site_draw(noise_seed(streams.seeds[name], s.run, s.algorithm, p.stage, name), dd, i)
             for i, name in enumerate(names)]
    total = ring_secure_sum([encoded for encoded, _ in draws], dd)
    releases, subtract, missing, survivors = [], [], [], []
    for i, name in enumerate(names):
        f_rng = streams.rng(p.stage, RING_ROLES["f"], AGGREGATOR, name)
        f = ring_draw(dd.laws.f[i], f_rng, len(names), dd.entries)
        e = ring_site_term(draws[i][1], total, dd, i)
        if name in dropped:
            missing.append(e)
            continue
        g = ring_draw(dd.laws.g[i], streams.rng(p.stage, RING_ROLES["g"], name, name), len(names), dd.entries)
        releases.append(ring_release(dense_statistic(p.stage, site_data[name]), e, f, g, dd, i))
        subtract.append(f)
        survivors.append(i)
    return ring_aggregate(releases, subtract, missing, dd, survivors)


def simulate_round(settings: RoundSettings, budgets: Sequence[SiteBudget], site_data: Mapping[str, Any],
                   seeds: Mapping[str, Any], *, generator: str = "fast",
                   dropped: Sequence[str] = ()) -> SimulatedRound:
    """Every party's computation in one process, in the order of the real message flow. ``site_data`` maps a site
    name to its D x N_s samples (capePCA) or its :class:`~dpcore.tensor.StmSite` / :class:`~dpcore.tensor.MogSite`
    (capeAGN); ``seeds`` maps "helper", "aggregator" and every site name to that party's seed (an integer) or, with
    ``generator`` "secure", its secret (what a real run uses); ``dropped`` names sites that vanished after the noise
    was set up (their terms are recovered). Raises InputError when the round would be refused."""
    plan = plan_round(budgets, settings)
    if plan.refusal:
        raise InputError(plan.refusal)
    streams = _Streams(plan=plan, seeds=seeds, generator=generator)
    entry = federated_algorithm(plan.settings.algorithm)
    aggregates: dict[str, np.ndarray] = {}
    exact: dict[str, np.ndarray] = {}
    carried, w = None, None
    for i, p in enumerate(plan.stages):
        if p.discrete is not None:
            ring = _ring_stage(streams, p, site_data, dropped)
            exact[p.stage] = ring.exact
            aggregates[p.stage] = aggregator_subtract(p.stage, plan.settings.path, ring.aggregate, w)
        else:
            aggregates[p.stage] = _stage(streams, p, site_data, w, dropped)
        if i + 1 < len(plan.stages):
            carried, w = entry.between(p.stage, aggregates[p.stage], plan)
    last = plan.stages[-1].stage
    outputs = entry.outputs(plan, aggregates, carried, lambda: streams.rng(last, AGGREGATOR, AGGREGATOR))
    return SimulatedRound(plan=plan, aggregates=aggregates, outputs=outputs, exact=exact)
