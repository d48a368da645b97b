"""The helper (the helper variant): on a ``shares`` request it draws the zero-sum noise e_1..e_S of the requested
stages, seals each e_s to site s's round key and signs it; on a ``recover`` request it reveals the terms of sites
that dropped out after the shares went out.

Node configuration: ``role="helper"``, ``identity`` (its Ed25519 key), ``roster`` (the pinned parties) and
optionally ``seed`` (a deployment leaves it out: a fresh 256-bit secret per round, kept in the node's state).
The helper trusts nothing the aggregator says about the design: it verifies every site's signed statement (budget
and round key) against the roster, recomputes the plan from them and the public settings, refuses a request whose
stages, dimensions, mixing, weights or variances are not that plan's, and draws from its own plan with ChaCha20.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

import numpy as np

from . import dp
from .messages import Payload
from .requests import RequestError, RoundContext, array, round_context, text, texts
from .sealing import SealError, seal_array, seal_context
from .trust import TrustError, load_identity, read_roster, sign

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


def helper_shares(config: Mapping[str, Any], c: Any, state: MutableMapping[str, bytes], identity, roster) -> Payload:
    ctx = round_context(c, roster)
    if ctx.settings.noise != "helper":
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
            context = seal_context(ctx.round_id, name, site)
            try:
                sealed = seal_array(row, ctx.statements[site].public_key, context)
            except SealError as exc:
                raise _Refusal(f"site {site}: {exc}") from exc
            reply[sealed_key(name, site)] = sealed
            reply[signature_key(name, site)] = sign(identity, "share", context, sealed)
    return Payload(reply)


def helper_recover(config: Mapping[str, Any], c: Any, state: MutableMapping[str, bytes], identity, roster
                   ) -> Payload:
    """The terms e_v of the sites that dropped out of ``stage`` (in clear, signed), after checking that the
    survivors' promises hold with those sites counted as colluders."""
    ctx = round_context(c, roster)
    stage = ctx.plan.stage(text(c, "stage", choices=[p.stage for p in ctx.plan.stages]))
    dropped = texts(c, "dropped", most=dp.MAX_SITES)
    if not dropped or len(set(dropped)) != len(dropped) or not set(dropped) <= set(ctx.plan.names):
        raise RequestError("the field 'dropped' must name sites of the plan, each once")
    if len(dropped) > ctx.settings.dropouts:
        raise _Refusal(f"{len(dropped)} site(s) dropped out, more than the {ctx.settings.dropouts} the plan survives")
    report = dp.dropout_audit(ctx.plan, stage, dropped)
    if not report.all_ok:
        r = report.failing()[0]
        raise _Refusal(f"with {', '.join(dropped)} counted as colluders site {r.site}'s {r.view} view would leave "
                       f"eps_eff = {r.eps_eff:.4g} > {r.eps:.4g}")
    e = _rows(ctx, stage, _secret(config, state, ctx.round_id), _w(c, ctx, stage))
    rows = np.stack([e[ctx.index(name)] for name in dropped])
    return Payload({"status": "ok", "signature": sign(identity, "recover", ctx.round_id, stage.stage,
                                                       rows.astype("<f8").tobytes())}, {"terms": rows})


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
    except (_Refusal, RequestError, TrustError, dp.InputError) as exc:
        return _refuse(f"helper: {exc}")
