"""The family contract (docs/architecture.md, "The family contract"): what the three algorithm families - capePCA
(:mod:`dpcore.pca`), capeAGN (:mod:`dpcore.otd`) and capeLDA (:mod:`dpcore.lda`) - share.

* :mod:`.entry` - :class:`Algorithm`, the one table-entry type of every family, :class:`RunContext`, the one argument
  of every runner, and :class:`Sizes`, what a communication cost depends on;
* :mod:`.metrics` - :class:`Metric`, the one metric-entry type;
* :mod:`.compare` - the one comparison loop: runs in worker processes, progress after every step, Stop;
* :mod:`.descriptor` - :class:`Family`, everything the layers above need to know about a family.

The tables themselves are collected by :mod:`dpcore.registry`. Imports the bottom layer and scenario.
"""

from .compare import Progress, ShouldStop, check_runs, each_algorithm, run_comparison, stop_note
from .descriptor import Family
from .entry import GUARANTEES, Algorithm, RunContext, Runner, Sizes
from .metrics import Metric, metric_table

__all__ = [
    "GUARANTEES",
    "Algorithm",
    "Family",
    "Metric",
    "Progress",
    "RunContext",
    "Runner",
    "ShouldStop",
    "Sizes",
    "check_runs",
    "each_algorithm",
    "metric_table",
    "run_comparison",
    "stop_note",
]
