"""Tensor power methods, whitening, recovery, the CAPE message flow and capeAGN against its baselines."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.agn import (
    ALGORITHMS,
    OtdSettings,
    SyntheticSpec,
    compare_algorithms,
    evaluate,
    make_model,
    q_comp,
    run_algorithm,
    synthetic_problem,
)
from dpcore.agn.guarantees import comparison_guarantees
from dpcore.cape import design_general
from dpcore.privacy import noise_multiplier, sensitivity, symmetric_matrix
from dpcore.scenario import scenario_from_dict
from dpcore.seeding import run_rng
from dpcore.tensor import (
    PowerResult,
    StageNoise,
    Whitening,
    WhiteningError,
    multilinear,
    noisy_tensor_power_method,
    noisy_tpm_budget,
    recover,
    release_m2,
    release_m3,
    tensor_power_method,
    whiten,
)
from dpcore.validation import InputError


def equal_scenario(n_sites=5, n=1000, eps=1.0, delta=0.01, calibration="classic"):
    return scenario_from_dict({"sites": [{"name": f"s{i + 1}", "n": n, "eps": eps, "delta": delta}
                                         for i in range(n_sites)], "calibration": calibration})


def orthogonal_tensor(dim, k, rng):
    v, _ = np.linalg.qr(rng.standard_normal((dim, k)))
    lam = np.linspace(3.0, 1.0, k)
    return sum(lam[i] * np.einsum("i,j,k->ijk", v[:, i], v[:, i], v[:, i]) for i in range(k)), lam, v


# ----------------------------------------------------------------------------------------------
# Power methods
# ----------------------------------------------------------------------------------------------

def test_power_method_recovers_a_noise_free_orthogonal_tensor_to_1e8(rng):
    tensor, lam, v = orthogonal_tensor(8, 5, rng)
    result = tensor_power_method(tensor, 5, np.random.default_rng(1), n_restarts=10, n_iter=30)
    order = np.argmax(np.abs(v.T @ result.eigenvectors), axis=0)
    assert sorted(order.tolist()) == list(range(5))
    np.testing.assert_allclose(result.eigenvectors, v[:, order], atol=1e-8)
    np.testing.assert_allclose(result.eigenvalues, lam[order], atol=1e-8)
    np.testing.assert_allclose(result.eigenvalues, lam, atol=1e-8)  # largest first


def test_power_method_is_seeded(rng):
    tensor = rng.standard_normal((4, 4, 4))
    tensor = (tensor + tensor.transpose(1, 0, 2) + tensor.transpose(2, 1, 0)) / 3
    a = tensor_power_method(tensor, 2, np.random.default_rng(3), n_restarts=3, n_iter=5)
    b = tensor_power_method(tensor, 2, np.random.default_rng(3), n_restarts=3, n_iter=5)
    np.testing.assert_array_equal(a.eigenvectors, b.eigenvectors)
    assert np.all(a.eigenvalues >= 0)  # sign normalised


def test_noisy_power_method_budget_and_limit(rng):
    budget = noisy_tpm_budget(1.0, 0.01, 2, 3, 4, "classic", 0.5)
    releases = 2 * 3 * (4 + 1)
    eps_r = 1.0 / math.sqrt(releases * (4 + math.log(2 / 0.01)))
    assert budget.releases == releases and budget.eps_release == pytest.approx(eps_r)
    assert budget.delta_release == pytest.approx(0.01 / (2 * releases))
    assert budget.sigma == pytest.approx(0.5 * math.sqrt(2 * math.log(1.25 / budget.delta_release)) / eps_r)
    entry = noisy_tpm_budget(1.0, 0.01, 2, 3, 4, "classic", None)
    assert entry.relation == "entry" and entry.sigma == pytest.approx(6 * budget.sigma / 0.5)
    # with a negligible noise scale it is the robust power method
    tensor, lam, v = orthogonal_tensor(6, 3, rng)
    result, _ = noisy_tensor_power_method(tensor, 3, np.random.default_rng(2), eps=1e9, delta=0.01,
                                          sensitivity_value=1e-6, n_restarts=5, n_iter=30)
    np.testing.assert_allclose(np.abs(v.T @ result.eigenvectors).max(axis=0), 1.0, atol=1e-6)
    np.testing.assert_allclose(result.eigenvalues, lam, atol=1e-6)
    # with a large noise scale it does not find the components
    noisy, _ = noisy_tensor_power_method(tensor, 3, np.random.default_rng(2), eps=0.1, delta=0.01,
                                         sensitivity_value=1.0, n_restarts=5, n_iter=30)
    assert np.abs(v.T @ noisy.eigenvectors).max() < 0.999


# ----------------------------------------------------------------------------------------------
# Whitening and recovery
# ----------------------------------------------------------------------------------------------

def test_whitening_makes_the_components_orthonormal():
    model = make_model("mog", 8, 3, np.random.default_rng(4))
    wh = whiten(model.m2(), 3, noisy=False)
    b = wh.w.T @ model.components.T * np.sqrt(model.weights)
    np.testing.assert_allclose(b.T @ b, np.eye(3), atol=1e-10)
    assert np.all(np.diff(wh.eigenvalues) <= 0)


@pytest.mark.parametrize("kind", ["mog", "stm"])
def test_exact_moments_give_exact_recovery(kind):
    model = make_model(kind, 9, 4, np.random.default_rng(5))
    wh = whiten(model.m2(), 4, noisy=False)
    power = tensor_power_method(multilinear(model.m3(), wh.w), 4, np.random.default_rng(6))
    comps, weights, notes = recover(wh, power, kind)
    assert q_comp(comps, model.components) < 1e-8 and notes == ()
    qc, we = evaluate(comps, weights, model.components, model.weights)
    assert qc < 1e-8 and we < 1e-8


def test_whitening_failure_is_explained_never_nan():
    m2 = np.diag([1.0, 0.5, -0.01, -0.2])
    with pytest.raises(WhiteningError) as info:
        whiten(m2, 3)
    message = str(info.value)
    assert isinstance(info.value, InputError)
    for hint in ("more samples", "larger eps", "smaller K", "-0.01"):
        assert hint in message
    np.testing.assert_allclose(info.value.eigenvalues, [1.0, 0.5, -0.01])
    with pytest.raises(WhiteningError, match="choose a smaller K|Choose a smaller K"):
        whiten(m2, 3, noisy=False)
    assert isinstance(whiten(m2, 2), Whitening)


def test_stm_recovery_clips_to_the_simplex():
    u = np.eye(3)[:, :2]
    wh = Whitening(u, u, np.array([1.0, 1.0]))
    power = PowerResult(np.array([2.0, 1.0]), np.array([[1.0, -1.0], [-0.5, 0.0]]))
    comps, weights, notes = recover(wh, power, "stm")
    np.testing.assert_allclose(comps, [[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(weights, [0.2, 0.8])  # 1/lambda^2 = (1/4, 1), renormalised
    assert "uniform" in notes[0]


def test_q_comp_and_weight_error_by_hand():
    ref = np.array([[0.0, 0.0], [1.0, 0.0]])
    est = np.array([[0.0, 1.0], [1.0, 0.0], [3.0, 0.0]])
    assert q_comp(est, ref) == pytest.approx((1 + 0 + 2) / 3)
    qc, we = evaluate(est, np.array([0.5, 0.2, 0.1]), ref, np.array([0.4, 0.6]))
    assert we == pytest.approx((0.1 + 0.4 + 0.5) / 3)


# ----------------------------------------------------------------------------------------------
# The message flow (docs/math/corrections.md, item 7: the real flow, not pooled noise on a pooled statistic)
# ----------------------------------------------------------------------------------------------

def _sites(kind, dim, k, sizes, seed=0):
    model = make_model(kind, dim, k, np.random.default_rng(seed))
    return synthetic_problem(model, sizes, np.random.default_rng(seed + 1)), model


def test_cape_m2_flow_cancels_e_and_subtracts_f():
    problem, _ = _sites("stm", 6, 2, [300, 500, 200, 400])
    mu = np.array([0.1, 0.4, 0.2, 0.3])
    tau = np.array([0.02, 0.01, 0.03, 0.015])
    design = design_general(tau, mu)
    m2, msg = release_m2(problem.sites, mu, StageNoise("cape", design), np.random.default_rng(7), keep_messages=True)
    data = np.stack([s.m2() for s in problem.sites])
    for s in range(4):  # each release = M2_s + E_s + F_s + G_s, all symmetric
        release = symmetric_matrix(msg.releases[s], 6)
        noise = symmetric_matrix(msg.e[s] + msg.f[s] + msg.g[s], 6)
        np.testing.assert_allclose(release, data[s] + noise, atol=1e-14)
    assert np.max(np.abs(mu @ msg.e)) < 1e-14  # sum mu_s e_s = 0
    expected = np.tensordot(mu, data, axes=1) + symmetric_matrix(mu @ msg.g, 6)
    np.testing.assert_allclose(m2, expected, atol=1e-14)
    np.testing.assert_allclose(m2, symmetric_matrix(mu @ (msg.releases - msg.f), 6), atol=1e-14)
    assert np.any(np.abs(msg.e) > 1e-3)  # the helper's noise really was in the releases


@pytest.mark.parametrize("path", ["dense", "projected"])
def test_cape_m3_flow_cancels_e_and_subtracts_f(path):
    problem, _ = _sites("mog", 5, 2, [300, 300, 300])
    mu = np.full(3, 1 / 3)
    w = np.random.default_rng(3).standard_normal((5, 2))
    design = design_general(np.full(3, 0.05), mu)
    m3, msg = release_m3(problem.sites, mu, w, StageNoise("cape", design), np.random.default_rng(8), path=path,
                         keep_messages=True)
    data = np.stack([s.m3_projected(w) for s in problem.sites])
    np.testing.assert_allclose(msg.releases, data + msg.e + msg.f + msg.g, atol=1e-12)
    assert np.max(np.abs(np.tensordot(mu, msg.e, axes=1))) < 1e-12
    np.testing.assert_allclose(m3, np.tensordot(mu, data + msg.g, axes=1), atol=1e-12)
    for term in (msg.e, msg.f, msg.g):  # every noise term is symmetric
        np.testing.assert_allclose(term, term.transpose(0, 2, 1, 3), atol=1e-12)
        np.testing.assert_allclose(term, term.transpose(0, 3, 2, 1), atol=1e-12)


def test_cape_output_noise_equals_pooled_agn_noise():
    """Equal sites: the aggregate M2 noise has the pooled-data std Delta(N) c (per unique entry)."""
    scenario = equal_scenario(n_sites=4, n=500, eps=0.5, delta=1e-3)
    problem, _ = _sites("stm", 40, 2, scenario.sizes)
    mu = scenario.weights()
    tau = scenario.sensitivities("stm-m2") * scenario.multipliers()
    design = design_general(tau, mu)
    data = sum(m * s.m2() for m, s in zip(mu, problem.sites, strict=True))
    draws = []
    rng = np.random.default_rng(9)
    for _ in range(12):
        m2, _ = release_m2(problem.sites, mu, StageNoise("cape", design), rng)
        draws.append((m2 - data)[np.triu_indices(40)])
    noise = np.concatenate(draws)
    pooled_std = sensitivity("stm-m2", 2000) * noise_multiplier(0.5, 1e-3)
    rel_se = math.sqrt(2 / noise.size)
    assert abs(noise.var() / pooled_std**2 - 1) < 5 * rel_se
    assert abs(noise.mean()) < 5 * pooled_std / math.sqrt(noise.size)


def test_common_random_numbers_across_eps():
    """The same generator state gives the same standard normals at any eps: noise scales exactly."""
    problem, _ = _sites("stm", 7, 2, [100, 100, 100])
    mu = np.full(3, 1 / 3)
    data = sum(m * s.m2() for m, s in zip(mu, problem.sites, strict=True))
    for mode in ("independent", "cape"):
        results = []
        for tau in (0.01, 0.04):
            noise = (StageNoise("independent", stds=np.full(3, tau)) if mode == "independent"
                     else StageNoise("cape", design_general(np.full(3, tau), mu)))
            m2, _ = release_m2(problem.sites, mu, noise, run_rng(3, 0, "cape", "otd"))
            results.append(m2 - data)
        np.testing.assert_allclose(results[1], 4 * results[0], atol=1e-13)


def test_runs_are_reproducible_and_the_scenario_must_match():
    scenario = equal_scenario(n_sites=3, n=300, eps=2.0)
    spec = SyntheticSpec(kind="stm", dim=8, k=3)
    a = compare_algorithms(scenario, ["cape", "conv"], spec=spec, runs=2, seed=4)
    b = compare_algorithms(scenario, ["cape", "conv"], spec=spec, runs=2, seed=4)
    assert [r.q_comp for r in a.records] == [r.q_comp for r in b.records]
    problem, _ = _sites("stm", 8, 3, [300, 300, 200])
    with pytest.raises(InputError, match="site sizes"):
        run_algorithm("cape", problem, scenario, OtdSettings(), np.random.default_rng(0))


def test_every_algorithm_runs_and_its_privacy_is_the_audits():
    scenario = equal_scenario(n_sites=3, n=2000, eps=4.0)
    result = compare_algorithms(scenario, list(ALGORITHMS), spec=SyntheticSpec(kind="stm", dim=8, k=3), runs=1, seed=2)
    assert set(result.examples) == set(ALGORITHMS)
    for dec in result.examples.values():
        assert dec.components.shape == (3, 8) and np.all(np.isfinite(dec.components))
        assert not hasattr(dec, "privacy")  # issue 33: no sentence per run; the guarantee is computed per view
    guarantees = comparison_guarantees(result)
    assert set(guarantees) == set(ALGORITHMS) and all(guarantees.values())
    assert not any(g.certified for g in guarantees["nonpriv"]) and not any(g.certified for g in guarantees["online"])
    assert all(g.certified for g in guarantees["conv"])
    assert result.to_dict()["path"] == "dense"
    # issue 33: the comparison carries no privacy sentences; its guarantee is the audit's, computed per view
    assert "privacy" not in result.to_dict() and not hasattr(result, "privacy")
    guarantees = comparison_guarantees(result)
    assert set(guarantees) == set(ALGORITHMS) and all(guarantees[name] for name in ALGORITHMS if name != "nonpriv")


def test_whitening_failures_are_recorded_not_averaged():
    """Noise-dominated M2 with K close to D: the 9th largest eigenvalue of the noisy 10 x 10 M2 is negative.

    N_s = 20,000 keeps the non-private control from failing too: at N_s = 100 its own finite-sample M2 lost the
    9th eigenvalue in 7 of 8 independent seeds (the test's seed happened to pass); at 20,000, 0 of 30 runs failed
    in 10 seeds while local failed all 30."""
    scenario = equal_scenario(n_sites=3, n=20_000, eps=0.05, delta=1e-5)
    spec = SyntheticSpec(kind="mog", dim=10, k=9)
    result = compare_algorithms(scenario, ["local", "nonpriv"], spec=spec, runs=3, seed=1)
    local = result.summary("local")
    assert local.failed == 3 and local.runs == 0 and local.mean is None and local.std is None
    assert "whitening failed" in result.failures["local"] and "smaller K" in result.failures["local"]
    assert result.summary("nonpriv").failed == 0 and result.summary("nonpriv").runs == 3
    assert result.to_dict()["results"][0] == {"algorithm": "local", "metric": "q_comp", "mean": None, "std": None,
                                              "runs": 0, "failed": 3}


# ----------------------------------------------------------------------------------------------
# Utility: non-private small at the paper's sizes; capeAGN beats conv and local, approaches non-private
# ----------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("kind", ["mog", "stm"])
@pytest.mark.parametrize("sizes", [(10, 5), (50, 10)])
def test_nonprivate_recovery_is_accurate_at_the_papers_sizes(kind, sizes):
    """The paper's (D, K) with S = 5: the non-private recovery is far better than random vectors and improves with
    N_s. Margins measured over 8 independent seeds (5, 105, ..., 705): at N_s = 1000 / 4000 STM with D = 50, K = 10
    reached q/q_random = 0.54 > 0.5 and 0.29 against 0.3 (one seed failed); at 2000 / 20,000 the worst ratios were
    0.38 (< 0.5), 0.15 (< 0.3) and 0.49 for q(20,000) / q(2,000) (< 1)."""
    dim, k = sizes
    spec = SyntheticSpec(kind=kind, dim=dim, k=k)
    q = {}
    for n in (2000, 20_000):
        result = compare_algorithms(equal_scenario(n=n), ["nonpriv", "random"], spec=spec, runs=2, seed=5)
        q[n] = result.summary("nonpriv").mean
        random_q = result.summary("random").mean
        assert q[n] < 0.5 * random_q
    assert q[20_000] < 0.3 * random_q
    assert q[20_000] < q[2000]  # consistent: more data, smaller error


def _paired_gap(result, worse, better):
    a = np.array([r.q_comp for r in result.records if r.algorithm == worse])
    b = np.array([r.q_comp for r in result.records if r.algorithm == better])
    d = a - b
    return d.mean(), d.std(ddof=1) / math.sqrt(d.size)


@pytest.mark.parametrize("kind, eps, n, runs", [("stm", 1.0, 10_000, 30), ("mog", 10.0, 5000, 20)])
def test_cape_beats_conv_and_local_in_expectation(kind, eps, n, runs):
    """The paper's setting (S = 5, delta = 0.01, eps split equally), D = 10, K = 5: the paired mean advantage
    of capeAGN exceeds 3 standard errors.

    The seeded runs are chaotic (the power method amplifies rounding differences between CPUs), so the margin
    was measured over independent run streams of the same model (runs R..2R-1, 2R..3R-1, ...: 8 windows):
    the smallest paired z was 6.3 (STM) and 5.8 (MOG), against 1.0 to 2.3 for the earlier N_s = 2000, 12 runs
    (which failed on a fresh machine)."""
    result = compare_algorithms(equal_scenario(n=n, eps=eps), ["cape", "conv", "local"],
                                spec=SyntheticSpec(kind=kind, dim=10, k=5), runs=runs, seed=11)
    for other in ("conv", "local"):
        gap, se = _paired_gap(result, other, "cape")
        assert gap > 3 * se, (other, gap, se)


def test_cape_approaches_nonprivate_as_eps_and_n_grow():
    spec = SyntheticSpec(kind="stm", dim=10, k=5)
    gaps = []
    for eps in (0.3, 1.0, 3.0, 1000.0):
        result = compare_algorithms(equal_scenario(n=2000, eps=eps), ["cape", "nonpriv"], spec=spec, runs=6, seed=3)
        gaps.append(result.summary("cape").mean - result.summary("nonpriv").mean)
    assert gaps[0] > gaps[1] > gaps[2] > abs(gaps[3])
    assert abs(gaps[3]) < 0.01 * gaps[0]
    n_gaps = []
    for n in (500, 5000, 50_000):
        result = compare_algorithms(equal_scenario(n=n, eps=2.0), ["cape", "nonpriv"], spec=spec, runs=6, seed=3)
        n_gaps.append(result.summary("cape").mean - result.summary("nonpriv").mean)
    assert n_gaps[0] > n_gaps[1] > n_gaps[2] and n_gaps[2] < 0.1 * n_gaps[0]


# ----------------------------------------------------------------------------------------------
# The noisy tensor power method's composition, and the budgets of the single-party baselines
# ----------------------------------------------------------------------------------------------

def _composed_delta_by_integration(mu: float, eps: float) -> float:
    """delta(eps) = E[(1 - e^(eps - L))_+] for the privacy loss L ~ N(mu^2 / 2, mu^2) of a Gaussian mechanism with
    mu = Delta / sigma, by numerical integration (no closed form used)."""
    import scipy.integrate
    import scipy.stats

    def integrand(x: float) -> float:
        return (1.0 - math.exp(eps - x)) * scipy.stats.norm.pdf(x, mu**2 / 2, mu)

    upper = mu**2 / 2 + 40 * mu
    return scipy.integrate.quad(integrand, eps, max(upper, eps + 1.0), limit=200)[0] if upper > eps else 0.0


@pytest.mark.parametrize("calibration", ["classic", "analytic"])
def test_noisy_tpm_budget_holds_by_exact_gaussian_composition(calibration):
    """The K = k L (R + 1) releases with eps' = eps / sqrt(K (4 + ln(2/delta))), delta' = delta / (2K) are K Gaussian
    mechanisms with Delta / sigma = 1 / c(eps', delta') each; K of them compose to one Gaussian mechanism with
    mu = sqrt(K) / c (the privacy losses add: N(K m^2 / 2, K m^2)). Its delta at eps, by integration, is at most delta
    for every setting - while Dwork-Roth's advanced composition with the same eps' exceeds eps when ln(2/delta) > 4,
    so the statement 'by advanced composition' would have been wrong."""
    from dpcore.tensor import noisy_tpm_budget

    for eps, delta, k, restarts, iters in [(0.5, 0.005, 5, 10, 30), (2.0, 1e-5, 10, 10, 30), (0.1, 0.05, 3, 5, 10),
                                           (5.0, 1e-3, 20, 20, 50), (1.0, 0.01, 1, 1, 1)]:
        budget = noisy_tpm_budget(eps, delta, k, restarts, iters, calibration, 1.0)
        assert budget.releases == k * restarts * (iters + 1)
        c = noise_multiplier(budget.eps_release, budget.delta_release, calibration)
        assert budget.sigma == pytest.approx(c) and budget.mu == pytest.approx(math.sqrt(budget.releases) / c)
        integrated = _composed_delta_by_integration(budget.mu, eps)
        assert integrated <= delta and budget.delta_composed <= delta
        assert budget.delta_composed == pytest.approx(integrated, abs=1e-12)
        assert f"at eps {eps:g}," in budget.describe() and "composed exactly" in budget.describe()
    example = noisy_tpm_budget(0.5, 0.005, 5, 10, 30, "classic", 1.0)  # docs/math/capeagn.md's example: K = 1550
    eps_r, releases, delta2 = example.eps_release, example.releases, 0.005 / 2
    advanced = math.sqrt(2 * releases * math.log(1 / delta2)) * eps_r + releases * eps_r * math.expm1(eps_r)
    assert releases == 1550 and advanced == pytest.approx(0.573, abs=1e-3) and advanced > 0.5


def test_pooled_baselines_honour_every_site_with_the_largest_multiplier():
    """Pooled AGN, AVN and the noisy TPM use max_s c(eps_s, delta_s) of each stage's share (PCA's pooled AG rule), not
    c(min eps, min delta): when the smallest eps and the smallest delta belong to different sites the latter is
    strictly larger than needed. local uses the least noisy site (smallest M3-stage tau_s): the largest site when
    budgets are equal, a smaller site with a larger budget otherwise."""
    from dpcore.agn.algorithm import RunContext
    from dpcore.agn.algorithms.pooled import _party, local_site_index
    from dpcore.privacy import multiplier

    scenario = scenario_from_dict({"sites": [{"name": "a", "n": 400, "eps": 0.5, "delta": 1e-2},
                                             {"name": "b", "n": 600, "eps": 2.0, "delta": 1e-6}],
                                   "calibration": "classic"})
    model = make_model("mog", 6, 2, np.random.default_rng(0))
    problem = synthetic_problem(model, [400, 600], np.random.default_rng(1))
    ctx = RunContext(name="agn", problem=problem, scenario=scenario, settings=OtdSettings(),
                     rng=np.random.default_rng(2), path="dense")
    party = _party(ctx, alone=False)
    for share in (0.5, 1.0):
        per_site = [multiplier(share * e, share * d, "classic") for e, d in ((0.5, 1e-2), (2.0, 1e-6))]
        assert party.multiplier(share, share) == pytest.approx(max(per_site))
        assert party.multiplier(share, share) < multiplier(share * 0.5, share * 1e-6, "classic")
    assert local_site_index(problem, scenario, 0.5) == 1  # b: larger and with the larger budget
    equal = scenario_from_dict({"sites": [{"name": "a", "n": 400, "eps": 1.0, "delta": 1e-3},
                                          {"name": "b", "n": 600, "eps": 1.0, "delta": 1e-3}]})
    assert local_site_index(problem, equal, 0.5) == 1  # equal budgets: the largest site
    skewed = scenario_from_dict({"sites": [{"name": "a", "n": 400, "eps": 5.0, "delta": 1e-3},
                                           {"name": "b", "n": 600, "eps": 1.0, "delta": 1e-3}]})
    assert local_site_index(problem, skewed, 0.5) == 0  # the smaller site with 5 times the eps is less noisy
