"""Any family: the comparison of one family's algorithms through the single-run contract (dpcore.family.Family.compare),
on the shared scenario. Written once for every family: the family is a choice of dpcore.family.families(), its data
widgets come from its data type's fields (dpcore.family.data_form), the algorithms from its table, the columns from
its metric table, the privacy from every view's computed guarantee, the downloads from dpcore.reports - the
Run section is pages.shared.run_section's, the one every computing page uses."""

from __future__ import annotations

import streamlit as st

from dpcore.family import data_form, families
from dpcore.limits import MAX_RUNS, MAX_SEED
from dpcore.scenario.settings_link import Setting
from dpcore.validation import InputError
from pages.shared.family_form import data_widgets
from pages.shared.navigation import start_page
from pages.shared.run_section import family_run
from pages.shared.widgets import (
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

family_run(family, scenario, data, algorithms, runs=int(runs), seed=int(seed), key="fam_run", result_key=RESULT_KEY,
           report_key="fam_report")
