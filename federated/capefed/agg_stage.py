"""One stage of a round at the aggregator (docs/federated.md, "Masked releases and one agreed survivor set").

1. **release**: every live site gets its noise (the helper's sealed e_s, and every other site's set-up messages),
   the aggregator's f_s (and W on M3) and answers with its release in the ring plus its self-mask. The aggregator
   waits until every site answered, or until the round can survive without the rest (S - dropouts answered) and
   ``grace`` seconds more (or as long again as that took), or its deadline: a site that has not answered then is
   dropped. It does not wait for Flower to notice a dead node.
2. **confirm**: the survivor set U (the sites whose masked releases arrived) goes to every member; each signs it.
3. **reveal**: every member gets U and all members' signatures and answers with, per site, its share of the
   self-mask seed (in U) or of the noise seed (not in U; helper-free) and W; with a helper, the helper gets the same
   and answers the excluded sites' terms.
4. **unmask**: each member's self-mask seed is rebuilt from t shares and checked against its commitment; its release
   is decoded and must lie in the range bounded data plus the designed noise produce (``dpcore.federation.masking``);
   the excluded sites' terms come from their rebuilt noise seeds and W, or from the helper. The aggregate is
   sum over U of mu_s (a_hat_s - f_s) plus the excluded terms, divided by U's weight when a site is missing.

A refusal, a malformed answer, a missing signature or share, a wrong commitment or a release out of range stops the
round naming the party; nothing is published.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from . import dp, shares
from .agg_noise import Blobs, HelperShares
from .checks import release_problem, reveal_problem
from .messages import Payload, config_bytes, site_label
from .outcome import RoundStopped
from .roundstate import RoundState, SiteNode
from .siterelease import w_digest
from .trust import verify

__all__ = ["stage"]

_STEPS = {  # protocol step numbers of dpcore.cape.protocol: (helper noise, aggregator noise, release)
    ("capePCA", "A"): (1, 2, 4),
    ("capeAGN", "M2"): (1, 2, 3),
    ("capeAGN", "M3"): (5, 6, 7),
}
_SYMBOLS = {("capePCA", "A"): ("e", "f", "Ahat"), ("capeAGN", "M2"): ("E2", "F2", "M2hat"),
            ("capeAGN", "M3"): ("E3", "F3", "M3~hat")}


def _noise_fields(r: RoundState, p: dp.RoundStage, name: str, helper: HelperShares, blobs: Blobs
                  ) -> tuple[dict[str, Any], int]:
    """The fields that carry site ``name``'s noise of stage p (its helper share and signature, with a helper) and
    every other site's set-up message to it; and their bytes."""
    senders = [n for n in r.plan.names if n != name]
    sent = [blobs[p.stage][(sender, name)] for sender in senders]
    fields: dict[str, Any] = {"senders": senders, "blobs": [b for b, _ in sent],
                              "blob_signatures": [g for _, g in sent]}
    nbytes = sum(len(b) for b, _ in sent)
    if helper:
        sealed, signature = helper[p.stage][name]
        fields.update(sealed_e=sealed, helper_signature=signature)
        nbytes = len(sealed)
    return fields, nbytes


def _wire(values: np.ndarray) -> np.ndarray:
    """How a noise term travels: float64, or the integer variant's integers as ring elements (uint64)."""
    return values.view(np.uint64) if values.dtype == np.int64 else values


def _release_shape(r: RoundState, p: dp.RoundStage) -> tuple[tuple[int, ...], int]:
    """The shape and unique entries of a site's release of stage p: the stage's own, except the third moment of the
    continuous variants, which travels projected on W (K x K x K); the integer variant's sites send the dense
    statistic's unique entries (the aggregator projects)."""
    k = r.settings.round.k
    if p.discrete is not None or p.stage != "M3":
        return p.shape, p.unique
    return (k,) * 3, dp.noise_unique(p.stage, "projected", r.plan.dim, k)


def _release_requests(r: RoundState, p: dp.RoundStage, helper: HelperShares, blobs: Blobs, f: list[np.ndarray],
                      w: np.ndarray | None) -> dict[int, Payload]:
    s, plan = r.settings, r.plan
    step_e, step_f, step_r = _STEPS[(r.algorithm, p.stage)]
    sym_e, sym_f, _ = _SYMBOLS[(r.algorithm, p.stage)]
    requests = {}
    for x in r.live:
        i, name = plan.names.index(x.name), x.name
        fields, nbytes = _noise_fields(r, p, name, helper, blobs)
        config = dict(s.public(), **r.context(), stage=p.stage, digest=plan.digests[i],
                      var_g=float(p.design.var_g[i]), **fields,
                      reservations=[r.reservations[n][0] for n in plan.names],
                      reservation_signatures=[r.reservations[n][1] for n in plan.names])
        requests[x.node] = Payload(config, {"f": _wire(f[i])} | ({"w": w} if w is not None else {}))
        label = site_label(name)
        sender = dp.HELPER if helper else dp.SITES  # helper-free: e_s from the other sites' set-up (the secure sum)
        r.entry(p.stage, step_e, sender, label, f"{sym_e}_{name}", p.shape, p.unique, nbytes, "private",
                route=(sender, dp.AGGREGATOR, label), site=name)
        r.entry(p.stage, step_f, dp.AGGREGATOR, label, f"{sym_f}_{name}", p.shape, p.unique, f[i].nbytes, "private",
                site=name)
        r.entry(p.stage, step_r, dp.AGGREGATOR, label, "release request: round, stage, design digest, tau_g,s^2, "
                "set-up messages", (), 0, config_bytes(config) - nbytes, "control", protocol=False, site=name)
    return requests


def _releases(r: RoundState, p: dp.RoundStage, helper: HelperShares, blobs: Blobs, f: list[np.ndarray],
              w: np.ndarray | None) -> Generator[Any, Any, dict[str, np.ndarray]]:
    """Step 1: the masked releases that arrived in time (the others' sites are dropped)."""
    plan = r.plan
    _, _, step_r = _STEPS[(r.algorithm, p.stage)]
    _, _, sym_r = _SYMBOLS[(r.algorithm, p.stage)]
    shape, count = _release_shape(r, p)
    live = r.live
    replies = yield from r.exchange("release", _release_requests(r, p, helper, blobs, f, w),
                                    quorum=len(plan.names) - plan.settings.dropouts)
    problems = [(x.name, release_problem(x.name, replies[x.node], plan.digests[plan.names.index(x.name)], count))
                for x in live if x.node in replies]
    problems = [(name, problem) for name, problem in problems if problem]
    if problems:
        raise RoundStopped(f"stage {p.stage}: " + "; ".join(x for _, x in problems) + ". Nothing was released.",
                           tuple(name for name, _ in problems))
    waited = max((e["seconds"] for e in r.exchanges[-len(live):]), default=0.0)
    r.drop(p.stage, [x.name for x in live if x.node not in replies], f"stage {p.stage} release", waited)
    out = {}
    for x in r.live:
        masked = replies[x.node].arrays["masked"]
        out[x.name] = masked
        r.entry(p.stage, step_r, site_label(x.name), dp.AGGREGATOR, f"{sym_r}_{x.name}", shape, count,
                masked.nbytes, "to aggregator", site=x.name)
    return out


def _confirm(r: RoundState, p: dp.RoundStage, members: list[SiteNode]) -> Generator[Any, Any, list[bytes]]:
    """Step 2: every member signs the survivor set."""
    survivors = [x.name for x in members]
    requests = {x.node: Payload(dict(r.context(), stage=p.stage, survivors=survivors)) for x in members}
    for x in members:
        r.entry(p.stage, 0, dp.AGGREGATOR, site_label(x.name), f"survivor set of stage {p.stage} ({len(survivors)} of "
                f"{len(r.plan.names)} sites) to sign", (), 0, config_bytes(requests[x.node].config), "control",
                protocol=False, site=x.name)
    replies = yield from r.exchange("confirm", requests)
    answered = r.answers(replies, members, f"stage {p.stage} confirm", p.stage)
    signatures = []
    for x in members:
        signature = answered[x.name].config.get("signature")
        if not isinstance(signature, bytes) or len(signature) != 64:
            raise RoundStopped(f"stage {p.stage}: site {x.name} sent no signature over the survivor set. Nothing was "
                               "released.", (x.name,))
        signatures.append(signature)
    return signatures


def _reveal(r: RoundState, p: dp.RoundStage, members: list[SiteNode], signatures: list[bytes], helper: int | None,
            w: np.ndarray | None) -> Generator[Any, Any, tuple[dict[str, Payload], Payload | None]]:
    """Step 3: every member's shares (and W), and with a helper the excluded sites' terms."""
    survivors = [x.name for x in members]
    base = dict(r.context(), stage=p.stage, survivors=survivors, survivor_signatures=signatures)
    requests, actions = {x.node: Payload(dict(base)) for x in members}, {x.node: "reveal" for x in members}
    excluded = [n for n in r.plan.names if n not in survivors]
    if helper is not None and excluded:
        projected = p.stage == "M3" and r.plan.settings.path == "projected"
        requests[helper] = Payload(dict(base, w_digest=w_digest(w)), {"w": w} if projected else {})
        actions[helper] = "recover"
    replies = yield from r.exchange(actions, requests)
    answered = r.answers(replies, members, f"stage {p.stage} reveal", p.stage)
    for x in members:
        problem = reveal_problem(x.name, answered[x.name], r.plan, p, survivors)
        if problem:
            raise RoundStopped(f"stage {p.stage}: {problem}. Nothing was released.", (x.name,))
    return answered, (replies.get(helper) if helper is not None and excluded else None)


def _seed(r: RoundState, p: dp.RoundStage, kind: str, name: str, revealed: dict[str, Payload]) -> bytes:
    """Site ``name``'s seed of ``kind`` from the revealed shares, checked against its commitment."""
    i = r.plan.names.index(name)
    pieces = [reply.config["shares"][i] for reply in revealed.values()]
    try:
        seed = shares.combine(pieces, r.plan.threshold)
    except shares.ShareError as exc:
        raise RoundStopped(f"stage {p.stage}: the {kind} seed of site {name} cannot be rebuilt: {exc}. Nothing was "
                           "released.") from exc
    committed = r.commitments[(p.stage, name)][shares.KINDS.index(kind)]
    if shares.commitment(kind, r.settings.round_id, p.stage, name, seed) != committed:
        raise RoundStopped(f"stage {p.stage}: the shares of site {name}'s {kind} seed do not rebuild the seed it "
                           "committed to (a wrong share). Nothing was released.")
    return seed


def _unmask(r: RoundState, p: dp.RoundStage, masked: dict[str, np.ndarray], revealed: dict[str, Payload],
            w: np.ndarray | None) -> dict[str, np.ndarray]:
    """Step 4: every member's release, unmasked, decoded and checked against its range."""
    out = {}
    for name in revealed:
        i = r.plan.names.index(name)
        unmasked = shares.unmask(masked[name], _seed(r, p, "mask", name, revealed))
        if p.discrete is not None:  # a ring element of the stage's ring: summed exactly, decoded once (stage())
            value, problem = unmasked, dp.ring_release_problem(unmasked, p.discrete)
        else:
            encoding = dp.release_encoding(r.plan, p, i, w)
            value = dp.decode_release(unmasked, encoding)
            problem = dp.release_range_problem(value, encoding)
        if problem:
            raise RoundStopped(f"stage {p.stage}: site {name}'s release is refused: {problem}. Nothing was released.",
                               (name,))
        out[name] = value
    r.entry(p.stage, 0, dp.SITES, dp.AGGREGATOR, "shares of the survivors' self-mask seeds (releases unmasked)",
            (len(revealed), len(r.plan.names)), 0, sum(config_bytes(x.config, ["shares"]) for x in revealed.values()),
            "control", protocol=False)
    return out


def _helper_terms(r: RoundState, p: dp.RoundStage, reply: Payload | None, dropped: list[str]) -> list[np.ndarray]:
    if reply is None or reply.config.get("status") != "ok":
        why = "did not answer" if reply is None else str(reply.config.get("reason", "refused"))[:2000]
        raise RoundStopped(f"stage {p.stage}: recovering {', '.join(dropped)}: the helper {why}. Nothing was "
                           "released.", (dp.HELPER,))
    terms = np.asarray(reply.arrays.get("terms", np.empty(0)))
    count = dp.noise_unique(p.stage, r.plan.settings.path, r.plan.dim, r.plan.settings.k)
    roster = r.roster()
    helper = roster.names("helper")
    if (terms.shape != (len(dropped), count) or terms.dtype != np.float64 or not np.all(np.isfinite(terms))
            or len(helper) != 1 or not verify(roster.key(helper[0], "helper"), reply.config.get("signature"),
                                              "recover", r.settings.round_id, r.digest, p.stage, ",".join(dropped),
                                              terms.astype("<f8").tobytes())):
        raise RoundStopped(f"stage {p.stage}: the helper's recovered terms are malformed or not signed by the pinned "
                           "helper key. Nothing was released.", (dp.HELPER,))
    return [np.asarray(t, dtype=float) for t in terms]


def _site_terms(r: RoundState, p: dp.RoundStage, revealed: dict[str, Payload], dropped: list[str],
                w: np.ndarray | None) -> list[np.ndarray]:
    """Each dropped site's e_v from its rebuilt noise seed and the secure sum W (every member sent the same W)."""
    plan = r.plan
    totals = [dp.sum_from_wire(x.arrays["total"], p) for x in revealed.values()]
    if any(not np.array_equal(t, totals[0]) for t in totals[1:]):
        raise RoundStopped(f"stage {p.stage}: the survivors disagree on the secure sum W. Nothing was released.")
    out = []
    for v in dropped:
        i = plan.names.index(v)
        _, own = dp.site_draw(_seed(r, p, "noise", v, revealed), plan, p, i)
        row = dp.site_term(own, totals[0], p, i)
        if p.discrete is not None:  # E~_v: integers, added on the ring
            out.append(row)
            continue
        projected = p.stage == "M3" and plan.settings.path == "projected"
        out.append(dp.noise_entries(row, p.stage, plan.settings.m3_noise, plan.settings.path, plan.dim,
                                    w if projected else None))
    return out


def _aggregator_noise(r: RoundState, p: dp.RoundStage, secret: Any, i: int, w: np.ndarray | None) -> np.ndarray:
    """f_s of site i (the integer variant: F~_s, integers from the stream ``discrete-f``)."""
    s, plan, name = r.settings.round, r.plan, r.plan.names[i]
    if p.discrete is not None:
        rng = dp.party_generator("secure", secret, s.run, r.algorithm, p.stage, dp.RING_ROLES["f"], name)
        return dp.ring_draw(p.discrete.laws.f[i], rng, len(plan.names), p.discrete.entries)
    rng = dp.party_generator("secure", secret, s.run, r.algorithm, p.stage, dp.AGGREGATOR, name)
    return dp.noise_entries(dp.aggregator_noise(p.design.var_f[i], p.size, rng), p.stage, s.m3_noise, s.path,
                            plan.dim, w)


def _ring_aggregate(r: RoundState, p: dp.RoundStage, releases: list[np.ndarray], f: list[np.ndarray],
                    missing: list[np.ndarray], survivors: list[int], w: np.ndarray | None) -> np.ndarray:
    """The integer variant: the survivors' releases less their F~_s plus the dropped sites' E~_v, summed exactly on
    the stage's ring and decoded once (``dpcore.federation.ring_aggregate``), refused beyond the design's no-wrap
    bound; the third moment then projected on W by the aggregator."""
    try:
        ring = dp.ring_aggregate(releases, f, missing, p.discrete, survivors)
    except dp.InputError as exc:
        raise RoundStopped(f"stage {p.stage}: the releases are refused by the ring's no-wrap check: {exc} (bound "
                           f"{p.discrete.ring_bound:,} on a {p.discrete.ring_bits}-bit ring). Nothing was "
                           "released.") from exc
    r.exact[p.stage] = ring.exact
    return dp.aggregator_subtract(p.stage, r.settings.round.path, ring.aggregate, w)


def stage(r: RoundState, p: dp.RoundStage, secret: Any, helper: int | None, noise: HelperShares, blobs: Blobs,
          w: np.ndarray | None) -> Generator[Any, Any, np.ndarray]:
    """One stage from the aggregator's side (module docstring); returns the aggregate."""
    s, plan = r.settings.round, r.plan
    f = [_aggregator_noise(r, p, secret, i, w) for i in range(len(plan.names))]
    masked = yield from _releases(r, p, noise, blobs, f, w)
    members = r.live
    signatures = yield from _confirm(r, p, members)
    revealed, helper_reply = yield from _reveal(r, p, members, signatures, helper, w)
    releases = _unmask(r, p, masked, revealed, w)
    dropped = [n for n in plan.names if n not in releases]
    terms = (_helper_terms(r, p, helper_reply, dropped) if helper is not None else
             _site_terms(r, p, revealed, dropped, w)) if dropped else []
    missing = []
    for name, row in zip(dropped, terms, strict=True):
        i = plan.names.index(name)
        missing.append(row if p.discrete is not None else
                       float(p.design.weights[i]) * dp.aggregator_subtract(p.stage, s.path, row, w))
        r.entry(p.stage, 0, dp.HELPER if helper is not None else dp.SITES, dp.AGGREGATOR,
                f"recovered term of {name} (excluded from the signed survivor set)", p.shape, p.unique, row.nbytes,
                "control", protocol=False, site=name)
    survivors = [plan.names.index(n) for n in releases]
    if p.discrete is not None:
        return _ring_aggregate(r, p, [releases[plan.names[i]] for i in survivors], [f[i] for i in survivors],
                               missing, survivors, w)
    subtract = [dp.aggregator_subtract(p.stage, s.path, f[i], w) for i in survivors]
    partial = dp.combine([releases[plan.names[i]] for i in survivors], subtract, p.design.weights[survivors])
    return dp.recovered_aggregate(partial, missing, p.design.weights, survivors)
