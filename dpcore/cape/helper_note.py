"""Why one site can carry much more helper noise than the others (docs/math/cape.md, "Zero-sum noise"): a sentence
for the noise-design chart, computed from the design.

The helper's terms cancel, sum_s mu_s e_s = 0, so no site's weighted term mu_s tau_e,s can exceed the sum of the
others' (the polygon condition of :mod:`dpcore.privacy.zero_sum`). When the strict site that sets the DP floor needs a
large e, the others' weighted terms must add up to at least as much, and a design that keeps everyone else's noise
small puts that counterweight on the site with the largest weight: its e then exceeds its own tau_s. It costs that site
no privacy (its release still carries at least tau_s against every party) and the aggregate nothing (e cancels).
"""

from __future__ import annotations

import numpy as np

from ..textio import site_label
from .design import NoiseDesign

__all__ = ["helper_balance_note"]


def helper_balance_note(design: NoiseDesign) -> str | None:
    """A sentence when some site's helper noise exceeds its own tau_s (it balances the large term of the site with the
    largest weighted helper noise among the others), naming both; None otherwise."""
    if not design.feasible:
        return None
    tau_e = np.sqrt(np.clip(design.var_e, 0.0, None))
    load = design.weights * tau_e
    total = float(load.sum())
    over = [s for s in range(design.n_sites) if tau_e[s] > design.tau[s] * (1 + 1e-9)]
    if not over or total <= 0:
        return None
    s = max(over, key=lambda t: load[t])
    biggest = int(np.argmax(np.where(np.arange(design.n_sites) == s, -np.inf, load)))
    first = site_label(design.names[biggest])
    which = ("the site with the largest weight" if design.weights[s] >= design.weights.max() * (1 - 1e-12) else
             "a site of weight")
    return (f"Why {site_label(design.names[s])} gets so much helper noise: the helper's terms must cancel (Σ μ_s e_s = "
            f"0), so no site's weighted term μ_s τ_e,s can exceed the others' together. "
            f"{first[0].upper()}{first[1:]} needs a large e (μ τ_e = {load[biggest]:.3g}), and the "
            f"counterweight falls on {site_label(design.names[s])}, {which} {design.weights[s]:.2g} "
            f"(μ τ_e = {load[s]:.3g}, τ_e = {tau_e[s]:.3g} above its own τ_s = {design.tau[s]:.3g}). It costs that "
            "site no privacy - its release still carries at least τ_s against every party - and the aggregate "
            "nothing, since e cancels.")
