"""The computing pages' stories in dpcore: the paired gap closure against hand-computed values, and the cases of
"where CAPE stops helping" built from the opening settings (the pages' runs are tested in test_page_cape*.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.agn import story as agn_story
from dpcore.pca import story as pca_story
from dpcore.summary import gap_closure


def test_gap_closure_by_hand():
    g = gap_closure([3.0, 5.0], [1.0, 1.0], [6.0, 6.0], 0.0, larger_is_better=True)
    assert g.closure == pytest.approx(3 / 5) and g.cost == pytest.approx(5 / 6)
    # g_r = (p - c) - 0.5 (b - c) = -0.5, 1.5: mean 0.5, std sqrt(2), se 1
    assert g.closure_z == pytest.approx(0.5)
    assert g.cost_z == math.inf  # h_r = 5 - 0.2 * 6 = 3.8 in both runs: no spread
    assert not g.holds(2.0) and g.runs == 2


def test_gap_closure_of_errors_is_the_same_after_negation():
    # errors: private 0.1, 0.3; conventional 0.5, 0.7; best 0.0; worst (random) 1.0
    g = gap_closure([0.1, 0.3], [0.5, 0.7], 0.0, 1.0, larger_is_better=False)
    assert g.closure == pytest.approx(0.4 / 0.6) and g.cost == pytest.approx(0.6)
    h = gap_closure([-0.1, -0.3], [-0.5, -0.7], 0.0, -1.0, larger_is_better=True)
    assert (g.closure, g.cost, g.closure_z, g.cost_z) == pytest.approx((h.closure, h.cost, h.closure_z, h.cost_z))
    with pytest.raises(ValueError, match="at least 2 finite"):
        gap_closure([0.1], [0.5], 0.0, 1.0, larger_is_better=False)


@pytest.mark.parametrize("story", [pca_story, agn_story])
def test_breakdown_cases_change_one_thing_each(story):
    opening = story.OPENING
    cases = {c.kind: c for c in story.breakdown_cases(opening, seed=3)}
    assert list(cases) == list(story.BREAKDOWN_KINDS)
    base = opening.scenario(3)
    few = cases["few samples"].scenario
    assert few.sizes.tolist() == [opening.site_size // opening.shrink] * opening.sites
    assert np.array_equal(few.eps, base.eps)
    small = cases["small eps"].scenario
    assert small.eps == pytest.approx(base.eps / opening.shrink) and np.array_equal(small.sizes, base.sizes)
    dominant = cases["dominant site"].scenario
    assert dominant.total_n == base.total_n and dominant.sizes[0] > 0.8 * dominant.total_n
    assert len(set(dominant.sizes[1:].tolist())) == 1
    colluded = cases["collusion"]
    assert colluded.collusion == opening.sites - 1 and colluded.scenario == base


def test_pca_collusion_case_design_is_the_conventional_noise():
    case = pca_story.breakdown_cases()[-1]
    design = case.design()
    tau = case.scenario.taus("pca")
    conventional = math.sqrt(float(np.sum((case.scenario.weights() * tau) ** 2)))
    assert design.output_std == pytest.approx(conventional, rel=0.02)  # gain S - c = 1 (with the design's margin)
