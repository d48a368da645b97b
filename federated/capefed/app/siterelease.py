"""A site's release of one stage (docs/federated.md, "Sites protect themselves", "Masked releases").

The request must carry the plan the site set up with; the aggregator's f_s, tau_g,s^2 and (M3) W must be what the
plan says (f's sample variance within the chi-square bounds of the design's); every site of the plan reserved the
round in its ledger (its signed reservation, :mod:`capefed.app.sitestudy`); the site opens every other site's
set-up message for the stage (:func:`capefed.app.sitesetup.open_setup`) and keeps the shares they carry; its e_s is its
helper share (signed by the pinned helper key, sealed for this round, plan, stage and site) or, helper-free,
(q_s - c_s W) / mu_s from the secure sum. It draws g_s, checks that the release lies in the range the aggregator
accepts (``dpcore.federation.masking``), and sends it in the ring plus its self-mask: nothing of it can be read until
the self-mask seed is rebuilt from t shares, which honest sites reveal only for the members of the survivor set every
member signed (its ledger holds the round's reservation; the stage is spent when the site signs a set holding
itself, :func:`capefed.app.sitereveal.confirm`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.special import chdtri, gammaincinv

from . import dp, shares
from .messages import Payload
from .requests import RoundContext, array, blob, number, ring_array, text, texts
from .sealing import SealError, open_array, seal_context
from .siteflow import Refusal, SiteParty
from .sitesetup import Opened, helper_free, open_setup, pair_masks
from .sitestudy import check_reservations
from .trust import verify

__all__ = ["CHI2_TAIL", "release", "w_digest"]

CHI2_TAIL = 1e-9
"""Probability under the design's law of refusing an honest f_s or e_s by the sample-variance check."""


def w_digest(w: np.ndarray | None) -> str:
    """SHA-256 (hex) of W as the site used it ("" for a stage without W): what its survivor-set signature covers."""
    if w is None:
        return ""
    w = np.ascontiguousarray(w, dtype="<f8")
    return hashlib.sha256(repr(w.shape).encode() + w.tobytes()).hexdigest()


def _helper_share(site: SiteParty, c: Mapping[str, Any], ctx: RoundContext, stage: dp.RoundStage, private: bytes,
                  count: int) -> np.ndarray:
    sealed = blob(c, "sealed_e")
    helpers = site.roster.names("helper")
    context = seal_context(ctx.round_id, stage.stage, site.name, ctx.digest)
    if len(helpers) != 1 or not verify(site.roster.key(helpers[0], "helper"), c.get("helper_signature"), "share",
                                       context, sealed):
        raise Refusal("the helper's share is not signed by the helper key the roster pins for this round, plan and "
                      "stage (a forged share, or one drawn for another plan)")
    try:
        return open_array(sealed, private, context, count)
    except SealError as exc:
        raise Refusal(str(exc)) from exc


def _keep_shares(site: SiteParty, ctx: RoundContext, stage: dp.RoundStage, senders: list[str],
                 opened: list[Opened]) -> None:
    """The shares other sites sent this site, kept for the reveal: per site of the plan (this one: its own), the
    noise-seed share (empty with a helper) and the self-mask-seed share."""
    got = dict(zip(senders, opened, strict=True))
    own = site.state[site.key(ctx.round_id, "own", stage.stage)]
    packed = [own if name == site.name else shares.held_pair(*got[name][1:]) for name in ctx.plan.names]
    site.state[site.key(ctx.round_id, "got", stage.stage)] = shares.pack_held(packed)


def _noise(site: SiteParty, c: Mapping[str, Any], ctx: RoundContext, stage: dp.RoundStage, private: bytes,
           w: np.ndarray | None) -> np.ndarray:
    """This site's e_s of the stage (unique entries of the noise object), after opening and keeping the set-up
    messages of every other site."""
    s, plan, me = ctx.settings, ctx.plan, ctx.index(site.name)
    senders = texts(c, "senders", most=dp.MAX_SITES)
    if sorted(senders) != sorted(n for n in plan.names if n != site.name) or len(set(senders)) != len(senders):
        raise Refusal("the request needs one set-up message from every other site of the plan")
    opened = open_setup(site, c, ctx, stage, private, senders)
    _keep_shares(site, ctx, stage, senders, opened)
    if not helper_free(ctx):
        return _helper_share(site, c, ctx, stage, private, dp.noise_unique(stage.stage, s.path, plan.dim, s.k))
    seed = dp.noise_seed(site.secret(ctx.round_id), s.run, s.algorithm, stage.stage, site.name)
    encoded, own = dp.site_draw(seed, plan, stage, me)
    mine = dp.mask_share(encoded, *pair_masks(site, ctx, stage, private))
    total = dp.secure_sum([mine] + [parts[0] for parts in opened], plan, stage)
    wire = dp.sum_to_wire(total)
    site.state[site.key(ctx.round_id, "W", stage.stage)] = wire.astype(wire.dtype.newbyteorder("<")).tobytes()
    row = dp.site_term(own, total, stage, me)
    if stage.discrete is not None:  # integers of the dense statistic's unique entries: nothing to shape
        return row
    return dp.noise_entries(row, stage.stage, s.m3_noise, s.path, plan.dim, w)


def _variance_problem(what: str, values: np.ndarray, var: float, iid: bool) -> str | None:
    """The sample variance of i.i.d. N(0, var) entries outside the two-sided chi-square bounds at CHI2_TAIL. Only
    when ``iid`` (:attr:`dpcore.federation.RoundStage.iid`): projected third-moment noise is correlated through W and
    the symmetrized law scales entries by index pattern; there the check is not made. (f_s never protects a release
    against the aggregator, which knows it; e_s comes from the helper or the site's own secure sum.)"""
    n = values.size
    if not iid or n < 32:
        return None
    ss = float(np.sum(values**2))
    if var <= 0:
        return None if ss == 0 else f"{what} is not zero although the design gives it variance 0"
    # the chi-square law's lower and upper CHI2_TAIL quantiles, as scipy.stats.chi2.ppf and .isf compute them (without
    # importing scipy.stats: about 1 CPU s for every process of a run)
    lo, hi = 2.0 * gammaincinv(n / 2.0, CHI2_TAIL) * var, chdtri(n, CHI2_TAIL) * var
    if not lo <= ss <= hi:
        return (f"{what} has sample variance {ss / n:.4g}; the design says {var:.4g} (outside the chi-square "
                f"bounds {lo / n:.4g} to {hi / n:.4g}: a weakened or forged term)")
    return None


def _check_terms(stage: dp.RoundStage, terms: tuple[tuple[str, np.ndarray, float], ...]) -> None:
    for what, values, var in terms:
        problem = _variance_problem(what, np.asarray(values, dtype=float), float(var), stage.iid)
        if problem:
            raise Refusal(f"stage {stage.stage}: {problem}")


def _fixed_point(site: SiteParty, c: Mapping[str, Any], ctx: RoundContext, stage: dp.RoundStage, private: bytes,
                 data: Any, f: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """The release of a continuous variant: statistic + e_s + f_s + g_s in fixed point on the 64-bit ring, refused
    outside the range the aggregator accepts (``dpcore.federation.masking``)."""
    s, plan, me, design = ctx.settings, ctx.plan, ctx.index(site.name), stage.design
    e = _noise(site, c, ctx, stage, private, w)
    _check_terms(stage, (("the aggregator's noise f_s", f, design.var_f[me]),
                         ("its helper term e_s", e, design.var_e[me])))
    rng = dp.party_generator("secure", site.secret(ctx.round_id), s.run, s.algorithm, stage.stage, dp.SITE,
                             site.name)
    g = dp.noise_entries(dp.site_noise(float(design.var_g[me]), stage.size, rng), stage.stage, s.m3_noise,
                         s.path, plan.dim, w)
    value = dp.site_stage_release(stage.stage, s.path, data, e, f, g, w)
    return dp.encode_release(value, dp.release_encoding(plan, stage, me, w))  # refuses a release out of range


def _ring(site: SiteParty, c: Mapping[str, Any], ctx: RoundContext, stage: dp.RoundStage, private: bytes,
          data: Any, f: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """The release of the integer variant (``dpcore.federation.ring``): a~_s + E~_s + F~_s + G~_s on the stage's
    ring, a~_s the unique entries of its dense statistic encoded once (refused beyond the bound the ring was sized
    for), every term an exact discrete Gaussian draw; F~_s must be integers of the plan's law."""
    s, me, dd = ctx.settings, ctx.index(site.name), stage.discrete
    e = _noise(site, c, ctx, stage, private, w)
    laws = dd.laws
    spread = [float(x.sigma2) for x in laws.w]
    total, mine = laws.total_share, laws.shares[me]
    var_e = (total - mine) ** 2 * spread[me] + mine**2 * (sum(spread) - spread[me])
    _check_terms(stage, (("the aggregator's noise F~_s", f, 0.0 if laws.f[me] is None else float(laws.f[me].sigma2)),
                         ("its zero-sum term E~_s", e, var_e)))
    rng = dp.party_generator("secure", site.secret(ctx.round_id), s.run, s.algorithm, stage.stage,
                             dp.RING_ROLES["g"], site.name)
    g = dp.ring_draw(laws.g[me], rng, dd.n_sites, dd.entries)
    return dp.ring_release(dp.dense_statistic(stage.stage, data), e, f, g, dd, me)


def release(site: SiteParty, c: Mapping[str, Any]) -> Payload:
    """Answer a release request (module docstring)."""
    step = site.context(c, "release")
    ctx, data, budget, private = step.ctx, step.data, step.budget, step.private
    heads = check_reservations(c, ctx, site.roster, step.study.mode)
    if not step.study.dry:
        dp.open_round(step.ledger, ctx.round_id)  # its own reservation is in its ledger and the round is open
    site.state[site.key(ctx.round_id, "peers")] = json.dumps({n: h.to_list() for n, h in heads.items()}).encode()
    plan, s, me = ctx.plan, ctx.settings, ctx.index(site.name)
    stage = plan.stage(text(c, "stage", choices=[p.stage for p in plan.stages]))
    digest = dp.budget_digest(budget)
    if text(c, "digest") != digest:
        raise Refusal("the release request names another digest than its own values' (changed since the design)")
    if site.state.get(site.key(ctx.round_id, "setup")) is None:
        raise Refusal(f"it did not set up round {ctx.round_id}, so it has no shares or seeds to release with")
    if site.key(ctx.round_id, "released", stage.stage) in site.state:
        raise Refusal(f"it already released stage {stage.stage} of round {ctx.round_id}")
    design = stage.design
    var_g = number(c, "var_g", 0.0, 1e300)
    if not dp.design_matches(np.array([var_g]), np.array([design.var_g[me]])):
        raise Refusal(f"stage {stage.stage}: the aggregator asks for tau_g,s^2 = {var_g:.6g}; the plan this site "
                      f"computed says {design.var_g[me]:.6g} (a weakened design)")
    count = dp.noise_unique(stage.stage, s.path, plan.dim, s.k)
    arrays = c.arrays if hasattr(c, "arrays") else {}
    w = array(arrays, "w", (plan.dim, s.k)) if stage.stage == "M3" else None
    ring = (_ring(site, c, ctx, stage, private, data, ring_array(arrays, "f", (stage.size,)), w)
            if stage.discrete is not None else
            _fixed_point(site, c, ctx, stage, private, data, array(arrays, "f", (count,)), w))
    masked = shares.mask(ring, site.state[site.key(ctx.round_id, "mask", stage.stage)])
    site.state[site.key(ctx.round_id, "released", stage.stage)] = w_digest(w).encode()
    return Payload({"status": "ok", "digest": digest}, {"masked": masked})
