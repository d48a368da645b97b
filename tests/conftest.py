"""Shared test set-up: the repository root and federated/ on sys.path, seeded generators, AppTest helper."""

from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Property tests (tests/test_properties.py): derandomized and without an example database, so that every machine and
# every run tries the same inputs (CI stays reproducible; a failure prints the failing input). No per-example deadline:
# the time of each example is bounded by the limits under test, the suite's time by max_examples.
settings.register_profile(
    "dpcore", derandomize=True, database=None, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("dpcore")

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "federated"):  # dpcore, and the Flower app's package capefed
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

# One process per test unless a test asks for workers (tests/test_workers.py passes workers=2): the suite itself runs
# in parallel (pytest -n 2), so default worker pools would oversubscribe the cores.
os.environ.setdefault("DPCORE_WORKERS", "1")


SETTLE_SECONDS = 600
"""Longest wait of the ``settled`` fixture for the work pages start ahead."""


@pytest.fixture
def settled() -> None:
    """Wait until the work an earlier test's page started ahead in this process has ended (pages.shared.ahead: daemon
    threads that outlive an AppTest, preparing data and warming figures at low priority, for minutes on a loaded
    machine). A test that measures memory with tracemalloc uses it: tracemalloc counts every thread's allocations,
    and a page's preparation allocates megabytes (a capePCA memory bound failed after a Topic models page test)."""
    import threading
    import time

    from pages.shared.ahead import AHEAD_THREAD_PREFIX

    end = time.monotonic() + SETTLE_SECONDS
    for thread in threading.enumerate():
        if thread.name.startswith(AHEAD_THREAD_PREFIX) and thread is not threading.current_thread():
            thread.join(max(0.0, end - time.monotonic()))
            assert not thread.is_alive(), f"{thread.name} still runs after {SETTLE_SECONDS} s"


RNG_SEED_ENV = "DPCORE_TEST_RNG_SEED"
"""Seed of the ``rng`` fixture (default 20261121). Checking a test's margin over other streams, as the house rules ask:
``DPCORE_TEST_RNG_SEED=7 pytest tests/test_lda_sensitivity.py``."""


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(int(os.environ.get(RNG_SEED_ENV, "20261121")))


def app_test(page_path: str | None = None, timeout: float = 60):
    """AppTest of the whole app (app.py navigation), switched to ``page_path`` and run."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    at.run()
    if page_path is not None:
        at.switch_page(page_path)
        at.run()
    return at


# --- the suite on every core (pytest-xdist), browser tests on one server ---------------------------------------------
# `make test` runs `pytest -n auto --dist loadgroup`, one worker more than the cores (EXTRA_WORKERS). Every test gets
# an xdist group (_group_of): every browser test (tests/test_browser*.py, marker `browser`) is in one group, so that
# they share one Streamlit server and one chromium (the session fixtures below); a module that keeps state between its
# tests (a module- or class-scoped fixture, or a cache: Flower rounds, planners, fitted models, installations) is one
# group, so that one worker sets it up once; every other test is a group of its own, so that a long module (the
# planner's uploads, the story claims: minutes each) is shared by every worker instead of setting the floor. The groups
# are handed out longest first (browser, then tests of modules with `federated`, `slow` or `install` tests, then the
# rest, each in file order), so that no long group starts last while another worker idles. Without xdist the marks do
# nothing.
BROWSER_GROUP = "browser"
HEAVY_MARKERS = ("federated", "slow", "install")
SHARED_STATE = re.compile(r"""scope=["'](module|class|package)["']|lru_cache|functools\.cache\b|@cache\b""")
"""What in a test module's source keeps it in one group (checked against the fixtures each test uses at collection)."""
WHOLE_SCOPES = ("module", "class", "package")


@functools.cache
def _keeps_state(path: str) -> bool:
    return bool(SHARED_STATE.search((ROOT / path).read_text()))


def _group_of(nodeid: str) -> str:
    """The group of a test from its id alone (what xdist's scheduler sees): the browser files' tests share one group;
    a module that keeps state between tests (:data:`SHARED_STATE`) is one group; any other test is its own group."""
    path = nodeid.split("::", 1)[0]
    if Path(path).name.startswith("test_browser"):
        return BROWSER_GROUP
    return path if _keeps_state(path) else nodeid


def pytest_configure(config):
    # registered here too, so that --strict-markers accepts it when pytest-xdist is not loaded (`-p no:xdist`)
    config.addinivalue_line("markers", "xdist_group(name): tests of one group run in one pytest-xdist worker")


def _check_group(item, name: str) -> None:
    """The id-based group agrees with the marks and fixtures: a browser test lives in tests/test_browser*.py (one
    server), and a test alone in its group uses no fixture that a module, class or package shares."""
    path = item.nodeid.split("::", 1)[0]
    if item.get_closest_marker("browser") and name != BROWSER_GROUP:
        raise pytest.UsageError(f"{item.nodeid}: browser tests live in tests/test_browser*.py (one server)")
    if name == item.nodeid:
        defs = getattr(item, "_fixtureinfo", None)
        shared = [fixture for fixture, found in (defs.name2fixturedefs.items() if defs else ())
                  if found and found[-1].scope in WHOLE_SCOPES]
        if shared:
            raise pytest.UsageError(f"{path}: its tests share {shared}; conftest.SHARED_STATE must match the module")


def pytest_collection_modifyitems(config, items):
    module = {item: item.nodeid.split("::", 1)[0] for item in items}
    heavy = {module[item] for item in items if any(item.get_closest_marker(m) for m in HEAVY_MARKERS)}
    for item in items:
        name = _group_of(item.nodeid)
        _check_group(item, name)
        item.add_marker(pytest.mark.xdist_group(name))
    rank = {item: 0 if _group_of(item.nodeid) == BROWSER_GROUP else 1 if module[item] in heavy else 2 for item in items}
    items.sort(key=rank.__getitem__)  # stable: file order within each rank


EXTRA_WORKERS = 1
"""Workers ``-n auto`` starts beyond the cores this process may use. The federated tests spend much of their time
waiting for their processes (a round's deadline, a SuperNode's heartbeat lapse, a service's start), and with one worker
per core that core idled meanwhile. docs/README.md ("Development") has the measurements on clean clones
(benchmarks/suite.py): the share of the cores the suite used, quiet and with one core busy, with two and three
workers."""


def auto_workers(cores: int) -> int:
    """The number of workers for ``-n auto`` on ``cores`` cores: one more than the cores (:data:`EXTRA_WORKERS`)."""
    return max(1, cores) + EXTRA_WORKERS


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (``make test``): :func:`auto_workers` of the cores this process may run on (the count dpcore's
    own draws and workers use, :func:`dpcore.normals.available_cpus`);
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` set in the environment still decides (pytest-xdist's own hook reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    from dpcore.normals import available_cpus

    return auto_workers(available_cpus())


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """--dist loadgroup by the groups above, in the order the items were sorted (longest first).

    pytest-xdist 3.8 marks a test's group by appending "@group" to ``item._nodeid``, which pytest 9 no longer reads (a
    node's id is ``item._id``): every test was then its own group, every module's set-up ran on both workers, and both
    started a Streamlit server and chromium. This scheduler takes each test's group from its id (:func:`_group_of`) and
    keeps the collection's order of the groups (xdist would reorder them by their number of tests, which starts a long
    group of three install tests last)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group_of(nodeid.rsplit("@", 1)[0] if "@" in nodeid.rsplit("]", 1)[-1] else nodeid)

    config.option.loadscopereorder = False
    return ModuleGroups(config, log)


@pytest.fixture(scope="session")
def server():
    from browser_support import streamlit_server

    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    from browser_support import chromium

    with chromium() as b:
        yield b
