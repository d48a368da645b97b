"""The message flow of capeAGN and its baselines (docs/math/capeagn.md): every site's release of M2 and of the
projected M3, perturbed by CAPE noise (e, f, g), independent noise, AVN noise or none; the aggregator's sum.

The flow is run for real: helper noise e (zero-sum), aggregator noise f (subtracted), site noise g, every term
symmetric (docs/math/corrections.md, items 1 and 7). Noise is drawn from explicit generators in a fixed order (M2
stage by column blocks that depend on D only, then M3 stage) and only scaled afterwards: re-seeding reproduces
the same underlying standard normals at any eps, delta or N_s (common random numbers for sweeps).

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

from ..cape import NoiseDesign, SiteBudgets, sample_noise, scenario_budgets, solve_collusion_robust, solve_general
from ..cape.parties import combine, site_release
from ..limits import EIGH_MAX_DIM, MAX_PUBLISHED_PROJECTED_K
from ..privacy.avn import avn_noise
from ..privacy.symmetric import symmetric_tensor, unique_count_tensor
from ..scenario import Scenario
from ..validation import InputError, check_choice
from .moments import MomentSite, StmSite
from .multilinear import multilinear, symmetrize
from .projected_noise import published_factor, published_projected_tensor

__all__ = ["BLOCK_UNIQUE", "M3_NOISE", "STAGES", "M3Noise", "StageMessages", "StageNoise", "cape_stage_noise",
           "check_m3_law", "m3_noise_size", "m3_noise_tensor", "release_m2", "release_m3"]

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


def _column_blocks(dim: int, max_unique: int | None = None) -> list[tuple[int, int]]:
    """Column blocks [j0, j1) of the upper triangle with at most ``max_unique`` entries (>= 1 column)."""
    max_unique = BLOCK_UNIQUE if max_unique is None else max_unique
    blocks = []
    j0 = 0
    while j0 < dim:
        j1 = j0 + 1
        while j1 < dim and (j1 + 1) * (j1 + 2) // 2 - j0 * (j0 + 1) // 2 <= max_unique:
            j1 += 1
        blocks.append((j0, j1))
        j0 = j1
    return blocks


def _unique_block(sites: Sequence[MomentSite], j0: int, j1: int) -> np.ndarray:
    """Every site's unique M2 entries of columns j0..j1-1 (S x (j1 (j1 + 1) - j0 (j0 + 1)) / 2, colex order): sparse
    STM moments scattered from their stored upper-triangle entries, other sites gathered from their dense block."""
    start, stop = j0 * (j0 + 1) // 2, j1 * (j1 + 1) // 2
    data = np.zeros((len(sites), stop - start))
    mask = None
    for s, site in enumerate(sites):
        if isinstance(site, StmSite):
            positions, values = site.m2_upper
            lo, hi = np.searchsorted(positions, (start, stop))
            data[s, positions[lo:hi] - start] = values[lo:hi]
            continue
        if mask is None:
            mask = np.arange(j1)[None, :] <= (j0 + np.arange(j1 - j0))[:, None]  # (cols, j1): i <= j
        data[s] = site.m2_block(j0, j1).T[mask]
    return data


_MIRROR_TILE = 1024


def _mirror_lower(out: np.ndarray) -> None:
    """Copy the lower triangle of the square ``out`` onto its upper triangle, tile by tile (cache-friendly)."""
    dim = out.shape[0]
    for i0 in range(0, dim, _MIRROR_TILE):
        i1 = min(i0 + _MIRROR_TILE, dim)
        tile = out[i0:i1, i0:i1]
        upper = np.triu_indices(i1 - i0, 1)
        tile[upper] = tile.T[upper]
        for j0 in range(i1, dim, _MIRROR_TILE):
            j1 = min(j0 + _MIRROR_TILE, dim)
            out[i0:i1, j0:j1] = out[j0:j1, i0:i1].T


def _combine(data: np.ndarray, weights: np.ndarray, noise: StageNoise, rng: np.random.Generator, size: int,
             shape: Callable[[np.ndarray], np.ndarray] | None = None, store: list | None = None) -> np.ndarray:
    """Run one round of the protocol on per-site data (S, ...) and return the aggregate.

    ``size`` standard normals are drawn per site and term; ``shape`` maps one site's row of them to the
    release's shape (symmetric tensor, projection). Each site forms its release
    (:func:`dpcore.cape.parties.site_release`); the aggregator takes sum_s mu_s (release_s - f_s)
    (:func:`dpcore.cape.parties.combine`): the real flow, not pooled noise on a pooled statistic."""
    n_sites = data.shape[0]

    def shaped(rows: np.ndarray) -> np.ndarray:
        return rows if shape is None else np.stack([shape(rows[s]) for s in range(n_sites)])

    if noise.mode == "none":
        return combine(data, None, weights, stacked=True)
    if noise.mode == "independent":
        z = rng.standard_normal((n_sites, size))
        z *= np.asarray(noise.stds, float)[:, None]
        g = shaped(z)
        releases = site_release(data, None, None, g)  # every site's a_s + g_s, one row each
        if store is not None:
            store.append(StageMessages(releases, None, None, g))
        return combine(releases, None, weights, stacked=True)
    if noise.mode == "cape":
        drawn = sample_noise(noise.design, rng, size)
        e, f, g = shaped(drawn.e), shaped(drawn.f), shaped(drawn.g)
        del drawn
        releases = site_release(data, e, f, g)  # what each site sends, one row each
        if store is not None:
            store.append(StageMessages(releases, e, f, g))
        return combine(releases, f, weights, stacked=True)  # the aggregator removes its own f_s
    raise InputError(f"unknown noise mode {noise.mode!r}")


def release_m2(
    sites: Sequence[MomentSite], weights: np.ndarray, noise: StageNoise, rng: np.random.Generator,
    *, keep_messages: bool = False,
) -> tuple[np.ndarray, StageMessages | None]:
    """Stage 1: M2_hat = sum_s mu_s (M2_hat_s - F2_s) with M2_hat_s = M2_s + E2_s + F2_s + G2_s.

    Processed in blocks of columns of the upper triangle (unique entries in colex order, the order of
    :func:`dpcore.privacy.unique_entries_matrix`), so the noise arrays stay small for any D; the
    blocks depend on D only, so the draws are the same at any eps. Each block is aggregated in float64; above
    EIGH_MAX_DIM, where the whitening's Lanczos solver works in float32 anyway, M2_hat is stored in float32 (half the
    D^2 memory; its rounding, 6e-8 relative, is far below the DP noise). Returns (M2_hat, messages or None)."""
    dim = sites[0].dim
    weights = np.asarray(weights, dtype=float)
    out = np.empty((dim, dim), dtype=np.float32 if dim > EIGH_MAX_DIM else np.float64)
    kept: list[StageMessages] | None = [] if keep_messages else None
    for j0, j1 in _column_blocks(dim):
        data = _unique_block(sites, j0, j1)
        agg = _combine(data, weights, noise, rng, data.shape[1], None, kept)
        start = j0 * (j0 + 1) // 2
        for j in range(j0, j1):  # column j's unique entries (i <= j) are row j's lower triangle
            offset = j * (j + 1) // 2 - start
            out[j, :j + 1] = agg[offset:offset + j + 1]
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
    "projected") and ``law`` (:data:`M3_NOISE`) were checked where they entered (:class:`~dpcore.otd.OtdSettings`,
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
        agg = _combine(data, weights, noise, rng, size, shape, kept)
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
    n_sites = len(sites)
    if noise.mode == "cape":
        drawn = sample_noise(noise.design, rng, size)
        terms = {"e": drawn.e, "f": drawn.f, "g": drawn.g}
    elif noise.mode == "independent":
        terms = {"e": None, "f": None, "g": rng.standard_normal((n_sites, size)) * np.asarray(noise.stds)[:, None]}
    else:
        raise InputError(f"unknown noise mode {noise.mode!r}")
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
