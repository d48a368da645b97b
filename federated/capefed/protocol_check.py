"""The messages a real round logged against the ones ``dpcore.cape.protocol`` lists for the same design."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from . import dp
from .messages import LogEntry

__all__ = ["protocol_differences", "protocol_round"]


def protocol_round(plan: dp.RoundPlan):
    """``dpcore.cape.protocol``'s round for this plan (capeAGN on the dense path: the helper's E3_s is D x D x D)."""
    dim, k = plan.budgets[0].dim, plan.settings.k
    if plan.settings.algorithm == "capePCA":
        return dp.capepca_round(plan.stage("A").design, dim, k)
    return dp.capeagn_round(plan.stage("M2").design, plan.stage("M3").design, dim, k, projected=False)


def _key(step: int, sender: str, receiver: str, content: str, shape: Sequence[int], numbers: int, unique: int):
    return (int(step), sender, receiver, content, tuple(int(d) for d in shape), int(numbers), int(unique))


def protocol_differences(entries: Sequence[LogEntry | Mapping[str, Any]], plan: dp.RoundPlan) -> list[str]:
    """Messages the protocol lists that the log lacks, and protocol messages the log has that it does not list,
    compared by (step, sender, receiver, content, shape, dense count, unique entries) with multiplicity."""
    expected = Counter(_key(m.step, m.sender, m.receiver, m.content, m.shape, m.numbers, m.unique)
                       for m in protocol_round(plan).messages)
    rows = [e.to_dict() if isinstance(e, LogEntry) else e for e in entries]
    actual = Counter(_key(e["step"], e["sender"], e["receiver"], e["content"], e["shape"], e["numbers"], e["unique"])
                     for e in rows if e["protocol"])
    out = [f"missing from the log: {k} x{n}" for k, n in (expected - actual).items()]
    out += [f"not in the protocol: {k} x{n}" for k, n in (actual - expected).items()]
    return out
