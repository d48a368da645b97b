"""The aggregator's state of one round, shared by its steps (:mod:`capefed.agg_hello`, :mod:`capefed.agg_noise`,
:mod:`capefed.agg_stage`): its settings, the verified sites, the plan, the sites dropped so far, the message log and
the timings of every exchange. An exchange is a generator step: the round yields its requests to the scheduler
(:func:`capefed.rounds.run_rounds`), which sends them together with the other rounds' requests of the same step and
sends back the replies that arrived before the step's deadline."""

from __future__ import annotations

import json
import math
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any

from . import dp
from .messages import Payload
from .outcome import RoundStopped
from .runconfig import AggregatorSettings
from .trust import Roster, TrustError, read_roster

__all__ = ["Exchange", "RoundState", "SiteNode"]

Exchange = Generator[Any, Any, dict[int, Payload]]


@dataclass(frozen=True)
class SiteNode:
    """A site whose signed hello verified: its node, budget, round key and statement."""

    node: int
    budget: dp.SiteBudget
    key: bytes
    statement: str
    signature: bytes

    @property
    def name(self) -> str:
        return self.budget.name


class RoundState:
    """One round at the aggregator (module docstring)."""

    def __init__(self, settings: AggregatorSettings):
        self.settings = settings
        self.algorithm = settings.round.algorithm
        self.log: list[dp.LogEntry] = []
        self.exchanges: list[dict[str, Any]] = []
        self.node_names: dict[int, str] = {}
        self.ignored: list[str] = []
        self.dropped: list[str] = []
        self.notes: list[str] = []
        self.plan: dp.RoundPlan | None = None
        self.sites: list[SiteNode] = []
        self.commitments: dict[tuple[str, str], list[bytes]] = {}
        self.digest = ""
        self.w = None
        self.reservations: dict[str, tuple[str, bytes]] = {}
        self.exact: dict[str, Any] = {}  # the integer variant: each stage's exact integer sum (int64)

    def entry(self, stage: str, step: int, sender: str, receiver: str, content: str, shape: tuple[int, ...],
              unique: int, nbytes: int, channel: str, *, route: tuple[str, ...] | None = None, protocol: bool = True,
              site: str | None = None, numbers: int | None = None) -> None:
        """One message of the log (``dpcore.federation.LogEntry``)."""
        if numbers is None:
            numbers = math.prod(shape) if shape else 1
        self.log.append(dp.LogEntry(algorithm=self.algorithm, stage=stage, step=step, sender=sender,
                                    receiver=receiver, content=content, shape=tuple(int(d) for d in shape),
                                    numbers=int(numbers), unique=int(unique), bytes=int(nbytes), channel=channel,
                                    route=route or (sender, receiver), protocol=protocol, site=site))

    def exchange(self, action: str | Mapping[int, str], requests: dict[int, Payload], quorum: int | None = None
                 ) -> Exchange:
        """Send ``requests`` (``action``: one for all, or one per node) and receive the replies that arrived before
        this step's deadline (the round's ``timeout``; with a ``quorum``, once that many nodes answered, at most
        ``grace`` seconds more, or as long again as the quorum took)."""
        replies, seconds = yield ("exchange", action, requests, self.settings.timeout, quorum)
        for node, request in requests.items():
            reply = replies.get(node)
            name = action[node] if isinstance(action, Mapping) else action
            self.exchanges.append({"action": name, "node": str(node), "party": self.node_names.get(node, str(node)),
                                   "request_bytes": request.nbytes,
                                   "reply_bytes": None if reply is None else reply.nbytes,
                                   "answered": reply is not None, "seconds": seconds})
        return replies

    def context(self) -> dict[str, Any]:
        """What every request after the hello carries: the round, the public settings and the signed statements,
        from which each party recomputes the plan."""
        return {"round": self.settings.round_id, "settings": json.dumps(self.plan.settings.to_dict()),
                "statements": [s.statement for s in self.sites], "signatures": [s.signature for s in self.sites],
                **self.settings.study_fields()}

    @property
    def live(self) -> list[SiteNode]:
        """The sites no survivor set has excluded so far."""
        return [s for s in self.sites if s.name not in self.dropped]

    def site(self, name: str) -> SiteNode:
        return next(s for s in self.sites if s.name == name)

    def roster(self) -> Roster:
        if not self.settings.roster:
            raise RoundStopped("the run configuration names no roster (the pinned parties' keys)")
        try:
            return read_roster(self.settings.roster)
        except TrustError as exc:
            raise RoundStopped(f"the aggregator's roster: {exc}") from exc

    def drop(self, stage: str, names: list[str], step: str, waited: float) -> None:
        """The sites ``names`` did not answer ``step`` of ``stage`` within ``waited`` seconds: dropped (no survivor
        set will hold them), or, beyond the plan's drop-outs, the round stops naming exactly them."""
        if not names:
            return
        k = self.plan.settings.dropouts
        total = sorted(set(self.dropped) | set(names))
        said = "; ".join(f"site {n} did not answer its {step} request within {waited:.1f} s" for n in names)
        if len(total) > k:
            raise RoundStopped(f"stage {stage}: {said}; {len(total)} drop-out(s) is more than the {k} the plan "
                               "survives. Nothing was released.", tuple(names))
        self.dropped = total
        self.notes.append(f"stage {stage}: {said}: dropped out (its release, if it arrives, is never unmasked)")

    def answers(self, replies: Mapping[int, Payload], nodes: list[SiteNode], step: str, stage: str
                ) -> dict[str, Payload]:
        """The replies of ``nodes`` to one step that every one of them had to answer: a node that refused or did not
        answer stops the round, naming only those."""
        problems, out = [], {}
        for x in nodes:
            reply = replies.get(x.node)
            if reply is None:
                problems.append((x.name, f"site {x.name} did not answer its {step} request within "
                                          f"{self.settings.timeout:g} s"))
            elif reply.config.get("status") != "ok":
                reason = str(reply.config.get("reason", "refused without a reason"))[:2000]
                problems.append((x.name, reason if reason.startswith(f"site {x.name}") else f"site {x.name}: {reason}"))
            else:
                out[x.name] = reply
        if problems:
            raise RoundStopped(f"stage {stage}: " + "; ".join(p for _, p in problems) + ". Nothing was released.",
                               tuple(n for n, _ in problems))
        return out
