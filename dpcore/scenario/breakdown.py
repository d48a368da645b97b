"""The variations of an equal-sites opening setting behind "where CAPE stops helping" (docs/dashboard.md): each
changes one thing - fewer samples per site, a smaller eps, one site holding most of the samples, or collusion of
every site but one. The capePCA and capeAGN stories (dpcore.pca.story, dpcore.agn.story) build their cases here."""

from __future__ import annotations

from .model import Scenario

__all__ = ["BREAKDOWN_KINDS", "breakdown_variations"]

BREAKDOWN_KINDS: dict[str, str] = {
    "few samples": "too few samples per site",
    "small eps": "too small eps",
    "dominant site": "one dominant site",
    "collusion": "collusion",
}
"""The cases of "where CAPE stops helping", by key, with their titles."""


def breakdown_variations(base: Scenario, *, site_size: int, eps: float, shrink: int,
                         minority_divisor: int) -> tuple[tuple[str, Scenario, int | None], ...]:
    """(kind, scenario, colluders) for every kind of :data:`BREAKDOWN_KINDS`, from ``base``, S equal sites of
    ``site_size`` samples at ``eps``: the samples per site and eps divided by ``shrink``; one site holding most of
    the samples (the others ``site_size // minority_divisor`` each, the total kept); and ``base`` against S - 1
    colluding sites (every site but one)."""
    sites = base.n_sites
    small = max(1, site_size // minority_divisor)
    dominant = [sites * site_size - (sites - 1) * small] + [small] * (sites - 1)
    return (
        ("few samples", base.with_sizes([max(1, site_size // shrink)] * sites), None),
        ("small eps", base.with_sites(eps=eps / shrink), None),
        ("dominant site", base.with_sizes(dominant), None),
        ("collusion", base, sites - 1),
    )
