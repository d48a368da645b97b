"""An in-process transport: the aggregator's round with the helper and the sites as plain function calls.

Each node is a callable (action, request) -> reply, or None for "no answer in time". Requests and replies are
copied, so no party shares an array with another. Used by the tests of every round and failure, and by
``python -m capefed.ops.demo``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..app import dp
from ..app.messages import Payload
from ..app.node import answer

__all__ = ["InMemoryTransport", "Node", "party_node"]

Node = Callable[[str, Payload], Payload | None]


def party_node(config: Mapping[str, Any]) -> Node:
    """A helper or site (by ``config["role"]``) with its own state, as a node of :class:`InMemoryTransport`."""
    if config.get("role") not in (dp.HELPER, dp.SITE):
        raise ValueError(f"node role must be '{dp.HELPER}' or '{dp.SITE}' (got {config.get('role')!r})")
    state: dict[str, bytes] = {}
    return lambda action, request: answer(action, config, request, state)


class InMemoryTransport:
    """Nodes numbered 1..n in the order given."""

    def __init__(self, nodes: list[Node]):
        self.nodes = {i + 1: node for i, node in enumerate(nodes)}

    def wait_for_nodes(self, count: int, timeout: float) -> list[int]:
        return sorted(self.nodes)

    def exchange(self, action: str, requests: Mapping[int, Payload], timeout: float, until=None) -> dict[int, Payload]:
        """Every node answers at once (or never: None); ``until`` is not needed."""
        replies = {}
        for node, request in requests.items():
            reply = self.nodes[node](action, request.copy())
            if reply is not None:
                replies[node] = reply.copy()
        return replies
