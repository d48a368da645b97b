"""Discrete CAPE (dpcore.cape.discrete, discrete_flow, discrete_audit; docs/math/discrete.md): exact zero sums and
exact ring sums decoded once, the checked ring bound, and every view's guarantee against independent computations -
the continuous twin's sigma_eff from the explicit observation model, the integer shift by brute force, and on a
design small enough to enumerate, the exact hockey-stick divergence of the discrete view itself."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpcore.cape import discrete as D
from dpcore.cape import plan_scenario
from dpcore.cape.audit import effective_sigma
from dpcore.cape.discrete import DiscreteDesign, discrete_design
from dpcore.cape.discrete_audit import (
    discrete_audit,
    discrete_guarantees,
    discrete_stage,
    discrete_view_sigmas,
    view_margin,
)
from dpcore.cape.discrete_flow import (
    aggregate,
    encode,
    keyed_streams,
    release_messages,
    release_sum,
    ring_decode,
    ring_sum,
)
from dpcore.cape.guarantee import cape_guarantees, promises
from dpcore.privacy.calibration import exact_eps, privacy_profile
from dpcore.privacy.discrete_gaussian import discrete_gaussian_pmf
from dpcore.scenario import equal_sites_scenario, scenario_from_dict
from dpcore.validation import InputError

UNEQUAL = [{"name": "a", "n": 800, "eps": 1.0, "delta": 1e-5}, {"name": "b", "n": 600, "eps": 0.5, "delta": 1e-5},
           {"name": "c", "n": 400, "eps": 1.0, "delta": 1e-5}, {"name": "d", "n": 1200, "eps": 0.7, "delta": 1e-5}]


def _plan(sites=None, statistic="pca", **kw):
    scenario = (equal_sites_scenario(4, 500, 1.0, 1e-5, calibration="analytic") if sites is None
                else scenario_from_dict({"sites": sites, "calibration": "analytic"}))
    return scenario, plan_scenario(scenario, statistic, **kw)


def _discrete(scenario, plan, entries, statistic="pca"):
    return discrete_design(plan.design, scenario.sensitivities(statistic), entries, value_bound=1.0,
                           terms=int(max(scenario.sizes)) + 64)


@pytest.fixture(params=["equal", "unequal"])
def case(request):
    scenario, plan = _plan(None if request.param == "equal" else UNEQUAL)
    return scenario, plan, _discrete(scenario, plan, 210)


# -- the flow --------------------------------------------------------------------------------------------------------

def test_zero_sum_and_ring_sum_are_exact_and_decoded_once(case, rng):
    scenario, plan, dd = case
    values = rng.uniform(-1.0, 1.0, (dd.n_sites, dd.entries))
    full = release_messages(values, dd, keyed_streams(np.random.default_rng(5)))
    assert np.all(full.e.sum(axis=0) == 0)  # sum_s E~_s = 0 on the integers
    encoded = np.stack([encode(values[s], dd, s) for s in range(dd.n_sites)])
    assert np.array_equal(full.release.exact, encoded.sum(axis=0) + full.g.sum(axis=0))  # exact, no rounding
    assert np.array_equal(full.release.aggregate, full.release.exact / dd.scale)  # decoded once
    fast = release_sum(values, dd, keyed_streams(np.random.default_rng(5)))
    assert np.array_equal(fast.exact, full.release.exact) and fast.bits == dd.ring_bits <= 64
    assert int(np.max(np.abs(fast.exact))) <= dd.ring_bound < 2 ** (dd.ring_bits - 1)
    # the aggregate is the weighted statistic plus noise; the rounding is at most 1/2 per site and entry
    error = fast.aggregate - plan.design.weights @ values - full.g.sum(axis=0) / dd.scale
    assert np.max(np.abs(error)) <= dd.n_sites * 0.5 / dd.scale


def test_the_aggregator_refuses_a_sum_beyond_the_ring_bound(case, rng):
    _, _, dd = case
    values = rng.uniform(-1.0, 1.0, (dd.n_sites, dd.entries))
    full = release_messages(values, dd, keyed_streams(np.random.default_rng(1)))
    messages = [m.copy() for m in full.messages]
    push = np.array([dd.ring_bound + 1 - int(full.release.exact[3])], dtype=np.int64)  # lands just past the bound
    messages[0][3:4] = ring_sum([messages[0][3:4], push], dd.ring_bits)
    with pytest.raises(InputError, match="exceeds its bound"):
        aggregate(messages, list(full.f), dd)


def test_ring_arithmetic_wraps_exactly():
    bits = 20
    parts = [np.array([2**19 - 1, -(2**19) + 1, 5], dtype=np.int64), np.array([1, -1, -7], dtype=np.int64)]
    total = ring_sum(parts, bits)
    assert ring_decode(ring_sum([total, np.array([-1, 1, 0])], bits), bits, 2**19).tolist() == [2**19 - 1,
                                                                                                 -(2**19) + 1, -2]
    assert ring_decode(np.array([2**19], dtype=np.uint64), bits, 2**20).tolist() == [-(2**19)]


def test_encode_refuses_values_beyond_the_bound(case):
    _, _, dd = case
    with pytest.raises(InputError, match="exceeds the bound"):
        encode(np.full(dd.entries, 1.5), dd, 0)


def test_aggregate_noise_has_the_design_std(rng):
    scenario, plan = _plan()
    dd = _discrete(scenario, plan, 20_000)
    release = release_sum(np.zeros((dd.n_sites, dd.entries)), dd, keyed_streams(rng))
    ratio = float(np.std(release.aggregate)) / dd.output_std()
    assert abs(ratio - 1.0) < 5 / math.sqrt(2 * dd.entries)  # 5 standard errors of a sample std
    assert 1.0 <= dd.output_std() / plan.design.output_std <= 1.002  # kappa: at most 0.2 % more noise


# -- the design ------------------------------------------------------------------------------------------------------

def test_every_discrete_view_is_at_least_as_private_as_the_continuous_one(case):
    scenario, plan, dd = case
    for row in discrete_audit(dd, scenario.eps, scenario.delta, 1):
        assert row.eps_eff <= row.eps_continuous * (1 + 1e-9) + 1e-12, row
    for view in ("release", "aggregator", "coalition"):
        disc = discrete_stage("A", dd, 1)
        assert np.all(disc.sigmas[view] > 0)


def test_guarantees_match_the_continuous_design_and_compose(case):
    scenario, plan, dd = case
    sens = scenario.sensitivities("pca")
    disc = discrete_guarantees([dd, dd], ["M2", "M3"], eps=scenario.eps, delta=scenario.delta, names=scenario.names,
                               calibration="analytic", collusion=1)
    cont = cape_guarantees((plan.design, plan.design), (sens, sens), ("M2", "M3"), collusion=1,
                           **promises(scenario, (0.5, 0.5)))
    for d, c in zip(disc, cont, strict=True):
        assert d.view == c.view and 0.9 * c.eps <= d.eps <= c.eps * (1 + 1e-9)
    # composition: m^2 adds over the stages (independent of compose_guarantees: the worst site by hand)
    stage = discrete_stage("A", dd, 1)
    for g in disc:
        m = np.sqrt(2.0) * stage.sensitivities / stage.sigmas[g.view]
        per_site = [exact_eps(1.0 / mi, 1.0, float(d)) for mi, d in zip(m, scenario.delta, strict=True)]
        worst = int(np.argmax(np.array(per_site) / np.array(scenario.eps)))  # the site furthest past its promise
        assert g.eps == pytest.approx(per_site[worst], rel=1e-9) and g.site == scenario.names[worst]


def test_refusals():
    scenario, plan = _plan(UNEQUAL, objective="min-noise")
    with pytest.raises(InputError, match="own term g_s > 0"):
        _discrete(scenario, plan, 10)
    weighted = [dict(site, weight=w) for site, w in zip(UNEQUAL, (0.5, 0.5, 0.0, 0.0), strict=True)]
    scenario = scenario_from_dict({"sites": weighted, "calibration": "analytic"})
    plan = plan_scenario(scenario, "pca")
    with pytest.raises(InputError, match="weight mu_s > 0"):
        _discrete(scenario, plan, 10)
    scenario, plan = _plan()
    with pytest.raises(InputError, match="64-bit ring"):
        _discrete(scenario, plan, 10**13)


def test_a_design_is_kept_for_its_inputs_and_each_caller_gets_its_own_copy():
    """A run after run asks for the same integer design: it is computed once for the same inputs (compared by
    content), every caller gets an equal copy of its own, and other inputs are computed anew."""
    discrete_design.cache_clear()
    scenario, plan = _plan(UNEQUAL)
    first = _discrete(scenario, plan, 210)
    again = _discrete(*_plan(UNEQUAL), 210)  # equal inputs, other objects
    info = discrete_design.cache_info()
    assert (info.misses, info.hits) == (1, 1) and again is not first and again.laws is not first.laws
    assert (again.scale_bits, again.ring_bits, again.sum_bits, again.inflation) == (
        first.scale_bits, first.ring_bits, first.sum_bits, first.inflation)
    np.testing.assert_array_equal(again.integer_sensitivities, first.integer_sensitivities)
    again.integer_sensitivities[0] = -1.0  # a caller's change stays its own
    assert _discrete(scenario, plan, 210).integer_sensitivities[0] == first.integer_sensitivities[0]
    _discrete(scenario, plan, 211)
    _discrete(*_plan([dict(site, eps=0.9) for site in UNEQUAL]), 210)
    assert discrete_design.cache_info().misses == 3


# -- independent computations of the views ----------------------------------------------------------------------------

def _observation(dd: DiscreteDesign, site: int, coalition: tuple[int, ...], knows_sum: bool):
    """The aggregator's view in integer units, built here from the integer construction: primitives z = (w~, g~)
    with variances sigma^2 - s^2; rows y_t = [t = s] x + A w~_t - a_t W~ + g~_t for every t, plus w~_t, g~_t of the
    coalition and W~ when known. Returns (O, Sigma_z, b)."""
    n = dd.n_sites
    s2 = D.SMOOTHING**2
    shares = np.array(dd.laws.shares, dtype=float)
    total = shares.sum()
    var = np.array([float(w.sigma2) - s2 for w in dd.laws.w] + [float(g.sigma2) - s2 for g in dd.laws.g])
    rows, b = [], []
    for t in range(n):
        row = np.zeros(2 * n)
        row[:n] = -shares[t]
        row[t] += total
        row[n + t] = 1.0
        rows.append(row)
        b.append(dd.site_scale(site) if t == site else 0.0)
    for t in coalition:
        for j in (t, n + t):
            row = np.zeros(2 * n)
            row[j] = 1.0
            rows.append(row)
            b.append(0.0)
    if knows_sum and coalition:
        row = np.zeros(2 * n)
        row[:n] = 1.0
        rows.append(row)
        b.append(0.0)
    return np.array(rows), np.diag(var), np.array(b)


@pytest.mark.parametrize("sites", [None, UNEQUAL])
def test_twin_views_equal_the_explicit_observation_model(sites):
    """sigma_eff of every aggregator view (with every coalition of one site, helper-free: W known) from the explicit
    integer model, against the audit of the twin; the worst coalition by enumeration."""
    scenario, plan = _plan(sites)
    dd = _discrete(scenario, plan, 50)
    reported = {(v.site, v.view): v for v in discrete_view_sigmas(dd, 1)}
    for s in range(dd.n_sites):
        o, cov, b = _observation(dd, s, (), False)
        alone = effective_sigma(b, o @ cov @ o.T)  # statistic units: b is gamma mu_s per unit of a_s
        assert reported[(s, "aggregator")].sigma_eff == pytest.approx(alone, rel=1e-6)
        worst = min(effective_sigma(*(lambda o, c, b: (b, o @ c @ o.T))(*_observation(dd, s, (t,), True)))
                    for t in range(dd.n_sites) if t != s)
        assert reported[(s, "aggregator+coalition")].sigma_eff == pytest.approx(worst, rel=1e-6)


def test_integer_shift_brute_force_is_within_the_excess_bound():
    """The smallest v^T Sigma^-1 v over integer shifts v reproducing an integer change d of one site's entry (the
    aggregator's view, and with a coalition knowing w~_C, g~_C and W~), by search around the real optimum, lies
    between the continuous d^2 / sigma_int^2 and that plus eps_r."""
    scenario, plan = _plan(UNEQUAL)
    dd = _discrete(scenario, plan, 50)
    n = dd.n_sites
    total, shares = dd.laws.total_share, np.array(dd.laws.shares)
    e_map = total * np.eye(n) - np.outer(shares, np.ones(n))  # E~ = e_map w~
    s2 = D.SMOOTHING**2
    inv_w = np.array([1 / (float(w.sigma2) - s2) for w in dd.laws.w])
    inv_g = np.array([1 / (float(g.sigma2) - s2) for g in dd.laws.g])
    for s, coalition, d in ((0, (), 987_654_321), (2, (1,), 123_456_789)):
        free = [t for t in range(n) if t not in coalition]
        o, cov, b = _observation(dd, s, coalition, True)
        continuous = (d / dd.site_scale(s) / effective_sigma(b, o @ cov @ o.T)) ** 2

        def cost(v_w, s=s, d=d, coalition=coalition):
            v_g = -e_map @ v_w
            v_g[s] += d
            if coalition and (abs(v_g[list(coalition)]).max() > 0 or v_w.sum() != 0):
                return math.inf
            return float(np.sum(v_w**2 * inv_w) + np.sum(v_g**2 * inv_g))

        # the real optimum over v_w (v_g follows), by least squares on the free coordinates
        h = np.diag(inv_w) + e_map.T @ np.diag(inv_g) @ e_map
        rhs = e_map.T @ (inv_g * np.eye(n)[s]) * d
        if coalition:  # v_w,C = 0 and sum v_w = 0: optimise on that subspace
            basis = np.array([np.eye(n)[t] - np.eye(n)[free[-1]] for t in free[:-1]]).T
            x = np.linalg.solve(basis.T @ h @ basis, basis.T @ rhs)
            real = basis @ x
        else:
            real = np.linalg.solve(h, rhs)
        best = math.inf
        base = np.floor(real)
        for step in itertools.product((-1, 0, 1, 2), repeat=n):
            v = base + np.array(step)
            v[list(coalition)] = 0
            best = min(best, cost(v))
        assert continuous * (1 - 1e-9) <= best <= continuous + dd.excess * (1 + 1e-9)


def _pmf(sigma2: float, reach: int) -> np.ndarray:
    return discrete_gaussian_pmf(np.arange(-reach, reach + 1), sigma2)


def test_exact_hockey_stick_of_a_small_discrete_view():
    """Supports small enough to compute exactly: four sites with w~ ~ N_Z(0, 200), g~ ~ N_Z(0, 300), a_t = 1, A = 4.
    A release against the aggregator, y_0 = E~_0 + g~_0 = 3 w~_0 - (w~_1 + w~_2 + w~_3) + g~_0, is a sum of discrete
    Gaussians; its exact law (convolutions of the exact pmfs) under an integer shift d has the exact hockey-stick
    divergence delta(eps), which must lie below the audit's bound e^H delta_G(eps - 2H; m), m^2 = d^2 / sigma'^2 +
    eps_r with sigma'^2 the release's variance from variances less s^2 - and not far below it."""
    from dpcore.privacy.discrete_gaussian import sampler_law

    scenario, plan = _plan(None)
    laws = D.IntegerLaws(shares=(1, 1, 1, 1), w=(sampler_law(200),) * 4, f=(None,) * 4, g=(sampler_law(300),) * 4)
    twin = D._twin(plan.design, laws, 1.0)
    dd = DiscreteDesign(design=plan.design, scale_bits=0, entries=1, sensitivities=np.ones(4),
                        integer_sensitivities=np.ones(4), inflation=1.0, laws=laws, twin=twin,
                        excess=D._excess(laws), slack=D._slack(laws), value_bound=1.0, float_error=0.0,
                        ring_bits=64, ring_bound=2**62, sum_bits=64, sum_bound=2**62)
    sw2, sg2 = float(laws.w[0].sigma2), float(laws.g[0].sigma2)
    reach = int(12 * math.sqrt(sw2))
    pw = _pmf(sw2, reach)
    three = np.convolve(np.convolve(pw, pw), pw)  # w1 + w2 + w3 on -3 reach .. 3 reach
    e0 = np.zeros(12 * reach + 1)  # 3 w0 - S on -6 reach .. 6 reach
    for i, p in enumerate(pw):
        x = 3 * (i - reach)
        e0[x - np.arange(-3 * reach, 3 * reach + 1) + 6 * reach] += p * three
    y = np.convolve(e0, _pmf(sg2, int(12 * math.sqrt(sg2))))
    assert abs(y.sum() - 1) < 1e-9
    sigma_release = math.sqrt(float(twin.var_e[0] + twin.var_g[0])) * dd.site_scale(0)  # integer units
    assert sigma_release**2 == pytest.approx(12 * (sw2 - 9) + (sg2 - 9))
    for d in (1, 5, 20):
        shifted = np.concatenate([np.zeros(d), y[:-d]])
        m = math.sqrt(view_margin(dd, 0, sigma_release / dd.site_scale(0)) * d**2 - dd.excess * (d**2 - 1))
        assert m**2 == pytest.approx((d / sigma_release) ** 2 + dd.excess)
        for eps in (0.0, 0.02, 0.1, 0.5):
            exact = float(np.sum(np.clip(shifted - math.exp(eps) * y, 0.0, None)))
            bound = math.exp(dd.slack) * privacy_profile(m, max(eps - 2 * dd.slack, 0.0))
            assert exact <= bound * (1 + 1e-9) + 1e-15, (d, eps, exact, bound)
            # the gap: the discrete view itself is within 1 % (in delta) of the continuous Gaussian of its variance
            continuous = privacy_profile(d / math.sqrt(12 * sw2 + sg2), eps)
            assert abs(exact - continuous) <= 0.01 * continuous + 1e-12, (d, eps, exact, continuous)


def test_a_real_runs_streams_give_the_same_integers_party_by_party(case, rng):
    """ChaCha20 streams keyed per (term, site) from each party's secret (what the Flower round will call): the full
    flow with every message and the aggregate alone agree exactly, and one site's w~, g~ depend only on its secret."""
    from dpcore.cape.discrete_flow import secure_streams

    _, _, dd = case
    names = dd.design.names
    secrets = {name: bytes([i + 1]) * 32 for i, name in enumerate(names)} | {"aggregator": b"a" * 32}
    values = rng.uniform(-1.0, 1.0, (dd.n_sites, dd.entries))
    streams = {"run": 3, "algorithm": "capePCA", "stage": "A"}
    full = release_messages(values, dd, secure_streams(secrets, names, **streams))
    fast = release_sum(values, dd, secure_streams(secrets, names, **streams))
    assert np.array_equal(full.release.exact, fast.exact)
    other = dict(secrets, aggregator=b"b" * 32)
    again = release_messages(values, dd, secure_streams(other, names, **streams))
    assert np.array_equal(again.w, full.w) and np.array_equal(again.g, full.g) and not np.array_equal(again.f, full.f)
    assert np.array_equal(again.release.exact, full.release.exact)  # F~ cancels exactly
