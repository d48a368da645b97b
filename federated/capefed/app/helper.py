"""The helper (the helper variant): on a ``shares`` request it draws the zero-sum noise e_1..e_S of the requested
stages, seals each e_s to site s's round key and signs it, bound to the round, the plan's digest and the stage; on a
``recover`` request it reveals the terms of the sites a signed survivor set excludes.

Node configuration: ``role="helper"``, ``identity`` (its Ed25519 key), ``roster`` (the pinned parties), optionally
``deadline`` (seconds between two steps of a round) and ``seed`` (a deployment leaves it out: a fresh 256-bit secret
per round, kept in the node's state). The helper trusts nothing the aggregator says about the design: it verifies
every site's signed statement (budget and round key) against the roster, recomputes the plan from them and the public
settings, refuses a request whose stages, dimensions, mixing, weights or variances are not that plan's, and draws from
its own plan with ChaCha20. It reveals e_v only for a site v that a survivor set signed by every one of its members
(each signature checked against the roster) excludes, only if that set misses at most ``dropouts`` sites, and only once
per round and stage: the sites reveal that set's self-mask shares, so v's masked release, if it ever arrives, is never
unmasked (docs/federated.md, "Masked releases and one agreed survivor set").
"""

from __future__ import annotations

import time
from collections.abc import Mapping, MutableMapping
from typing import Any

import numpy as np

from . import dp
from .messages import Payload
from .requests import RequestError, RoundContext, array, round_context, text, texts
from .sealing import SealError, seal_array, seal_context
from .site import SiteConfigError, step_deadline
from .siterelease import w_digest
from .sitereveal import survivors_message
from .trust import TrustError, load_identity, read_roster, sign, verify

__all__ = ["handle_helper", "sealed_key"]


def sealed_key(stage: str, site: str) -> str:
    """Where the share of ``site`` for ``stage`` sits in the helper's answer."""
    return f"sealed/{stage}/{site}"


def signature_key(stage: str, site: str) -> str:
    return f"signature/{stage}/{site}"


class _Refusal(Exception):
    pass


def _refuse(reason: str) -> Payload:
    return Payload({"status": "refused", "reason": reason})


def _secret(config: Mapping[str, Any], state: MutableMapping[str, bytes], round_id: str) -> bytes:
    seed = config.get("seed")
    if seed is not None:
        try:
            return dp.secret_bytes(seed)
        except ValueError as exc:
            raise _Refusal(f"seed: {exc}") from exc
    key = f"{round_id}/secret"
    if key not in state:
        state[key] = dp.fresh_secret()
    return state[key]


def _rows(ctx: RoundContext, stage: dp.RoundStage, secret: bytes, w: np.ndarray | None) -> np.ndarray:
    """Every site's e_s of ``stage`` (unique entries of the noise object), from the helper's own plan."""
    s = ctx.settings
    rng = dp.party_generator("secure", secret, s.run, s.algorithm, stage.stage, dp.HELPER)
    rows = dp.helper_noise(stage.design.e_mixing, stage.size, rng)
    return dp.noise_entries(rows, stage.stage, s.m3_noise, s.path, ctx.plan.dim, w)


def _check_requested(c: Any, ctx: RoundContext, stage: dp.RoundStage) -> None:
    """The aggregator's copy of the design (mixing, weights, helper variances) must be the helper's plan's."""
    d = stage.design
    for key, mine in (("mixing", d.e_mixing), ("weights", d.weights), ("var_e", d.var_e)):
        asked = c.arrays.get(f"{key}/{stage.stage}")
        if asked is None or not dp.design_matches(np.asarray(asked, dtype=float), mine):
            raise _Refusal(f"stage {stage.stage}: the requested {key} differs from the design of the plan the helper "
                           "computed from the sites' signed budgets (a weakened or altered design)")
    problem = dp.mixing_problem(d.e_mixing, d.weights, d.var_e)
    if problem:
        raise _Refusal(f"stage {stage.stage}: {problem}")


def _w(c: Any, ctx: RoundContext, stage: dp.RoundStage) -> np.ndarray | None:
    if stage.stage == "M3" and ctx.settings.path == "projected":
        try:
            return array(c.arrays, "w", (ctx.plan.dim, ctx.settings.k))
        except RequestError as exc:
            raise _Refusal(f"stage M3 on the projected path needs W, a finite {ctx.plan.dim} x {ctx.settings.k} "
                           f"matrix: {exc}") from exc
    return None


def _bind(config: Mapping[str, Any], state: MutableMapping[str, bytes], ctx: RoundContext, first: bool) -> None:
    """One plan per round (fixed by the first shares request) and the helper's own deadline between two steps."""
    key = f"{ctx.round_id}/plan"
    saved = state.get(key)
    if saved is None and first:
        state[key] = ctx.digest.encode()
    elif saved is None or saved.decode() != ctx.digest:
        raise _Refusal(f"the round's settings or statements differ from those the helper drew round {ctx.round_id}'s "
                       "noise for (or it drew none): another plan than the one it was shown before")
    last = state.get(f"{ctx.round_id}/last")
    limit = step_deadline(config)
    late = time.time() - float(last.decode()) if last is not None else 0.0
    if late > limit:
        raise _Refusal(f"the request came {late:.0f} s after its previous answer in round {ctx.round_id}; it waits at "
                       f"most {limit:g} s between two steps (its own deadline)")
    state[f"{ctx.round_id}/last"] = repr(time.time()).encode()


def helper_shares(config: Mapping[str, Any], c: Any, state: MutableMapping[str, bytes], identity, roster) -> Payload:
    ctx = round_context(c, roster)
    _bind(config, state, ctx, first=True)
    if not dp.noise_variant(ctx.settings.noise).helper:
        raise _Refusal(f"the round's noise variant is {ctx.settings.noise}: it needs no helper")
    stages = texts(c, "stages", most=len(ctx.plan.stages))
    if not stages or len(set(stages)) != len(stages) or not set(stages) <= {p.stage for p in ctx.plan.stages}:
        raise _Refusal(f"the requested stages {stages!r:.80} are not stages of the plan "
                       f"({', '.join(p.stage for p in ctx.plan.stages)})")
    secret = _secret(config, state, ctx.round_id)
    reply: dict[str, Any] = {"status": "ok"}
    for name in stages:
        stage = ctx.plan.stage(name)
        _check_requested(c, ctx, stage)
        e = _rows(ctx, stage, secret, _w(c, ctx, stage))
        for site, row in zip(ctx.plan.names, e, strict=True):
            context = seal_context(ctx.round_id, name, site, ctx.digest)
            try:
                sealed = seal_array(row, ctx.statements[site].public_key, context)
            except SealError as exc:
                raise _Refusal(f"site {site}: {exc}") from exc
            reply[sealed_key(name, site)] = sealed
            reply[signature_key(name, site)] = sign(identity, "share", context, sealed)
    return Payload(reply)


def _survivors(c: Any, ctx: RoundContext, stage: dp.RoundStage, roster) -> tuple[list[str], list[str]]:
    """The signed survivor set of the request and the sites it excludes, every check of the module docstring."""
    survivors = texts(c, "survivors", most=dp.MAX_SITES)
    if survivors != sorted(set(survivors)) or not set(survivors) <= set(ctx.plan.names):
        raise RequestError("the field 'survivors' must name sites of the plan, sorted, each once")
    excluded = [n for n in ctx.plan.names if n not in survivors]
    if not excluded:
        raise _Refusal(f"the survivor set of stage {stage.stage} excludes no site: there is no term to recover")
    if len(excluded) > ctx.settings.dropouts:
        raise _Refusal(f"{len(excluded)} site(s) dropped out, more than the {ctx.settings.dropouts} the plan survives")
    signatures = c.get("survivor_signatures")
    if not isinstance(signatures, list) or len(signatures) != len(survivors):
        raise RequestError("the request must carry one survivor-set signature per member of the set")
    w_hex = text(c, "w_digest", limit=64)
    message = survivors_message(ctx, stage.stage, survivors, w_hex)
    for name, signature in zip(survivors, signatures, strict=True):
        if not verify(roster.key(name, "site"), signature, "survivors", *message):
            raise _Refusal(f"site {name}'s signature over the survivor set of stage {stage.stage} does not verify (it "
                           "signed another set, plan or W, or none): the helper reveals no term")
    return survivors, excluded


def helper_recover(config: Mapping[str, Any], c: Any, state: MutableMapping[str, bytes], identity, roster
                   ) -> Payload:
    """The terms e_v of the sites a signed survivor set excludes (in clear, signed), once per round and stage,
    after checking that the survivors' promises hold with those sites counted as colluders."""
    ctx = round_context(c, roster)
    _bind(config, state, ctx, first=False)
    stage = ctx.plan.stage(text(c, "stage", choices=[p.stage for p in ctx.plan.stages]))
    _, dropped = _survivors(c, ctx, stage, roster)
    w = _w(c, ctx, stage)
    if w is not None and w_digest(w) != text(c, "w_digest", limit=64):
        raise _Refusal("the survivors signed another W than the one the helper is given for the projected M3 noise")
    done = f"{ctx.round_id}/recovered/{stage.stage}"
    if done in state:
        raise _Refusal(f"it already revealed the dropped sites' terms of stage {stage.stage} of round "
                       f"{ctx.round_id}; it answers one recovery per stage")
    report = dp.dropout_audit(ctx.plan, stage, dropped)
    if not report.all_ok:
        r = report.failing()[0]
        raise _Refusal(f"with {', '.join(dropped)} counted as colluders site {r.site}'s {r.view} view would leave "
                       f"eps_eff = {r.eps_eff:.4g} > {r.eps:.4g}")
    e = _rows(ctx, stage, _secret(config, state, ctx.round_id), w)
    rows = np.stack([e[ctx.index(name)] for name in dropped])
    state[done] = b"1"
    return Payload({"status": "ok", "dropped": dropped,
                    "signature": sign(identity, "recover", ctx.round_id, ctx.digest, stage.stage,
                                      ",".join(dropped), rows.astype("<f8").tobytes())}, {"terms": rows})


class _Request(dict):
    def __init__(self, payload: Payload):
        super().__init__(payload.config)
        self.arrays = payload.arrays


def handle_helper(action: str, config: Mapping[str, Any], request: Payload,
                  state: MutableMapping[str, bytes] | None = None) -> Payload:
    """Answer one request (``hello``, ``shares`` or ``recover``); anything unusable is refused with the reason."""
    state = {} if state is None else state
    name = str(config.get("name", "helper"))[:64]
    try:
        identity = load_identity(str(config.get("identity", "")))
        roster = read_roster(str(config.get("roster", "")))
        if roster.key(name, "helper").public_bytes_raw() != identity.public_key().public_bytes_raw():
            raise _Refusal(f"this node's key is not the one the roster pins for helper {name}")
        if action == "hello":
            round_id = text(request.config, "round")
            return Payload({"status": "ok", "role": "helper", "name": name,
                            "signature": sign(identity, "helper-hello", round_id, name)})
        if action == "shares":
            return helper_shares(config, _Request(request), state, identity, roster)
        if action == "recover":
            return helper_recover(config, _Request(request), state, identity, roster)
        return _refuse(f"helper: unknown request {action[:40]!r}")
    except (_Refusal, RequestError, TrustError, SealError, SiteConfigError, dp.InputError) as exc:
        return _refuse(f"helper: {exc}")
