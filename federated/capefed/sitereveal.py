"""The consistency round and the reveal of a stage, at a site (docs/federated.md, "Masked releases and one agreed
survivor set"; Bonawitz et al., CCS 2017, double masking with a consistency check, adapted to CAPE).

* ``confirm``: the aggregator names the survivor set U of a stage (the sites whose masked releases it received in
  time). The site signs (round, plan digest, stage, U, the digest of the W it used) if it is a member of U, released
  the stage itself, U names sites of the plan, misses at most ``dropouts`` of them (the plan's, which its own limit
  caps), holds no site the previous stage's set excluded, and it has signed no other set for this stage: one set per
  round and stage, ever. Before it signs, it records the stage as spent in its ledger: from then on its release can
  be unmasked (:mod:`dpcore.federation.accounts`).
* ``reveal``: given U and every member's signature, the site checks that U is the set it signed and every member's
  signature over exactly the same (round, plan, stage, U, W), then reveals, per site of the plan, its share of that
  site's self-mask seed if the site is in U, or (helper-free) its share of its noise seed if it is not - never both
  for one site - and, helper-free when U misses a site, the secure sum W. It answers one reveal per round and stage.

Two sets the aggregator might show two groups cannot both be signed by all their members: each has at least S - k
members, so two have at least 2(S - k) - S = S - 2k members in common, more than the c colluders (the plan needs
S >= c + 2k + 1), and an honest site signs one set. So no site's release is unmasked while its noise term is rebuilt,
and a release that arrives after the set is fixed is never unmasked (fewer than t shares of its self-mask exist
outside the colluders).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from . import dp, shares
from .messages import Payload
from .requests import RequestError, RoundContext, text, texts
from .siteflow import Refusal, SiteParty
from .trust import sign, verify

__all__ = ["confirm", "reveal", "survivors_message"]


def survivors_message(ctx: RoundContext, stage: str, survivors: list[str], w_hex: str) -> tuple[str, ...]:
    """What a survivor-set signature covers (after the kind "survivors")."""
    return ctx.round_id, ctx.digest, stage, ",".join(survivors), w_hex


def _stage(c: Mapping[str, Any], ctx: RoundContext) -> dp.RoundStage:
    return ctx.plan.stage(text(c, "stage", choices=[p.stage for p in ctx.plan.stages]))


def _survivors(c: Mapping[str, Any], ctx: RoundContext) -> list[str]:
    survivors = texts(c, "survivors", most=dp.MAX_SITES)
    if survivors != sorted(set(survivors)) or not set(survivors) <= set(ctx.plan.names):
        raise RequestError("the field 'survivors' must name sites of the plan, sorted, each once")
    return survivors


def _signed_set(site: SiteParty, ctx: RoundContext, stage: str) -> list[str] | None:
    saved = site.state.get(site.key(ctx.round_id, "set", stage))
    return None if saved is None else dp.load_json(saved, "the site's signed survivor set")


def confirm(site: SiteParty, c: Mapping[str, Any]) -> Payload:
    """Sign the stage's survivor set, once (module docstring)."""
    step = site.context(c, "confirm")
    ctx = step.ctx
    stage, survivors = _stage(c, ctx), _survivors(c, ctx)
    plan, k = ctx.plan, ctx.settings.dropouts
    released = site.state.get(site.key(ctx.round_id, "released", stage.stage))
    if released is None:
        raise Refusal(f"it did not release stage {stage.stage} of round {ctx.round_id}, so it signs no survivor set")
    if site.name not in survivors:
        raise Refusal(f"the survivor set of stage {stage.stage} does not name this site although it released")
    if len(plan.names) - len(survivors) > k:
        raise Refusal(f"the survivor set misses {len(plan.names) - len(survivors)} site(s); the plan survives at most "
                      f"{k}")
    stages = [p.stage for p in plan.stages]
    for earlier in stages[: stages.index(stage.stage)]:
        before = _signed_set(site, ctx, earlier)
        if before is not None and not set(survivors) <= set(before):
            raise Refusal(f"the survivor set of stage {stage.stage} names sites the set of stage {earlier} excluded")
    signed = _signed_set(site, ctx, stage.stage)
    if signed is not None and signed != survivors:
        raise Refusal(f"it already signed another survivor set for stage {stage.stage} of round {ctx.round_id} "
                      f"({', '.join(signed)}); it signs one set per stage")
    if not step.study.dry:
        _spend(site, ctx, stage.stage)
    site.state[site.key(ctx.round_id, "set", stage.stage)] = json.dumps(survivors).encode()
    message = survivors_message(ctx, stage.stage, survivors, released.decode())
    return Payload({"status": "ok", "signature": sign(site.identity, "survivors", *message)})


def _spend(site: SiteParty, ctx: RoundContext, stage: str) -> None:
    """Record the stage as spent before signing a set that holds this site (from then on its release can be
    unmasked), with the other sites' ledger heads of their reservations; a stage spent already (the same set signed
    again) is left as it is."""
    saved = site.state.get(site.key(ctx.round_id, "peers"))
    heads = {} if saved is None else {n: dp.LedgerHead.from_list(v) for n, v in dp.load_json(
        saved, "the other sites' ledger heads").items()}

    def change(ledger: dp.Ledger) -> list:
        if stage in dp.open_round(ledger, ctx.round_id).spent:
            return []
        return [dp.spend_event(ledger, ctx.round_id, stage, heads)]

    site.update_ledger(change)


def _check_signatures(site: SiteParty, c: Mapping[str, Any], ctx: RoundContext, stage: str,
                      survivors: list[str], w_hex: str) -> None:
    signatures = c.get("survivor_signatures")
    if not isinstance(signatures, list) or len(signatures) != len(survivors):
        raise RequestError("the request must carry one survivor-set signature per member of the set")
    message = survivors_message(ctx, stage, survivors, w_hex)
    for name, signature in zip(survivors, signatures, strict=True):
        if not verify(site.roster.key(name, "site"), signature, "survivors", *message):
            raise Refusal(f"site {name}'s signature over the survivor set of stage {stage} does not verify: it "
                          "signed another set, plan or W, or none; this site reveals nothing")


def reveal(site: SiteParty, c: Mapping[str, Any]) -> Payload:
    """Reveal this site's shares for the signed survivor set, once (module docstring)."""
    ctx = site.context(c, "reveal").ctx
    stage, survivors = _stage(c, ctx), _survivors(c, ctx)
    signed = _signed_set(site, ctx, stage.stage)
    if signed != survivors:
        raise Refusal(f"it signed {'no' if signed is None else 'another'} survivor set for stage {stage.stage}; it "
                      "reveals shares only for the set it signed")
    released = site.state[site.key(ctx.round_id, "released", stage.stage)].decode()
    _check_signatures(site, c, ctx, stage.stage, survivors, released)
    done = site.key(ctx.round_id, "revealed", stage.stage)
    if done in site.state:
        raise Refusal(f"it already revealed its shares for stage {stage.stage} of round {ctx.round_id}; it answers "
                      "one reveal per stage")
    got = site.state[site.key(ctx.round_id, "got", stage.stage)]
    width, out, kinds = 2 * shares.SHARE_BYTES, [], []
    helper_free = not dp.NOISE_VARIANTS[ctx.settings.noise].helper
    for i, name in enumerate(ctx.plan.names):
        held = got[i * width: (i + 1) * width]
        noise, mask = held[: shares.SHARE_BYTES], held[shares.SHARE_BYTES:]
        if name in survivors:
            out.append(mask)
            kinds.append("mask")
        elif helper_free:
            out.append(noise)
            kinds.append("noise")
        else:
            out.append(b"")
            kinds.append("none")
    site.state[done] = b"1"
    arrays = {}
    if helper_free and len(survivors) < len(ctx.plan.names):
        saved = site.state[site.key(ctx.round_id, "W", stage.stage)]
        arrays["total"] = dp.sum_to_wire(dp.sum_from_wire(saved, stage))
    return Payload({"status": "ok", "shares": out, "kinds": kinds}, arrays)
