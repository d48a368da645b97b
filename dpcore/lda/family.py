"""capeLDA as a family of the contract (:class:`dpcore.family.Family`): its tables and what a sweep needs."""

from __future__ import annotations

from ..family import Family, FormField
from ..limits import MAX_LDA_ALPHA0, MAX_LDA_TOPICS, MAX_LDA_VOCABULARY
from .command_run import RUN_COMMAND as COMMAND
from .contract import compare
from .flags import FLAG_GROUP, FLAGS
from .planning import PLANNER, SOURCES
from .recovery import METRICS
from .sweep import SWEEP
from .table import ALGORITHMS, default_algorithms

__all__ = ["FAMILY", "FORM"]

FORM = (
    FormField(field="dim", key="lda_d", label="D (vocabulary)", default=100, low=3, high=MAX_LDA_VOCABULARY,
              help="Vocabulary size."),
    FormField(field="k", key="lda_k", label="K (topics)", default=5, low=1, high=MAX_LDA_TOPICS,
              help="Topics, K ≤ D - 1."),
    FormField(field="alpha0", key="lda_alpha0", label="α₀", default=1.0, low=0.01, high=MAX_LDA_ALPHA0,
              help="Dirichlet concentration of the topic proportions."),
)
"""capeLDA's data form of a sweep on a page (the Privacy-utility page's; link keys pu_lda_d, pu_lda_k,
pu_lda_alpha0)."""

FAMILY = Family(
    name="lda", label="capeLDA (topic models)",
    description="capeLDA, paper 004's four LDA configurations and the topic-model baselines (docs/math/lda.md)",
    cape="capeLDA", algorithms=ALGORITHMS, metrics=METRICS, reference="nonpriv", no_information="random",
    sweep_algorithms=default_algorithms(), sweep_sites=5, sweep=SWEEP, planner=PLANNER,
    compare=compare, position=30, sources=SOURCES,
    flags=FLAGS, flag_group=FLAG_GROUP, command=COMMAND, form=FORM,
)
