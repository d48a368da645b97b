"""capeAGN as a federated round (docs/federated.md): two stages, the second moment M2 (designed with the split
share of every site's budget) and then the third moment projected on the whitening W of the aggregated M2
(:func:`dpcore.cape.agn_stage_plans`); the aggregator publishes the components and weights of the single topic model
or the Gaussian mixture (:func:`dpcore.federation.outputs.tensor_output`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ...agn.models import make_model, sample_mog, sample_stm
from ...cape.protocol import capeagn_round
from ...cape.stages import agn_stage_plans
from ...limits import MAX_FEDERATED_MATRIX_DIM, MAX_FEDERATED_TENSOR_DIM, NORM_BOUND_RANGE
from ...validation import InputError, check_positive, check_range
from ..entry import FederatedAlgorithm, Published, StagePlanned
from ..outputs import tensor_output, whitening_output
from ..site import mog_site, stm_site

__all__ = ["ENTRIES"]

STAGES = ("M2", "M3")


def _check(settings: Any) -> None:
    if settings.model == "mog":
        if settings.sigma2 is None or settings.norm_bound is None:
            raise InputError("the MOG model needs the component variance sigma^2 and the public norm bound", "sigma2")
        check_positive(settings.sigma2, "sigma^2", allow_zero=True)
        check_range(settings.norm_bound, "norm bound", *NORM_BOUND_RANGE)


def _dim_limit(settings: Any) -> int:
    return MAX_FEDERATED_TENSOR_DIM if settings.path == "dense" else MAX_FEDERATED_MATRIX_DIM


def _plan(scenario: Any, settings: Any, dim: int, collusion: int) -> list[StagePlanned]:
    plans = agn_stage_plans(scenario, settings.model, settings.split, dim=dim, sigma2=settings.scaled_sigma2,
                            solver=settings.solver, collusion=collusion)
    return [(name, p.statistic, p.design, p.audit, p.warnings, (p.sensitivities, p.eps, p.delta))
            for name, p in zip(STAGES, plans, strict=True)]


def _protocol(plan: Any) -> Any:
    return capeagn_round(plan.stage("M2").design, plan.stage("M3").design, plan.dim, plan.settings.k,
                         projected=plan.settings.path == "projected", noise=plan.settings.noise)


def _between(stage: str, aggregate: np.ndarray, plan: Any) -> tuple[Any, np.ndarray | None]:
    """After M2: the whitening W = U D^(-1/2) of the aggregate (raises WhiteningError, an InputError)."""
    whitening = whitening_output(aggregate, plan.dim, plan.settings.k)
    return whitening, whitening.w


def _outputs(plan: Any, aggregates: Mapping[str, np.ndarray], whitening: Any,
             rng: Callable[[], np.random.Generator]) -> dict[str, np.ndarray]:
    s = plan.settings
    comps, weights, values = tensor_output(aggregates["M3"], whitening, rng(), model=s.model,
                                           scale=s.norm_bound or 1.0, n_restarts=s.n_restarts, n_iter=s.n_iter)
    return {"whitening": whitening.w, "components": comps, "weights": weights, "eigenvalues": values}


def _published(plan: Any, outputs: Mapping[str, np.ndarray]) -> Published:
    dim, k = plan.dim, plan.settings.k
    return Published(stage="M3", step=8, content="components a_k and weights w_k", shape=(dim, k),
                     unique=dim * k + k, nbytes=outputs["components"].nbytes + outputs["weights"].nbytes,
                     numbers=dim * k + k)


def _synthetic(budget: Any, settings: Any, rng: np.random.Generator) -> Any:
    """Documents of a random topic model or samples of a random Gaussian mixture, N_s of D."""
    n, dim = budget.site.n, budget.dim
    model = make_model(settings.model, dim, settings.k, rng, doc_length=3, sigma2=settings.sigma2 or 0.05)
    if settings.model == "stm":
        return stm_site(sample_stm(model, n, rng), dim)
    return mog_site(sample_mog(model, n, rng), settings.sigma2, settings.norm_bound)


ENTRIES = (FederatedAlgorithm(
    name="capeAGN", position=20, stages=STAGES,
    output="the K components and weights of a latent-variable model (a single topic model or a Gaussian mixture), "
           "from two noisy releases per site: the second moment M2, then the third moment projected on the "
           "whitening W",
    key="agn", public_model=True, check=_check, dim_limit=_dim_limit,
    dim_words=lambda settings: f" on the {settings.path} path", fixed_dim=lambda settings: settings.model == "stm",
    plan_stages=_plan, protocol=_protocol, between=_between, outputs=_outputs, published=_published,
    data_form=lambda model: model, synthetic=_synthetic, carried_label="W (whitening)", carried_step=4,
),)
