"""What the front door's one-call functions return (``dpcore.capepca``, ``dpcore.capeagn``, ``dpcore.capelda``;
docs/python-api.md): one private run of one algorithm of a family on data dealt to a scenario's sites, its
components, its metrics, and its privacy guarantee per view, computed by the audit (docs/math/audit.md, "Guarantees
of a run"). Each call is run 0 of the family's comparison with one algorithm, so it gives exactly that run's numbers
(the same streams, keyed by the seed and the algorithm's name)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cape.guarantee import Guarantee, certified_label, guarantee_summary
from ..scenario import Scenario, equal_sites_scenario
from ..validation import InputError, check_positive_int

__all__ = ["Fit", "front_scenario"]


@dataclass(frozen=True, eq=False, kw_only=True)
class Fit:
    """One run of ``algorithm`` (a name of the family's table; ``title`` as tables show it).

    ``components``: K x D, one component per row (scikit-learn's layout: capePCA's orthonormal directions, capeAGN's
    recovered means or topics, capeLDA's topics); ``metrics``: the family's metrics of this run by name (PCA against
    the pooled data; capeAGN and capeLDA against the non-private result on the same data); ``guarantees``: one
    :class:`~dpcore.cape.guarantee.Guarantee` per view (each release, the aggregator, coalitions); ``scenario``: the
    sites and budgets it ran with (its N_s the sites' sizes); ``result``: the family's own result (``PcaResult``,
    ``Decomposition``, ``LdaResult``) with everything else; ``notes``: what the user should know (preprocessing,
    caveats of the budget, the split)."""

    algorithm: str
    title: str
    components: np.ndarray
    metrics: dict[str, float]
    guarantees: tuple[Guarantee, ...]
    scenario: Scenario
    result: Any
    notes: tuple[str, ...] = ()

    @property
    def certified(self) -> bool:
        """True when every site keeps its promise in every view."""
        return all(g.certified for g in self.guarantees)

    def privacy(self) -> str:
        """The guarantee in one line per view ('(eps, delta)-DP' only where certified)."""
        return "\n".join(g.label() for g in self.guarantees)

    def summary(self) -> str:
        """Title, metrics and guarantee in a few lines."""
        metrics = ", ".join(f"{name} {value:.4g}" for name, value in self.metrics.items())
        return (f"{self.title}: {metrics}\nprivacy ({certified_label(self.guarantees)}): "
                f"{guarantee_summary(self.guarantees)}")


def front_scenario(scenario: Scenario | None, sites: int | None, eps: float | None, delta: float | None,
                   calibration: str, n_total: int) -> Scenario:
    """The scenario of a front-door call: ``scenario`` as given, or ``sites`` equal sites sharing the ``n_total``
    samples (N_s = n_total // sites) with the same (``eps``, ``delta``) each and ``calibration``. Refuses both forms at
    once, or neither."""
    quick = {"sites": sites, "eps": eps, "delta": delta}
    if scenario is not None:
        given = [name for name, value in quick.items() if value is not None]
        if given:
            raise InputError(f"give either a scenario or {', '.join(quick)}, not both (got a scenario and "
                             f"{', '.join(given)})", given[0])
        return scenario
    missing = [name for name, value in quick.items() if value is None]
    if missing:
        raise InputError(f"give {', '.join(missing)} (the sites and their budget), or a scenario", missing[0])
    sites = check_positive_int(sites, "sites")
    if n_total < sites:
        raise InputError(f"{n_total:,} samples cannot be dealt to {sites} sites (at least one each)", "sites")
    return equal_sites_scenario(sites, n_total // sites, eps, delta, calibration=calibration)
