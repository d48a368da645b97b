"""capePCA as a family of the contract (:class:`dpcore.family.Family`): its tables and what a sweep needs."""

from __future__ import annotations

from ..family import Family, FormField
from .command_run import RUN_COMMAND as COMMAND
from .contract import compare
from .flags import FLAG_GROUP, FLAGS
from .metrics import METRICS
from .planning import PLANNER, SOURCES
from .sweep import PCA_DATASETS, SWEEP
from .table import ALGORITHMS, paper_algorithms

__all__ = ["FAMILY", "FORM"]

FORM = (
    FormField(field="dataset", key="dataset", label="Data", default="digits",
              choices={**PCA_DATASETS, "upload": "your own CSV (one sample per row; features standardised, as on "
                       "capePCA)"},
              help="Bundled data are in data/; synthetic draws as many samples as the sites need; an upload is read as "
              "on the capePCA page."),
    FormField(field="k", key="k", label="K (subspace dimension)", default=10, low=1, high=784,
              help="Number of principal components; at most D."),
    FormField(field="dim", key="dim", label="D (synthetic features)", default=50, low=2, high=1000,
              enabled_if=("dataset", ("synthetic",)), help="Dimension of the synthetic data."),
)
"""capePCA's data form of a sweep on a page (the Privacy-utility page's; link keys pu_dataset, pu_k, pu_dim)."""

FAMILY = Family(
    name="pca", label="capePCA (PCA)", description="capePCA and the PCA baselines (docs/math/capepca.md)",
    cape="capePCA", algorithms=ALGORITHMS, metrics=METRICS, reference="nonpriv", no_information=None,
    sweep_algorithms=paper_algorithms(), sweep_sites=10, sweep=SWEEP, planner=PLANNER,
    compare=compare, position=10, sources=SOURCES,
    flags=FLAGS, flag_group=FLAG_GROUP, command=COMMAND, form=FORM,
)
