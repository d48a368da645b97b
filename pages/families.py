"""Any family: the comparison of one family's algorithms through the single-run contract (dpcore.family.Family.compare),
on the shared scenario. Written once for every family: the family is a choice of dpcore.family.families(), its data
widgets come from its data type's fields (dpcore.family.data_form), the algorithms from its table, the columns from
its metric table, the privacy from every view's computed guarantee, the downloads from dpcore.reports."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.family import data_form, families
from dpcore.limits import MAX_RUNS, MAX_SEED
from dpcore.reports import comparison_report
from dpcore.scenario.settings_link import Setting
from dpcore.validation import InputError
from pages.shared.family_form import data_widgets
from pages.shared.guarantees import show_guarantee_table
from pages.shared.navigation import start_page
from pages.shared.reports import report_downloads
from pages.shared.widgets import (
    bar_progress,
    remember_widgets,
    restore_widgets,
    scenario_sidebar,
    show_error,
    widget_options,
    widget_range,
)

scenario = start_page()

FAMILIES = families()
RESULT_KEY = "fam_result"
FAM = {
    "fam_family": Setting(default=next(iter(FAMILIES)), label="Family", choices=tuple(FAMILIES)),
    "fam_runs": Setting(default=3, label="Runs", low=1, high=MAX_RUNS),
    "fam_seed": Setting(default=0, label="Seed", low=0, high=MAX_SEED),
    **{key: setting for name, family in FAMILIES.items()
       for key, setting in data_form(family, f"fam_{name}_").items()},
    **{f"fam_{name}_algorithms": Setting(default=list(family.sweep_algorithms), label="Algorithms",
                                         choices=tuple(family.algorithms)) for name, family in FAMILIES.items()},
}
defaults = {key: setting.default for key, setting in FAM.items()}
restore_widgets(FAM)

scenario_sidebar(scenario)
st.title("Any family")
st.markdown("Every algorithm family of dpcore through the same contract: choose a family and its data, run its "
            "algorithms on the shared scenario's sites, and compare every metric of the family with the guarantee of "
            "every view.")
name = st.selectbox("Family", widget_options(FAM, "fam_family"), key="fam_family",
                    format_func=lambda n: FAMILIES[n].label)
family = FAMILIES[name]
st.caption(family.description)
try:
    data = data_widgets(family, f"fam_{name}_", FAM, columns=3)
except InputError as exc:
    show_error(exc)
    data = None
algorithms = st.multiselect("Algorithms", widget_options(FAM, f"fam_{name}_algorithms"),
                            key=f"fam_{name}_algorithms", format_func=lambda a: family.algorithms[a].title)
left, right = st.columns(2)
runs = left.number_input("Runs", **widget_range(FAM, "fam_runs"), step=1, key="fam_runs")
seed = right.number_input("Seed", **widget_range(FAM, "fam_seed"), step=1, key="fam_seed")
remember_widgets(defaults)

if st.button("Run", type="primary", key="fam_run"):
    st.session_state.pop(RESULT_KEY, None)
    bar = st.progress(0.0, text="starting")
    try:
        if data is None:
            raise InputError("correct the data settings above first", "data")
        result = family.compare(scenario, data, tuple(algorithms), runs=int(runs), seed=int(seed),
                                progress=bar_progress(bar))
    except InputError as exc:
        show_error(exc)
    else:
        st.session_state[RESULT_KEY] = (name, data, result)
    finally:
        bar.empty()

stored = st.session_state.get(RESULT_KEY)
if stored is not None and stored[0] == name:
    _, data, result = stored
    st.subheader("Results")
    rows = []
    for algorithm in result.algorithms:
        row = {"algorithm": family.algorithms[algorithm].title}
        for metric, entry in family.metrics.items():
            s = result.summary(algorithm, metric)
            row[entry.label] = "failed" if s.mean is None else f"{s.mean:.4g} ± {(s.std or 0.0):.2g}"
        rows.append(row)
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    show_guarantee_table(result.guarantees, {a: e.title for a, e in family.algorithms.items()})
    for note in result.notes:
        st.caption(note)
    report_downloads(lambda: comparison_report(result, data), f"{name}-comparison", "fam_report")
