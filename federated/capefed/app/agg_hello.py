"""Step 1 of a round at the aggregator: the hello (docs/federated.md, "One round, message by message"). The helper
answers with its role (signed), each site with its budget and a fresh X25519 round key in a statement signed by its
identity key; the round key is checked at the boundary (not a point of small order: ``capefed.app.sealing``). Only
parties the roster pins count: a node whose hello cannot be verified (a stranger, an impostor using a site's name, a
malformed key) is ignored and listed; a round that is then short stops, naming the failed check."""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from . import dp
from .checks import budget_from_hello
from .messages import Payload, config_bytes, site_label
from .outcome import RoundStopped
from .roundstate import RoundState, SiteNode
from .trust import Roster, TrustError, verify, verify_statement

__all__ = ["hello"]


def _identify(r: RoundState, roster: Roster, node: int, reply: Mapping[str, Any]) -> SiteNode | str | None:
    """A verified site, "helper" for the verified helper, or None (ignored, with the reason noted)."""
    round_id = r.settings.round_id
    if reply.get("role") == "helper":
        name = str(reply.get("name", ""))[:64]
        try:
            if verify(roster.key(name, "helper"), reply.get("signature"), "helper-hello", round_id, name):
                return "helper"
        except TrustError:
            pass
        r.ignored.append(f"node {node}: claims to be the helper, but its hello is not signed by a helper key "
                         "the roster pins")
        return None
    try:
        statement = verify_statement(roster, reply.get("statement"), reply.get("signature"), round_id)
        budget, key = budget_from_hello(reply)
    except (TrustError, ValueError, RecursionError) as exc:  # a malformed hello: that node is ignored
        r.ignored.append(f"node {node} (calls itself {str(reply.get('name', '?'))[:64]!r}): {exc}")
        return None
    if (statement.name != budget.name or statement.public_key != key
            or statement.budget != budget.to_dict()):
        r.ignored.append(f"node {node}: its hello does not match its signed statement")
        return None
    return SiteNode(node=node, budget=budget, key=key, statement=reply["statement"],
                    signature=reply["signature"])


def hello(r: RoundState) -> Generator[Any, Any, int | None]:
    """Step 1: every connected node's hello; returns the helper's node (None helper-free). Only parties the roster
    pins count: a node whose hello does not verify is ignored and listed."""
    s = r.settings
    helper_needed = dp.noise_variant(s.round.noise).helper
    needed = s.sites + (1 if helper_needed else 0)
    roster = r.roster()
    nodes = yield ("nodes", needed, s.connect_timeout)
    if len(nodes) < needed:
        raise RoundStopped(f"only {len(nodes)} node(s) connected within {s.connect_timeout:g} s; the round needs "
                           + ("the helper and " if helper_needed else "") + f"{s.sites} sites")
    request = s.public()
    replies = yield from r.exchange("hello", {n: Payload(dict(request)) for n in nodes})
    silent = [n for n in nodes if n not in replies]
    helpers, refused, blamed = [], [], []
    for node in nodes:
        if node not in replies:
            continue
        reply = replies[node].config
        if reply.get("status") != "ok":
            refused.append(str(reply.get("reason", f"node {node} refused the hello"))[:2000])
            blamed.append(str(reply.get("name", node))[:64])
            continue
        found = _identify(r, roster, node, reply)
        if found == "helper":
            helpers.append(node)
            r.node_names[node] = dp.HELPER
        elif found is not None:
            r.sites.append(found)
            r.node_names[node] = site_label(found.name)
    names = [x.name for x in r.sites]
    if len(set(names)) != len(names):
        raise RoundStopped("two nodes proved the same site identity: " + ", ".join(sorted(names)))
    problems = refused + ([f"node(s) {', '.join(map(str, silent))} did not answer the hello within "
                           f"{s.timeout:g} s"] if silent else [])
    if len(r.sites) == s.sites and (len(helpers) == 1 or not helper_needed):
        r.ignored.extend(f"ignored: {p}" for p in problems)  # a stranger cannot stop a complete round
        problems = []
    if helper_needed and len(helpers) != 1:
        raise RoundStopped("; ".join(problems + [f"the round needs exactly one helper node; {len(helpers)} "
                                                 "answered as helper"] + r.ignored), tuple(blamed))
    if len(r.sites) != s.sites or problems:
        raise RoundStopped("; ".join(problems + [f"the round expects {s.sites} sites; {len(r.sites)} answered "
                                                 "with a statement signed by a pinned key: "
                                                 + (", ".join(sorted(names)) or "none")] + r.ignored),
                           tuple(blamed))
    r.sites.sort(key=lambda x: x.name)
    for node in nodes:
        party = r.node_names.get(node)
        if party is None:
            continue
        r.entry("hello", 0, dp.AGGREGATOR, party, "hello (algorithm, round id, public settings)", (), 0,
                config_bytes(request), "control", protocol=False)
        content = ("hello answer: role" if party == dp.HELPER else
                   "hello answer: N_s, eps_s, delta_s, weight, D, public key, digest")
        r.entry("hello", 0, party, dp.AGGREGATOR, content, (), 0, config_bytes(replies[node].config),
                "control", protocol=False)
    return helpers[0] if helpers else None
