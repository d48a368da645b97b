"""The processes of a loopback federation, found through /proc (Linux): the children and descendants of a process,
every process carrying a run's token in its environment, adopting orphans (subreaper), reaping, signalling."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["TAG_VARIABLE", "alive", "children", "descendants", "reap", "reap_any", "set_subreaper", "signal_all",
           "tagged_processes"]

TAG_VARIABLE = "CAPEFED_RUN_TAG"
"""The environment variable that carries a run's token into every process it starts (and what they start)."""


def children() -> dict[int, list[int]]:
    """Every process's children, from the parent pid in /proc/<pid>/stat."""
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def descendants(pid: int) -> list[int]:
    """Children, grandchildren, ... of ``pid`` (zombies included)."""
    tree, out, todo = children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def tagged_processes(tag: str) -> list[int]:
    """Processes whose environment carries ``CAPEFED_RUN_TAG=tag`` (this launcher's, and what they started)."""
    marker = f"{TAG_VARIABLE}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


_PR_SET_CHILD_SUBREAPER = 36


def set_subreaper(on: bool) -> None:
    """Make this process adopt its orphaned descendants (Linux prctl), so that it can reap the processes Flower
    starts detached once their parents are gone; where pid 1 does not reap they would stay zombies."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes  # noqa: PLC0415

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)


def reap(pids: Sequence[int]) -> None:
    """Collect the exit status of those of ``pids`` that are this process's children and have exited."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def reap_any() -> None:
    """Reap every child that has exited (only for a process whose children are all the federation's)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def signal_all(pids: Sequence[int], sig: int) -> None:
    """Send ``sig`` to every pid that still exists."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"
