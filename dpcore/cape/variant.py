"""The entry of the noise-variant table (:mod:`dpcore.cape.noise_variants`; docs/federated.md, "Two ways to make the
zero-sum noise"): how the zero-sum terms e_s of a design are produced - by a trusted helper, or by the sites among
themselves through a secure sum - orthogonal to the solver that chose their variances. Each module of
:mod:`dpcore.cape.variants` defines ``ENTRIES``; the variant audit (:mod:`dpcore.cape.helper_free`), the federated
round's plan and message log and the Protocol walk-through read the table, so a new variant's audit is one module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .audit import ViewSigma
from .design import NoiseDesign

__all__ = ["AggregatorViews", "NoiseVariant", "worst_extra"]

AggregatorViews = Callable[[NoiseDesign, int, tuple[int, ...], int], list[ViewSigma]]
"""``views(design, size, dropped, s)``: the aggregator's views of surviving site s ("aggregator", and
"aggregator+coalition" with ``size`` colluders besides the ``dropped`` sites, which are in every coalition)."""


@dataclass(frozen=True, kw_only=True)
class NoiseVariant:
    """One way to make the zero-sum noise: its name (the ``noise`` setting of a round, the message log's field),
    title and help sentence, its place in the table, whether a trusted helper takes part (``helper``), the
    aggregator's views under it (``aggregator_views``), and whether without drop-outs those are exactly the audit's
    (:func:`dpcore.cape.audit.view_sigmas`), which is then used as it is (``audit_without_dropouts``). ``integer``:
    its terms are integers drawn by the exact discrete Gaussian sampler and summed exactly on a ring
    (:mod:`dpcore.cape.discrete`; its ``aggregator_views`` are then those of the design's continuous twin, which
    :mod:`dpcore.cape.discrete_audit` corrects); ``federated``: the Flower round runs it (a round's ``noise`` setting
    accepts only these, :func:`dpcore.cape.noise_variants.federated_variants`)."""

    name: str
    title: str
    position: int
    help: str
    helper: bool
    aggregator_views: AggregatorViews
    audit_without_dropouts: bool = False
    integer: bool = False
    federated: bool = True


def worst_extra(candidates: Sequence[int], score: np.ndarray, size: int) -> tuple[int, ...]:
    """The ``size`` candidates with the largest score (the first on ties), sorted: a worst coalition whose members
    each add their own score."""
    return tuple(sorted(sorted(candidates, key=lambda t: (-score[t], t))[:size]))
