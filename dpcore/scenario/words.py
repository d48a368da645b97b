"""A scenario in words, for the sentences that say what a page will run (computed from the scenario, never written
by hand: the capePCA, capeAGN and Topic models pages' introductions)."""

from __future__ import annotations

import numpy as np

from .model import Scenario

__all__ = ["sites_words"]


def _number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _range(values: np.ndarray, fmt=_number) -> str:
    low, high = float(np.min(values)), float(np.max(values))
    return fmt(low) if low == high else f"{fmt(low)} to {fmt(high)}"


def sites_words(scenario: Scenario, unit: str = "samples", *, budgets: bool = True) -> str:
    """'10 sites each hold 500 samples and promise eps = 4, delta = 1e-05' or '5 sites hold 500 to 1,500 samples
    (5,000 in all) and promise eps from 0.3 to 0.8, delta = 1e-05'; ``budgets`` False leaves the promise out (a page
    that sets eps itself)."""
    sizes = scenario.sizes
    s = scenario.n_sites
    if np.all(sizes == sizes[0]):
        held = f"{s} site{'s' if s != 1 else ''} {'each ' if s > 1 else ''}hold{'s' if s == 1 else ''} " \
               f"{_number(sizes[0])} {unit}"
    else:
        held = f"{s} sites hold {_range(sizes)} {unit} ({scenario.total_n:,} in all)"
    if not budgets:
        return held
    eps, delta = scenario.eps, scenario.delta
    eps_text = f"eps = {_range(eps)}" if np.all(eps == eps[0]) else f"eps from {_range(eps)}"
    delta_text = f"delta = {_range(delta, lambda x: f'{x:g}')}" if np.all(delta == delta[0]) else \
        f"delta from {_range(delta, lambda x: f'{x:g}')}"
    return f"{held} and promise {eps_text}, {delta_text}"
