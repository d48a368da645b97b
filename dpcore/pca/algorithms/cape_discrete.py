"""capePCA on the integers (docs/math/discrete.md): the capePCA design of the scenario carried out by the discrete
variant - every site encodes round(gamma mu_s A_s) (unique entries), every noise term an exact discrete Gaussian
draw, the releases summed exactly on a ring of ``bits_per_value`` bits and decoded once - then the same top-K
eigenvectors. Its guarantee is the discrete audit's (:func:`dpcore.cape.discrete_audit.discrete_guarantees`), at
most the continuous design's in every view."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...cape import default_collusion
from ...cape.discrete import DiscreteDesign, discrete_design, output_std_bound
from ...cape.discrete_audit import discrete_guarantees
from ...cape.discrete_flow import keyed_streams, release_sum
from ...cape.guarantee import Guarantee, promises
from ...family import Algorithm, GuaranteeContext, PlannerScheme, Sizes
from ...privacy.sensitivity import statistic_bound, statistic_entries
from ...scenario import Scenario
from ...validation import InputError
from ..algorithm import STAGE
from ..problem import PcaPrivacy, PcaProblem, check_pair, pca_privacy
from ..result import PcaResult, decompose
from .cape import communication
from .cape import planner_noise as cape_noise

__all__ = ["ENTRIES", "discrete_pca", "pca_discrete_design", "planner_noise", "planner_ring"]

def pca_discrete_design(privacy: PcaPrivacy, dim: int) -> DiscreteDesign:
    """The discrete design of the scenario's capePCA design for D x D second moments (D(D+1)/2 entries)."""
    scenario = privacy.scenario
    return discrete_design(privacy.design, scenario.sensitivities("pca"), statistic_entries("pca", dim),
                           value_bound=statistic_bound("pca"), terms=int(np.max(scenario.sizes)) + dim)


def discrete_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
                 keep_matrix: bool = False) -> PcaResult:
    """capePCA with the discrete design: the exact ring sum of the sites' encoded moments and their own terms
    (:func:`dpcore.cape.discrete_flow.release_sum`, streams keyed from ``rng``), decoded, then the top-K."""
    check_pair(problem, privacy)
    dd = pca_discrete_design(privacy, problem.dim)
    release = release_sum(problem.site_moments, dd, keyed_streams(rng))
    sent = communication(Sizes(n_sites=problem.n_sites, dim=problem.dim))
    result = decompose("cape-discrete", problem, release.aggregate, sent, dd.output_std(), keep_matrix)
    return replace(result, bits_per_value=release.bits)


def discrete_pca_guarantees(ctx: GuaranteeContext) -> tuple[Guarantee, ...]:
    """The discrete audit's views of the one stage; c as for capePCA (the context's, else the design's own, else
    ceil(S/3) - 1). Needs D (``PcaPrivacy.dim``: :func:`~dpcore.pca.setup.prepare_pca` and the sweeps set it,
    ``pca_privacy(..., dim=D)`` gives it)."""
    privacy, scenario = ctx.privacy, ctx.scenario
    if privacy.dim is None:
        raise InputError("the discrete design's guarantee depends on D, the data's dimension: prepare the data "
                         "with prepare_pca, or give pca_privacy(..., dim=D)", "dim")
    design, n = privacy.design, scenario.n_sites
    c = ctx.collusion if ctx.collusion is not None else (
        design.collusion if design.collusion is not None else default_collusion(n))
    dd = pca_discrete_design(privacy, privacy.dim)
    return discrete_guarantees([dd], STAGE, collusion=min(int(c), n - 1), **promises(scenario, (1.0,)))


def planner_noise(scenario: Scenario, settings) -> np.ndarray:
    """A closed-form bound on the error per unique entry of the discrete design's aggregate (noise and rounding,
    :func:`dpcore.cape.discrete.output_std_bound`) from capePCA's continuous noise, for D x D second moments
    (``settings.dim``): at most 0.15 % above it (the planner's noise of discrete capePCA)."""
    return np.array([output_std_bound(float(cape_noise(scenario)[0]), scenario.sensitivities("pca"),
                                      scenario.weights(), statistic_entries("pca", settings.dim))])


def planner_ring(scenario: Scenario, settings) -> int:
    """Bits per value of the discrete design at ``scenario`` for D = ``settings.dim`` (InputError where no ring of
    64 bits holds it)."""
    return pca_discrete_design(pca_privacy(scenario, dim=settings.dim), settings.dim).ring_bits


ENTRIES = (Algorithm(
    name="cape-discrete", title="capePCA (discrete)", position=15, colour="#ff9896", collusion_robust=True,
    description="capePCA on the integers: exact discrete Gaussian terms, releases summed exactly on a ring",
    communication_text="3 S D^2 ring values: the sites' masked w~_s (secure sum), aggregator -> site F~_s, "
    "site -> aggregator y_s",
    communication=communication,
    run=lambda ctx: discrete_pca(ctx.problem, ctx.privacy, ctx.rng, keep_matrix=ctx.settings.keep_matrix),
    guarantees=discrete_pca_guarantees,
    planner=PlannerScheme(noise=planner_noise, ring=planner_ring, words="discrete capePCA"),
),)
