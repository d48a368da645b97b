"""A site's set-up of a round (both noise variants; docs/federated.md, "Masked releases and one agreed survivor set").

On a ``setup`` request a site verifies every site's statement against the roster, recomputes the plan, checks its
own promise and limits in it and the round against the study it signed, reserves the round's worst-case cost in its
ledger (:mod:`capefed.app.sitestudy`: its signed reservation goes into its answer) and fixes the plan's digest for the
round.
Then, per stage, it draws a fresh self-mask seed m_s and (helper-free) derives its noise seed n_s, draws w_s and masks
its fixed-point encoding with one ChaCha20 mask per other site (keys from X25519 between the two sites' round keys),
shares both seeds t-of-S (:mod:`capefed.app.shares`), keeps its own shares, and sends every other site one set-up
message (layout in :mod:`capefed.app.shares`) sealed to that site's round key and signed, bound to the round, the plan's
digest, the stage and the pair. Its answer also carries its commitments to both seeds, signed.

:func:`open_setup` is how a site reads the set-up messages the others sent it (with its release request): every
signature checked against the roster, every message opened for this pair, round, plan and stage, every share
addressed to this site's position.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from . import dp, shares
from .messages import Payload
from .requests import RequestError, RoundContext
from .sealing import SealError, open_bytes, pair_key, seal_bytes
from .siteflow import SETUP, Refusal, SiteParty, Step, blob_context, mask_context
from .sitestudy import horizon, now, peers, reservation
from .trust import sign, verify

__all__ = ["Opened", "commitments_signature", "commitments_signature_message", "helper_free", "open_setup",
           "pair_masks", "setup"]

Opened = tuple[np.ndarray | None, bytes | None, bytes]
"""One opened set-up message: the masked W share (helper-free) or None, the noise-seed share or None, the self-mask
seed share."""


def helper_free(ctx: RoundContext) -> bool:
    return not dp.NOISE_VARIANTS[ctx.settings.noise].helper


def pair_masks(site: SiteParty, ctx: RoundContext, stage: dp.RoundStage, private: bytes
               ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The pairwise masks this site adds (to later sites) and subtracts (from earlier ones) in the secure sum."""
    me = ctx.index(site.name)
    add, subtract = [], []
    for other in (n for n in ctx.plan.names if n != site.name):
        key = pair_key(private, ctx.statements[other].public_key,
                       mask_context(ctx.round_id, stage.stage, site.name, other))
        mask = dp.secure_rng(key).bit_generator.random_raw(stage.size).astype(np.uint64)
        (add if ctx.plan.names.index(other) > me else subtract).append(mask)
    return add, subtract


def commitments_signature_message(digest: str, round_id: str, stage: str, name: str, committed: list[bytes]
                                  ) -> tuple[str | bytes, ...]:
    """What a site's signature over its commitments covers (after the kind "commit")."""
    return (round_id, digest, stage, name, *committed)


def commitments_signature(identity: Any, ctx: RoundContext, stage: str, name: str, committed: list[bytes]) -> bytes:
    return sign(identity, "commit", *commitments_signature_message(ctx.digest, ctx.round_id, stage, name, committed))


def _stage_setup(site: SiteParty, ctx: RoundContext, stage: dp.RoundStage, private: bytes, reply: dict[str, Any]
                 ) -> None:
    plan, s, me = ctx.plan, ctx.settings, ctx.index(site.name)
    count, t = len(plan.names), plan.threshold
    mask_seed = shares.new_seed()
    site.state[site.key(ctx.round_id, "mask", stage.stage)] = mask_seed
    mask_parts = shares.split(mask_seed, t, count)
    committed = [shares.commitment("mask", ctx.round_id, stage.stage, site.name, mask_seed), b""]
    noise_parts, masked_w = None, None
    if helper_free(ctx):
        noise = dp.noise_seed(site.secret(ctx.round_id), s.run, s.algorithm, stage.stage, site.name)
        noise_parts = shares.split(noise, t, count)
        committed[1] = shares.commitment("noise", ctx.round_id, stage.stage, site.name, noise)
        encoded, _ = dp.site_draw(noise, plan, stage, me)
        masked_w = dp.mask_share(encoded, *pair_masks(site, ctx, stage, private))
    site.state[site.key(ctx.round_id, "own", stage.stage)] = shares.held_pair(noise_parts[me] if noise_parts else None,
                                                                              mask_parts[me])
    blobs, signatures = [], []
    for other in (n for n in plan.names if n != site.name):
        i = plan.names.index(other)
        plain = shares.pack_setup(masked_w, noise_parts[i] if noise_parts else None, mask_parts[i])
        context = blob_context(ctx.round_id, ctx.digest, stage.stage, site.name, other)
        sealed = seal_bytes(plain, ctx.statements[other].public_key, context)
        blobs.append(sealed)
        signatures.append(sign(site.identity, "setup", context, sealed))
    reply[f"blobs/{stage.stage}"] = blobs
    reply[f"blob_signatures/{stage.stage}"] = signatures
    reply[f"commit/{stage.stage}"] = committed
    reply[f"commit_signature/{stage.stage}"] = commitments_signature(site.identity, ctx, stage.stage, site.name,
                                                                     committed)


def _reserve(site: SiteParty, step: Step) -> dp.LedgerHead:
    """Reserve the round's worst-case cost in the site's ledger (settling first the rounds whose time is certainly
    over); a dry run checks the same under the ledger's lock and writes nothing. Returns the ledger's head after."""
    ctx, sr = step.ctx, step.study
    costs = [dp.release_entry(ctx.plan, stage, site.name, ctx.round_id) for stage in ctx.plan.stages]
    heads = peers(ctx, site.name)

    def change(ledger: dp.Ledger) -> list:
        stale = [] if sr.dry else dp.stale_rounds(ledger, now(), horizon(site.config.deadline))
        reserve = dp.reserve_event(ledger, ctx.round_id, sr.study.digest, ctx.settings.algorithm, costs, heads,
                                   sr.study.rounds)
        return [] if sr.dry else [*stale, reserve]

    return site.update_ledger(change).head


def setup(site: SiteParty, c: Mapping[str, Any]) -> Payload:
    """Answer a set-up request (module docstring)."""
    step = site.context(c, SETUP)
    ctx, private = step.ctx, step.private
    if site.state.get(site.key(ctx.round_id, "setup")) is not None:
        raise Refusal(f"it already set up round {ctx.round_id} (its seeds are shared once)")
    body, signature = reservation(site.identity, ctx, site.name, _reserve(site, step), step.study.mode)
    reply: dict[str, Any] = {"status": "ok", "recipients": [n for n in ctx.plan.names if n != site.name],
                             "reservation": body, "reservation_signature": signature}
    for stage in ctx.plan.stages:
        _stage_setup(site, ctx, stage, private, reply)
    site.state[site.key(ctx.round_id, "setup")] = b"1"
    return Payload(reply)


def open_setup(site: SiteParty, c: Mapping[str, Any], ctx: RoundContext, stage: dp.RoundStage, private: bytes,
               senders: list[str]) -> list[Opened]:
    """The set-up messages other sites sent this site for ``stage``, verified and opened (module docstring)."""
    blobs, signatures = c.get("blobs"), c.get("blob_signatures")
    if not isinstance(blobs, list) or not isinstance(signatures, list) or not (
            len(blobs) == len(signatures) == len(senders)):
        raise RequestError("the request must carry one set-up message and one signature per sender")
    size = shares.setup_bytes(stage.size, helper_free(ctx))
    me = ctx.index(site.name)
    opened = []
    for sender, sealed, signature in zip(senders, blobs, signatures, strict=True):
        if not isinstance(sealed, bytes) or len(sealed) > size + 1024:
            raise RequestError(f"the set-up message from site {sender} must be bytes of the stage's size")
        context = blob_context(ctx.round_id, ctx.digest, stage.stage, sender, site.name)
        if not verify(site.roster.key(sender, "site"), signature, "setup", context, sealed):
            raise Refusal(f"the set-up message from site {sender} is not signed by the key the roster pins for it for "
                          "this round, plan and stage (forged, altered, or made for another plan)")
        try:
            parts = shares.parse_setup(open_bytes(sealed, private, context), stage.size, helper_free(ctx))
        except (SealError, shares.ShareError) as exc:
            raise Refusal(f"the set-up message from site {sender}: {exc}") from exc
        if any(p is not None and shares.share_index(p) != me for p in parts[1:]):
            raise Refusal(f"the set-up message from site {sender} carries shares for another site than this one")
        opened.append(parts)
    return opened
