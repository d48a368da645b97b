"""The aggregator as a Flower ServerApp: a custom main loop that runs one round per algorithm of the run
configuration, side by side (``rounds.run_rounds``), over the SuperLink and writes the outcomes as JSON (``out``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from flwr.app import Context, Message
from flwr.common.constant import ErrorCode
from flwr.serverapp import Grid, ServerApp

from .messages import Payload, message_log_round, write_log
from .pacing import pause
from .rounds import run_rounds, settings_from_run_config
from .runconfig import study_algorithms
from .wire import WireError, from_records, to_records

__all__ = ["OUTCOME_FORMAT", "FlowerTransport", "RoundsNotReleased", "app"]

OUTCOME_FORMAT = "capefed-outcome-v1"
"""The aggregator's outcome file (``out``): every round's status, plan, aggregates, outputs, log and timings. The
launcher turns it into the message log (``capefed-message-log-v1``)."""

POLL_SECONDS = 0.2
"""The aggregator's shortest wait between its requests for replies (the run configuration's ``poll``).
Grid.send_and_receive polls every 3 s in Flower 1.41; this loop uses the same push_messages / pull_messages calls with
a shorter pause, growing with the time since the last reply (:func:`capefed.app.pacing.pause`) up to POLL_LONGEST."""
POLL_LONGEST = 1.0
"""The aggregator's longest wait between requests for replies (reached after 10 s without one); never past a step's
deadline."""


NO_ANSWER = (ErrorCode.NODE_UNAVAILABLE, ErrorCode.CLIENT_APP_CRASHED)
"""Flower's error replies that say a node answered nothing (it vanished, or its worker died inside the task: the
SuperNode's "ClientApp stopped responding"): the node is silent, as after the step's deadline - a drop-out where the
round tolerates one, never a refusal that stops a round. The site sent nothing, so nothing of it is held."""


class FlowerTransport:
    """``rounds.Transport`` over a Flower Grid: one ``query.<action>`` message per node."""

    def __init__(self, grid: Grid, poll: float = POLL_SECONDS):
        self.grid = grid
        self.poll = poll

    def _wait(self, quiet: float, end: float) -> None:
        """Sleep before the next request: paced by ``quiet``, the seconds without news, and never past ``end``."""
        time.sleep(max(0.0, min(pause(quiet, self.poll, max(self.poll, POLL_LONGEST)), end - time.monotonic())))

    def wait_for_nodes(self, count: int, timeout: float) -> list[int]:
        start = time.monotonic()
        end = start + timeout
        while True:
            nodes = sorted(self.grid.get_node_ids())
            if len(nodes) >= count or time.monotonic() >= end:
                return nodes
            self._wait(time.monotonic() - start, end)

    def exchange(self, action: str, requests: Mapping[int, Payload], timeout: float,
                 until: Callable[[set[int], float], bool] | None = None) -> dict[int, Payload]:
        """Push one message per node and collect the replies until every node replied, ``until`` says the
        aggregator may stop waiting (``rounds.run_rounds``: a round that can go on without the rest), or ``timeout``
        (this step's deadline) passed; it never waits for Flower to notice a dead node. Every reply is read with the
        guarded decoder (``wire.from_records``): a malformed one is that node's refusal, never an exception."""
        messages = [Message(to_records(p), node, f"query.{action}") for node, p in requests.items()]
        start = time.monotonic()
        ids = list(self.grid.push_messages(messages))
        waiting = {message_id: node for message_id, node in zip(ids, requests, strict=True)}
        replies: dict[int, Payload] = {}
        news = start  # the time of the last reply: the pause before the next request grows with the quiet since
        while waiting and time.monotonic() < start + timeout:
            for reply in self.grid.pull_messages(list(waiting)):
                node = waiting.pop(reply.metadata.reply_to_message_id, None)
                if node is None:
                    continue
                news = time.monotonic()
                if reply.has_error() and reply.error.code in NO_ANSWER:
                    continue  # the node or its worker vanished: no answer, as after the deadline
                replies[node] = _decoded(node, reply)
            if not waiting or (until is not None and until(set(replies), time.monotonic() - start)):
                break
            self._wait(time.monotonic() - news, start + timeout)
        return replies


def _decoded(node: int, reply: Message) -> Payload:
    """A node's reply as a Payload; a Flower error or a record the guarded decoder refuses is a refusal naming it."""
    if reply.has_error():
        return Payload({"status": "refused", "reason": f"node {node} failed: {str(reply.error.reason)[:2000]}"})
    try:
        return from_records(reply.content)
    except WireError as exc:
        return Payload({"status": "refused", "reason": f"node {node} sent a malformed message: {exc}"})
    except Exception as exc:  # noqa: BLE001 - Flower's own accessors on a hostile record: still only a refusal
        return Payload({"status": "refused", "reason": f"node {node} sent an unreadable message "
                                                       f"({type(exc).__name__})"})


class RoundsNotReleased(RuntimeError):
    """A round was refused or stopped (or the run configuration was invalid): the ServerApp ends with this error, after
    writing the outcome, so that the run's status is ``finished:failed``."""


app = ServerApp()


@app.main()
def main(grid: Grid, context: Context) -> None:
    config = dict(context.run_config)
    out = str(config.get("out", ""))
    algorithms = [a.strip() for a in str(config.get("algorithms", "")).split(",") if a.strip()]
    try:
        algorithms = study_algorithms(config)
        settings = [settings_from_run_config(config, a, f"{context.run_id}/{a}/{config['run']}") for a in algorithms]
        for s in settings:
            s.round.validated()
    except (KeyError, ValueError, TypeError) as exc:
        reason = f"invalid run configuration: {exc!r}"
        print(reason, flush=True)
        if out:
            Path(out).write_text(json.dumps({"format": OUTCOME_FORMAT, "run_id": str(context.run_id), "rounds": [
                {"algorithm": a, "status": "refused", "reason": reason, "log": [], "exchanges": [], "seconds": 0.0,
                 "aggregates": {}, "outputs": {}, "sites": [], "plan": None} for a in algorithms]}))
        raise RoundsNotReleased(reason) from exc
    rounds = []
    transport = FlowerTransport(grid, float(config.get("poll", POLL_SECONDS)))
    for outcome in run_rounds(transport, settings):
        print(f"{outcome.algorithm}: {outcome.status} in {outcome.seconds:.1f} s"
              + (f": {outcome.reason}" if outcome.reason else ""), flush=True)
        rounds.append(outcome.to_dict())
    if out:
        Path(out).write_text(json.dumps({"format": OUTCOME_FORMAT, "run_id": str(context.run_id), "rounds": rounds}))
    log = str(config.get("log", ""))
    if log:  # the message log a deployment's operator loads into the dashboard's Protocol page
        write_log(log, [message_log_round(r) for r in rounds])
    failed = [f"{r['algorithm']} {r['status']}" for r in rounds if r["status"] != "released"]
    if failed:
        # Flower records the run as finished:failed, so `flwr ls` and capefed.ops.runner report it with a non-zero
        # status.
        raise RoundsNotReleased(f"not every round was released: {', '.join(failed)}")
