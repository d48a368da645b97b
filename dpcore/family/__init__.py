"""The family contract (docs/architecture.md, "The family contract"): what the three algorithm families - capePCA
(:mod:`dpcore.pca`), capeAGN (:mod:`dpcore.agn`) and capeLDA (:mod:`dpcore.lda`) - share.

* :mod:`.entry` - :class:`Algorithm`, the one table-entry type of every family, :class:`RunContext`, the one argument
  of every runner, :class:`GuaranteeContext`, the one argument of every guarantee rule, and :class:`Sizes`, what a
  communication cost depends on;
* :mod:`.metrics` - :class:`Metric`, the one metric-entry type;
* :mod:`.compare` - the one comparison loop: runs in worker processes, progress after every step, Stop;
* :mod:`.sweep` - :class:`FamilySweep`, what a sweep needs from a family (its data settings, the plan and the run of
  its grid points), and the grid points' designs and table rows;
* :mod:`.planner` - :class:`FamilyPlanner`, what the planner needs from a family (its metric, the closed-form
  aggregate noise, one run at a given noise, the check);
* :mod:`.descriptor` - :class:`Family`, everything the layers above need to know about a family;
* :mod:`.run` - the single-run contract: the one comparison signature (``Family.compare``), its result
  :class:`Comparison`, the per-run :class:`RunRecord` and the guarantee records;
* :mod:`.flags` - :class:`Flag`, a command-line flag of a family's data settings, as data, and
  :class:`FamilyCommand`, the argument table and hooks of its own run command;
* :mod:`.command` - :class:`CommandJob` and :class:`CommandView`, what the one run body of the families' commands
  asks of a family (its data forms, its story lines and table cells);
* :mod:`.sources` - :class:`DataSource`, where a family's data come from (``Family.sources``);
* :mod:`.catalog` - :func:`families`, the list of families (every subpackage with a ``family.py``);
* :mod:`.fit` - :class:`Fit`, what the front door's one-call functions (``dpcore.capepca``, ...) return;
* :mod:`.rings` - the bits per value of a comparison's algorithms (integer releases on a ring, or float64), as the
  pages, the command line and the reports show them.

The tables themselves are collected by :mod:`dpcore.registry`. Imports the bottom layer, scenario and cape (the
designs of a sweep's grid points).
"""

from .catalog import families
from .command import CommandJob, CommandView
from .compare import Progress, ShouldStop, check_runs, each_algorithm, progress_tick, run_comparison, stop_note
from .descriptor import Family
from .entry import GUARANTEES, Algorithm, GuaranteeContext, GuaranteeRule, PlannerScheme, RunContext, Runner, Sizes
from .fit import Fit, front_scenario
from .flags import FamilyCommand, Flag
from .form import FormField, FormRule, data_form, page_form
from .metrics import Metric, metric_table
from .planner_hooks import DataLoader, FamilyPlanner, PlannerData, nested_subsample
from .rings import FLOAT_VALUES, bits_label, ring_sentence, widest_ring
from .run import STATUSES, Compare, Comparison, RunRecord, guarantee_records
from .sources import DataSource
from .sweep import FamilyPlan, FamilySweep, GridPoint, grid_design, result_rows, sweep_points

__all__ = [
    "FLOAT_VALUES",
    "GUARANTEES",
    "STATUSES",
    "Algorithm",
    "CommandJob",
    "CommandView",
    "Compare",
    "Comparison",
    "DataLoader",
    "DataSource",
    "Family",
    "FamilyCommand",
    "Fit",
    "Flag",
    "FormField",
    "FormRule",
    "FamilyPlan",
    "FamilyPlanner",
    "FamilySweep",
    "GridPoint",
    "GuaranteeContext",
    "GuaranteeRule",
    "Metric",
    "PlannerData",
    "PlannerScheme",
    "Progress",
    "RunContext",
    "RunRecord",
    "Runner",
    "ShouldStop",
    "Sizes",
    "bits_label",
    "check_runs",
    "data_form",
    "each_algorithm",
    "families",
    "front_scenario",
    "grid_design",
    "guarantee_records",
    "metric_table",
    "nested_subsample",
    "page_form",
    "progress_tick",
    "result_rows",
    "ring_sentence",
    "run_comparison",
    "stop_note",
    "sweep_points",
    "widest_ring",
]
