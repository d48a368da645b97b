"""What a helper or a site tells its operator about each request, in words: what it received, what it checked, what
it released, or what it refused and why. One line per request on the logger ``capefed.party`` (the worker writes it
to its standard output: the node's log file, or ``journalctl -u capefed-worker``), e.g.

    site north: received a release request (capePCA round 1234/capePCA/0, stage A) from the aggregator
    site north: checked every site's signed statement against the roster, ...
    site north: released its stage A statistic with its noise: 2,080 numbers, masked

The checks named for an answered request are the ones the handler (``capefed.siteflow``, ``capefed.helper``) ran
before it answered: it raises on the first that fails, and that failure is what the "refused" line quotes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from .dp import InputError, load_json
from .messages import Payload

__all__ = ["CHECKS", "describe", "record"]

log = logging.getLogger("capefed.party")

_STATEMENTS = "every site's signed statement (budget and round key) against the roster"
_PLAN = ("recomputed the plan from those statements and the public settings; the round is within the study it signed "
         "(its digest, algorithm, settings and every site's values) and every site approved it; every other site's "
         "ledger continues the one it saw")
CHECKS: dict[tuple[str, str], str] = {
    ("site", "hello"): ("its identity key is the one the roster pins for it; the study is one it signed (its verified "
                        "ledger holds its approval) and every site approved it; read its data and budget"),
    ("site", "setup"): (f"{_STATEMENTS}; {_PLAN}; its own values are still those of its statement; the design keeps "
                        "its promise (tau_s for its N_s, eps_s, delta_s, the colluders it requires, the drop-outs it "
                        "tolerates, every audited view); reserved the round's worst-case cost in its ledger (the "
                        "study's rounds and its total budget allow it) before sharing anything; fixed the round's plan "
                        "(its digest)"),
    ("site", "release"): (f"{_STATEMENTS}; {_PLAN}; the plan is the one it set up with, within its own deadline; its "
                          "values match the design's digest; the design keeps its promise; the stage was not "
                          "released before; the aggregator's tau_g,s^2 and f_s are the plan's (sample variance within "
                          "the chi-square bounds); every other site's set-up message is signed and sealed for this "
                          "plan; every site of the plan reserved the round (signed reservations, each ledger grown); "
                          "{noise}, with the design's variance; the release lies in the accepted range"),
    ("site", "confirm"): (f"{_STATEMENTS}; {_PLAN}; the plan is the one it set up with, within its own deadline; it "
                          "released the stage and is in the survivor set; the set misses no more sites than the plan "
                          "survives and holds no site an earlier stage excluded; it signed no other set for the stage; "
                          "recorded the stage as spent in its ledger before signing"),
    ("site", "reveal"): (f"{_STATEMENTS}; {_PLAN}; the plan is the one it set up with, within its own deadline; the "
                         "survivor set is the one it signed and every member signed the same set, plan and W; it had "
                         "not revealed for the stage"),
    ("site", "result"): (f"{_STATEMENTS}; {_PLAN}; the plan is the one it set up with, within its own deadline; "
                         "computed the audit of its own views from the plan and the survivor sets it signed; settled "
                         "the round in its ledger"),
    ("helper", "hello"): "its identity key is the one the roster pins for the helper",
    ("helper", "shares"): (f"{_STATEMENTS}; {_PLAN}; the requested stages, dimensions, mixing, weights and variances "
                           "are that plan's"),
    ("helper", "recover"): (f"{_STATEMENTS}; {_PLAN}; the plan is the one it drew the noise for, within its own "
                            "deadline; every member of the survivor set signed the same set; the set misses no more "
                            "sites than the plan survives; it had not recovered for the stage; with the excluded sites "
                            "counted as colluders every site's audited views keep their promises"),
}
_NOISE = {"helper": "its e_s came sealed to it and signed by the helper the roster pins",
          "helper-free": "its e_s came from the secure sum of every other site's signed set-up message",
          "discrete": "its integer E~_s came from the exact secure sum on the ring of every other site's signed set-up "
                      "message and the aggregator's F~_s are integers of the plan's law"}
_MAX_TEXT = 80
_MAX_REASON = 2000


def _noise(request: Payload) -> str:
    """The round's noise variant, from the request's settings (already checked by the handler that answered)."""
    try:
        noise = load_json(request.config.get("settings", "{}"), "round settings").get("noise", "helper")
    except (InputError, AttributeError):
        return "helper"
    return noise if isinstance(noise, str) and noise in _NOISE else "helper"


def _clean(value: object, most: int = _MAX_TEXT) -> str:
    """A value the aggregator sent, printable on one line (no control characters), at most ``most`` characters."""
    text = "".join(c if c.isprintable() else "?" for c in str(value))
    return text if len(text) <= most else text[:most] + "..."


def _received(action: str, request: Payload) -> str:
    c = request.config
    parts = [f"{_clean(c[k])}" if k == "algorithm" else f"{k} {_clean(c[k])}"
             for k in ("algorithm", "round", "stage") if isinstance(c.get(k), str)]
    what = f" ({', '.join(parts)})" if parts else ""
    return f"received a {_clean(action)} request{what} from the aggregator"


def _released(role: str, action: str, request: Payload, reply: Payload) -> str:
    numbers = sum(int(a.size) for a in reply.arrays.values())
    if role == "site" and action == "release":
        return (f"released its stage {_clean(request.config.get('stage', '?'))} statistic with its noise: {numbers:,} "
                "numbers, masked (unreadable until the survivors reveal its self-mask; the round's cost reserved in "
                "its ledger at set-up)")
    if role == "site" and action == "confirm":
        return (f"signed the survivor set of stage {_clean(request.config.get('stage', '?'))}: "
                f"{_clean(', '.join(map(str, request.config.get('survivors', []))), 400)}")
    if role == "site" and action == "reveal":
        kinds = reply.config.get("kinds", [])
        return (f"revealed {kinds.count('mask')} self-mask share(s) (sites in the set) and {kinds.count('noise')} "
                "noise share(s) (sites the set excludes)" + (" and the secure sum W" if reply.arrays else ""))
    if role == "site" and action == "result":
        return "received the round's end and its published result"
    if action == "hello":
        return "answered with its signed statement" + (" (budget and a fresh round key)" if role == "site" else "")
    if action == "setup":
        count = sum(len(v) for k, v in reply.config.items() if k.startswith("blobs/") and isinstance(v, list))
        return (f"sent {count} sealed, signed set-up messages (shares of its seeds) for the other sites (through the "
                "aggregator, unread) and its signed commitments to its seeds")
    if action == "shares":
        count = sum(1 for k in reply.config if k.startswith("sealed/"))
        return f"sent {count} sealed, signed shares e_s, one per site and stage (through the aggregator, unread)"
    if action == "recover":
        dropped = ", ".join(map(str, reply.config.get("dropped", [])))
        return (f"revealed the terms of the sites the signed survivor set excludes ({_clean(dropped)}: {numbers:,} "
                "numbers)")
    return f"answered ({numbers:,} numbers)"


def describe(role: str, name: str, action: str, request: Payload, reply: Payload) -> list[str]:
    """The lines for one answered or refused request."""
    who = f"{role} {_clean(name)}" if role == "site" else _clean(name) if name else role
    lines = [f"{who}: {_received(action, request)}"]
    if reply.config.get("status") == "ok":
        checks = CHECKS.get((role, action))
        if checks and "{noise}" in checks:
            checks = checks.format(noise=_NOISE[_noise(request)])
        if checks:
            lines.append(f"{who}: checked {checks}")
        lines.append(f"{who}: {_released(role, action, request, reply)}")
        lines.extend(f"{who}: {_clean(note, _MAX_REASON)}" for note in reply.notes)
    else:
        lines.append(f"{who}: REFUSED: {_clean(reply.config.get('reason', 'no reason given'), _MAX_REASON)}")
    return lines


def record(config: Mapping[str, object], action: str, request: Payload, reply: Payload) -> None:
    """Log :func:`describe`'s lines (refusals as warnings)."""
    role = str(config.get("role", "?"))
    lines = describe(role, str(config.get("name", "")), action, request, reply)
    refused = reply.config.get("status") != "ok"
    for line in lines:
        log.log(logging.WARNING if refused and "REFUSED" in line else logging.INFO, line)
