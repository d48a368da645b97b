"""capePCA as a family of the contract (:class:`dpcore.family.Family`): its tables and what a sweep needs."""

from __future__ import annotations

from ..family import Family
from .command_run import RUN_COMMAND as COMMAND
from .contract import compare
from .flags import FLAG_GROUP, FLAGS
from .metrics import METRICS
from .planning import PLANNER, SOURCES
from .sweep import SWEEP
from .table import ALGORITHMS, paper_algorithms

__all__ = ["FAMILY"]

FAMILY = Family(
    name="pca", label="capePCA (PCA)", description="capePCA and the PCA baselines (docs/math/capepca.md)",
    cape="capePCA", algorithms=ALGORITHMS, metrics=METRICS, reference="nonpriv", no_information=None,
    sweep_algorithms=paper_algorithms(), sweep_sites=10, sweep=SWEEP, planner=PLANNER,
    compare=compare, position=10, sources=SOURCES,
    flags=FLAGS, flag_group=FLAG_GROUP, command=COMMAND,
)
