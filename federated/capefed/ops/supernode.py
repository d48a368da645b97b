"""Flower's SuperNode with two of its fixed waits shortened:
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
modules that read it, and nothing else: a dead node is noticed after 20 s, a dead worker's task after 20 s. It
refuses to run with any other Flower version than the pinned one (the names it changes are internal), and
``tests/test_federated_worker.py`` checks that they are still there. Plain ``flower-supernode`` with the same
options works the same way, only slower; the service unit and the launcher use this one.
"""

from __future__ import annotations

import sys
import time
from types import ModuleType

__all__ = ["FLWR_VERSION", "HEARTBEAT_SECONDS", "IDLE_SECONDS", "main", "shorten_waits"]

FLWR_VERSION = "1.41.0"
"""The Flower release whose internals this module changes (requirements.txt pins it)."""
IDLE_SECONDS = 0.5
"""Seconds a SuperNode waits after finding no message, instead of 3."""
FLOWER_IDLE_SECONDS = 3
REPLY_POLL_SECONDS = 0.1
"""Seconds between the SuperNode's looks at its own store for the worker's reply, instead of 0.5 (a local check)."""
FLOWER_REPLY_POLL_SECONDS = 0.5
SHORTER = {FLOWER_IDLE_SECONDS: IDLE_SECONDS, FLOWER_REPLY_POLL_SECONDS: REPLY_POLL_SECONDS}
HEARTBEAT_SECONDS = 10
"""The heartbeat interval the SuperNode announces and keeps (instead of 30): the SuperLink takes a silent node for
gone after two intervals, 20 s."""


class _ShortIdle(ModuleType):
    """Stands in for the ``time`` module inside Flower's SuperNode loop: the same, except that its 3-second idle
    sleep lasts IDLE_SECONDS and its 0.5-second waits for a reply REPLY_POLL_SECONDS."""

    def __init__(self) -> None:
        super().__init__("time")

    def __getattr__(self, name: str):
        return getattr(time, name)

    @staticmethod
    def sleep(seconds: float) -> None:
        time.sleep(SHORTER.get(seconds, seconds))


def shorten_waits() -> None:
    """Set the SuperNode's idle wait and heartbeat interval; raises RuntimeError for another Flower version or when a
    name it changes is missing."""
    import flwr.supercore.corestate.in_memory_corestate as tasks  # noqa: PLC0415
    import flwr.supercore.heartbeat as heartbeat  # noqa: PLC0415
    import flwr.supernode.fleet_http_connection as connection  # noqa: PLC0415
    import flwr.supernode.start_client_internal as loop  # noqa: PLC0415
    from flwr.common.constant import HEARTBEAT_MIN_INTERVAL  # noqa: PLC0415
    from flwr.supercore.version import package_version  # noqa: PLC0415

    if package_version != FLWR_VERSION:
        raise RuntimeError(f"capefed.ops.supernode changes Flower {FLWR_VERSION}'s internals; this is Flower "
                           f"{package_version}: use flower-supernode")
    for module, name in ((loop, "time"), (connection, "HEARTBEAT_DEFAULT_INTERVAL"),
                         (heartbeat, "HEARTBEAT_DEFAULT_INTERVAL"), (tasks, "HEARTBEAT_DEFAULT_INTERVAL")):
        if not hasattr(module, name):
            raise RuntimeError(f"{module.__name__} has no {name}: use flower-supernode")
    if HEARTBEAT_SECONDS < HEARTBEAT_MIN_INTERVAL:
        raise RuntimeError(f"the SuperLink refuses heartbeat intervals under {HEARTBEAT_MIN_INTERVAL} s")
    loop.time = _ShortIdle()
    connection.HEARTBEAT_DEFAULT_INTERVAL = HEARTBEAT_SECONDS
    heartbeat.HEARTBEAT_DEFAULT_INTERVAL = HEARTBEAT_SECONDS
    tasks.HEARTBEAT_DEFAULT_INTERVAL = HEARTBEAT_SECONDS


def main() -> None:
    from flwr.supernode.cli.flower_supernode import flower_supernode  # noqa: PLC0415

    shorten_waits()
    sys.argv[0] = "flower-supernode"
    flower_supernode()


if __name__ == "__main__":
    main()
