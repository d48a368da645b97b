"""The one Run section of the computing pages (issue 33): the results table of any family's comparison read from
the family's tables (dpcore.family.summary_table), and the Run itself (pages.shared.run_section.run_into): its
progress bar moved by progress(done, total, label), the result kept under one key, a bad input shown next to it with
no results of an earlier setting left."""

from __future__ import annotations

import pytest

from dpcore.family import Comparison, families
from dpcore.family.summary_table import FAILED_CELL, summary_cell, summary_rows, titles
from dpcore.scenario import default_scenario
from dpcore.summary import MetricSummary


def _comparison(family, means: dict[str, float | None]) -> Comparison:
    """A comparison of ``family`` whose every metric of algorithm a has mean ``means[a]`` and std a tenth of it."""
    summaries = tuple(MetricSummary(algorithm=a, metric=m, mean=mean, std=None if mean is None else mean / 10,
                                    runs=0 if mean is None else 3, failed=None if mean is not None else 3)
                      for a, mean in means.items() for m in family.metrics)
    return Comparison(family=family.name, algorithms=tuple(means), summaries=summaries, records=(), guarantees={},
                      bits_per_value=dict.fromkeys(means), scenario=default_scenario(), runs=3, seed=0)


@pytest.mark.parametrize("name", list(families()))
def test_the_summary_rows_are_the_familys_titles_and_metric_labels_in_the_order_run(name):
    family = families()[name]
    order = list(family.algorithms)[::-1][:3]  # not the table's order: the rows follow the run
    means = {a: 0.25 * (i + 1) for i, a in enumerate(order)}
    means[order[-1]] = None  # no run finished
    rows = summary_rows(family, _comparison(family, means))
    assert [r["algorithm"] for r in rows] == [family.algorithms[a].title for a in order]
    assert list(rows[0]) == ["algorithm", *(m.label for m in family.metrics.values())]
    for row, a in zip(rows, order, strict=True):
        for label in (m.label for m in family.metrics.values()):
            mean = means[a]
            assert row[label] == (FAILED_CELL if mean is None else f"{mean:.4g} ± {mean / 10:.2g}")
    assert titles(family) == {a: e.title for a, e in family.algorithms.items()}


def test_a_cell_of_one_run_has_std_zero_and_no_mean_is_failed():
    assert summary_cell(1.23456, None) == "1.235 ± 0"
    assert summary_cell(None, None) == FAILED_CELL
    assert summary_cell(2.0, 0.123) == "2 ± 0.12"


def _run_page() -> None:
    import streamlit as st

    from dpcore.validation import InputError
    from pages.shared.run_section import run_into

    def compute(progress):
        for done in range(1, 4):
            progress(done, 3, f"step {done}")
        if st.session_state.get("bad"):
            raise InputError("runs: must be a whole number from 1 to 200 (got 0)", "runs")
        st.session_state["computed"] = st.session_state.get("computed", 0) + 1
        return {"value": st.session_state["computed"]}

    if st.button("Run", key="run"):
        st.session_state["returned"] = run_into("result", compute)
    kept = st.session_state.get("result")
    st.markdown(f"kept {None if kept is None else kept['value']}")


def test_run_into_keeps_the_result_and_a_bad_input_leaves_no_stale_result():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_run_page, default_timeout=60).run()
    assert at.markdown[0].value == "kept None"
    at.button(key="run").click().run()
    assert not at.exception and len(at.error) == 0
    assert at.markdown[0].value == "kept 1" and at.session_state["returned"] == {"value": 1}
    at.session_state["bad"] = True
    at.button(key="run").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == ["runs: must be a whole number from 1 to 200 (got 0)"]
    assert at.markdown[0].value == "kept None" and at.session_state["returned"] is None  # no earlier result shown
    assert len(at.get("progress")) == 0  # the bar is gone once the Run ends


def test_a_stage_moves_its_share_of_the_whole_run_with_its_label_after_the_prefix():
    from pages.shared.run_section import STAGE_STEPS, stage

    seen = []
    whole = lambda done, total, label: seen.append((done / total, label))  # noqa: E731
    first, second = stage(whole, 0.0, 0.5, "this corpus: "), stage(whole, 0.5, 0.5, "the regime corpus: ")
    for done in range(1, 5):
        first(done, 4, f"run {done}/4")
    for done in (1, 2, 3):
        second(done, 3, "x")
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[3] == 0.5 and fractions[-1] == 1.0
    assert fractions[0] == round(STAGE_STEPS * 0.125) / STAGE_STEPS
    assert seen[0][1] == "this corpus: run 1/4" and seen[-1][1] == "the regime corpus: x"
    second(7, 3, "beyond")  # never past the stage's end
    assert seen[-1][0] == 1.0
