"""The Run section of every computing page, written once (issue 33: the pages' Run sections generic over the family
contract; issue 34: a Run re-renders its results, not the page).

* :func:`run_into` - the Run itself: ``compute(progress)`` under a progress bar that the family contract's one
  progress form, ``progress(done, total, label)`` (:data:`dpcore.family.Progress`), moves; what it returns is kept
  under one session key for the results, an InputError is shown next to what it names and leaves no results of an
  earlier setting;
* :func:`stage` - the progress of one stage of a Run made of several (Topic models' regime comparisons);
* :func:`results_fragment` - draws the results in a fragment (``st.fragment``): a widget that explores them (which
  metric, which algorithm's components) re-renders the results only, never the page above;
* :func:`result_footer` - every view's computed guarantee of every algorithm and the report's four downloads, the
  end of every page's results;
* :func:`comparison_results` - the results of the contract's :class:`~dpcore.family.Comparison` for any family: its
  table from the family's metric table (:func:`dpcore.family.summary_table.summary_rows`), the notes, and the
  footer with :func:`dpcore.reports.comparison_report`;
* :func:`family_run` - the whole section for any family through ``Family.compare`` (the Any family page).

What is a family's own - its data forms, its charts, its story sentences - stays on its page or comes from the
family; this module never names a family.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from dpcore.cape.guarantee import Guarantee
from dpcore.family import Comparison, Family, Progress
from dpcore.family.progress_rate import throttled
from dpcore.family.summary_table import summary_rows, titles
from dpcore.reports import Report, comparison_report
from dpcore.scenario import Scenario
from dpcore.validation import InputError
from pages.shared.guarantees import show_guarantee_table
from pages.shared.navigation import fragment_run_starts
from pages.shared.reports import report_downloads
from pages.shared.widgets import bar_progress, show_error

__all__ = ["STAGE_STEPS", "comparison_results", "family_run", "result_footer", "results_fragment", "run_into", "stage"]

T = TypeVar("T")

STAGE_STEPS = 1000
"""The steps of a Run made of stages, as :func:`stage` reports them (its progress in thousandths)."""


def run_into(key: str, compute: Callable[[Progress], T], *, where: Any = None,
             show: Callable[[InputError], None] = show_error, text: str = "starting") -> T | None:
    """One Run: the results of the previous Run are dropped, ``compute(progress)`` runs under a progress bar drawn in
    ``where`` (a column or placeholder; None: here) that ``progress(done, total, label)`` moves (at most twice a
    second: :func:`dpcore.family.progress_rate.throttled`), and what it returns
    is kept under ``st.session_state[key]`` (and returned). An InputError is handed to ``show`` (which draws it next
    to the input it names); nothing is kept then and None is returned."""
    st.session_state.pop(key, None)
    bar = (st if where is None else where).progress(0.0, text=text)
    try:
        result = compute(throttled(bar_progress(bar)))
    except InputError as exc:
        show(exc)
        return None
    finally:
        bar.empty()
    st.session_state[key] = result
    return result


def stage(progress: Progress, start: float, share: float, prefix: str = "") -> Progress:
    """The progress of one stage of a Run made of several: the stage's ``progress(done, total, label)`` moves the
    whole Run's over [``start``, ``start + share``] (in :data:`STAGE_STEPS` steps), its label after ``prefix``."""

    def moved(done: int, total: int, label: str) -> None:
        progress(round(STAGE_STEPS * (start + share * min(done / max(total, 1), 1.0))), STAGE_STEPS, prefix + label)

    return moved


def results_fragment(draw: Callable[[], None]) -> None:
    """``draw()`` as a fragment: its widgets (the Run button among them) rerun it alone, so the page above it is
    neither run again nor sent again. A rerun of the fragment alone starts the Run's clock
    (:func:`~pages.shared.navigation.page_run_started`) and, like the page's run (``run_app``), shows an unexpected
    error as a message, never a traceback."""

    @functools.wraps(draw)  # the fragment is named after ``draw`` (Streamlit keys a fragment by its name and place)
    def fragment() -> None:
        fragment_run_starts()
        try:
            draw()
        except Exception as exc:  # noqa: BLE001 - st.rerun/st.stop are BaseExceptions and pass through
            show_error(exc)

    st.fragment(fragment)()


def result_footer(guarantees: Mapping[str, Sequence[Guarantee]], names: Mapping[str, str],
                  report: Callable[[], Report], stem: str, key: str, *, argument: str | None = None) -> None:
    """The end of every page's results: every algorithm's guarantee per view (computed by the audit) and the four
    downloads of ``report()`` (built when first asked for; ``argument``: what its script needs on its command
    line)."""
    show_guarantee_table(guarantees, names)
    report_downloads(report, stem, key, argument=argument)


def comparison_results(family: Family, comparison: Comparison, data: Any, *, stem: str, key: str,
                       report: Callable[[], Report] | None = None) -> None:
    """The results of any family's :class:`~dpcore.family.Comparison`: one row per algorithm and one column per metric
    of the family's table, the comparison's notes, then :func:`result_footer` with ``report()`` (default:
    :func:`dpcore.reports.comparison_report` of ``comparison`` on the data settings ``data``)."""
    st.subheader("Results")
    st.dataframe(pd.DataFrame(summary_rows(family, comparison)), hide_index=True, width="stretch")
    names = titles(family)
    for note in comparison.notes:
        st.caption(note)
    result_footer(comparison.guarantees, names, report or (lambda: comparison_report(comparison, data)), stem, key)


def family_run(family: Family, scenario: Scenario, data: Any, algorithms: Sequence[str], *, runs: int, seed: int,
               key: str, result_key: str, report_key: str) -> None:
    """The Run section of any family, in one fragment (a click re-renders this section only): the Run button
    (``key``), ``family.compare`` on the shared ``scenario`` with a progress bar, and :func:`comparison_results`.
    ``data`` None: its settings are wrong (their message is shown above); the Run then says so. What is kept under
    ``result_key`` is (the family's name, the data settings, the comparison); ``report_key`` keys the downloads."""

    def section() -> None:
        if st.button("Run", type="primary", key=key):
            def compute(progress: Progress) -> tuple[str, Any, Comparison]:
                if data is None:
                    raise InputError("correct the data settings above first", "data")
                return family.name, data, family.compare(scenario, data, tuple(algorithms), runs=runs, seed=seed,
                                                         progress=progress)

            run_into(result_key, compute)
        stored = st.session_state.get(result_key)
        if stored is not None and stored[0] == family.name:
            _, used, comparison = stored
            comparison_results(family, comparison, used, stem=f"{family.name}-comparison", key=report_key)

    results_fragment(section)
