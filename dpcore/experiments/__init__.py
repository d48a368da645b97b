"""Privacy-utility sweeps (docs/experiments.md): vary one parameter over a grid, run the algorithms R times at every
value with common random numbers, summarise with 95% intervals, draw the curves; the journal paper's Figs. 2-5 as
presets.

Modules, bottom to top: :mod:`~dpcore.experiments.families` (the algorithm tables as a sweep sees them),
:mod:`~dpcore.experiments.spec` (what a sweep is), :mod:`~dpcore.experiments.designs` (designs and gains per grid
point), :mod:`~dpcore.experiments.cache`, :mod:`~dpcore.experiments.prepare` (data and problems per grid point),
:mod:`~dpcore.experiments.results` (table, summary), :mod:`~dpcore.experiments.engine` (the runs),
:mod:`~dpcore.experiments.presets`, :mod:`~dpcore.experiments.figures` (plotly).

Imports every package below it (privacy, data, scenario, cape, pca, otd, lda).
"""

from .cache import cache_info, clear_cache
from .designs import GAIN_COLUMNS, check_designs, sweep_gains
from .engine import run_sweep, sweep_runs
from .families import FAMILIES, METRICS, PLANNED, algorithm_titles, default_algorithms, family, headline_metric, metric
from .presets import (
    LDA_CALIBRATION,
    PRESET_CALIBRATION,
    QUICK,
    SweepPreset,
    get_preset,
    preset_names,
    presets,
    quick_spec,
)
from .results import SUMMARY_COLUMNS, TABLE_COLUMNS, SweepResult, cached_result, summarise_table, sweep_result
from .spec import (
    DEFAULT_GRIDS,
    LOG_PARAMETERS,
    PARAMETER_LABELS,
    PARAMETERS,
    PCA_DATASETS,
    SOLVER_DTYPES,
    LdaData,
    OtdData,
    PcaData,
    SweepSpec,
    default_grid,
    parse_grid,
    scenario_at,
    spec_from_dict,
    spec_from_json,
)

__all__ = [
    "DEFAULT_GRIDS",
    "FAMILIES",
    "PLANNED",
    "GAIN_COLUMNS",
    "LDA_CALIBRATION",
    "LOG_PARAMETERS",
    "METRICS",
    "PARAMETERS",
    "PARAMETER_LABELS",
    "PCA_DATASETS",
    "PRESET_CALIBRATION",
    "QUICK",
    "SOLVER_DTYPES",
    "SUMMARY_COLUMNS",
    "TABLE_COLUMNS",
    "LdaData",
    "OtdData",
    "PcaData",
    "SweepPreset",
    "SweepResult",
    "SweepSpec",
    "algorithm_titles",
    "cache_info",
    "cached_result",
    "check_designs",
    "clear_cache",
    "default_algorithms",
    "default_grid",
    "family",
    "get_preset",
    "headline_metric",
    "metric",
    "parse_grid",
    "preset_names",
    "presets",
    "quick_spec",
    "run_sweep",
    "scenario_at",
    "spec_from_dict",
    "spec_from_json",
    "summarise_table",
    "sweep_gains",
    "sweep_result",
    "sweep_runs",
]
