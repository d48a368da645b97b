"""A progress callback passed on at a bounded rate (issue 34: a page's progress bar is a message to the browser and a
re-render of the page there; a Run of 100 steps sent 100 of them, each a layout of the whole page in the browser).

:func:`throttled` wraps a :data:`~dpcore.family.compare.Progress` so that the first step, the last step
(``done >= total``) and any step at least ``interval`` seconds after the last one passed on reach it; the steps in
between are dropped (each passed step carries its own ``done``, ``total`` and label, so nothing is lost but
intermediate positions of the bar)."""

from __future__ import annotations

import time
from collections.abc import Callable

from .compare import Progress

__all__ = ["PROGRESS_INTERVAL", "throttled"]

PROGRESS_INTERVAL = 0.25
"""Seconds between two progress updates a page sends to the browser (four a second: the bar still moves smoothly)."""


def throttled(progress: Progress, interval: float = PROGRESS_INTERVAL, *,
              clock: Callable[[], float] = time.monotonic) -> Progress:
    """``progress`` called for the first step, the last (``done >= total``) and otherwise at most once per
    ``interval`` seconds of ``clock``."""
    last: list[float] = []

    def passed_on(done: int, total: int, label: str) -> None:
        now = clock()
        if last and done < total and now - last[0] < interval:
            return
        last[:] = [now]
        progress(done, total, label)

    return passed_on
