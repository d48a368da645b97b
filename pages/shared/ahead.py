"""Work a page starts while its visitor reads it (issue 34): a daemon thread of low priority, so that the page's own
drawing and the browser come first, with the script's context (a cached function it calls is the page's cache)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

__all__ = ["AHEAD_NICE", "AHEAD_THREAD_PREFIX", "in_background"]

AHEAD_NICE = 10
"""The niceness of a thread that prepares ahead: the CPU the page's own drawing and the browser need comes first."""
AHEAD_THREAD_PREFIX = "ahead-"
"""The start of every such thread's name (a test that measures memory waits for them: tests/conftest.py, settled)."""


def in_background(work: Callable[[], None], name: str) -> threading.Thread:
    """``work()`` in a daemon thread named :data:`AHEAD_THREAD_PREFIX` + ``name``, at niceness :data:`AHEAD_NICE` (this
    thread only, on Linux). Any error is left to the Run, which computes the same again and shows what is wrong next
    to the input it names."""
    ctx = get_script_run_ctx()

    def run() -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), AHEAD_NICE)
        except (AttributeError, OSError):
            pass
        try:
            work()
        except BaseException:  # noqa: BLE001, S110 - the Run reports an error; a session's stop: nothing to prepare
            pass

    thread = threading.Thread(target=run, name=AHEAD_THREAD_PREFIX + name, daemon=True)
    if ctx is not None:
        add_script_run_ctx(thread, ctx)
    thread.start()
    return thread
