"""The privacy guarantee of every PCA algorithm's result, per view (:mod:`dpcore.cape.guarantee`; docs/math/audit.md,
"Guarantees of a run"): each entry of :data:`dpcore.pca.ALGORITHMS` computes its own (its ``guarantees`` rule:
capePCA's one stage against the audit's views, the conventional scheme and DPdisPCA each site's own noise, one site
alone, the single-party baselines a curator or a proxy that sees the sums); an algorithm of kind "none" gives none."""

from __future__ import annotations

from ..cape.guarantee import Guarantee
from ..family import GuaranteeContext
from .algorithm import STAGE, PcaOptions
from .problem import PcaPrivacy
from .table import algorithm

__all__ = ["STAGE", "pca_guarantees", "privacy_guarantees"]


def pca_guarantees(name: str, privacy: PcaPrivacy, *, collusion: int | None = None,
                   local_site: int | None = None) -> tuple[Guarantee, ...]:
    """The guarantees of algorithm ``name`` (a key of :data:`dpcore.pca.ALGORITHMS`, checked) with the budgets and
    noise design of ``privacy``; ``collusion``: c of the coalition view (default: the design's own c when it is
    collusion-robust, else ceil(S/3) - 1); ``local_site``: the site of ``local`` (default: the smallest tau_s)."""
    ctx = GuaranteeContext(name=name, scenario=privacy.scenario, privacy=privacy,
                           settings=PcaOptions(local_site=local_site), collusion=collusion)
    return algorithm(name).guarantees_of(ctx)


def privacy_guarantees(privacy: PcaPrivacy, algorithms, **options) -> dict[str, tuple[Guarantee, ...]]:
    """:func:`pca_guarantees` of every algorithm of a comparison."""
    return {name: pca_guarantees(name, privacy, **options) for name in algorithms}
