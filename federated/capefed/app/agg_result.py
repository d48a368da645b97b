"""The last step of a round at the aggregator: every site of the plan gets the round's end (docs/federated.md, "What
each operator sees"): its status and reason, the published output (released rounds), the sites that took part and
those dropped. Each site computes the audit of its own views itself, settles the round in its ledger and keeps the
result (:mod:`capefed.app.siteresult`). A site that does not answer is noted, never waited for beyond the round's grace:
its ledger settles the round by itself once its own deadline has passed."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from . import dp
from .messages import Payload, config_bytes, site_label
from .outcome import RoundOutcome
from .roundstate import RoundState

__all__ = ["deliver"]


def deliver(r: RoundState, outcome: RoundOutcome) -> Generator[Any, Any, None]:
    """Send every site of the plan the round's end and note which sites acknowledged it (``outcome.delivered``)."""
    if r.plan is None or not r.digest or not r.sites:
        return
    config = dict(r.context(), status=outcome.status, reason=outcome.reason or "",
                  took_part=list(outcome.took_part), dropped=list(outcome.dropped))
    arrays = {f"output/{k}": np.asarray(v, dtype=float) for k, v in outcome.outputs.items()}
    blamed = set(outcome.sites) | set(outcome.dropped)
    expected = [x for x in r.sites if x.name not in blamed] or r.sites
    requests = {x.node: Payload(dict(config), {k: v.copy() for k, v in arrays.items()}) for x in r.sites}
    stage = r.plan.stages[-1].stage
    for x in r.sites:
        r.entry(stage, 0, dp.AGGREGATOR, site_label(x.name), f"the round's end: {outcome.status}, the published "
                "result", (), 0, requests[x.node].nbytes, "control", protocol=False, site=x.name)
    replies = yield from r.exchange("result", requests, quorum=len(expected))
    delivered = []
    for x in r.sites:
        reply = replies.get(x.node)
        if reply is None:
            continue  # not in ``delivered``: its ledger settles the round by itself after its own deadline
        if reply.config.get("status") != "ok":
            reason = str(reply.config.get("reason", "no reason given"))[:500]
            outcome.notes = (*outcome.notes, f"site {x.name} refused the round's end: {reason}")
        else:
            delivered.append(x.name)
            r.entry(stage, 0, site_label(x.name), dp.AGGREGATOR, "acknowledged the round's end", (), 0,
                    config_bytes(reply.config), "control", protocol=False, site=x.name)
    outcome.delivered = tuple(delivered)
