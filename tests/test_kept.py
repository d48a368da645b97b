"""dpcore.kept.kept_by_content: results kept for arguments equal by content, each caller its own copy, the most
recently used kept, exceptions and unpicklable arguments never kept; and the general solver uses it."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.cape.design import scenario_budgets
from dpcore.cape.solvers.general import solve_general
from dpcore.kept import kept_by_content
from dpcore.scenario import equal_sites_scenario


def _counted(maxsize: int):
    calls = []

    @kept_by_content(maxsize)
    def double(values, *, scale=2.0):
        calls.append(np.asarray(values).tolist())
        if np.any(np.asarray(values) < 0):
            raise ValueError("negative")
        return {"values": np.asarray(values) * scale}

    return double, calls


def test_equal_arguments_in_other_objects_are_computed_once_and_each_caller_owns_its_copy():
    double, calls = _counted(4)
    first = double(np.array([1.0, 2.0]))
    again = double(np.array([1.0, 2.0]))
    assert calls == [[1.0, 2.0]] and again is not first and again["values"] is not first["values"]
    again["values"][0] = -9.0
    assert double(np.array([1.0, 2.0]))["values"].tolist() == [2.0, 4.0]
    double(np.array([1.0, 2.0]), scale=3.0)  # a keyword changes the key
    double(np.array([1.0, 2.0], dtype=np.float32))  # so does a dtype
    assert len(calls) == 3
    info = double.cache_info()
    assert (info.hits, info.misses, info.size, info.maxsize) == (2, 3, 3, 4)


def test_the_most_recently_used_are_kept_and_exceptions_and_unpicklable_arguments_never():
    double, calls = _counted(2)
    for values in ([1.0], [2.0], [1.0], [3.0]):  # [2.0] is the least recently used when [3.0] comes
        double(values)
    assert calls == [[1.0], [2.0], [3.0]]
    double([1.0])
    double([2.0])
    assert calls[-1] == [2.0] and len(calls) == 4
    for _ in range(2):
        with pytest.raises(ValueError, match="negative"):
            double([-1.0])
    assert calls.count([-1.0]) == 2

    @kept_by_content(2)
    def call(function):
        return function()

    assert call(lambda: 1) == 1 and call(lambda: 1) == 1 and call.cache_info().size == 0
    double.cache_clear()
    assert double.cache_info().size == 0 and double.cache_info().hits == 0
    with pytest.raises(ValueError, match="at least 1"):
        kept_by_content(0)


def test_the_general_solver_gives_a_kept_design_equal_to_a_fresh_one():
    scenario = equal_sites_scenario(4, 500, 1.0, 1e-5)
    budgets = scenario_budgets(scenario, scenario.taus("pca"))
    solve_general.cache_clear()
    fresh = solve_general.__wrapped__(budgets)
    kept = [solve_general(budgets) for _ in range(2)]
    assert solve_general.cache_info().misses == 1 and kept[0] is not kept[1]
    for design in kept:
        for field in ("weights", "tau", "var_e", "var_f", "var_g"):
            np.testing.assert_array_equal(getattr(design, field), getattr(fresh, field))
        assert design.feasible and design.tau_c == fresh.tau_c
