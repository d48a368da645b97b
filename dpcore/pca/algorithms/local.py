"""Analyze Gauss on one site's data with its own tau_s (by default the site with the smallest tau_s)."""

from __future__ import annotations

import numpy as np

from ...family import Algorithm, Sizes
from ...validation import InputError
from ..problem import PcaPrivacy, PcaProblem, check_pair
from ..result import PcaResult, decompose

__all__ = ["ENTRIES", "default_local_site", "local_pca"]


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


ENTRIES = (Algorithm(
    name="local", default=True, title="local", position=40, paper_order=4, colour="#8c564b",
    description="Analyze Gauss on one site's data only",
    communication_text="0: one site works alone",
    communication=communication,
    run=lambda ctx: local_pca(ctx.problem, ctx.privacy, ctx.rng, site=ctx.settings.local_site,
                              keep_matrix=ctx.settings.keep_matrix),
),)
