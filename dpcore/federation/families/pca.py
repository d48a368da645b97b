"""capePCA as a federated round (docs/federated.md): one stage, the second-moment matrix A = X X^T / N_s of every
site, designed by :func:`dpcore.cape.plan_scenario`; the aggregator publishes the top-K eigenvectors V_K of the
aggregate (:func:`dpcore.federation.outputs.pca_output`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ...cape.plan import plan_scenario
from ...cape.protocol import capepca_round
from ...limits import MAX_FEDERATED_MATRIX_DIM
from ..entry import FederatedAlgorithm, Published, StagePlanned
from ..outputs import pca_output

__all__ = ["ENTRIES"]


def _plan(scenario: Any, settings: Any, dim: int, collusion: int) -> list[StagePlanned]:
    plan = plan_scenario(scenario, "pca", solver=settings.solver, collusion=collusion, dim=dim)
    return [("A", plan.statistic, plan.design, plan.audit, plan.warnings,
             (plan.sensitivities, scenario.eps, scenario.delta))]


def _protocol(plan: Any) -> Any:
    return capepca_round(plan.stage("A").design, plan.dim, plan.settings.k, noise=plan.settings.noise)


def _between(stage: str, aggregate: np.ndarray, plan: Any) -> tuple[Any, np.ndarray | None]:
    raise ValueError(f"capePCA has one stage; nothing follows stage {stage}")


def _outputs(plan: Any, aggregates: Mapping[str, np.ndarray], carried: Any,
             rng: Callable[[], np.random.Generator]) -> dict[str, np.ndarray]:
    values, vectors = pca_output(aggregates["A"], plan.dim, plan.settings.k)
    return {"eigenvalues": values, "components": vectors}


def _published(plan: Any, outputs: Mapping[str, np.ndarray]) -> Published:
    v = outputs["components"]
    return Published(stage="A", step=5, content="V_K (top-K eigenvectors)", shape=tuple(v.shape), unique=v.size,
                     nbytes=v.nbytes, numbers=v.size)


def _synthetic(budget: Any, settings: Any, rng: np.random.Generator) -> np.ndarray:
    """N_s samples of D of norm at most 1."""
    n, dim = budget.site.n, budget.dim
    x = rng.standard_normal((dim, n))
    return x / np.maximum(np.linalg.norm(x, axis=0), 1.0) * rng.uniform(0.0, 1.0, n)


ENTRIES = (FederatedAlgorithm(
    name="capePCA", position=10, stages=("A",),
    output="the top K principal components (eigenvectors) of the sites' pooled second moment A, from one noisy "
           "release of A per site",
    key="pca", public_model=False, check=lambda settings: None,
    dim_limit=lambda settings: MAX_FEDERATED_MATRIX_DIM, dim_words=lambda settings: "",
    fixed_dim=lambda settings: False, plan_stages=_plan, protocol=_protocol, between=_between, outputs=_outputs,
    published=_published, data_form=lambda model: "samples", synthetic=_synthetic,
),)
