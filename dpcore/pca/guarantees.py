"""The privacy guarantee of every PCA algorithm's result, per view (:mod:`dpcore.cape.guarantee`; docs/math/audit.md,
"Guarantees of a run"): capePCA's one stage against the audit's views, the conventional scheme and DPdisPCA (each
site's own noise), one site alone, and the single-party baselines (a curator or a proxy that sees the sums)."""

from __future__ import annotations

import numpy as np

from ..cape import default_collusion
from ..cape.guarantee import (
    Guarantee,
    calibrated_stage,
    cape_guarantees,
    conventional_guarantees,
    curator_guarantees,
    independent_stage,
    no_privacy,
)
from ..textio import site_label
from .algorithms.local import default_local_site
from .problem import PcaPrivacy

__all__ = ["STAGE", "pca_guarantees", "privacy_guarantees"]

STAGE = ("A",)


def pca_guarantees(name: str, privacy: PcaPrivacy, *, collusion: int | None = None,
                   local_site: int | None = None) -> tuple[Guarantee, ...]:
    """The guarantees of algorithm ``name`` (a key of :data:`dpcore.pca.ALGORITHMS`) with the budgets and noise
    design of ``privacy``; ``collusion``: c of the coalition view (default: the design's own c when it is
    collusion-robust, else ceil(S/3) - 1)."""
    scenario = privacy.scenario
    eps, delta, names, cal = scenario.eps, scenario.delta, scenario.names, scenario.calibration
    common = {"eps": eps, "delta": delta, "names": names, "calibration": cal, "shares": (1.0,)}
    sens = scenario.sensitivities("pca")
    n = scenario.n_sites
    if name == "cape":
        design = privacy.design
        c = collusion if collusion is not None else (
            design.collusion if design.collusion is not None else default_collusion(n))
        return cape_guarantees((design,), (sens,), STAGE, collusion=min(int(c), n - 1), **common)
    if name in ("conv", "dpdis"):
        return conventional_guarantees((privacy.tau,), (sens,), STAGE, **common)
    if name == "local":
        s = default_local_site(privacy) if local_site is None else int(local_site)
        stage = calibrated_stage("A", [eps[s]], [delta[s]], cal)
        return curator_guarantees([stage], eps=eps[s:s + 1], delta=delta[s:s + 1], names=[names[s]],
                                  calibration=cal, shares=(1.0,), who=f"{site_label(names[s])} alone, on its own data",
                                  trusted=False)
    if name in ("pool_ag", "central"):
        c = float(scenario.multipliers().max())
        stage = independent_stage("A", np.full(n, c), np.ones(n))
        who = ("Analyze Gauss on the pooled data at one trusted curator" if name == "pool_ag" else
               "central noise: a proxy adds one Gaussian to the securely aggregated sums")
        return curator_guarantees([stage], **common, who=who, trusted=name == "pool_ag")
    return no_privacy()


def privacy_guarantees(privacy: PcaPrivacy, algorithms, **options) -> dict[str, tuple[Guarantee, ...]]:
    """:func:`pca_guarantees` of every algorithm of a comparison."""
    return {name: pca_guarantees(name, privacy, **options) for name in algorithms}
