"""The scenario: sites, budgets, weights, neighbouring relation, calibration, tau_c and seed; validated once here
(docs/math/setting.md), then trusted by every layer above. JSON, file, table and link I/O; named presets.

Imports the bottom layer and :mod:`dpcore.privacy`."""

from .diff import scenario_edits
from .io import (
    QUERY_KEY,
    QUERY_VERSION,
    SITE_COLUMNS,
    cell_errors,
    load_scenario,
    rows_to_dict,
    scenario_from_bytes,
    scenario_from_json,
    scenario_from_query,
    scenario_from_rows,
    scenario_to_query,
    scenario_to_rows,
    settings_of,
)
from .model import FieldError, Scenario, ScenarioError, Site, scenario_errors, scenario_from_dict, site_errors
from .presets import PRESETS, default_scenario, equal_sites_scenario, preset_scenario
from .words import sites_words

__all__ = [
    "PRESETS",
    "QUERY_KEY",
    "QUERY_VERSION",
    "SITE_COLUMNS",
    "FieldError",
    "Scenario",
    "ScenarioError",
    "Site",
    "cell_errors",
    "default_scenario",
    "equal_sites_scenario",
    "load_scenario",
    "preset_scenario",
    "rows_to_dict",
    "scenario_edits",
    "scenario_errors",
    "scenario_from_bytes",
    "scenario_from_dict",
    "scenario_from_json",
    "scenario_from_query",
    "scenario_from_rows",
    "scenario_to_query",
    "scenario_to_rows",
    "settings_of",
    "site_errors",
    "sites_words",
]
