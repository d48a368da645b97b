"""The aggregator's side of capePCA and capeAGN rounds, over any transport (Flower or in-process).

1. **hello** (:mod:`capefed.agg_hello`): the helper answers with its role (signed), each site with its budget and a
   fresh X25519 round key in a statement signed by its identity key; only parties the roster pins count.
2. **design**: ``dpcore.federation.plan_round`` solves and audits every stage for the round's noise variant and
   drop-out tolerance, with the Shamir threshold t = S - dropouts (refused unless S >= c + 2 dropouts + 1); a refusal
   ends the round here, with the reason. Every other party recomputes the same plan from the signed statements.
3. **set-up** (:mod:`capefed.agg_noise`): every site shares its self-mask seed (helper-free also its noise seed and
   masked secure-sum share) with every other site, sealed and signed; the helper, in the same exchange, seals each e_s.
4. **stages** (:mod:`capefed.agg_stage`), each: masked releases, the survivor set signed by every member, the shares
   the signed set calls for, the releases unmasked and range-checked, the excluded sites' terms recovered.
5. **output**: capePCA publishes the top-K eigenvectors, capeAGN whitens M2 and decomposes M3; nothing non-finite is
   ever published. The outcome lists the sites that took part, those dropped and why, and the audit of what was
   released (``dpcore.federation.dropout_audit``).
6. **the end** (:mod:`capefed.agg_result`): every site gets the round's status and published result; each computes
   the audit of its own views, settles the round in its ledger and keeps the result.

Every request carries the approved study (``study=`` in the run configuration): a round without one is refused
before anything is sent.

Several rounds run side by side (:func:`run_rounds`): the requests all rounds have for a node at the same step
travel as one bundle. Every message is logged (:class:`dpcore.federation.LogEntry`) with the names
``dpcore.cape.protocol`` uses.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from . import dp
from .agg_hello import hello
from .agg_noise import helper_shares, noise_setup
from .agg_result import deliver
from .agg_stage import stage
from .messages import BUNDLE, Payload, bundle, site_label, unbundle
from .outcome import RoundOutcome, RoundStopped
from .requests import plan_digest
from .roundstate import RoundState
from .runconfig import MAX_TIMEOUT, AggregatorSettings, check_run_config, settings_from_run_config

__all__ = ["MAX_TIMEOUT", "NOISE_READY", "AggregatorSettings", "RoundOutcome", "RoundStopped", "Transport",
           "check_run_config", "run_round", "run_rounds", "settings_from_run_config"]

NOISE_READY = "noise-ready"
"""The checkpoint after the noise was set up (helper shares and the sites' set-up) and before any release."""

Until = Callable[[set[int], float], bool]


class Transport(Protocol):
    """How the aggregator reaches the other parties."""

    def wait_for_nodes(self, count: int, timeout: float) -> list[int]:
        """The ids of the connected nodes once at least ``count`` are connected (or all there are at ``timeout``)."""

    def exchange(self, action: str, requests: Mapping[int, Payload], timeout: float, until: Until | None = None
                 ) -> dict[int, Payload]:
        """Send one request per node and return the replies that arrived within ``timeout`` seconds, or earlier once
        ``until(nodes that replied, seconds since the requests went out)`` is true."""


def _secret(seed: int | str | None) -> bytes | int | str:
    return seed if seed is not None else dp.fresh_secret()


def _stages(r: RoundState, secret: Any, helper: int | None, noise: Any, blobs: Any
            ) -> Generator[Any, Any, tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]:
    """Every stage of the plan in order, with what the algorithm's table entry carries between them (capeAGN: W
    after M2, sent to the sites and, on the projected path, to the helper), then its outputs."""
    s, plan = r.settings.round, r.plan
    entry = dp.federated_algorithm(r.algorithm)
    aggregates: dict[str, np.ndarray] = {}
    carried, w = None, None
    for i, p in enumerate(plan.stages):
        if p.needs_w and helper is not None:
            noise = noise | (yield from helper_shares(r, helper, [p], w))
        aggregates[p.stage] = yield from stage(r, p, secret, helper, noise, blobs, w)
        if i + 1 == len(plan.stages):
            break
        if not np.all(np.isfinite(aggregates[p.stage])):
            raise RoundStopped(f"stage {p.stage}: the aggregate is not finite. Nothing was released.")
        try:
            carried, w = entry.between(p.stage, aggregates[p.stage], plan)
        except dp.InputError as exc:
            raise RoundStopped(f"stage {p.stage}: {exc} Nothing was released.") from exc
        r.w = w
        nxt = plan.stages[i + 1].stage
        for x in r.live:
            r.entry(nxt, entry.carried_step, dp.AGGREGATOR, site_label(x.name), entry.carried_label, w.shape, w.size,
                    w.nbytes, "broadcast", site=x.name)
    last = plan.stages[-1].stage
    outputs = entry.outputs(plan, aggregates, carried, lambda: dp.party_generator(
        "secure", secret, s.run, r.algorithm, last, dp.AGGREGATOR))
    m = entry.published(plan, outputs)
    r.entry(m.stage, m.step, dp.AGGREGATOR, "everyone", m.content, m.shape, m.unique, m.nbytes, "public",
            numbers=m.numbers)
    return aggregates, outputs


def _finite(aggregates: Mapping[str, np.ndarray], outputs: Mapping[str, np.ndarray]) -> None:
    """Nothing non-finite is ever published."""
    bad = [k for k, v in {**aggregates, **outputs}.items() if not np.all(np.isfinite(np.asarray(v, dtype=float)))]
    if bad:
        raise RoundStopped(f"the result holds non-finite numbers ({', '.join(bad)}). Nothing was released.")


def _run(r: RoundState) -> Generator[Any, Any, RoundOutcome]:
    """The round, then its end sent to every site (:func:`capefed.agg_result.deliver`)."""
    start = time.perf_counter()
    outcome = yield from _round(r)
    yield from deliver(r, outcome)
    outcome.seconds = time.perf_counter() - start
    return outcome


def _round(r: RoundState) -> Generator[Any, Any, RoundOutcome]:
    s = r.settings
    secret = _secret(s.seed)
    start = time.perf_counter()
    outcome = RoundOutcome(algorithm=r.algorithm, status="stopped", log=r.log, exchanges=r.exchanges)
    if not s.study:
        outcome.status, outcome.reason = "refused", ("the run configuration names no approved study (study=...): "
                                                     "every site answers only rounds of a study it signed")
        return outcome
    try:
        helper = yield from hello(r)
        helper = helper if dp.NOISE_VARIANTS[s.round.noise].helper else None
        try:
            r.plan = plan = dp.plan_round([x.budget for x in r.sites], s.round)
        except dp.InputError as exc:
            outcome.status, outcome.reason = "refused", f"invalid round settings: {exc}"
            return outcome
        outcome.plan = plan
        if plan.refusal:
            outcome.status, outcome.reason = "refused", plan.refusal
            return outcome
        r.digest = plan_digest(s.round_id, plan.settings, {x.name: x.statement for x in r.sites})
        noise, blobs = yield from noise_setup(r, helper)
        yield ("checkpoint", NOISE_READY)
        aggregates, outputs = yield from _stages(r, secret, helper, noise, blobs)
        _finite(aggregates, outputs)
        outcome.status, outcome.aggregates, outcome.outputs = "released", aggregates, outputs
        outcome.exact = dict(r.exact)
        outcome.took_part = tuple(x.name for x in r.live)
        outcome.audit = {p.stage: dp.dropout_audit(plan, p, r.dropped).to_records() for p in plan.stages}
        return outcome
    except RoundStopped as stop:
        outcome.status, outcome.reason, outcome.sites = "stopped", stop.reason, stop.sites
        outcome.aggregates, outcome.outputs = {}, {}
        return outcome
    finally:
        outcome.seconds = time.perf_counter() - start
        outcome.dropped, outcome.ignored, outcome.notes = tuple(r.dropped), tuple(r.ignored), tuple(r.notes)


class _Wait:
    """When the aggregator may stop waiting for one bundled exchange: for every round in it, all its nodes replied,
    or it has a quorum and that many replied at least ``grace`` seconds ago (and at least as long ago as reaching
    the quorum took). A round without a quorum needs every reply (or the deadline)."""

    def __init__(self, rounds: list[tuple[set[int], int | None, float]]):
        self.rounds = rounds
        self.reached: list[float | None] = [None] * len(rounds)

    def __call__(self, replied: set[int], elapsed: float) -> bool:
        done = True
        for i, (nodes, quorum, grace) in enumerate(self.rounds):
            got = len(nodes & replied)
            if got == len(nodes):
                continue
            if quorum is None or got < quorum:
                done = False
                continue
            if self.reached[i] is None:
                self.reached[i] = elapsed
            done &= elapsed >= self.reached[i] + max(grace, self.reached[i])
        return done


def _advance(transport: Transport, steps: list[Any], outcomes: list[RoundOutcome | None],
             pending: dict[int, tuple[Any, ...]], i: int, value: Any) -> None:
    """Run round i until it needs an exchange (kept in ``pending``) or ends."""
    try:
        while True:
            request = steps[i].send(value)
            if request[0] == "nodes":
                value = transport.wait_for_nodes(request[1], request[2])
                continue
            if request[0] == "checkpoint":
                hook = getattr(transport, "checkpoint", None)
                value = hook(request[1]) if hook else None
                continue
            pending[i] = request[1:]
            return
    except StopIteration as stop:
        outcomes[i] = stop.value


def run_rounds(transport: Transport, settings: Sequence[AggregatorSettings]) -> list[RoundOutcome]:
    """Several rounds side by side, step by step: the requests all rounds have for a node at the same step travel
    as one bundle (``messages.bundle``). Every round keeps its own keys, design, streams, checks and log; one round's
    failure does not stop another. Never raises for a party's failure."""
    rounds = [RoundState(s) for s in settings]
    steps = [_run(r) for r in rounds]
    outcomes: list[RoundOutcome | None] = [None] * len(rounds)
    pending: dict[int, tuple[Any, ...]] = {}
    for i in range(len(rounds)):
        _advance(transport, steps, outcomes, pending, i, None)
    while pending:
        batch = dict(sorted(pending.items()))
        pending.clear()
        per_node: dict[int, list[tuple[str, str, Payload]]] = {}
        for i, (action, requests, _, _) in batch.items():
            for node, payload in requests.items():
                name = action[node] if isinstance(action, Mapping) else action
                per_node.setdefault(node, []).append((str(i), name, payload))
        timeout = max(t for _, _, t, _ in batch.values())
        until = _Wait([(set(requests), quorum, rounds[i].settings.grace)
                       for i, (_, requests, _, quorum) in batch.items()])
        start = time.perf_counter()
        replies = transport.exchange(BUNDLE, {n: bundle(items) for n, items in per_node.items()}, timeout, until)
        seconds = time.perf_counter() - start
        opened: dict[int, dict[str, Payload]] = {}
        for node, payload in replies.items():
            try:
                opened[node] = {key: reply for key, _, reply in unbundle(payload)}
            except ValueError:  # not a bundle: a node-level failure (e.g. Flower's error reply) answers every item
                opened[node] = {key: payload for key, _, _ in per_node[node]}
        for i, (_, requests, _, _) in batch.items():
            answers = {n: opened[n][str(i)] for n in requests if n in opened and str(i) in opened[n]}
            _advance(transport, steps, outcomes, pending, i, (answers, seconds))
    return [o for o in outcomes if o is not None]


def run_round(transport: Transport, settings: AggregatorSettings) -> RoundOutcome:
    """One round (:func:`run_rounds` with one)."""
    return run_rounds(transport, [settings])[0]
