"""Where the What-eps-means page opens (docs/dashboard.md, "What ε means"): a setting in which a class can see the
aggregator learn more than one release promises, and the false-positive rate at which the gap is widest.

At the default scenario's budgets (eps_s = 0.3 to 0.8) the best attacker catches at most about one person in a hundred
more from everything the aggregator sees than from one release: true, and invisible on a chart. Ten equal sites at
eps = 4, delta = 1e-5 (capePCA's opening budgets) with the exact (analytic) calibration give the aggregator eps 5.66,
and at 14 % false positives it catches about 13 people in a hundred more than the promise allows
(tests/test_epsilon_lesson.py); the collusion-robust design brings it back under the promise.
"""

from __future__ import annotations

import numpy as np

from ..scenario import Scenario, equal_sites_scenario
from .attack import AttackView

__all__ = ["CLASS_FPR_GRID", "class_scenario", "widest_gap_fpr"]

CLASS_FPR_GRID = np.round(np.arange(0.01, 0.51, 0.01), 2)
"""The false-positive rates the page's slider offers (0.01 to 0.50)."""


def class_scenario() -> Scenario:
    """Ten equal sites of 500 samples at eps = 4, delta = 1e-5, analytic calibration."""
    return equal_sites_scenario(10, 500, 4.0, 1e-5, calibration="analytic", name_prefix="site ")


def widest_gap_fpr(views: list[AttackView], against: str = "aggregator") -> float:
    """The false-positive rate of :data:`CLASS_FPR_GRID` at which view ``against`` catches most more present people
    than the site's own promise (the first view); 0.05 when there is no such view."""
    by_key = {v.key: v for v in views}
    if against not in by_key or "promise" not in by_key:
        return 0.05
    gap = by_key[against].tpr(CLASS_FPR_GRID) - by_key["promise"].tpr(CLASS_FPR_GRID)
    return float(CLASS_FPR_GRID[int(np.argmax(gap))])
