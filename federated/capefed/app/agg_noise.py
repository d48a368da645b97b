"""Step 3 of a round at the aggregator: the noise and the seeds are set up, in one exchange (docs/federated.md,
"Masked releases and one agreed survivor set").

* Every site answers a ``setup`` request with one sealed, signed set-up message per other site and stage (its
  self-mask seed's share and, helper-free, its noise seed's share and masked secure-sum share: ``capefed.app.shares``),
  its signed commitments to those seeds and its signed reservation of the round's cost in its ledger (every release
  request carries every site's: no site releases before all reserved). The aggregator forwards the messages unread
  and keeps the commitments (it checks every seed it later rebuilds against them).
* Helper variant: the helper, asked in the same exchange, answers with one sealed, signed e_s per site and stage (on
  capeAGN's projected path the M3 shares are asked for after stage 1, with W: :func:`helper_shares`).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from . import dp, shares
from .helper import sealed_key, signature_key
from .messages import Payload, config_bytes, site_label
from .outcome import RoundStopped
from .roundstate import RoundState
from .sealing import OVERHEAD_BYTES
from .sitesetup import commitments_signature_message
from .trust import verify

__all__ = ["Blobs", "HelperShares", "helper_request", "helper_shares", "noise_setup"]

HelperShares = dict[str, dict[str, tuple[bytes, bytes]]]
"""stage -> site -> (the helper's sealed e_s, its signature)."""
Blobs = dict[str, dict[tuple[str, str], tuple[bytes, bytes]]]
"""stage -> (sender, receiver) -> (sealed set-up message, its signature)."""


def helper_request(r: RoundState, stages: list[dp.RoundStage], w: np.ndarray | None = None) -> Payload:
    """The helper's shares request: the context and, per stage, the design's mixing, weights and variances."""
    config = dict(r.context(), stages=[p.stage for p in stages])
    arrays = {}
    for p in stages:
        arrays[f"mixing/{p.stage}"] = np.asarray(p.design.e_mixing, dtype=float)
        arrays[f"weights/{p.stage}"] = np.asarray(p.design.weights, dtype=float)
        arrays[f"var_e/{p.stage}"] = np.asarray(p.design.var_e, dtype=float)
    if w is not None:
        arrays["w"] = w
        r.entry("M3", 4, dp.AGGREGATOR, dp.HELPER, "W (whitening)", w.shape, w.size, w.nbytes, "private")
    request = Payload(config, arrays)
    names = ", ".join(p.stage for p in stages)
    r.entry(stages[0].stage, 0, dp.AGGREGATOR, dp.HELPER,
            f"design for the helper (stage {names}): signed site statements, settings, mixing, weights, helper "
            "variances", (), 0, request.nbytes - (0 if w is None else w.nbytes), "control", protocol=False)
    return request


def _helper_reply(r: RoundState, reply: Payload | None, stages: list[dp.RoundStage]) -> HelperShares:
    if reply is None:
        raise RoundStopped(f"the helper did not answer within {r.settings.timeout:g} s; no noise was handed out",
                           (dp.HELPER,))
    c = reply.config
    if c.get("status") != "ok":
        raise RoundStopped(f"the helper refused: {str(c.get('reason', 'no reason given'))[:2000]}", (dp.HELPER,))
    out: HelperShares = {}
    for p in stages:
        expected = 8 * p.unique + OVERHEAD_BYTES
        out[p.stage] = {}
        for name in r.plan.names:
            sealed, signature = c.get(sealed_key(p.stage, name)), c.get(signature_key(p.stage, name))
            if not isinstance(sealed, bytes) or len(sealed) != expected or not isinstance(signature, bytes):
                raise RoundStopped(f"the helper's share for site {name}, stage {p.stage} is missing or has the wrong "
                                   f"length (expected {expected} bytes)", (dp.HELPER,))
            out[p.stage][name] = (sealed, signature)
    return out


def helper_shares(r: RoundState, helper: int, stages: list[dp.RoundStage], w: np.ndarray | None = None
                  ) -> Generator[Any, Any, HelperShares]:
    """The helper's shares of ``stages`` alone (capeAGN's projected M3, which needs W)."""
    replies = yield from r.exchange("shares", {helper: helper_request(r, stages, w)})
    return _helper_reply(r, replies.get(helper), stages)


def _site_setup(r: RoundState, name: str, c: dict[str, Any], blobs: Blobs) -> str | None:
    """Keep one site's set-up messages and commitments; the problem with its answer, or None."""
    plan, hf = r.plan, not dp.NOISE_VARIANTS[r.plan.settings.noise].helper
    others = [n for n in plan.names if n != name]
    if c.get("recipients") != others:
        return f"site {name} addressed its set-up to other sites than the plan's"
    body, signature = c.get("reservation"), c.get("reservation_signature")
    if not isinstance(body, str) or len(body) > 1024 or not verify(r.roster().key(name, "site"), signature,
                                                                   "reservation", body):
        return f"site {name} sent no reservation signed by the key the roster pins for it"
    r.reservations[name] = (body, signature)
    key = r.roster().key(name, "site")
    for p in plan.stages:
        sealed, sigs = c.get(f"blobs/{p.stage}"), c.get(f"blob_signatures/{p.stage}")
        size = shares.setup_bytes(p.size, hf) + OVERHEAD_BYTES
        committed, signature = c.get(f"commit/{p.stage}"), c.get(f"commit_signature/{p.stage}")
        if (not isinstance(sealed, list) or not isinstance(sigs, list) or len(sealed) != len(others)
                or len(sigs) != len(others) or any(not isinstance(b, bytes) or len(b) != size for b in sealed)):
            return f"site {name} sent a malformed set-up for stage {p.stage}"
        widths = [shares.COMMITMENT_BYTES, shares.COMMITMENT_BYTES if hf else 0]
        if (not isinstance(committed, list) or [len(x) if isinstance(x, bytes) else -1 for x in committed] != widths
                or not verify(key, signature, "commit", *commitments_signature_message(r.digest, r.settings.round_id,
                                                                                        p.stage, name, committed))):
            return (f"site {name}'s commitments to its seeds for stage {p.stage} are malformed or not signed by it for "
                    "this round's plan (it was shown another plan than this one, or they are forged)")
        r.commitments[(p.stage, name)] = committed
        for other, blob, sig in zip(others, sealed, sigs, strict=True):
            blobs[p.stage][(name, other)] = (blob, sig)
            r.entry(p.stage, 0, site_label(name), site_label(other),
                    "set-up message: shares of its seeds" + (", masked share" if hf else "") + " (sealed)",
                    (p.size,) if hf else (), p.size if hf else 0, len(blob), "private",
                    route=(site_label(name), dp.AGGREGATOR, site_label(other)), protocol=False, site=other)
    return None


def noise_setup(r: RoundState, helper: int | None) -> Generator[Any, Any, tuple[HelperShares, Blobs]]:
    """The sites' set-up and (helper variant) the helper's shares of every stage that needs no W, in one exchange."""
    plan = r.plan
    context = r.context()
    requests, actions = {}, {}
    for x in r.sites:
        requests[x.node], actions[x.node] = Payload(dict(context)), "setup"
        r.entry(plan.stages[0].stage, 0, dp.AGGREGATOR, site_label(x.name),
                "set-up request: signed site statements, settings", (), 0, config_bytes(context), "control",
                protocol=False, site=x.name)
    first = [p for p in plan.stages if not p.needs_w]
    if helper is not None:
        requests[helper], actions[helper] = helper_request(r, first), "shares"
    replies = yield from r.exchange(actions, requests)
    blobs: Blobs = {p.stage: {} for p in plan.stages}
    answered = r.answers(replies, r.sites, "set-up", plan.stages[0].stage)
    problems = [(name, problem) for name, reply in answered.items()
                if (problem := _site_setup(r, name, reply.config, blobs)) is not None]
    if problems:
        raise RoundStopped("set-up: " + "; ".join(t for _, t in problems) + ". Nothing was released.",
                           tuple(n for n, _ in problems))
    return (_helper_reply(r, replies.get(helper), first) if helper is not None else {}), blobs
