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

PROGRESS_INTERVAL = 0.5
"""Seconds between two progress updates a page sends to the browser: two a second. Each update cost chromium about
12 ms of CPU (a commit, a layout, a paint and raster of the tab), the largest part of what a tab spends while a Run
computes: 0.10-0.12 CPU seconds per second of Run at four updates a second, 0.07-0.09 at two, 0.065-0.085 at one
(issue 34; a 100-run capePCA Run, 3 s windows, load 2.7-3.8). A Run that takes longer on a loaded machine sends
more updates, so this share grows with the Run's wall time."""


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
