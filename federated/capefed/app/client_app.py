"""The helper and the sites as a Flower ClientApp: the node configuration's ``role`` decides which party answers
(``node.answer``).

Flower starts a ClientApp process per message; what a site must keep between its hello and its releases (the
private key of the round) lives in the SuperNode's per-run ``context.state``, which never leaves the node."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping

from flwr.app import ConfigRecord, Context, Message
from flwr.clientapp import ClientApp

from .messages import BUNDLE, Payload
from .node import answer
from .wire import WireError, from_records, to_records

__all__ = ["app"]

_STATE = "capefed"


class _NodeState(MutableMapping[str, bytes]):
    """Byte strings kept in ``context.state`` between messages of a run."""

    def __init__(self, context: Context):
        self.context = context

    def _record(self) -> ConfigRecord:
        return self.context.state.config_records.get(_STATE, ConfigRecord())

    def __getitem__(self, key: str) -> bytes:
        return bytes(self._record()[key])

    def __setitem__(self, key: str, value: bytes) -> None:
        record = self._record()
        record[key] = value
        self.context.state.config_records[_STATE] = record

    def __delitem__(self, key: str) -> None:
        record = self._record()
        del record[key]
        self.context.state.config_records[_STATE] = record

    def __iter__(self) -> Iterator[str]:
        return iter(self._record())

    def __len__(self) -> int:
        return len(self._record())


app = ClientApp()


@app.query(BUNDLE)
def handle(message: Message, context: Context) -> Message:
    """Every request of the aggregator arrives as a bundle (one item per round of the run)."""
    config = dict(context.node_config)
    try:
        request = from_records(message.content)
    except Exception as exc:  # noqa: BLE001 - the guarded decoder refuses; a hostile record never crashes the node
        reason = str(exc) if isinstance(exc, WireError) else f"an unreadable message ({type(exc).__name__})"
        reply = Payload({"status": "refused", "reason": f"node {str(config.get('name', '?'))[:64]}: {reason}"})
    else:
        reply = answer(BUNDLE, config, request, _NodeState(context))
    return Message(to_records(reply), reply_to=message)
