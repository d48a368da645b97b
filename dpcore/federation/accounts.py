"""What a site's ledger says about its budget, and the events a site appends in a round (docs/federated.md, "The
ledger"): the two-phase spend, the composition and the heads of the other sites' ledgers it saw.

**Two phases.** Before it draws or shares anything for a round a site *reserves* the round's worst-case cost (every
stage at the worst view its release and its shares can expose: :func:`dpcore.federation.release_entry`), and every
site's signed reservation must reach every other site before any of them releases. A reserved stage counts in full
until the round is *settled*. A stage is *spent* the moment the site signs a survivor set that holds itself (the
``spend`` event is written first): from then on the other members reveal its self-mask shares whenever every member
signed the same set, and its release can be unmasked. A stage the site never signed such a set for is *void* once the
round is settled: its release, if it sent one, travelled only masked (uniform in the ring), and no honest site
reveals its self-mask shares for a set it did not sign, while the c colluders hold fewer than the t = S - dropouts
shares that rebuild the seed; its noise seed's shares, if revealed (helper-free, the site excluded), carry no data.
So a void stage revealed nothing of the site's data, whatever the aggregator says it published; and a stage the site
signed for counts as spent even if the aggregator says it published nothing (it held every share it needed to unmask
it). A round is settled when the site receives the round's end (its result) or, failing that, once its own
``deadline`` between steps has certainly passed for every step a round can have (:func:`stale_rounds`): after that
it refuses every request of the round, so a void stage can never be signed for later. A round settled that way
(its end never received) is **counted in full**: the last events of a ledger, written after the site last reported
its head to the other sites, can be cut off without the chain or the other sites noticing (a valid prefix they have
not seen yet); if a ``spend`` event were among them, the round would otherwise look void and its budget come back.
The only events that can be lost that way are a round's ``spend`` and ``settle``; its reservation was reported in the
signed reservation every other site holds (a ledger shorter than that is refused by them,
:func:`peer_problem`), and an open reservation counts in full until a settlement, which then counts it in full.

**Composition.** Gaussian mechanisms compose exactly: k releases with mu_i are one with mu = sqrt(sum mu_i^2)
(mu-GDP, Dong, Roth and Su); eps at the ledger's delta_total is :func:`composed_eps`. So k rounds of the same design
cost sqrt(k) times one round's mu, and an eps budget "worth R rounds" is the composition of exactly R rounds
(:func:`rounds_budget`), never R times one round's eps (which allows about R^2 / 4 rounds and more at a larger
delta_total: the demonstration's "5 rounds' worth" allowed 22).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..privacy.calibration import exact_eps, gaussian_sigma
from ..validation import InputError
from .ledger import Ledger, LedgerHead, check_costs

__all__ = ["Budget", "LedgerEntry", "RoundAccount", "approve_event", "approved", "budget", "composed_eps",
           "composed_mu", "peer_heads", "peer_problem", "reserve_event", "round_accounts", "rounds_budget",
           "settle_event", "spend_event", "stale_rounds", "study_rounds_used"]

Event = tuple[str, dict[str, Any]]
_RTOL = 1e-12


@dataclass(frozen=True, kw_only=True)
class LedgerEntry:
    """One stage's cost: which round, algorithm and stage, the stage's promised (eps, delta), the worst audited view
    and mu = Delta / sigma_eff in it."""

    round: str
    algorithm: str
    stage: str
    eps: float
    delta: float
    view: str
    mu: float

    def cost(self) -> dict[str, Any]:
        return {"stage": self.stage, "eps": self.eps, "delta": self.delta, "view": self.view, "mu": self.mu}


@dataclass(frozen=True, kw_only=True)
class RoundAccount:
    """A round as the ledger holds it: its reservation, the stages spent so far, and its settlement."""

    round: str
    study: str
    algorithm: str
    stages: tuple[LedgerEntry, ...]
    reserved_at: float
    spent: tuple[str, ...] = ()
    settled: bool = False
    reason: str = ""

    @property
    def counted(self) -> tuple[LedgerEntry, ...]:
        """The stages that count against the budget: every stage until the round is settled, then the spent ones."""
        return self.stages if not self.settled else tuple(s for s in self.stages if s.stage in self.spent)

    @property
    def void(self) -> tuple[str, ...]:
        return tuple(s.stage for s in self.stages if s.stage not in self.spent) if self.settled else ()


def composed_mu(mus: Sequence[float]) -> float:
    """sqrt(sum_i mu_i^2) by ``math.hypot``, which scales and never overflows."""
    return math.hypot(*(float(m) for m in mus))


def composed_eps(mus: Sequence[float], delta: float) -> float:
    """eps at ``delta`` of the composition of Gaussian mechanisms with mu_i = Delta_i / sigma_i (exact)."""
    mu = composed_mu(mus)
    if mu == 0.0:
        return 0.0
    if not math.isfinite(mu):
        return math.inf
    return exact_eps(1.0, mu, float(delta))


def rounds_budget(round_mus: Sequence[float], rounds: int, delta: float) -> float:
    """The eps at ``delta`` of exactly ``rounds`` rounds whose stages cost ``round_mus`` each (mu-GDP composition)."""
    return composed_eps(list(round_mus) * int(rounds), delta)


def mu_for_eps(eps: float, delta: float) -> float:
    """The mu whose Gaussian mechanism has exactly (eps, delta) (the inverse of :func:`composed_eps`)."""
    return 1.0 / gaussian_sigma(1.0, eps, delta, "analytic")


def round_accounts(ledger: Ledger) -> dict[str, RoundAccount]:
    """Every reserved round, in order, with its spent stages and settlement."""
    out: dict[str, RoundAccount] = {}
    for event in ledger.events[1:]:
        d = event.data
        if event.kind == "reserve":
            stages = tuple(LedgerEntry(round=d["round"], algorithm=d["algorithm"], **c) for c in d["stages"])
            out[d["round"]] = RoundAccount(round=d["round"], study=d["study"], algorithm=d["algorithm"],
                                           stages=stages, reserved_at=event.time)
        elif event.kind == "spend" and d["round"] in out:
            a = out[d["round"]]
            out[d["round"]] = RoundAccount(**{**vars(a), "spent": (*a.spent, d["stage"])})
        elif event.kind == "settle" and d["round"] in out:
            a = out[d["round"]]  # a stage the settlement counts as spent is spent, whatever spend events say
            spent = (*a.spent, *(s for s in d["spent"] if s not in a.spent))
            out[d["round"]] = RoundAccount(**{**vars(a), "spent": spent, "settled": True, "reason": d["reason"]})
    return out


@dataclass(frozen=True, kw_only=True)
class Budget:
    """A ledger's budget in numbers: the total (eps_total at delta_total), what is spent for good, what counts now
    (spent plus the stages of rounds not settled yet), both as eps at delta_total, and the mu that remains
    (sqrt(mu_total^2 - mu_counted^2), mu_total the mu whose eps at delta_total is eps_total)."""

    eps_total: float
    delta_total: float
    spent_eps: float
    counted_eps: float
    counted_mu: float
    remaining_mu: float
    rounds: int
    open_rounds: int
    void_stages: int


def budget(ledger: Ledger) -> Budget:
    accounts = list(round_accounts(ledger).values())
    final = [s.mu for a in accounts if a.settled for s in a.counted] + [
        s.mu for a in accounts if not a.settled for s in a.stages if s.stage in a.spent]
    counted = [s.mu for a in accounts for s in a.counted]
    mu = composed_mu(counted)
    total = mu_for_eps(ledger.eps_total, ledger.delta_total)
    return Budget(eps_total=ledger.eps_total, delta_total=ledger.delta_total,
                  spent_eps=composed_eps(final, ledger.delta_total),
                  counted_eps=composed_eps(counted, ledger.delta_total), counted_mu=mu,
                  remaining_mu=math.sqrt(max(total * total - mu * mu, 0.0)) if math.isfinite(mu) else 0.0,
                  rounds=len(accounts), open_rounds=sum(not a.settled for a in accounts),
                  void_stages=sum(len(a.void) for a in accounts))


def approved(ledger: Ledger, study: str) -> bool:
    """Whether the site signed study ``study`` (its digest): an approve event records it."""
    return any(e.data["study"] == study for e in ledger.of_kind("approve"))


def study_rounds_used(ledger: Ledger, study: str, algorithm: str) -> int:
    """The rounds of ``algorithm`` of study ``study`` the site took part in: every reserved round but those settled
    with every stage void (they revealed nothing)."""
    return sum(1 for a in round_accounts(ledger).values() if a.study == study and a.algorithm == algorithm
               and not (a.settled and not a.spent))


def _fits(ledger: Ledger, more: Sequence[float]) -> tuple[bool, float, float]:
    counted = [s.mu for a in round_accounts(ledger).values() for s in a.counted]
    now = composed_eps(counted, ledger.delta_total)
    after = composed_eps(counted + list(more), ledger.delta_total)
    return after <= ledger.eps_total * (1 + _RTOL), now, after


def approve_event(ledger: Ledger, study: str, title: str, rounds: int, mu: float) -> Event:
    """The event that records the site's approval of a study whose rounds compose to ``mu`` at this site; refused
    when it approved the study already or the whole study does not fit what remains of its budget."""
    if approved(ledger, study):
        raise InputError(f"site {ledger.site} approved study {study[:16]}... already")
    fits, now, after = _fits(ledger, [mu])
    if not fits:
        raise InputError(f"site {ledger.site}: the whole study would bring its ledger from eps = {now:.4g} to "
                         f"{after:.4g} at delta = {ledger.delta_total:g}, beyond its total eps = {ledger.eps_total:g}")
    return "approve", {"study": study, "title": title, "rounds": rounds, "mu": mu}


def reserve_event(ledger: Ledger, round_id: str, study: str, algorithm: str, costs: Sequence[LedgerEntry],
                  peers: Mapping[str, LedgerHead], max_rounds: int) -> Event:
    """The reservation of a round (every stage at its worst view), refused when the round was reserved before (a
    request replayed), the study is not one the site approved or has used its ``max_rounds`` rounds of
    ``algorithm``, or the round does not fit the total budget with everything counted so far."""
    check_costs([c.cost() for c in costs], f"site {ledger.site}: round {round_id}")
    if round_id in round_accounts(ledger):
        raise InputError(f"site {ledger.site} reserved round {round_id} before; it answers a round once")
    if not approved(ledger, study):
        raise InputError(f"site {ledger.site} did not approve study {study[:16]}...")
    used = study_rounds_used(ledger, study, algorithm)
    if used >= max_rounds:
        raise InputError(f"site {ledger.site} took part in {used} round(s) of {algorithm} of this study, all it "
                         f"allows ({max_rounds}); the study is complete")
    fits, now, after = _fits(ledger, [c.mu for c in costs])
    if not fits:
        raise InputError(
            f"site {ledger.site}: its privacy ledger refuses: what it spent and reserved so far composes to eps = "
            f"{now:.4g} at delta = {ledger.delta_total:g}; this round's {len(costs)} stage(s) would bring it to "
            f"eps = {after:.4g}, more than the total eps = {ledger.eps_total:g} it was made with")
    return "reserve", {"round": round_id, "study": study, "algorithm": algorithm,
                       "stages": [c.cost() for c in costs], "peers": {n: h.to_list() for n, h in peers.items()}}


def open_round(ledger: Ledger, round_id: str) -> RoundAccount:
    """The reservation of ``round_id``, which must exist and not be settled."""
    account = round_accounts(ledger).get(round_id)
    if account is None:
        raise InputError(f"site {ledger.site} has no reservation for round {round_id} in its ledger")
    if account.settled:
        raise InputError(f"round {round_id} is closed in site {ledger.site}'s ledger ({account.reason}); it answers "
                         "nothing more of it")
    return account


def spend_event(ledger: Ledger, round_id: str, stage: str, peers: Mapping[str, LedgerHead]) -> Event:
    """The event written before the site signs a survivor set holding itself for ``stage``: the stage is spent."""
    account = open_round(ledger, round_id)
    if stage not in {s.stage for s in account.stages}:
        raise InputError(f"round {round_id} reserved no stage {stage} at site {ledger.site}")
    if stage in account.spent:
        raise InputError(f"site {ledger.site} spent stage {stage} of round {round_id} already")
    return "spend", {"round": round_id, "stage": stage, "peers": {n: h.to_list() for n, h in peers.items()}}


def settle_event(ledger: Ledger, round_id: str, reason: str, in_full: bool = False) -> Event:
    """The end of a round at this site: its spent stages stay counted, the others are void (``in_full``: every
    reserved stage counts as spent, none is void)."""
    account = open_round(ledger, round_id)
    spent = [s.stage for s in account.stages if in_full or s.stage in account.spent]
    void = [s.stage for s in account.stages if s.stage not in spent]
    return "settle", {"round": round_id, "spent": spent, "void": void, "reason": reason[:300]}


def stale_rounds(ledger: Ledger, now: float, horizon: float) -> list[Event]:
    """Settlements of the rounds reserved more than ``horizon`` seconds ago and still open: the site's own deadline
    between two steps times the steps a round can have, after which it refuses every request of the round. Such a
    round is counted in full (module docstring: a site that never received a round's end cannot tell a void stage from
    a spend event cut off the end of its ledger)."""
    return [settle_event(ledger, a.round, f"no step within {horizon:g} s and no end received: the round is over at "
                                          "this site, counted in full", in_full=True)
            for a in round_accounts(ledger).values() if not a.settled and now - a.reserved_at > horizon]


def peer_heads(ledger: Ledger, upto: int | None = None) -> dict[str, LedgerHead]:
    """The latest head (by its count of events) of every other site's ledger this site recorded (in its first
    ``upto`` events: what it had recorded before a round began)."""
    out: dict[str, LedgerHead] = {}
    for event in ledger.events[1:upto]:
        for name, value in event.data.get("peers", {}).items():
            head = LedgerHead(ledger=value[0], count=value[1], head=value[2])
            if name not in out or head.count >= out[name].count:
                out[name] = head
    return out


def peer_problem(ledger: Ledger, name: str, head: LedgerHead, upto: int | None = None) -> str | None:
    """Why site ``name``'s reported ledger head cannot be the one this site saw it sign earlier (in its first ``upto``
    events), or None: another ledger (deleted and made again), fewer events (cut or rolled back to an earlier copy),
    or another head at a length it saw (a forked chain)."""
    seen = peer_heads(ledger, upto).get(name)
    if seen is None:
        return None
    if head.ledger != seen.ledger:
        return (f"site {name} reports another ledger (id {head.ledger[:12]}...) than the one this site saw it keep "
                f"(id {seen.ledger[:12]}...): its ledger was replaced")
    if head.count < seen.count:
        return (f"site {name}'s ledger holds {head.count} events, fewer than the {seen.count} this site saw it sign "
                "for: its ledger was cut or rolled back to an earlier copy")
    if head.count == seen.count and head.head != seen.head:
        return (f"site {name}'s ledger has another last event at {head.count} events than the one this site saw: "
                "its ledger was rewritten")
    return None
