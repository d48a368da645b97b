"""What a round produced, and how it stops: :class:`RoundOutcome` (released, refused or stopped, with the plan,
aggregates, outputs, message log, timings, the sites that took part and dropped out, and the audit of what was
released) and :class:`RoundStopped` (the reason and the parties at fault: only those that refused, sent something
unusable or did not answer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import dp

__all__ = ["RoundOutcome", "RoundStopped"]


class RoundStopped(Exception):
    """The round cannot go on; ``sites`` names the parties at fault (empty when none is)."""

    def __init__(self, reason: str, sites: tuple[str, ...] = ()):
        super().__init__(reason)
        self.reason = reason
        self.sites = sites


@dataclass(kw_only=True)
class RoundOutcome:
    """What a round produced: ``status`` "released", "refused" (before any noise was drawn) or "stopped" (a party
    failed; nothing was released). ``aggregates`` and ``outputs`` are empty unless released. ``took_part``: the
    sites whose releases are in the output; ``dropped``: sites that vanished after the noise was set up (their terms
    recovered: the sites a signed survivor set excluded, whose releases are never unmasked); ``ignored``: nodes whose
    hello could not be verified; ``audit``: per stage, the audit of what was released (rows of ``AuditRow.to_dict``);
    ``notes``: why each dropped site was dropped (the step it did not answer in time); ``delivered``: the sites that
    acknowledged the round's end (its result); ``exact``: with the integer variant, each stage's exact integer sum
    that was decoded once (int64; the plan's stages name the ring's ``bits_per_value``)."""

    algorithm: str
    status: str
    reason: str | None = None
    sites: tuple[str, ...] = ()
    plan: dp.RoundPlan | None = None
    aggregates: dict[str, np.ndarray] = field(default_factory=dict)
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    log: list[dp.LogEntry] = field(default_factory=list)
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    took_part: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    audit: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    delivered: tuple[str, ...] = ()
    exact: dict[str, np.ndarray] = field(default_factory=dict)

    def plan_dict(self) -> dict[str, Any] | None:
        """The settings and the sites' budgets (what rebuilds the design), with the designs for reading."""
        if self.plan is None:
            return None
        p = self.plan
        return {"settings": p.settings.to_dict(), "sites": [b.to_dict() for b in p.budgets],
                "digests": list(p.digests), "refusal": p.refusal, "notes": list(p.notes),
                "stages": [{"stage": s.stage, "statistic": s.statistic, "shape": list(s.shape), "unique": s.unique,
                            "bits_per_value": s.bits_per_value, "design": s.design.to_dict()} for s in p.stages]}

    def to_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "status": self.status, "reason": self.reason, "sites": list(self.sites),
                "plan": self.plan_dict(), "aggregates": {k: v.tolist() for k, v in self.aggregates.items()},
                "outputs": {k: np.asarray(v).tolist() for k, v in self.outputs.items()},
                "log": [e.to_dict() for e in self.log], "exchanges": self.exchanges, "seconds": self.seconds,
                "took_part": list(self.took_part), "dropped": list(self.dropped), "ignored": list(self.ignored),
                "audit": self.audit, "notes": list(self.notes), "delivered": list(self.delivered),
                "exact": {k: [int(x) for x in v] for k, v in self.exact.items()}}
