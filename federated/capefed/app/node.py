"""What a helper or site node does with one message, whatever carried it: the node configuration's ``role`` picks
the party, and a bundle (several rounds' requests in one message) is answered item by item."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from .helper import handle_helper
from .messages import BUNDLE, Payload, bundle, unbundle
from .partylog import record
from .siteflow import handle_site

__all__ = ["MAX_BUNDLE_ITEMS", "answer"]

MAX_BUNDLE_ITEMS = 16
"""Requests one message may bundle (one per round of a run; a run has at most a few)."""


def _refuse(reason: str) -> Payload:
    return Payload({"status": "refused", "reason": reason})


def _answer_one(action: str, config: Mapping[str, Any], request: Payload, state: MutableMapping[str, bytes]
                ) -> Payload:
    role = config.get("role")
    if role == "helper":
        reply = handle_helper(action, config, request, state)
    elif role == "site":
        reply = handle_site(action, config, request, state)
    else:
        reply = _refuse(f"node {config.get('name', '?')}: the node configuration's role must be 'helper' or 'site' "
                        f"(got {role!r})")
    record(config, action, request, reply)
    return reply


def answer(action: str, config: Mapping[str, Any], request: Payload, state: MutableMapping[str, bytes]) -> Payload:
    """The reply of this node to one message (``state`` keeps what a site needs between messages of a run)."""
    if action != BUNDLE:
        return _answer_one(action, config, request, state)
    try:
        items = unbundle(request)
    except ValueError as exc:
        return _refuse(f"node {config.get('name', '?')}: {exc}")
    if len(items) > MAX_BUNDLE_ITEMS:
        return _refuse(f"node {config.get('name', '?')}: a bundle holds at most {MAX_BUNDLE_ITEMS} requests")
    return bundle([(key, inner, _answer_one(inner, config, payload, state)) for key, inner, payload in items])
