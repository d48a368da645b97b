"""The message flow of capeAGN and its baselines (docs/math/capeagn.md): every site's release of M2 and of the
projected M3, perturbed by CAPE noise (e, f, g), independent noise, AVN noise or none; the aggregator's sum.

The flow is run for real: helper noise e (zero-sum), aggregator noise f (subtracted), site noise g, every term
symmetric (docs/math/corrections.md, items 1 and 7). Each stage that draws noise takes one key from the run's
generator (M2 stage, then M3 stage) and draws its standard normals by keyed chunks of coordinates
(:mod:`dpcore.normals`: SFC64, on every core), which are only scaled afterwards: re-seeding reproduces the same
underlying standard normals at any eps, delta or N_s (common random numbers for sweeps), and the numbers do not
depend on the blocks the flow is processed in nor on the threads that draw them. The M2 flow is processed chunk by
chunk (draw, form every site's release, combine), so its noise arrays stay in the cache and never exceed a chunk.

Third-moment noise law (``law``, :data:`M3_NOISE`): ``published`` (default) = i.i.d. N(0, tau^2) unique entries,
mirrored (the paper's AGN, preprint Appendix E.1): on the dense path drawn as such, on the projected path drawn
already projected with exactly the law of P(W, W, W) (:mod:`dpcore.tensor.projected_noise`), so the choice of path
never changes the distribution of a result. ``symmetrized`` = sqrt(6) tau Sym(Z) (unique-entry variances tau^2,
2 tau^2, 6 tau^2 for 3, 2, 1 distinct indices: more noise than the privacy argument needs, kept for comparison); on
the projected path Z(W, W, W) has the law of Y(R, R, R) with Y K x K x K i.i.d. N(0, 1) and R^T R = W^T W (R from
a QR of W) (docs/math/capeagn.md, "Large D: the projected path").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from ..cape import (
    NoiseDesign,
    SiteBudgets,
    noise_from_normals,
    noise_rows,
    scenario_budgets,
    solve_collusion_robust,
    solve_general,
)
from ..cape.parties import combine, site_release
from ..limits import EIGH_MAX_DIM, MAX_PUBLISHED_PROJECTED_K
from ..normals import NormalStream, map_chunks, stage_stream
from ..privacy.avn import avn_noise
from ..privacy.symmetric import symmetric_tensor, unique_count_tensor
from ..scenario import Scenario
from ..validation import InputError, check_choice
from .moments import MomentSite, StmSite
from .multilinear import multilinear, symmetrize
from .projected_noise import published_factor, published_projected_tensor

__all__ = ["BLOCK_UNIQUE", "FLOW_MAX_NORMALS", "M3_NOISE", "STAGES", "M3Noise", "StageMessages", "StageNoise",
           "aggregate_std", "cape_stage_noise", "check_m3_law", "m3_noise_size", "m3_noise_tensor", "release_m2",
           "release_m3"]

M3Noise = Literal["published", "symmetrized"]
M3_NOISE: dict[M3Noise, str] = {
    "published": "i.i.d. N(0, tau^2) unique entries mirrored (the paper's AGN); exact on both paths (projected: "
    f"K <= {MAX_PUBLISHED_PROJECTED_K})",
    "symmetrized": "sqrt(6) tau Sym(Z), Z i.i.d. N(0, 1): unique-entry variances tau^2, 2 tau^2, 6 tau^2 (more noise "
    "on repeated indices than needed); any K",
}
STAGES = ("M2", "M3")
"""The two release stages of the two-stage flows (the second moment, then the whitened third), as guarantees name
them; a run splits each site's budget a : (1 - a) between them."""
BLOCK_UNIQUE = 1 << 18
"""Unique M2 entries per block of the CAPE flow (bounds the noise arrays)."""
FLOW_MAX_NORMALS = 10**8
"""Standard normals up to which the M2 stage runs the per-site message flow when its messages are not kept (about a
second of drawing on one core); above, it draws the aggregate from its exact law (:func:`release_m2`)."""


@dataclass(frozen=True, eq=False)
class StageNoise:
    """How one stage's releases are perturbed: ``cape`` (a NoiseDesign: e, f, g), ``independent``
    (N(0, stds_s^2) added by each site), ``avn`` (vector noise with parameter ``beta``, one site, M3
    only) or ``none``."""

    mode: str
    design: NoiseDesign | None = None
    stds: np.ndarray | None = None
    beta: float | None = None


@dataclass(frozen=True, eq=False)
class StageMessages:
    """What was sent in one stage (kept on request, small D only): per-site releases and the e, f, g
    terms, each (S, size) - unique entries of M2 in colex order, or projected K x K x K tensors."""

    releases: np.ndarray
    e: np.ndarray | None
    f: np.ndarray | None
    g: np.ndarray | None


def _feasible(design: NoiseDesign, stage: str) -> NoiseDesign:
    if not design.feasible:
        raise InputError(f"no CAPE noise design for the {stage} stage: {design.reason}", "scenario")
    return design


@lru_cache(maxsize=16)
def _stage_design(names: tuple[str, ...], tau: tuple[float, ...], weights: tuple[float, ...],
                  collusion: int | None) -> NoiseDesign:
    """The design of one stage for these budgets (cached: every run of a comparison has the same budgets, and a
    collusion-robust design for many sites takes seconds)."""
    budgets = SiteBudgets(names, np.array(tau), np.array(weights))
    return solve_general(budgets) if collusion is None else solve_collusion_robust(budgets, collusion)


def _design_of(budgets: SiteBudgets, collusion: int | None) -> NoiseDesign:
    return _stage_design(budgets.names, tuple(budgets.tau.tolist()), tuple(budgets.weights.tolist()), collusion)


def cape_stage_noise(scenario: Scenario, tau2: np.ndarray, tau3: np.ndarray, *, split: float,
                     collusion: int | None, relation: str) -> tuple[StageNoise, StageNoise, str]:
    """Both stages' CAPE noise (general-solver designs with tau_c at the DP floor, or collusion-robust ones for
    ``collusion`` colluders) for the tau_s of the M2 and the M3 stage, and the privacy statement. An infeasible
    design, or a collusion bound outside 0..S-1, is an InputError that says why."""
    budgets2, budgets3 = scenario_budgets(scenario, tau2), scenario_budgets(scenario, tau3)
    if collusion is None:
        stage2 = StageNoise("cape", _feasible(_design_of(budgets2, None), "M2"))
        stage3 = StageNoise("cape", _feasible(_design_of(budgets3, None), "M3"))
        return stage2, stage3, (
            f"each site's M2 release is calibrated to (a eps_s, a delta_s) and its M3 release to ((1-a) eps_s, "
            f"(1-a) delta_s), a = {split:g} ({relation}); tau_c at the DP floor of each stage (general design); the "
            "aggregator sees every release, and what it and colluding sites learn is the audit's, composed over both "
            "stages: see the guarantees")
    if collusion > scenario.n_sites - 1:
        raise InputError(f"collusion must be an integer in 0..S-1 = {scenario.n_sites - 1} (got {collusion!r})",
                         "collusion")
    stage2 = StageNoise("cape", _feasible(_design_of(budgets2, collusion), "M2"))
    stage3 = StageNoise("cape", _feasible(_design_of(budgets3, collusion), "M3"))
    return stage2, stage3, (
        f"each site's M2 release is calibrated to (a eps_s, a delta_s) and its M3 release to ((1-a) eps_s, "
        f"(1-a) delta_s), a = {split:g} ({relation}); collusion-robust design in both stages: every view of the "
        f"aggregator with up to {collusion} colluding site(s) keeps sigma_eff >= tau_s (see the guarantees)")


def _column_of(u: int) -> int:
    """The column j of colex unique entry u = j (j + 1) / 2 + i (0 <= i <= j)."""
    j = (math.isqrt(8 * u + 1) - 1) // 2
    return j


def _unique_blocks(total: int, width: int, max_unique: int | None = None) -> list[tuple[int, int]]:
    """Blocks [u0, u1) of the unique entries (colex order) of at most ``max_unique`` entries, each a whole number of
    chunks of ``width`` (:mod:`dpcore.normals`), so that a block draws exactly its own chunks."""
    max_unique = BLOCK_UNIQUE if max_unique is None else max_unique
    step = max(1, max_unique // width) * width
    return [(u0, min(u0 + step, total)) for u0 in range(0, total, step)]


def _unique_range(sites: Sequence[MomentSite], u0: int, u1: int) -> np.ndarray:
    """Every site's unique M2 entries u0..u1-1 (S x (u1 - u0), colex order): sparse STM moments scattered from their
    stored upper-triangle entries, other sites gathered from their dense block of the columns the range touches."""
    data = np.zeros((len(sites), u1 - u0))
    j0, j1 = _column_of(u0), _column_of(u1 - 1) + 1
    base = j0 * (j0 + 1) // 2
    mask = None
    for s, site in enumerate(sites):
        if isinstance(site, StmSite):
            positions, values = site.m2_upper
            lo, hi = np.searchsorted(positions, (u0, u1))
            data[s, positions[lo:hi] - u0] = values[lo:hi]
            continue
        if mask is None:
            mask = np.arange(j1)[None, :] <= (j0 + np.arange(j1 - j0))[:, None]  # (cols, j1): i <= j
        data[s] = site.m2_block(j0, j1).T[mask][u0 - base:u1 - base]
    return data


def _write_unique(out: np.ndarray, u0: int, values: np.ndarray) -> None:
    """Write the unique entries u0.. (colex) into the lower triangle of ``out``: column j's entries (i <= j) are row
    j's first j + 1 entries."""
    u1 = u0 + values.size
    for j in range(_column_of(u0), _column_of(u1 - 1) + 1):
        first = j * (j + 1) // 2
        lo, hi = max(u0, first), min(u1, first + j + 1)
        out[j, lo - first:hi - first] = values[lo - u0:hi - u0]


_MIRROR_TILE = 256
"""Rows and columns of one tile of :func:`_mirror_lower`: at D = 600, 2,000 and 5,000 (float64) 256 took 0.29, 5.4 and
28 ms, 1024 took 2.4, 17 and 62 ms (one thread; the same copy)."""


@lru_cache(maxsize=8)
def _strict_upper(n: int) -> np.ndarray:
    """The n x n mask of the entries above the diagonal (read-only, shared)."""
    mask = np.triu(np.ones((n, n), dtype=bool), 1)
    mask.flags.writeable = False
    return mask


def _mirror_lower(out: np.ndarray) -> None:
    """Copy the lower triangle of the square ``out`` onto its upper triangle, tile by tile (cache-friendly): a diagonal
    tile through a mask of its upper entries, every other tile as the transpose of its mirror image."""
    dim = out.shape[0]
    for i0 in range(0, dim, _MIRROR_TILE):
        i1 = min(i0 + _MIRROR_TILE, dim)
        tile = out[i0:i1, i0:i1]
        np.copyto(tile, tile.T, where=_strict_upper(i1 - i0))
        for j0 in range(i1, dim, _MIRROR_TILE):
            j1 = min(j0 + _MIRROR_TILE, dim)
            out[i0:i1, j0:j1] = out[j0:j1, i0:i1].T


def _noise_rows(noise: StageNoise, n_sites: int) -> int:
    """Standard normals per coordinate of a stage: e, f, g rows for CAPE, one per site for independent noise."""
    return noise_rows(noise.design) if noise.mode == "cape" else n_sites


def _draw_terms(noise: StageNoise, normals: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray]:
    """(e, f, g) of every site from the stage's standard normals (rows x n): CAPE's three terms, or independent noise
    N(0, stds_s^2) as g alone."""
    if noise.mode == "cape":
        drawn = noise_from_normals(noise.design, normals)
        return drawn.e, drawn.f, drawn.g
    if noise.mode == "independent":
        normals *= np.asarray(noise.stds, float)[:, None]
        return None, None, normals
    raise InputError(f"unknown noise mode {noise.mode!r}")


def _flow(data: np.ndarray, weights: np.ndarray, e: np.ndarray | None, f: np.ndarray | None, g: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """Each site forms its release (:func:`dpcore.cape.parties.site_release`); the aggregator takes
    sum_s mu_s (release_s - f_s) (:func:`dpcore.cape.parties.combine`): the real flow, not pooled noise on a pooled
    statistic. Returns (releases, aggregate)."""
    releases = site_release(data, e, f, g)
    return releases, combine(releases, f, weights, stacked=True)


def _combine_unique(data: np.ndarray, weights: np.ndarray, noise: StageNoise, stream: NormalStream | None, u0: int,
                    kept: list | None) -> np.ndarray:
    """One round of the protocol on the unique entries u0..u0+n-1 of every site's statistic (S x n, u0 on a chunk
    boundary of ``stream``), chunk by chunk (each chunk drawn, released and combined on one of the drawing threads);
    returns the aggregate (n,)."""
    if noise.mode == "none":
        return combine(data, None, weights, stacked=True)
    n = data.shape[1]
    out = np.empty(n)
    width = stream.width
    first = u0 // width
    parts: dict[int, StageMessages] = {}

    def chunk(c: int) -> None:
        lo, hi = stream.bounds(c)
        e, f, g = _draw_terms(noise, stream.chunk(c))
        releases, out[lo - u0:hi - u0] = _flow(data[:, lo - u0:hi - u0], weights, e, f, g)
        if kept is not None:
            parts[c] = StageMessages(releases, e, f, g)

    map_chunks(chunk, range(first, -(-(u0 + n) // width)))
    if kept is not None:
        kept.extend(parts[c] for c in sorted(parts))
    return out


def _combine_shaped(data: np.ndarray, weights: np.ndarray, noise: StageNoise, stream: NormalStream | None,
                    shape: Callable[[np.ndarray], np.ndarray] | None, kept: list | None) -> np.ndarray:
    """One round of the protocol on statistics of any shape (S, ...): the stage's normals for its ``stream.size``
    coordinates, each site's row mapped by ``shape`` (symmetric tensor, projection) before it is added."""
    if noise.mode == "none":
        return combine(data, None, weights, stacked=True)
    n_sites = data.shape[0]

    def shaped(rows: np.ndarray | None) -> np.ndarray | None:
        return None if rows is None or shape is None else np.stack([shape(rows[s]) for s in range(n_sites)])

    e, f, g = (shaped(term) for term in _draw_terms(noise, stream.columns(0, stream.size)))
    releases, agg = _flow(data, weights, e, f, g)
    if kept is not None:
        kept.append(StageMessages(releases, e, f, g))
    return agg


def _stream(rng: np.random.Generator, noise: StageNoise, n_sites: int, size: int) -> NormalStream | None:
    """The stage's keyed stream (one key from ``rng``), or None for a flow without noise (nothing is drawn)."""
    return None if noise.mode == "none" else stage_stream(rng, _noise_rows(noise, n_sites), size)


def aggregate_std(noise: StageNoise, weights: np.ndarray) -> float:
    """The std of the noise sum_s mu_s (M2_hat_s - F2_s - M2_s) = sum_s mu_s (e_s + g_s) that the M2 flow leaves in
    each unique entry of the aggregate (docs/math/capeagn.md, "Drawing the noise"): for CAPE
    sqrt(||e_mixing^T mu||^2 + sum_s mu_s^2 var_g,s) (the first term is 0 for every design, sum_s mu_s e_s = 0, and
    is kept so that the law is the flow's for any mixing; f is removed exactly), for independent noise
    sqrt(sum_s mu_s^2 stds_s^2)."""
    mu = np.asarray(weights, dtype=float)
    if noise.mode == "cape":
        helper = noise.design.e_mixing.T @ mu
        return math.sqrt(float(helper @ helper) + float(np.sum(mu**2 * noise.design.var_g)))
    if noise.mode == "independent":
        return math.sqrt(float(np.sum(mu**2 * np.asarray(noise.stds, float) ** 2)))
    raise InputError(f"unknown noise mode {noise.mode!r}")


def _combine_law(data: np.ndarray, weights: np.ndarray, std: float, stream: NormalStream, u0: int) -> np.ndarray:
    """sum_s mu_s M2_s + std z on the unique entries u0..u0+n-1 (u0 on a chunk boundary of the one-row ``stream``):
    the aggregate of the M2 flow drawn from its exact law, one standard normal per entry, chunk by chunk."""
    n = data.shape[1]
    out = np.tensordot(weights, data, axes=1)

    def chunk(c: int) -> None:
        lo, hi = stream.bounds(c)
        out[lo - u0:hi - u0] += std * stream.chunk(c)[0]

    map_chunks(chunk, range(u0 // stream.width, -(-(u0 + n) // stream.width)))
    return out


def release_m2(
    sites: Sequence[MomentSite], weights: np.ndarray, noise: StageNoise, rng: np.random.Generator,
    *, keep_messages: bool = False,
) -> tuple[np.ndarray, StageMessages | None]:
    """Stage 1: M2_hat = sum_s mu_s (M2_hat_s - F2_s) with M2_hat_s = M2_s + E2_s + F2_s + G2_s.

    Processed in blocks of unique entries (colex order, the order of :func:`dpcore.privacy.unique_entries_matrix`),
    each a whole number of the stage's chunks, so the noise arrays stay small for any D and the draws are the same at
    any eps and for any block size. Each block is aggregated in float64; above EIGH_MAX_DIM, where the whitening
    works in float32 anyway, M2_hat is stored in float32 (half the D^2 memory; its rounding, 6e-8 relative, is far
    below the DP noise). Returns (M2_hat, messages or None).

    The per-site flow draws ``rows`` (3S for CAPE) standard normals per unique entry. When the messages are not kept
    and that exceeds :data:`FLOW_MAX_NORMALS` (e.g. D = 10,000, S = 5: 7.5e8), nothing that is returned depends on a
    single release, so the aggregate is drawn from its exact law instead: sum_s mu_s M2_s plus N(0,
    :func:`aggregate_std`^2) i.i.d. on the unique entries, one keyed normal per entry (the stage still takes one key
    from ``rng``, so the later stages draw what they drew before). Same distribution, 3S times fewer normals; the
    flow itself is run, and tested, wherever it is smaller or its messages are kept (docs/math/corrections.md,
    item 7)."""
    dim = sites[0].dim
    weights = np.asarray(weights, dtype=float)
    out = np.empty((dim, dim), dtype=np.float32 if dim > EIGH_MAX_DIM else np.float64)
    kept: list[StageMessages] | None = [] if keep_messages else None
    total = dim * (dim + 1) // 2
    rows = 0 if noise.mode == "none" else _noise_rows(noise, len(sites))
    if not keep_messages and rows > 1 and rows * total > FLOW_MAX_NORMALS:
        std = aggregate_std(noise, weights)
        law = stage_stream(rng, 1, total)
        for u0, u1 in _unique_blocks(total, law.width):
            _write_unique(out, u0, _combine_law(_unique_range(sites, u0, u1), weights, std, law, u0))
        _mirror_lower(out)
        return out, None
    stream = _stream(rng, noise, len(sites), total)
    for u0, u1 in _unique_blocks(total, 1 if stream is None else stream.width):
        agg = _combine_unique(_unique_range(sites, u0, u1), weights, noise, stream, u0, kept)
        _write_unique(out, u0, agg)
    _mirror_lower(out)
    messages = None
    if kept:
        def joined(name: str) -> np.ndarray | None:
            parts = [getattr(m, name) for m in kept]
            return None if parts[0] is None else np.concatenate(parts, axis=1)
        messages = StageMessages(joined("releases"), joined("e"), joined("f"), joined("g"))
    return out, messages


def check_m3_law(law: str, path: str, k: int) -> str:
    """The third-moment noise law ``law`` when it can be drawn on ``path`` with K = ``k`` components: the published
    law's projected sampler keeps a C(K+2, 3)^2 covariance, so it needs K <= MAX_PUBLISHED_PROJECTED_K."""
    law = check_choice(law, "m3_noise", tuple(M3_NOISE))
    if path == "projected" and law == "published" and k > MAX_PUBLISHED_PROJECTED_K:
        raise InputError(
            f"the published third-moment noise on the projected path is drawn from its exact C(K+2, 3) x C(K+2, 3) "
            f"covariance, which needs K <= {MAX_PUBLISHED_PROJECTED_K} (got K = {k}); use the 'symmetrized' law "
            "(--m3-noise symmetrized: at least as private, more noise on entries with repeated indices), a smaller "
            "K, or the dense path", "m3_noise")
    return law


def _m3_noise_size(law: str, path: str, dim: int, k: int) -> int:
    if path == "projected":
        return unique_count_tensor(k) if law == "published" else k**3
    return unique_count_tensor(dim) if law == "published" else dim**3


def _m3_shaper(law: str, path: str, dim: int, w: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Map one site's row of i.i.d. noise (variance tau^2) to its third-moment noise tensor (projected on W on
    the projected path)."""
    k = w.shape[1]
    if path == "projected" and law == "published":
        factor = published_factor(w)  # F F^T = Cov of the unique entries of P(W, W, W)
        return lambda row: published_projected_tensor(row, factor, k)
    if path == "projected":
        r = np.linalg.qr(w, mode="r")  # R^T R = W^T W
        return lambda row: math.sqrt(6.0) * symmetrize(multilinear(row.reshape(k, k, k), r))
    if law == "published":
        return lambda row: symmetric_tensor(row, dim)
    return lambda row: math.sqrt(6.0) * symmetrize(row.reshape(dim, dim, dim))


def m3_noise_size(law: str, path: str, dim: int, k: int) -> int:
    """Standard normals one site needs for one third-moment noise term of ``law`` on ``path`` (D^3 or C(D+2, 3)
    dense, K^3 projected): the length of the row :func:`m3_noise_tensor` maps. For a party that draws its own term
    (the federated round, :mod:`dpcore.federation`); the law is the one :func:`release_m3` draws."""
    check_m3_law(law, path, k)
    return _m3_noise_size(law, path, dim, k)


def m3_noise_tensor(law: str, path: str, dim: int, w: np.ndarray | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """The linear map from one row of i.i.d. noise with variance tau^2 (:func:`m3_noise_size` numbers) to the
    third-moment noise tensor of ``law``: D x D x D on the dense path (``w`` not needed), already projected on W
    (K x K x K) on the projected path. Linear, so zero-sum rows still cancel after it."""
    if w is None:
        w = np.empty((dim, 0))
    check_m3_law(law, path, w.shape[1])
    return _m3_shaper(law, path, dim, w)


def release_m3(
    sites: Sequence[MomentSite], weights: np.ndarray, w: np.ndarray, noise: StageNoise,
    rng: np.random.Generator, *, path: str = "projected", law: str = "published", keep_messages: bool = False,
) -> tuple[np.ndarray, StageMessages | None]:
    """Stage 2: M3_tilde = sum_s mu_s (M3_tilde_s - F3_s(W, W, W)), M3_tilde_s = (M3_s + E3_s + F3_s + G3_s)(W, W, W).

    ``dense``: the D^3 moment and noise tensors are formed and projected by each site (the aggregator
    projects its own F3_s). ``projected``: M3_s(W, W, W) from the samples plus noise sampled projected.
    Returns (M3_tilde K x K x K, messages with projected releases and e, f, g, or None). ``path`` ("dense" or
    "projected") and ``law`` (:data:`M3_NOISE`) were checked where they entered (:class:`~dpcore.agn.OtdSettings`,
    :func:`~dpcore.tensor.choose_path`)."""
    dim, k = w.shape
    weights = np.asarray(weights, dtype=float)
    kept: list[StageMessages] | None = [] if keep_messages else None
    if noise.mode == "avn":
        if path != "dense" or len(sites) != 1:
            raise InputError("AVN noise needs the dense path and pooled data", "path")
        noisy = sites[0].m3() + symmetric_tensor(avn_noise(rng, unique_count_tensor(dim), noise.beta), dim)
        return multilinear(noisy, w), None
    size = _m3_noise_size(law, path, dim, k)
    shape = _m3_shaper(law, path, dim, w) if noise.mode != "none" else None
    if path == "projected":
        data = np.stack([site.m3_projected(w) for site in sites])
        agg = _combine_shaped(data, weights, noise, _stream(rng, noise, len(sites), size), shape, kept)
        return agg, (kept[0] if kept else None)
    return _release_dense(sites, weights, w, noise, rng, size, shape, keep_messages)


def _release_dense(
    sites: Sequence[MomentSite], weights: np.ndarray, w: np.ndarray, noise: StageNoise,
    rng: np.random.Generator, size: int, shape: Callable[[np.ndarray], np.ndarray], keep_messages: bool,
) -> tuple[np.ndarray, StageMessages | None]:
    """The dense path of :func:`release_m3`: every site perturbs its D^3 moment, then projects what it sends; the
    aggregator removes the projection of its own F3_s and sums site by site (:func:`dpcore.cape.parties.combine`).
    The noise terms are added to the D^3 moment one at a time (the order of
    :func:`dpcore.cape.parties.site_release`), so that one D^3 noise tensor exists at a time."""
    if noise.mode == "none":
        return combine([multilinear(site.m3(), w) for site in sites], None, weights), None
    stream = _stream(rng, noise, len(sites), size)
    e, f, g = _draw_terms(noise, stream.columns(0, size))
    terms = {"e": e, "f": f, "g": g}
    releases, projected = [], {"e": [], "f": [], "g": []}
    for s, site in enumerate(sites):
        tensor = site.m3()
        proj_terms = {}
        for name, rows in terms.items():
            if rows is None:
                continue
            noise_tensor = shape(rows[s])
            tensor = tensor + noise_tensor
            if name == "f" or keep_messages:  # the aggregator projects F3_s; e and g only when recorded
                proj_terms[name] = multilinear(noise_tensor, w)
        releases.append(multilinear(tensor, w))  # what site s sends (K x K x K)
        for name in projected:  # the aggregator projects its own F3_s
            projected[name].append(proj_terms.get(name))
    agg = combine(releases, projected["f"], weights)
    if not keep_messages:
        return agg, None

    def stacked(name: str) -> np.ndarray | None:
        return None if terms[name] is None else np.stack(projected[name])

    return agg, StageMessages(np.stack(releases), stacked("e"), stacked("f"), stacked("g"))
