"""capeAGN on the integers (docs/math/discrete.md): both stages' capeAGN designs carried out by the discrete variant.
Each site encodes the unique entries of its M2, then of its dense M3, as round(gamma mu_s .) integers; every noise
term is an exact discrete Gaussian draw; each stage's releases are summed exactly on its ring and decoded once; the
aggregator whitens the decoded M2 and projects the decoded M3 on W itself (the sites send the C(D+2, 3) unique
entries of M3 rather than its K^3 projection: a projection by a real W would leave the ring). The dense path only."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...cape import AGN_MODELS, dp_floor, stage_sensitivities, stage_taus
from ...cape.discrete import DiscreteDesign, discrete_design, output_std_bound
from ...cape.discrete_audit import discrete_guarantees
from ...cape.discrete_flow import keyed_streams, release_sum
from ...cape.guarantee import Guarantee, coalition_size, promises
from ...family import Algorithm, GuaranteeContext, PlannerScheme, RunContext, Sizes
from ...privacy.sensitivity import statistic_bound, statistic_entries
from ...privacy.symmetric import (
    symmetric_matrix,
    symmetric_tensor,
    unique_count_matrix,
    unique_count_tensor,
    unique_entries_matrix,
    unique_entries_tensor,
)
from ...scenario import Scenario
from ...tensor.multilinear import multilinear
from ...tensor.release import STAGES, cape_stage_noise
from ...tensor.whitening import whiten
from ..algorithm import decomposition, tpm
from ..problem import Decomposition
from .distributed import planner_taus

__all__ = ["ENTRIES", "agn_discrete_designs", "planner_noise", "planner_ring"]


def agn_discrete_designs(ctx: RunContext | GuaranteeContext) -> tuple[DiscreteDesign, DiscreteDesign]:
    """The discrete designs of the M2 and the M3 stage (the capeAGN designs of the scenario, the settings' split and
    collusion bound), for D(D+1)/2 and C(D+2, 3) entries bounded by :func:`~dpcore.privacy.sensitivity.statistic_bound`
    (1, or 1 + sigma^2 and 1 + 3 sigma^2 for MOG)."""
    problem, scenario, settings = ctx.problem, ctx.scenario, ctx.settings
    sigma2 = problem.sigma2 if problem.kind == "mog" else None
    tau2, tau3 = stage_taus(scenario, problem.kind, settings.eps_split, dim=problem.dim, sigma2=sigma2)
    stage2, stage3, _ = cape_stage_noise(scenario, tau2, tau3, split=settings.eps_split,
                                         collusion=settings.collusion, relation="")
    terms = int(np.max(scenario.sizes)) + problem.dim
    return tuple(discrete_design(stage.design, sens, statistic_entries(statistic, problem.dim),
                                 value_bound=statistic_bound(statistic, sigma2), terms=terms)
                 for stage, sens, statistic in zip((stage2, stage3), stage_sensitivities(
                     scenario, problem.kind, dim=problem.dim, sigma2=sigma2), AGN_MODELS[problem.kind], strict=True))


def _run(ctx: RunContext) -> Decomposition:
    problem = ctx.problem
    dd2, dd3 = agn_discrete_designs(ctx)
    m2 = release_sum(np.stack([unique_entries_matrix(site.m2()) for site in problem.sites]), dd2,
                     keyed_streams(ctx.rng))
    wh = whiten(symmetric_matrix(m2.aggregate, problem.dim), problem.k)
    m3 = release_sum(np.stack([unique_entries_tensor(site.m3()) for site in problem.sites]), dd3,
                     keyed_streams(ctx.rng))
    tensor = multilinear(symmetric_tensor(m3.aggregate, problem.dim), wh.w)
    return replace(decomposition(ctx, wh, tpm(ctx, tensor)), bits_per_value=max(m2.bits, m3.bits))


def _guarantees(ctx: GuaranteeContext) -> tuple[Guarantee, ...]:
    """Both stages' discrete views composed exactly (docs/math/discrete.md, "The audit")."""
    a = ctx.settings.eps_split
    return discrete_guarantees(list(agn_discrete_designs(ctx)), STAGES,
                               collusion=coalition_size(ctx.scenario.n_sites, ctx.settings.collusion),
                               **promises(ctx.scenario, (a, 1.0 - a)))


@dataclass(frozen=True)
class _Shape:
    """What the discrete designs read of a problem: the model's kind, its (scaled) sigma^2 and D."""

    kind: str
    sigma2: float | None
    dim: int


def _shape(settings) -> _Shape:
    return _Shape(kind=settings.model, sigma2=settings.scaled_sigma2 if settings.model == "mog" else None,
                  dim=settings.dim)


def planner_noise(scenario: Scenario, settings) -> np.ndarray:
    """(sigma_2, sigma_3): a closed-form bound on the error per unique entry of each stage's decoded aggregate (noise
    and rounding, :func:`dpcore.cape.discrete.output_std_bound`) from capeAGN's DP floor of the stage (the planner's
    noise of discrete capeAGN; ``settings``: the planner's data settings)."""
    shape, mu = _shape(settings), scenario.weights()
    sens = stage_sensitivities(scenario, shape.kind, dim=shape.dim, sigma2=shape.sigma2)
    return np.array([output_std_bound(dp_floor(mu, tau), stage_sens, mu, statistic_entries(statistic, shape.dim))
                     for tau, stage_sens, statistic in zip(planner_taus(scenario, settings), sens,
                                                           AGN_MODELS[shape.kind], strict=True)])


def planner_ring(scenario: Scenario, settings) -> int:
    """Bits per value of the wider of the two stages' rings at ``scenario`` (InputError where no ring of 64 bits
    holds a stage)."""
    ctx = GuaranteeContext(name="cape-discrete", scenario=scenario, problem=_shape(settings),
                           settings=settings.settings())
    return max(d.ring_bits for d in agn_discrete_designs(ctx))


def communication(sizes: Sizes) -> int:
    """3 S (D(D+1)/2 + C(D+2, 3)) ring values (masked w~ shares, F~ and the releases of both stages) and W (S D K)."""
    n2, n3 = unique_count_matrix(sizes.dim), unique_count_tensor(sizes.dim)
    return 3 * sizes.n_sites * (n2 + n3) + sizes.n_sites * sizes.dim * sizes.k


ENTRIES = (Algorithm(
    name="cape-discrete", title="capeAGN (discrete)", position=15, colour="#ff9896", collusion_robust=True,
    dense_only=True,
    description="capeAGN on the integers: exact discrete Gaussian terms, each stage summed exactly on a ring",
    communication_text="3 S (D(D+1)/2 + C(D+2, 3)) ring values: masked w~_s, F~_s and y_s of both stages; W to every "
    "site (S D K)",
    communication=communication,
    run=_run,
    guarantees=_guarantees,
    planner=PlannerScheme(noise=planner_noise, ring=planner_ring, words="discrete capeAGN"),
),)
