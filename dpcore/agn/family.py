"""capeAGN as a family of the contract (:class:`dpcore.family.Family`): its tables and what a sweep needs."""

from __future__ import annotations

from ..family import Family
from .command_run import RUN_COMMAND as COMMAND
from .contract import compare
from .evaluation import METRICS
from .flags import FLAG_GROUP, FLAGS
from .planning import PLANNER, SOURCES
from .sweep import SWEEP
from .table import ALGORITHMS, paper_algorithms

__all__ = ["FAMILY"]

FAMILY = Family(
    name="otd", label="capeAGN (tensors)",
    description="capeAGN and the tensor-decomposition baselines (docs/math/capeagn.md)",
    cape="capeAGN", algorithms=ALGORITHMS, metrics=METRICS, reference="nonpriv", no_information="random",
    sweep_algorithms=paper_algorithms(), sweep_sites=5, sweep=SWEEP, planner=PLANNER,
    compare=compare, position=20, sources=SOURCES,
    flags=FLAGS, flag_group=FLAG_GROUP, command=COMMAND,
)
