"""capeAGN as a family of the contract (:class:`dpcore.family.Family`): its tables and what a sweep needs."""

from __future__ import annotations

from typing import Any

from ..family import Family, FormField
from .command_run import RUN_COMMAND as COMMAND
from .contract import compare
from .evaluation import METRICS
from .flags import FLAG_GROUP, FLAGS
from .planning import PLANNER, SOURCES
from .sweep import SWEEP
from .table import ALGORITHMS, paper_algorithms

__all__ = ["FAMILY", "FORM", "form_rule"]

FORM = (
    FormField(field="model", key="model", label="Model", default="mog",
              choices={"mog": "mixture of Gaussians", "stm": "single topic model"},
              help="Synthetic ground truth; q_comp is measured against it."),
    FormField(field="dim", key="d", label="D", default=10, low=2, high=200,
              help="Features (MOG) or vocabulary size (STM)."),
    FormField(field="k", key="otd_k", label="K (components)", default=5, low=1, high=50, help="Components, K ≤ D."),
)
"""capeAGN's data form of a sweep on a page (the Privacy-utility page's; link keys pu_model, pu_d, pu_otd_k)."""


def form_rule(values: dict[str, Any], chosen: tuple[str, ...]) -> dict[str, Any]:
    """The third-moment path of a sweep: dense where it fits ("auto") when a chosen algorithm has no projected
    sampler (``dense_only``), else projected."""
    dense = any(ALGORITHMS[name].dense_only for name in chosen if name in ALGORITHMS)
    return {"path": "auto" if dense else "projected"}

FAMILY = Family(
    name="otd", label="capeAGN (tensors)",
    description="capeAGN and the tensor-decomposition baselines (docs/math/capeagn.md)",
    cape="capeAGN", algorithms=ALGORITHMS, metrics=METRICS, reference="nonpriv", no_information="random",
    sweep_algorithms=paper_algorithms(), sweep_sites=5, sweep=SWEEP, planner=PLANNER,
    compare=compare, position=20, sources=SOURCES,
    flags=FLAGS, flag_group=FLAG_GROUP, command=COMMAND, form=FORM, form_rule=form_rule,
)
