"""`make test` (``pytest -n auto``) starts one worker more than the cores this process may use (conftest.EXTRA_WORKERS),
so that a core is not idle while a federated test waits for its processes; ``PYTEST_XDIST_AUTO_NUM_WORKERS`` in the
environment still decides, as pytest-xdist documents."""

from __future__ import annotations

import conftest
import pytest

from dpcore.normals import available_cpus


def test_auto_starts_one_worker_more_than_the_cores(monkeypatch, pytestconfig):
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    cores = available_cpus()
    assert conftest.pytest_xdist_auto_num_workers(None) == cores + 1
    assert [conftest.auto_workers(n) for n in (0, 1, 2, 8)] == [2, 2, 3, 9]
    if not pytestconfig.pluginmanager.hasplugin("xdist"):
        pytest.skip("pytest-xdist is not loaded")
    # the hook as `-n auto` calls it: this one answers before pytest-xdist's own (psutil's cores where installed)
    assert pytestconfig.pluginmanager.hook.pytest_xdist_auto_num_workers(config=pytestconfig) == cores + 1


def test_the_environment_variable_is_left_to_pytest_xdist(monkeypatch, pytestconfig):
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "5")
    assert conftest.pytest_xdist_auto_num_workers(None) is None  # pytest-xdist's own hook then reads it
    if not pytestconfig.pluginmanager.hasplugin("xdist"):
        pytest.skip("pytest-xdist is not loaded")
    assert pytestconfig.pluginmanager.hook.pytest_xdist_auto_num_workers(config=pytestconfig) == 5
