"""How long a party that polls (a SuperNode asking the SuperLink for messages, a worker asking its SuperNode for a
task, the aggregator asking the SuperLink for replies) waits before asking again: its shortest wait while things
happen, then a tenth of the time it has been waiting, up to its longest wait.

A poll costs CPU on both ends (a gRPC call in Python: milliseconds), and an idle federation's SuperLink, SuperNodes
and workers polled at a fixed 0.25-0.5 s spent about a fifth of a core doing nothing (docs/federated.md, step 5, the
paced waits). With this pacing a message that arrives after ``t`` seconds of quiet is seen at most ``RAMP * t``
seconds later (and never more than the longest wait later): a round's exchanges, which follow each other within
seconds, see no change; a party that waited a minute for a slow site answers at most a few seconds later, and an idle
federation asks a quarter as often."""

from __future__ import annotations

__all__ = ["RAMP", "pause"]

RAMP = 0.1
"""The wait after ``t`` seconds without news is ``RAMP * t`` (between the party's shortest and longest wait)."""


def pause(quiet: float, shortest: float, longest: float) -> float:
    """Seconds to wait before the next poll after ``quiet`` seconds without news: ``min(longest, max(shortest,
    RAMP * quiet))``."""
    return min(longest, max(shortest, RAMP * quiet))
