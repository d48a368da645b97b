"""Analyze Gauss on one site's data with its own tau_s (by default the site with the smallest tau_s)."""

from __future__ import annotations

import numpy as np

from ...cape.guarantee import Guarantee, calibrated_stage, curator_guarantees
from ...family import Algorithm, GuaranteeContext, Sizes
from ...textio import site_label
from ...validation import InputError
from ..problem import PcaPrivacy, PcaProblem, check_pair
from ..result import PcaResult, decompose

__all__ = ["ENTRIES", "default_local_site", "local_guarantees", "local_pca"]


def default_local_site(privacy: PcaPrivacy) -> int:
    """The site with the smallest tau_s (the first on ties)."""
    return int(np.argmin(privacy.tau))


def communication(sizes: Sizes) -> int:
    """0: one site works alone."""
    return 0


def local_pca(problem: PcaProblem, privacy: PcaPrivacy, rng: np.random.Generator, *, site: int | None = None,
              keep_matrix: bool = False) -> PcaResult:
    """Analyze Gauss on one site's data (default: the site with the smallest tau_s, the first on ties)."""
    check_pair(problem, privacy)
    site = default_local_site(privacy) if site is None else int(site)
    if not 0 <= site < problem.n_sites:
        raise InputError(f"local site must be in 0..{problem.n_sites - 1} (got {site})", "site")
    z = rng.standard_normal(problem.pooled_unique.size)
    tau = float(privacy.tau[site])
    return decompose("local", problem, problem.site_moments[site] + tau * z, 0, tau, keep_matrix)


def local_guarantees(ctx: GuaranteeContext) -> tuple[Guarantee, ...]:
    """One site alone, calibrated to its own budget on its own data (``ctx.settings.local_site``, default the site
    with the smallest tau_s)."""
    scenario, site = ctx.scenario, ctx.settings.local_site if ctx.settings is not None else None
    s = default_local_site(ctx.privacy) if site is None else int(site)
    eps, delta, names, cal = scenario.eps, scenario.delta, scenario.names, scenario.calibration
    stage = calibrated_stage("A", [eps[s]], [delta[s]], cal)
    return curator_guarantees([stage], eps=eps[s:s + 1], delta=delta[s:s + 1], names=[names[s]], calibration=cal,
                              shares=(1.0,), who=f"{site_label(names[s])} alone, on its own data", trusted=False)


ENTRIES = (Algorithm(
    name="local", default=True, title="local", position=40, paper_order=4, colour="#8c564b",
    description="Analyze Gauss on one site's data only",
    communication_text="0: one site works alone",
    communication=communication,
    run=lambda ctx: local_pca(ctx.problem, ctx.privacy, ctx.rng, site=ctx.settings.local_site,
                              keep_matrix=ctx.settings.keep_matrix),
    guarantees=local_guarantees,
),)
