"""A pytest plugin for :mod:`benchmarks.suite`: the CPU seconds of every test (``-p benchmarks.cpu_plugin``).

For each test (set-up, call and tear-down) it records the pytest process's own CPU seconds and those of the child
processes it reaped meanwhile (``getrusage``: user + system), with the wall seconds, as one JSON line per test in
``$SUITE_CPU_OUT-<xdist worker>.jsonl``. A child's CPU is counted when it is reaped: a federation a module starts
counts in the module's last test (its tear-down stops it), a worker pool that lives on counts in the test that stops
it, and a process nobody waits for is not counted."""

from __future__ import annotations

import json
import os
import resource
import time

import pytest

OUT_VARIABLE = "SUITE_CPU_OUT"
"""The environment variable naming the records' path prefix; without it the plugin records nothing."""


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    prefix = os.environ.get(OUT_VARIABLE)
    own, children = _cpu()
    start = time.monotonic()
    yield
    if prefix:
        own_after, children_after = _cpu()
        record = {"id": item.nodeid, "self": own_after - own, "children": children_after - children,
                  "wall": time.monotonic() - start}
        with open(f"{prefix}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
