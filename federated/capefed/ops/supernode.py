"""Flower's SuperNode with its fixed waits shortened and two endless ones bounded:
``python -m capefed.ops.supernode <flower-supernode options>``.

Flower 1.41's SuperNode has two waits written into its code, with no option to change them:

* after a request for messages finds none, it sleeps 3 s before asking again
  (``flwr/supernode/start_client_internal.py``): every exchange of a round then waits up to 3 s before the node
  even sees its request, and a round has three or four exchanges (it also looks for the ClientApp's reply in its own
  store every 0.5 s; this module makes that 0.1 s);
* it tells the SuperLink to expect a heartbeat every 30 s (``HEARTBEAT_DEFAULT_INTERVAL``), and the SuperLink takes
  a node for gone only after two missed ones: a site that vanished mid-round is noticed 60 s later, which is what a
  round with a drop-out waited for (the aggregator no longer does: it keeps its own deadline);
* a task its worker claimed lives as long as the worker's heartbeats extend it, by two of the same intervals (60 s):
  a worker killed in the middle of a reply left the node waiting that long for it, answering nothing else.

This module starts the same ``flower_supernode`` entry point after setting the idle wait to ``IDLE_SECONDS`` and the
interval to ``HEARTBEAT_SECONDS`` (the shortest the SuperLink accepts, ``HEARTBEAT_MIN_INTERVAL``) in the three
modules that read it: a dead node is noticed after 20 s, a dead worker's task after 20 s.

It also closes two waits of the SuperNode's loop that never end once a worker died or failed in the middle of a task
(:func:`guard_replies`); either left the node answering nothing else, for good:

* a ClientApp task that ends FAILED without a reply (a worker whose Runtime API call failed before or after it took
  the message) gets no reply at all: Flower answers a lapsed claim with "ClientApp stopped responding", and a failed
  AgentApp task, but not a failed ClientApp task, and the loop waits for that reply forever. Here it gets the same
  error reply as a lapsed claim;
* a reply whose parts never arrive (its worker killed after handing over the reply and before its contents): the loop
  waits for them forever. Here it waits only while a worker holds a task; after that the reply is dropped (the
  aggregator counts the site as silent by its own deadline) and the node goes on.

It refuses to run with any other Flower version than the pinned one (the names it changes are internal), and
``tests/test_federated_worker.py`` checks that they are still there. Its log lines carry their time. Plain
``flower-supernode`` with the same options works the same way, only slower and without the two bounds; the service
unit and the launcher use this one.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from ..app.pacing import pause

__all__ = ["FLWR_VERSION", "HEARTBEAT_SECONDS", "IDLE_LONGEST", "IDLE_SECONDS", "ReplyLost", "guard_replies", "main",
           "shorten_waits"]

FLWR_VERSION = "1.41.0"
"""The Flower release whose internals this module changes (requirements.txt pins it)."""
IDLE_SECONDS = 0.5
"""Seconds a SuperNode first waits after finding no message, instead of 3; the wait grows with the time since the
node's last message (:func:`capefed.app.pacing.pause`) up to IDLE_LONGEST."""
IDLE_LONGEST = 2.0
"""The longest wait of an idle SuperNode before it asks again (reached after 20 s without a message)."""
FLOWER_IDLE_SECONDS = 3
REPLY_POLL_SECONDS = 0.1
"""Seconds between the SuperNode's looks at its own store for the worker's reply, instead of 0.5 (a local check)."""
FLOWER_REPLY_POLL_SECONDS = 0.5
SHORTER = {FLOWER_REPLY_POLL_SECONDS: REPLY_POLL_SECONDS}
HEARTBEAT_SECONDS = 10
"""The heartbeat interval the SuperNode announces and keeps (instead of 30): the SuperLink takes a silent node for
gone after two intervals, 20 s."""


def _require(names: tuple[tuple[Any, str], ...]) -> None:
    """Refuse (RuntimeError) another Flower version than FLWR_VERSION, or one of the internal ``names`` (owner, name)
    this module changes missing."""
    from flwr.supercore.version import package_version  # noqa: PLC0415

    if package_version != FLWR_VERSION:
        raise RuntimeError(f"capefed.ops.supernode changes Flower {FLWR_VERSION}'s internals; this is Flower "
                           f"{package_version}: use flower-supernode")
    for owner, name in names:
        if not hasattr(owner, name):
            raise RuntimeError(f"{getattr(owner, '__name__', owner)} has no {name}: use flower-supernode")


class _ShortIdle(ModuleType):
    """Stands in for the ``time`` module inside Flower's SuperNode loop: the same, except that its 3-second idle
    sleep lasts between IDLE_SECONDS and IDLE_LONGEST, paced by the time since the node's last message
    (``news``, set by :meth:`heard`), and its 0.5-second waits for a reply REPLY_POLL_SECONDS."""

    def __init__(self) -> None:
        super().__init__("time")
        self.news = time.monotonic()

    def __getattr__(self, name: str):
        return getattr(time, name)

    def heard(self) -> None:
        """The node took a message: the next idle waits start short again."""
        self.news = time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds == FLOWER_IDLE_SECONDS:
            time.sleep(pause(time.monotonic() - self.news, IDLE_SECONDS, IDLE_LONGEST))
        else:
            time.sleep(SHORTER.get(seconds, seconds))


def shorten_waits() -> None:
    """Set the SuperNode's idle wait and heartbeat interval; raises RuntimeError for another Flower version or when a
    name it changes is missing."""
    import flwr.supercore.corestate.in_memory_corestate as tasks  # noqa: PLC0415
    import flwr.supercore.heartbeat as heartbeat  # noqa: PLC0415
    import flwr.supernode.fleet_http_connection as connection  # noqa: PLC0415
    import flwr.supernode.start_client_internal as loop  # noqa: PLC0415
    from flwr.common.constant import HEARTBEAT_MIN_INTERVAL  # noqa: PLC0415

    _require(((loop, "time"), (connection, "HEARTBEAT_DEFAULT_INTERVAL"), (heartbeat, "HEARTBEAT_DEFAULT_INTERVAL"),
              (tasks, "HEARTBEAT_DEFAULT_INTERVAL")))
    if HEARTBEAT_SECONDS < HEARTBEAT_MIN_INTERVAL:
        raise RuntimeError(f"the SuperLink refuses heartbeat intervals under {HEARTBEAT_MIN_INTERVAL} s")
    loop.time = _ShortIdle()
    connection.HEARTBEAT_DEFAULT_INTERVAL = HEARTBEAT_SECONDS
    heartbeat.HEARTBEAT_DEFAULT_INTERVAL = HEARTBEAT_SECONDS
    tasks.HEARTBEAT_DEFAULT_INTERVAL = HEARTBEAT_SECONDS


class ReplyLost(RuntimeError):
    """A reply's contents will never arrive: no worker holds a task any more."""


def _live_tasks(state: Any) -> bool:
    """Whether a worker holds a task of this node (``state``: Flower's NodeState)."""
    from flwr.common.constant import Status  # noqa: PLC0415

    return bool(state.get_tasks(statuses=[Status.STARTING, Status.RUNNING]))  # (lapsed claims are ended first)


def _complete_before_sending(send: Callable[..., tuple[set[str], str]], store: Any, state: Any,
                             iterate: Callable[[Any], Iterator[Any]]) -> Callable[..., tuple[set[str], str]]:
    """``send`` for the SuperNode's loop that first waits until every part of the reply is in the node's store, and
    only while a worker holds a task: a part missing once none does (checked again after that) never comes."""

    def send_complete(message: Any, object_tree: Any, runtime: float) -> tuple[set[str], str]:
        ids = [tree.object_id for tree in iterate(object_tree)]
        while missing := [i for i in ids if store.get(i) == b""]:
            if not _live_tasks(state) and any(store.get(i) == b"" for i in missing):
                raise ReplyLost(f"{len(missing)} part(s) of reply {message.metadata.message_id[:16]}... never "
                                "arrived: its worker ended without them")
            time.sleep(REPLY_POLL_SECONDS)
        return send(message, object_tree, runtime)

    return send_complete


def guard_replies() -> None:
    """Answer a ClientApp task that ends FAILED without a reply, and drop a reply whose parts never arrive (the
    module's docstring); raises RuntimeError when a name it changes is missing."""
    import flwr.supernode.nodestate.in_memory_nodestate as nodestate  # noqa: PLC0415
    import flwr.supernode.start_client_internal as loop  # noqa: PLC0415
    from flwr.common.constant import SubStatus  # noqa: PLC0415
    from flwr.supercore.constant import TaskType  # noqa: PLC0415

    state_class = nodestate.InMemoryNodeState
    _require(((loop, "_push_messages"), (loop, "iterate_object_tree"), (state_class, "finish_task"),
              (state_class, "_store_error_replies"), (nodestate, "CLIENT_APP_CRASHED_ERROR"),
              (nodestate, "MessageEntry")))
    if getattr(loop._push_messages, "guarded", False):
        return
    push_messages, finish_task = loop._push_messages, state_class.finish_task

    def guarded_push(*, state: Any, object_store: Any, send: Callable[..., tuple[set[str], str]],
                     push_object: Callable[..., None]) -> None:
        if isinstance(loop.time, _ShortIdle):  # the loop pulled a message (it pushes only then): keep asking often
            loop.time.heard()
        send = _complete_before_sending(send, object_store, state, loop.iterate_object_tree)
        return push_messages(state=state, object_store=object_store, send=send, push_object=push_object)

    def guarded_finish(self: Any, task_id: int, sub_status: str, details: str) -> bool:
        finished = finish_task(self, task_id, sub_status, details)
        if finished and sub_status == SubStatus.FAILED:
            tasks = self.get_tasks(task_ids=[task_id])
            if tasks and tasks[0].type == TaskType.CLIENT_APP:  # Flower answers a failed AgentApp task only
                with self.lock_msg_store:  # the run's message is this task's (one at a time), taken or not yet
                    for entry in self.msg_store.values():
                        metadata = entry.message.metadata
                        if metadata.run_id == tasks[0].run_id and not metadata.reply_to_message_id:
                            entry.is_retrieved = True
                    self._store_error_replies({tasks[0].run_id}, nodestate.CLIENT_APP_CRASHED_ERROR)
        return finished

    guarded_push.guarded = True
    loop._push_messages = guarded_push
    state_class.finish_task = guarded_finish


def main() -> None:
    from flwr.supernode.cli.flower_supernode import flower_supernode  # noqa: PLC0415

    shorten_waits()
    guard_replies()
    from flwr.supercore.logger import update_console_handler  # noqa: PLC0415

    update_console_handler(timestamps=True)  # a line's time: what an operator needs to follow a stalled node
    sys.argv[0] = "flower-supernode"
    flower_supernode()


if __name__ == "__main__":
    main()
