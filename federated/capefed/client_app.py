"""The helper and the sites as a Flower ClientApp: the node configuration's ``role`` decides which party answers.

Flower starts a ClientApp process per message; what a site must keep between its hello and its releases (the
private key of the round) lives in the SuperNode's per-run ``context.state``, which never leaves the node."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping

from flwr.app import ConfigRecord, Context, Message
from flwr.clientapp import ClientApp

from .helper import handle_helper
from .messages import Payload
from .site import handle_site
from .wire import from_records, to_records

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


def _answer(action: str, message: Message, context: Context) -> Message:
    request = from_records(message.content)
    config = dict(context.node_config)
    role = config.get("role")
    if role == "helper":
        reply = handle_helper(action, config, request)
    elif role == "site":
        reply = handle_site(action, config, request, _NodeState(context))
    else:
        reply = Payload({"status": "refused", "reason": f"node {context.node_id}: node config role must be 'helper' "
                         f"or 'site' (got {role!r})"})
    return Message(to_records(reply), reply_to=message)


app = ClientApp()


@app.query("hello")
def hello(message: Message, context: Context) -> Message:
    return _answer("hello", message, context)


@app.query("shares")
def shares(message: Message, context: Context) -> Message:
    return _answer("shares", message, context)


@app.query("release")
def release(message: Message, context: Context) -> Message:
    return _answer("release", message, context)
