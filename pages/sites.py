"""Sites and budgets: edit the shared scenario (table, presets, settings), load, save and share it.

State (session_state ``sites_form``): the table as the user typed it (``rows``, invalid cells included), the
settings, the base table the editor was created from, a generation counter ``gen`` that is part of every
widget key (a new generation resets the widgets, e.g. after loading a preset) and ``source``, the JSON of the
scenario the form last produced or was built from. Only a valid table changes the shared scenario; an
invalid one keeps the last valid scenario for every other page and every value the user typed.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dpcore.cape import WEIGHT_OBJECTIVES, dp_floor, suggest_weights
from dpcore.limits import MAX_SEED, MAX_SITE_SIZE, MAX_SITES
from dpcore.notation import symbolic
from dpcore.privacy import CALIBRATIONS, NEIGHBOURING
from dpcore.scenario import (
    PRESETS,
    SITE_COLUMNS,
    Scenario,
    ScenarioError,
    cell_errors,
    preset_scenario,
    scenario_from_bytes,
    scenario_from_rows,
    scenario_to_rows,
    settings_of,
)
from pages.shared.navigation import start_page
from pages.shared.state import SITES_PROBLEMS_KEY, scenario_link, set_scenario
from pages.shared.widgets import change_panel, headline, link_loaded_notice, scenario_sidebar, show_link_error

scenario = start_page()

FORM_KEY = "sites_form"
NOTICE_KEY = "sites_notice"

NEIGHBOURING_HELP = {
    "replace-one": "neighbouring data sets differ by replacing one sample (the safe default; Frobenius-norm "
    "sensitivities, e.g. √2/N_s for PCA)",
    "as-published": "the papers' constants (e.g. 1/N_s for PCA); kept to reproduce the papers, not a guarantee "
    "for matrix releases",
}
CALIBRATION_HELP = {
    "classic": "σ = Δ √(2 ln(1.25/δ)) / ε; a guarantee only for ε < 1",
    "analytic": "Balle & Wang (2018): the smallest σ that meets (ε, δ) exactly, valid for every ε > 0",
}
COLUMN_CONFIG = {
    "name": st.column_config.TextColumn(
        "site", help="A unique name for the data holder (a hospital, a lab).", max_chars=40),
    # N_s is edited as text: a number cell drops what it cannot hold (1e19 came back as the old value, "1e19" as
    # 119) without a word, while text reaches the validator, which says what is allowed.
    "n": st.column_config.TextColumn(
        "N_s", help=f"Number of samples the site holds (an integer from 1 to {MAX_SITE_SIZE:,}). Sensitivities "
        "scale as 1/N_s.", max_chars=40),
    # ε_s, δ_s and μ_s are edited as text too: the number cell read "1e-5", the format its own δ column shows, as
    # -15; text reaches dpcore's parser (dpcore.validation.parse_number_text), which stores 1e-5, 1E-05, 0.00001,
    # 1,000 and 1 000 as typed and says what is wrong with anything else.
    "eps": st.column_config.TextColumn(
        "ε_s", help="The site's privacy parameter ε (> 0). Smaller means more private and more noise.",
        max_chars=40),
    "delta": st.column_config.TextColumn(
        "δ_s", help="The site's privacy parameter δ, in (0, 1); keep it well below 1/N_s. Type 1e-5, 1E-05 or "
        "0.00001.", max_chars=40),
    "weight": st.column_config.TextColumn(
        "weight μ_s", help="Aggregation weight (≥ 0, all weights sum to 1). Leave the whole column blank for "
        "μ_s = N_s / N, the pooled statistic.", max_chars=40),
}
BULK_FIELDS = {"eps": "ε_s (privacy)", "delta": "δ_s (failure probability)", "n": "N_s (samples)"}


# ------------------------------------------------------------------------------------------------
# Form state
# ------------------------------------------------------------------------------------------------

def _new_form(scenario: Scenario, gen: int) -> dict[str, Any]:
    rows = scenario_to_rows(scenario)
    return {"gen": gen, "rows": rows, "base": rows, "settings": settings_of(scenario),
            "source": scenario.to_json(), "errors": []}


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(SITE_COLUMNS))
    frame["name"] = frame["name"].astype(object)
    frame["n"] = frame["n"].map(_size_text).astype(object)
    for column in ("eps", "delta", "weight"):
        frame[column] = frame[column].map(_number_text).astype(object)
    return frame


def _number_text(value: Any) -> str | None:
    """A number as the ε, δ and weight columns show it (shortest form, 1e-05 for small δ), text as typed, blanks as
    None."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{float(value):.10g}"
    return str(value)


def _size_text(value: Any) -> str | None:
    """A site size as the text the N_s column shows: whole numbers without a decimal point, anything else as
    typed, blanks as None."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _reset_form(rows: list[dict[str, Any]], settings: dict[str, Any] | None = None) -> None:
    """Recreate the editor from ``rows`` (a new generation of widget keys)."""
    form = st.session_state[FORM_KEY]
    form.update(gen=form["gen"] + 1, rows=rows, base=rows)
    if settings is not None:
        form["settings"] = settings


def _load(scenario: Scenario, notice: str) -> None:
    set_scenario(scenario)
    st.session_state[NOTICE_KEY] = notice


def _on_preset(key: str) -> None:
    name = st.session_state[key]
    _load(preset_scenario(name), symbolic(f"Loaded the preset '{name}': {PRESETS[name]}."))


def _on_bulk(field_key: str, value_key: str) -> None:
    field, value = st.session_state[field_key], st.session_state[value_key]
    if value is None:
        st.session_state[NOTICE_KEY] = "Type a value first."
        return
    form = st.session_state[FORM_KEY]
    value = int(value) if field == "n" and float(value).is_integer() else value
    _reset_form([dict(row, **{field: value}) for row in form["rows"]])
    st.session_state[NOTICE_KEY] = f"Set {BULK_FIELDS[field]} = {value:g} on every site."


def _on_weights(scenario: Scenario, objective_key: str | None) -> None:
    if objective_key is None:
        rows = [dict(r, weight=None) for r in scenario_to_rows(scenario)]
        note = "Weights cleared: μ_s = N_s / N."
    else:
        objective = st.session_state[objective_key]
        w = suggest_weights(scenario.taus("mean"), scenario.sizes, objective).weights
        rows = [dict(r, weight=float(x)) for r, x in zip(scenario_to_rows(scenario), w, strict=True)]
        note = symbolic(f"Weights set by '{objective}': {WEIGHT_OBJECTIVES[objective]}.")
    _reset_form(rows, settings_of(scenario))
    st.session_state[NOTICE_KEY] = note


# ------------------------------------------------------------------------------------------------
# Page
# ------------------------------------------------------------------------------------------------

show_link_error()
link_loaded_notice()

form = st.session_state.get(FORM_KEY)
if form is None or form["source"] != scenario.to_json():
    form = _new_form(scenario, 1 if form is None else form["gen"] + 1)
    st.session_state[FORM_KEY] = form
gen = form["gen"]
editor_key = f"sites_editor_{gen}"
if editor_key not in st.session_state:
    # a fresh editor (first visit, new generation, or back from another page): start from the draft
    form["base"] = form["rows"]

st.title("Sites and budgets")
st.markdown(
    "Each row is a data holder: its number of samples **N_s**, its privacy budget **(ε_s, δ_s)** and, "
    "optionally, its aggregation weight **μ_s**. Every other page uses this scenario. Edit a cell, add a row "
    "at the bottom of the table or select rows to delete them; a problem is shown beside the table and the "
    "other pages keep the last valid scenario until it is fixed."
)
summary_slot = st.container()  # the headline, filled once this run's edit is known (same height before and after)
notice = st.session_state.pop(NOTICE_KEY, None)
if notice:
    st.info(notice, icon=":material/info:")

left, right = st.columns([3, 2], gap="medium")
with left:
    edited = st.data_editor(
        _frame(form["base"]), key=editor_key, num_rows="dynamic", hide_index=True, width="stretch",
        column_config=COLUMN_CONFIG, placeholder="",
    )

# The before-and-after panel goes under the table, not above it: above, its first appearance pushed the table
# down about 350 px under the user's pointer, right after the first edit.
panel_slot = st.container()
settings_box = st.container()
with settings_box:
    st.subheader("Settings")
    c1, c2, c3 = st.columns(3, gap="medium")
    settings = dict(form["settings"])
    with c1:
        settings["neighbouring"] = st.radio(
            "Neighbouring relation", NEIGHBOURING, index=NEIGHBOURING.index(settings["neighbouring"]),
            key=f"sites_neighbouring_{gen}", format_func=lambda x: x,
            help="Which data sets count as neighbours. "
            + " · ".join(f"{k}: {v}" for k, v in NEIGHBOURING_HELP.items()),
        )
        settings["calibration"] = st.radio(
            "Gaussian calibration", CALIBRATIONS, index=CALIBRATIONS.index(settings["calibration"]),
            key=f"sites_calibration_{gen}",
            help="How σ follows from (ε, δ). " + " · ".join(f"{k}: {v}" for k, v in CALIBRATION_HELP.items()),
        )
    with c2:
        at_floor = st.toggle(
            "τ_c at the DP floor", value=settings["tau_c"] is None, key=f"sites_floor_{gen}",
            help="τ_c is the noise std left in the released aggregate. The DP floor max_s μ_s τ_s is the "
            "smallest value that keeps every site's budget against an outside observer; switch off to set "
            "your own value (below the floor is allowed but flagged).",
        )
        if at_floor:
            settings["tau_c"] = None
        else:
            try:
                floor_default = dp_floor(scenario.weights(), scenario.taus("mean"))
            except ValueError:
                floor_default = 0.01
            settings["tau_c"] = st.number_input(
                "τ_c (std of the aggregate's noise)", min_value=0.0, format="%.4e",
                value=float(settings["tau_c"] if settings["tau_c"] is not None else floor_default),
                key=f"sites_tau_c_{gen}",
                help="An absolute standard deviation, in the units of the released statistic (the same number "
                "is used for every statistic). Must be > 0.",
            )
    with c3:
        settings["seed"] = st.number_input(
            "Seed", min_value=0, max_value=MAX_SEED, step=1, value=int(settings["seed"]),
            key=f"sites_seed_{gen}",
            help="Seed of every random draw the other pages make for this scenario (simulations, samples); "
            "the same seed reproduces a run. numpy's generator is for simulation, not for a deployment.",
        )

rows = edited.to_dict("records")
errors, candidate = scenario_from_rows(rows, **settings)
form["rows"] = rows
form["settings"] = settings
form["errors"] = [str(e) for e in errors]
st.session_state[SITES_PROBLEMS_KEY] = len(errors)
if candidate is not None and candidate != scenario:
    set_scenario(candidate)
    form["source"] = candidate.to_json()
    scenario = candidate

with right:
    if errors:
        st.error(
            f"**{len(errors)} problem(s)** - the other pages keep the last valid scenario "
            f"({scenario.n_sites} sites) until they are fixed:\n\n"
            + "\n".join(f"- {symbolic(str(e))}" for e in errors),
            icon=":material/error:",
        )
    else:
        st.success(
            f"Valid: {scenario.n_sites} sites, N = {scenario.total_n:,} samples, weights "
            + ("as given." if scenario.weights_given else "N_s / N."),
            icon=":material/check_circle:",
        )
    for caveat in scenario.caveats():
        st.warning(symbolic(caveat), icon=":material/warning:")
    st.caption(f"Up to {MAX_SITES} sites. Names must be unique. Give every weight or none.")

if errors:
    with left:
        cells = cell_errors(errors, len(rows))
        labels = {c: COLUMN_CONFIG[c]["label"] for c in SITE_COLUMNS}  # the editor's headers: site, N_s, ε_s, ...
        fields = {label: c for c, label in labels.items()}
        marked = pd.DataFrame(rows, columns=list(SITE_COLUMNS)).astype(object).rename(columns=labels)

        def _mark(frame: pd.DataFrame) -> pd.DataFrame:
            return pd.DataFrame(
                [["background-color: rgba(255, 75, 75, 0.35)" if (i, fields[c]) in cells else ""
                  for c in frame.columns] for i in range(len(frame))], index=frame.index, columns=frame.columns)

        def _text(value: Any) -> str:
            if value is None or value is pd.NA or (isinstance(value, float) and value != value):
                return ""
            return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)

        st.caption("Cells with a problem, marked in red (messages beside the table):")
        st.dataframe(marked.style.apply(_mark, axis=None).format(_text), hide_index=True, width="stretch")

# --- derived quantities ---------------------------------------------------------------------------
with left:
    with st.expander("What these budgets mean (for a mean of values in [0, 1])", expanded=False):
        tau = scenario.taus("mean")
        mu = scenario.weights()
        floor = dp_floor(mu, tau)
        st.latex(r"\tau_s=\Delta_s\,c(\varepsilon_s,\delta_s),\qquad \text{DP floor}=\max_s \mu_s\tau_s")
        st.dataframe(
            pd.DataFrame({"site": scenario.names, "Δ_s": scenario.sensitivities("mean"), "τ_s": tau,
                          "μ_s": mu, "μ_s τ_s": mu * tau, "sets the floor": (mu * tau) >= floor * (1 - 1e-12)}),
            hide_index=True, width="stretch",
            column_config={"Δ_s": st.column_config.NumberColumn(format="%.3e"),
                           "τ_s": st.column_config.NumberColumn(format="%.3e"),
                           "μ_s": st.column_config.NumberColumn(format="%.3f"),
                           "μ_s τ_s": st.column_config.NumberColumn(format="%.3e")},
        )

# --- quick edits ----------------------------------------------------------------------------------
st.subheader("Quick edits")
q1, q2 = st.columns(2, gap="medium")
with q1:
    with st.container(border=True):
        st.markdown("**Set one value on every site**")
        field_key, value_key = f"sites_bulk_field_{gen}", f"sites_bulk_value_{gen}"
        st.selectbox("Field", list(BULK_FIELDS), format_func=BULK_FIELDS.get, key=field_key,
                     help="Which column to overwrite on every row of the table.")
        st.number_input("Value", value=None, format="%g", key=value_key, placeholder="e.g. 1.0",
                        help="The value to write into that column for every site; checked like any cell.")
        st.button("Apply to every site", key=f"sites_bulk_apply_{gen}", on_click=_on_bulk,
                  args=(field_key, value_key), help="Overwrite the column; the other columns stay as typed.")
with q2:
    with st.container(border=True):
        st.markdown("**Weights**")
        objective_key = f"sites_weight_objective_{gen}"
        st.selectbox("Suggest weights by", list(WEIGHT_OBJECTIVES), key=objective_key,
                     help=symbolic(" · ".join(f"{k}: {v}" for k, v in WEIGHT_OBJECTIVES.items())))
        b1, b2 = st.columns(2)
        b1.button("Apply suggested weights", key=f"sites_weights_apply_{gen}", on_click=_on_weights,
                  args=(scenario, objective_key),
                  help="Compute the weights for the last valid scenario and write them into the table.")
        b2.button("Use N_s / N", key=f"sites_weights_clear_{gen}", on_click=_on_weights, args=(scenario, None),
                  help="Clear the weight column: the aggregate is then the pooled-data statistic.")

# --- load, save, share ----------------------------------------------------------------------------
st.subheader("Load, save and share")
l1, l2, l3 = st.columns(3, gap="medium")
with l1:
    preset_key = f"sites_preset_{gen}"
    st.selectbox("Preset", list(PRESETS), key=preset_key, format_func=lambda p: symbolic(f"{p}: {PRESETS[p]}"),
                 help=symbolic("Starting points: " + " · ".join(f"{k}: {v}" for k, v in PRESETS.items())))
    st.button("Load preset", key=f"sites_preset_load_{gen}", on_click=_on_preset, args=(preset_key,),
              help="Replace the table and settings with the preset.")
with l2:
    uploaded = st.file_uploader(
        "Load a scenario JSON", type=["json"], key=f"sites_upload_{gen}",
        help="A file saved with 'Save scenario JSON' (format in docs/cli.md, 'The scenario file'): `sites` with "
        "`name`, `n`, `eps`, `delta` and optional `weight`; `neighbouring`, `calibration`, `tau_c`, `seed`.",
    )
    if uploaded is not None:
        try:
            loaded = scenario_from_bytes(uploaded.getvalue())
        except ScenarioError as exc:
            st.error(f"{uploaded.name} was not loaded:\n\n" + "\n".join(f"- {symbolic(str(e))}" for e in exc.errors),
                     icon=":material/error:")
        else:
            _load(loaded, f"Loaded {uploaded.name}: {loaded.n_sites} sites.")
            st.rerun()
with l3:
    st.download_button(
        "Save scenario JSON", data=scenario.to_json(), file_name="scenario.json", mime="application/json",
        icon=":material/download:", key=f"sites_download_{gen}", on_click="ignore",
        help="Download the last valid scenario as JSON (what the table shows when it has no problems).",
    )
    st.caption("Also usable on the command line: `python -m dpcore design scenario.json`.")

link = scenario_link(scenario)
# A plain link, not st.code: syntax-highlighting the long link cost the browser about 0.4 s on every visit.
st.markdown(f"**Shareable link**: [open the dashboard with this scenario]({link}) (right-click to copy it; the "
            "address bar holds the same link).")

with summary_slot:
    headline(scenario)
with panel_slot:
    change_panel()

scenario_sidebar(scenario, notices=False)  # last, so that it counts this run's problems
