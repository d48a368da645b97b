"""Every way of making a scenario's noise, side by side on one statistic (docs/math/discrete.md, "Comparing the
designs"): each row of the noise-variant table (:data:`dpcore.cape.noise_variants.NOISE_VARIANTS`: continuous CAPE
with a helper, without one, discrete CAPE on the integers) and the conventional scheme, with the noise left in the
aggregate, the gain, each view's composed guarantee (:mod:`dpcore.cape.guarantee`; the discrete row's from
:mod:`dpcore.cape.discrete_audit`) and the bits every value travels on. The Noise design page and ``python -m dpcore
design --compare-noise`` show it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ..privacy.sensitivity import statistic_bound, statistic_entries
from ..validation import InputError
from .discrete import discrete_design
from .discrete_audit import discrete_guarantees
from .guarantee import Guarantee, compose_guarantees, design_stage, independent_stage
from .helper_free import variant_view_sigmas
from .noise_variants import NOISE_VARIANTS
from .plan import Plan

__all__ = ["CONVENTIONAL", "FLOAT_BITS", "NoiseScheme", "compare_noise"]

FLOAT_BITS = 64
"""Bits per value of the continuous schemes: float64 releases (the helper-free secure sum: a 64-bit ring)."""
CONVENTIONAL = "conventional"
"""The name of the comparison's last row: every site adds its own full noise."""


@dataclass(frozen=True, kw_only=True)
class NoiseScheme:
    """One row of the comparison: ``scheme`` (a noise variant's name, or :data:`CONVENTIONAL`), its title, the std of
    the noise per entry of the published aggregate, the gain (conventional variance over this one), the guarantee of
    every view, the bits per value, and ``reason`` when the scheme cannot carry this design (then no numbers)."""

    scheme: str
    title: str
    aggregate_std: float | None
    gain: float | None
    guarantees: tuple[Guarantee, ...]
    bits: int | None
    integer: bool
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"scheme": self.scheme, "title": self.title, "aggregate_std": self.aggregate_std, "gain": self.gain,
                "bits": self.bits, "integer": self.integer, "reason": self.reason,
                "guarantees": [g.to_dict() for g in self.guarantees]}

    def view(self, name: str) -> Guarantee | None:
        """The guarantee of view ``name`` (release, aggregator, coalition), if any."""
        return next((g for g in self.guarantees if g.view == name), None)


def compare_noise(plan: Plan, *, dim: int = 1, sigma2: float | None = None) -> list[NoiseScheme]:
    """The comparison for a feasible plan: one row per noise variant, then the conventional scheme. ``dim`` is D of
    a matrix or tensor statistic (its unique entries set the discrete design's scale), ``sigma2`` MOG's variance."""
    design, scenario = plan.design, plan.scenario
    if not design.feasible:
        raise InputError(f"no noise to compare: the design is infeasible ({design.reason})", "design")
    sens = np.asarray(plan.sensitivities, dtype=float)
    c = min(plan.collusion, scenario.n_sites - 1)
    terms = {"eps": scenario.eps, "delta": scenario.delta, "names": scenario.names,
             "calibration": scenario.calibration}
    conventional_var = design.tau_conv**2
    rows = []
    for name, entry in NOISE_VARIANTS.items():
        if entry.integer:
            try:
                dd = discrete_design(design, sens, statistic_entries(plan.statistic, dim),
                                     value_bound=statistic_bound(plan.statistic, sigma2),
                                     terms=int(np.max(scenario.sizes)) + int(dim))
            except InputError as exc:
                rows.append(NoiseScheme(scheme=name, title=entry.title, aggregate_std=None, gain=None, guarantees=(),
                                        bits=None, integer=True, reason=str(exc)))
                continue
            guarantees = discrete_guarantees([dd], (plan.statistic,), collusion=c, **terms)
            std, bits = dd.output_std(), dd.ring_bits
        else:
            stage = design_stage(plan.statistic, design, sens, c, views_of=partial(variant_view_sigmas, variant=name))
            guarantees = compose_guarantees([stage], scheme=f"CAPE, zero-sum noise made by {entry.title}",
                                            collusion=c, **terms)
            std, bits = design.output_std, FLOAT_BITS
        rows.append(NoiseScheme(scheme=name, title=entry.title, aggregate_std=std, gain=conventional_var / std**2,
                                guarantees=guarantees, bits=bits, integer=entry.integer))
    own = compose_guarantees([independent_stage(plan.statistic, design.tau, sens)], collusion=c,
                             scheme="independent noise at every site (the conventional scheme)", **terms)
    rows.append(NoiseScheme(scheme=CONVENTIONAL, title="every site alone (conventional)",
                            aggregate_std=math.sqrt(conventional_var), gain=1.0, guarantees=own, bits=FLOAT_BITS,
                            integer=False))
    return rows
