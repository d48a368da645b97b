"""capeLDA as a family of the contract (:class:`dpcore.family.Family`): its tables and what a sweep needs."""

from __future__ import annotations

from ..family import Family
from .command_run import RUN_COMMAND as COMMAND
from .contract import compare
from .flags import FLAG_GROUP, FLAGS
from .planning import PLANNER, SOURCES
from .recovery import METRICS
from .sweep import SWEEP
from .table import ALGORITHMS, default_algorithms

__all__ = ["FAMILY"]

FAMILY = Family(
    name="lda", label="capeLDA (topic models)",
    description="capeLDA, paper 004's four LDA configurations and the topic-model baselines (docs/math/lda.md)",
    cape="capeLDA", algorithms=ALGORITHMS, metrics=METRICS, reference="nonpriv", no_information="random",
    sweep_algorithms=default_algorithms(), sweep_sites=5, sweep=SWEEP, planner=PLANNER,
    compare=compare, position=30, sources=SOURCES,
    flags=FLAGS, flag_group=FLAG_GROUP, command=COMMAND,
)
