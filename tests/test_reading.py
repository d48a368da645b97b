"""The sentences of a sweep's figure (dpcore.experiments.reading) on hand-made tables with hand-computed values."""

from __future__ import annotations

import pytest

from dpcore.experiments import PcaData, SweepResult, SweepSpec, summarise_table, sweep_gains
from dpcore.experiments.reading import (
    STOP_CASES,
    figure_sentence,
    gain_sentence,
    gap_closed,
    meeting_points,
    meeting_sentence,
)
from dpcore.experiments.results import to_table
from dpcore.experiments.stored import stored_result
from dpcore.scenario import equal_sites_scenario

# captured energy per (eps, algorithm): three runs each; the non-private result is 1 everywhere
RUNS = {
    (0.1, "cape"): (0.101, 0.099, 0.100), (0.1, "conv"): (0.100, 0.100, 0.100), (0.1, "nonpriv"): (1.0, 1.0, 1.0),
    (1.0, "cape"): (0.70, 0.71, 0.69), (1.0, "conv"): (0.30, 0.31, 0.29), (1.0, "nonpriv"): (1.0, 1.0, 1.0),
}


def made_result(parameter: str = "eps", grid=(0.1, 1.0), runs: dict | None = None) -> SweepResult:
    spec = SweepSpec(family="pca", parameter=parameter, grid=grid, algorithms=("cape", "conv", "nonpriv"),
                     scenario=equal_sites_scenario(10, 1000, 1.0, 0.01), data=PcaData(dataset="synthetic", k=5, dim=20),
                     runs=3, seed=0)
    runs = RUNS if runs is None else runs
    rows = [(parameter, value, algorithm, run, metric, q, "ok")
            for (value, algorithm), qs in runs.items() for run, q in enumerate(qs) for metric in spec.metrics]
    table = to_table(spec, rows)
    return SweepResult(spec=spec, table=table, summary=summarise_table(spec, table), gains=sweep_gains(spec),
                       notes=(), complete=True, runs_done=3)


def test_gap_closed_is_the_share_of_the_conventional_gap():
    closed = gap_closed(made_result(), "captured_energy")
    assert closed[0] == pytest.approx((0.1 - 0.1) / (1.0 - 0.1), abs=1e-12)
    assert closed[1] == pytest.approx((0.7 - 0.3) / (1.0 - 0.3))


def test_the_figure_sentence_names_the_point_where_cape_helps_most():
    sentence = figure_sentence(made_result(), "captured_energy")
    assert sentence.startswith("Each curve is one algorithm's mean captured energy (higher is better) over 3 runs")
    assert "At eps = 1, capePCA reaches 0.7, the conventional scheme (each site adds its own noise) 0.3" in sentence
    assert "closes 57% of the gap" in sentence  # (0.7 - 0.3) / (1 - 0.3)


def test_the_curves_meet_where_the_paired_difference_is_not_significant_and_the_noise_swamps_the_signal():
    result = made_result()
    points = meeting_points(result, "captured_energy")
    assert [p.value for p in points] == [0.1]
    point = points[0]
    # paired differences 0.001, -0.001, 0: mean 0, s = 0.001, half-width t_{0.975,2} * s / sqrt(3)
    assert point.difference == pytest.approx(0.0, abs=1e-15)
    assert point.half_width == pytest.approx(4.302652729911275 * 0.001 / 3 ** 0.5)
    assert point.gain == pytest.approx(10.0) and point.reason == "swamped"
    sentence = meeting_sentence(result, "captured_energy")
    assert sentence.startswith("The curves meet at eps = 0.1.") and "noise swamps the signal" in sentence


def test_no_meeting_and_a_gain_that_changes_along_c():
    apart = {(v, a): RUNS[(1.0, a)] for v in (0.1, 1.0) for a in ("cape", "conv", "nonpriv")}
    assert "stays clearly ahead of the conventional scheme at every eps" in meeting_sentence(
        made_result(runs=apart), "captured_energy")
    assert "G = 10" in gain_sentence(made_result(runs=apart))  # equal budgets: the same G at every eps
    by_c = {(float(c), a): RUNS[(1.0, a)] for c in (0, 9) for a in ("cape", "conv", "nonpriv")}
    assert gain_sentence(made_result("c", (0, 9), by_c)) is None  # G = 10 at c = 0, about 1 at c = 9: drawn
    by_c[(9.0, "cape")] = RUNS[(1.0, "conv")]  # at c = S - 1 CAPE is the conventional scheme
    points = meeting_points(made_result("c", (0, 9), by_c), "captured_energy")
    assert [p.value for p in points] == [9.0] and points[0].reason == "no-gain"
    assert "The design's gain G is only 0.99 there" in meeting_sentence(made_result("c", (0, 9), by_c),
                                                                        "captured_energy")


def test_the_stored_stop_cases_meet_for_the_reason_they_are_offered_for():
    eps_case = stored_result(STOP_CASES["eps"].preset)
    assert eps_case is not None
    points = meeting_points(eps_case.result, "captured_energy")
    assert [p.value for p in points][:2] == [0.001, 0.01] and {p.reason for p in points} == {"swamped"}
    ns_case = stored_result(STOP_CASES["ns"].preset)
    assert ns_case is not None
    points = meeting_points(ns_case.result, "q_comp")
    assert points and points[0].value == 1000 and points[0].reason == "swamped"
