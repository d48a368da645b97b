"""capePCA (Algorithm 2 of the journal paper, generalized weights of docs/math/cape.md): the real message flow.

Helper noise E_s (sum_s mu_s E_s = 0), aggregator noise F_s and site noise G_s come from a
:class:`~dpcore.cape.NoiseDesign` (the general solver by default, tau_s = Delta_s c(eps_s, delta_s)); site s
releases A_hat_s = A_s + E_s + F_s + G_s; the aggregator forms sum_s mu_s (A_hat_s - F_s) and takes its top-K
eigenvectors. Nothing is simulated at the pooled level (docs/math/corrections.md, item 7). The run streams the
noise in blocks of unique entries (every site's release of a block, then the aggregator's combination, with the
party functions of :mod:`dpcore.cape.parties`), so its memory beyond the data is O(D^2) whatever S.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...cape import CapeNoise, NoiseDesign, default_collusion, dp_floor, noise_from_normals, noise_rows
from ...cape.guarantee import Guarantee, cape_guarantees, promises
from ...cape.parties import combine, site_release
from ...family import Algorithm, GuaranteeContext, PlannerScheme, Sizes
from ...privacy.symmetric import symmetric_matrix
from ...scenario import Scenario
from ...validation import InputError, check_choice
from ..algorithm import STAGE
from ..problem import PcaPrivacy, PcaProblem, check_pair
from ..result import PcaResult, decompose

__all__ = ["ENTRIES", "BLOCK_NUMBERS", "CapeMessages", "cape_aggregate", "cape_aggregate_streamed", "cape_messages",
           "cape_pca", "noise_blocks", "planner_noise"]


@dataclass(frozen=True)
class CapeMessages:
    """Everything that travels in one capePCA run, as unique entries (S, D(D+1)/2): the helper's e_s, the
    aggregator's f_s, the sites' own g_s and the releases a_hat_s = a_s + e_s + f_s + g_s."""

    e: np.ndarray
    f: np.ndarray
    g: np.ndarray
    released: np.ndarray

    def matrices(self, name: str, dim: int) -> np.ndarray:
        """(S, D, D) symmetric matrices of one term ('e', 'f', 'g' or 'released')."""
        return symmetric_matrix(getattr(self, check_choice(name, "term", ("e", "f", "g", "released"))), dim)


BLOCK_NUMBERS = 1 << 21
"""Numbers per noise array of one block of unique entries (S x block width): 16 MiB, whatever S and D."""


def noise_blocks(n_sites: int, size: int) -> list[tuple[int, int]]:
    """Consecutive blocks [c0, c1) of the ``size`` unique entries, each at most BLOCK_NUMBERS // S wide: they
    depend on S and D only, so a run draws the same standard normals at any eps, delta, N_s or c."""
    width = max(1, BLOCK_NUMBERS // max(n_sites, 1))
    return [(c0, min(c0 + width, size)) for c0 in range(0, size, width)]


def _block_noise(design: NoiseDesign, rng: np.random.Generator, width: int) -> CapeNoise:
    """e, f, g of one block (as :func:`~dpcore.cape.sample_noise`: standard normals in the order e, f, g, one
    (:func:`~dpcore.cape.noise_rows`, width) draw, scaled in place by :func:`~dpcore.cape.noise_from_normals`; the
    helper's e from the design's diagonal-plus-rank-one factors, O(S) per entry instead of O(S^2)). A read-only
    draw (a sweep's replayed normals, :class:`dpcore.pca.sweep.ReplayNormals`) is copied before it is scaled."""
    normals = rng.standard_normal((noise_rows(design), width))
    if not normals.flags.writeable:
        normals = normals.copy()
    return noise_from_normals(design, normals, factored=True)


def cape_messages(site_moments: np.ndarray, design: NoiseDesign, rng: np.random.Generator) -> CapeMessages:
    """Sites' releases: a_hat_s = a_s + e_s + f_s + g_s per unique entry, noise drawn block by block of unique
    entries (:func:`noise_blocks`; in each block the standard normals of e, then f, then g, scaled by the design).
    Keeps every message (S x D(D+1)/2 numbers per term): for showing them; :func:`cape_aggregate_streamed` draws
    the same numbers and keeps only the aggregate."""
    if design.n_sites != site_moments.shape[0]:
        raise InputError(f"the design has {design.n_sites} sites, the data {site_moments.shape[0]}", "design")
    terms = {name: np.empty(site_moments.shape) for name in ("e", "f", "g", "released")}
    for c0, c1 in noise_blocks(*site_moments.shape):
        noise = _block_noise(design, rng, c1 - c0)
        for name in ("e", "f", "g"):
            terms[name][:, c0:c1] = getattr(noise, name)
        for s in range(design.n_sites):
            terms["released"][s, c0:c1] = site_release(site_moments[s, c0:c1], noise.e[s], noise.f[s], noise.g[s])
    return CapeMessages(terms["e"], terms["f"], terms["g"], terms["released"])


def cape_aggregate(released: np.ndarray, f: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The aggregator's estimate sum_s mu_s (a_hat_s - f_s) (unique entries), summed site by site in order
    (:func:`dpcore.cape.parties.combine`); the helper noise cancels because sum_s mu_s e_s = 0."""
    return combine(list(released), list(f), np.asarray(weights, dtype=float))


def cape_aggregate_streamed(site_moments: np.ndarray, design: NoiseDesign, rng: np.random.Generator) -> np.ndarray:
    """The same aggregate as ``cape_aggregate(cape_messages(...))``, from the same draws, one block of unique entries
    at a time: every site's release of the block (:func:`dpcore.cape.parties.site_release`) and the aggregator's
    combination (:func:`dpcore.cape.parties.combine`). Memory: the aggregate and one block of S x width numbers per
    term (BLOCK_NUMBERS), whatever S."""
    n_sites, size = site_moments.shape
    out = np.empty(size)
    for c0, c1 in noise_blocks(n_sites, size):
        noise = _block_noise(design, rng, c1 - c0)
        releases = [site_release(site_moments[s, c0:c1], noise.e[s], noise.f[s], noise.g[s]) for s in range(n_sites)]
        out[c0:c1] = combine(releases, list(noise.f), design.weights)
    return out


def communication(sizes: Sizes) -> int:
    """3 S D^2: E_s, F_s and A_hat_s for every site."""
    return 3 * sizes.n_sites * sizes.dim * sizes.dim


def cape_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *,
             keep_matrix: bool = False) -> PcaResult:
    """capePCA: the real site -> aggregator message flow (module docstring)."""
    check_pair(problem, privacy)
    estimate = cape_aggregate_streamed(problem.site_moments, privacy.design, rng)
    return decompose("cape", problem, estimate, communication(Sizes(n_sites=problem.n_sites, dim=problem.dim)),
                     privacy.design.output_std, keep_matrix)


def cape_pca_guarantees(ctx: GuaranteeContext) -> tuple[Guarantee, ...]:
    """capePCA's one stage against the audit's views (docs/math/audit.md); c of the coalition view: ``ctx.collusion``,
    else the design's own c when it is collusion-robust, else ceil(S/3) - 1."""
    design, n = ctx.privacy.design, ctx.scenario.n_sites
    c = ctx.collusion if ctx.collusion is not None else (
        design.collusion if design.collusion is not None else default_collusion(n))
    return cape_guarantees((design,), (ctx.scenario.sensitivities("pca"),), STAGE, collusion=min(int(c), n - 1),
                           **promises(ctx.scenario, (1.0,)))


def planner_noise(scenario: Scenario, settings: object = None) -> np.ndarray:
    """The std of capePCA's aggregate noise per unique entry, in closed form: tau_c, the scenario's or the DP floor
    max_s mu_s tau_s, whichever is larger (docs/math/capepca.md; the planner's noise of capePCA)."""
    return np.array([max(dp_floor(scenario.weights(), scenario.taus("pca")), float(scenario.tau_c or 0.0))])


ENTRIES = (Algorithm(
    name="cape", default=True, title="capePCA", position=10, paper_order=1, colour="#d62728", collusion_robust=True,
    description="capePCA: sites release A_s + E_s + F_s + G_s, the aggregator removes F_s and averages, E cancels",
    communication_text="3 S D^2: helper -> site E_s, aggregator -> site F_s, site -> aggregator A_hat_s",
    communication=communication,
    run=lambda ctx: cape_pca(ctx.problem, ctx.privacy, ctx.rng, keep_matrix=ctx.settings.keep_matrix),
    guarantees=cape_pca_guarantees,
    planner=PlannerScheme(noise=planner_noise),
),)
