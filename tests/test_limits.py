"""The numeric ranges of dpcore/limits.py are where the arithmetic is exact: checked at their ends.

* EPS_RANGE x DELTA_RANGE: both calibrations give a finite positive multiplier and the analytic one inverts
  exactly (the exact eps of the calibrated sigma is the eps asked for);
* the noise design's linear program meets every constraint to 1e-9 (relative) over sites whose tau_s span the
  whole range the scenario allows, and over tau_c from TAU_C_FLOOR_RATIO[0] to [1] times the DP floor; outside,
  it refuses with a reason instead of returning a design that misses a constraint.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.cape import dp_floor, plan_scenario
from dpcore.limits import DELTA_RANGE, EPS_RANGE, MAX_SITE_SIZE, TAU_C_FLOOR_RATIO
from dpcore.privacy.calibration import exact_delta, exact_eps, multiplier
from dpcore.scenario import scenario_from_dict


@pytest.mark.parametrize("eps", [EPS_RANGE[0], 1.0, EPS_RANGE[1]])
@pytest.mark.parametrize("delta", [DELTA_RANGE[0], 1e-5, 0.5])
def test_calibrations_are_exact_over_the_allowed_budgets(eps, delta):
    for calibration in ("classic", "analytic"):
        c = multiplier(eps, delta, calibration)
        assert math.isfinite(c) and c > 0
        assert math.isfinite((1.0 / MAX_SITE_SIZE * c) ** 2)  # the smallest tau_s^2 stays representable
    c = multiplier(eps, delta, "analytic")
    assert exact_delta(c, 1.0, eps) == pytest.approx(delta, rel=1e-6)
    if delta < 0.1:  # (for large delta the profile is flat in eps: eps is then ill-determined, sigma is not)
        assert exact_eps(c, 1.0, delta) == pytest.approx(eps, rel=1e-6)


def _scenario(sizes, eps, tau_c=None):
    sites = [{"name": f"s{i}", "n": int(n), "eps": float(e), "delta": 1e-5}
             for i, (n, e) in enumerate(zip(sizes, eps, strict=True))]
    return scenario_from_dict({"sites": sites, "tau_c": tau_c})


def _misses(design) -> float:
    """Largest relative miss of a constraint: e + g and f + g against tau_s^2, sum mu^2 g against tau_c^2, and the
    zero-sum polygon condition of the weighted helper variances."""
    t2 = design.tau**2
    release = max(np.max((t2 - design.var_e - design.var_g) / t2), np.max((t2 - design.var_f - design.var_g) / t2))
    aggregate = abs(np.sum(design.weights**2 * design.var_g) - design.tau_c**2) / design.tau_c**2
    weighted = design.weights**2 * design.var_e
    polygon = np.max((weighted - (weighted.sum() - weighted)) / weighted.sum()) if weighted.sum() > 0 else 0.0
    return float(max(release, aggregate, polygon))


@pytest.mark.parametrize("solver", ["general", "collusion-robust"])
@pytest.mark.parametrize(("sizes", "eps"), [
    ([MAX_SITE_SIZE, 1, 1], [1, 1, 1]),                       # sizes as far apart as the scenario allows
    ([1000, 1000, 1000], [EPS_RANGE[0], 1, EPS_RANGE[1]]),    # budgets as far apart as allowed
    ([10, 10**6, 10**4, 100, 10**5], [0.01, 1, 0.1, 5, 0.5]),
])
def test_designs_meet_every_constraint_over_the_allowed_spread(solver, sizes, eps):
    design = plan_scenario(_scenario(sizes, eps), solver=solver, collusion=1).design
    if design.feasible:
        assert _misses(design) < 1e-9
    else:  # refused in words, never a design that misses a constraint
        assert solver == "collusion-robust" and "tau_s" in design.reason


def test_the_general_design_is_exact_where_the_solver_alone_was_not():
    # one site with eps 100 times smaller: the unscaled program left the others 0.1% short of tau_s^2
    design = plan_scenario(_scenario([1000] * 10, [0.01] + [1.0] * 9)).design
    assert design.feasible and _misses(design) < 1e-9


@pytest.mark.parametrize("ratio", [TAU_C_FLOOR_RATIO[0], 1e-3, 10.0, TAU_C_FLOOR_RATIO[1]])
def test_tau_c_is_exact_over_the_allowed_ratio_to_the_floor(ratio):
    base = _scenario([1000, 2000, 5000], [1, 1, 1])
    floor = dp_floor(base.weights(), base.taus("mean"))
    design = plan_scenario(base.replace(tau_c=floor * ratio)).design
    assert design.feasible and _misses(design) < 1e-9


@pytest.mark.parametrize("ratio", [TAU_C_FLOOR_RATIO[0] / 10, TAU_C_FLOOR_RATIO[1] * 10])
def test_tau_c_outside_the_ratio_is_refused_in_words(ratio):
    base = _scenario([1000, 2000, 5000], [1, 1, 1])
    floor = dp_floor(base.weights(), base.taus("mean"))
    design = plan_scenario(base.replace(tau_c=floor * ratio)).design
    assert not design.feasible
    assert "times the DP floor" in design.reason and "from 1e-06 to 1e+06 times the floor" in design.reason
    assert "HiGHS" not in design.reason
