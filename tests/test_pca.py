"""capePCA and baselines: exact formulas, the message flow, statistical equivalence with pooled AG, trends."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore import pca
from dpcore.cape import design_general
from dpcore.data import load_bundled, synthetic_dataset
from dpcore.linalg import top_eigenpairs
from dpcore.pca import (
    ALGORITHMS,
    METRICS,
    cape_aggregate,
    cape_messages,
    captured_energy,
    communication_volume,
    compare_pca,
    pca_privacy,
    pca_problem,
    prepare_pca,
    run_algorithm,
    scree,
    subspace_distance,
)
from dpcore.privacy import noise_multiplier, symmetric_matrix, unique_entries_matrix
from dpcore.scenario import equal_sites_scenario, scenario_from_dict
from dpcore.seeding import run_rng
from dpcore.validation import InputError


def equal_setup(n_sites=4, site_size=50, dim=8, k=3, eps=0.5, delta=0.01, seed=0, solver_dtype="float32", **options):
    scenario = equal_sites_scenario(n_sites, site_size, eps, delta, **options)
    data = synthetic_dataset(scenario.total_n, np.random.default_rng([seed, 7]), dim=dim)
    return prepare_pca(data, scenario, k, seed=seed, solver_dtype=solver_dtype)


def unequal_setup(dim=6, k=2):
    scenario = scenario_from_dict({"sites": [
        {"name": "A", "n": 30, "eps": 0.3, "delta": 1e-3},
        {"name": "B", "n": 60, "eps": 0.5, "delta": 1e-3},
        {"name": "C", "n": 90, "eps": 0.9, "delta": 1e-3},
    ], "calibration": "analytic"})
    data = synthetic_dataset(scenario.total_n, np.random.default_rng(11), dim=dim)
    return prepare_pca(data, scenario, k)


# ----------------------------------------------------------------------------------------------
# Linear algebra and metrics, exact
# ----------------------------------------------------------------------------------------------


def random_basis(rng, dim, k):
    q, _ = np.linalg.qr(rng.standard_normal((dim, k)))
    return q


def test_top_eigenpairs_matches_full_decomposition(rng):
    m = rng.standard_normal((30, 30))
    m = m + m.T
    values, vectors = top_eigenpairs(m, 5)
    full_values, full_vectors = np.linalg.eigh(m)
    np.testing.assert_allclose(values, full_values[::-1][:5], rtol=1e-10)
    np.testing.assert_allclose(np.abs(np.sum(vectors * full_vectors[:, ::-1][:, :5], axis=0)), 1.0, rtol=1e-8)
    # only the lower triangle is read: garbage above the diagonal changes nothing
    lower = np.tril(m) + np.triu(np.full((30, 30), 1e6), 1)
    np.testing.assert_allclose(top_eigenpairs(lower, 5)[0], values, rtol=1e-10)


def test_captured_energy_and_subspace_distance_brute_force(rng):
    a = rng.standard_normal((12, 12))
    a = a @ a.T
    v1, v2 = random_basis(rng, 12, 4), random_basis(rng, 12, 4)
    assert captured_energy(a, v1) == pytest.approx(np.trace(v1.T @ a @ v1), rel=1e-12)
    brute = np.linalg.norm(v1 @ v1.T - v2 @ v2.T, 2)
    assert subspace_distance(v1, v2) == pytest.approx(brute, rel=1e-10)
    rotated = v1 @ np.linalg.qr(rng.standard_normal((4, 4)))[0]
    assert subspace_distance(v1, rotated) < 1e-12  # same subspace, other basis
    e = np.eye(12)
    assert subspace_distance(e[:, :4], e[:, 4:8]) == pytest.approx(1.0)
    small = np.column_stack([np.cos(1e-6) * e[:, 0] + np.sin(1e-6) * e[:, 5], e[:, 1]])
    assert subspace_distance(e[:, :2], small) == pytest.approx(math.sin(1e-6), rel=1e-6)
    with pytest.raises(InputError):
        subspace_distance(v1, v2[:, :3])


def test_problem_matrices_are_the_second_moments(rng):
    sites = [rng.standard_normal((5, n)) for n in (7, 13, 20)]
    sites = [x / np.linalg.norm(x, axis=0).max() for x in sites]
    problem = pca_problem(sites, 2)
    pooled = sum(x @ x.T for x in sites) / 40
    np.testing.assert_allclose(problem.pooled, pooled, atol=1e-14)
    for s, x in enumerate(sites):
        np.testing.assert_allclose(problem.site_matrix(s), x @ x.T / x.shape[1], atol=1e-14)
    np.testing.assert_allclose(problem.eigenvalues, np.sort(np.linalg.eigvalsh(pooled))[::-1], atol=1e-12)
    assert problem.optimal_energy == pytest.approx(captured_energy(pooled, problem.top_vectors), rel=1e-12)
    np.testing.assert_array_equal(problem.sizes, [7, 13, 20])


def test_problem_errors(rng, monkeypatch):
    x = rng.standard_normal((4, 10))
    with pytest.raises(InputError, match="norm .* > 1"):
        pca_problem([x], 2)
    x = x / np.linalg.norm(x, axis=0).max()
    with pytest.raises(InputError, match="K must be <= D = 4"):
        pca_problem([x], 5)
    with pytest.raises(InputError, match="D = 4"):
        pca_problem([x, x[:3]], 2)
    monkeypatch.setattr(pca.problem, "MAX_PCA_ENTRIES", 15)
    with pytest.raises(InputError, match="2 x 10 = 20 numbers"):
        pca_problem([x, x], 2)


def test_communication_volumes():
    s, d, r = 10, 784, 50
    assert communication_volume("cape", s, d) == 3 * s * d * d
    assert communication_volume("conv", s, d) == s * d * d
    assert communication_volume("pool_ag", s, d) == s * d * d
    assert communication_volume("dpdis", s, d, r) == s * d * r
    assert communication_volume("local", s, d) == 0
    assert communication_volume("central", s, d) == s * (d * d + d + 1) + d * d + d
    assert all(entry.communication_text for entry in ALGORITHMS.values())
    with pytest.raises(InputError, match="algorithm must be one of"):  # never another algorithm's formula
        communication_volume("magic", s, d)


# ----------------------------------------------------------------------------------------------
# Privacy set-up
# ----------------------------------------------------------------------------------------------


def test_privacy_levels_equal_sites():
    setup = equal_setup(n_sites=5, site_size=40, eps=0.5, delta=1e-3)
    c = noise_multiplier(0.5, 1e-3, "classic")
    privacy = setup.privacy
    np.testing.assert_allclose(privacy.tau, math.sqrt(2) / 40 * c)
    assert privacy.pooled_std == pytest.approx(math.sqrt(2) / 200 * c)
    assert privacy.design.tau_c == pytest.approx(privacy.pooled_std)  # CAPE reaches the pooled level
    assert privacy.design.output_std == pytest.approx(privacy.pooled_std)
    assert privacy.conventional_std == pytest.approx(privacy.pooled_std * math.sqrt(5))
    published = equal_setup(n_sites=5, site_size=40, eps=0.5, delta=1e-3, neighbouring="as-published")
    assert published.privacy.pooled_std == pytest.approx(privacy.pooled_std / math.sqrt(2))


def test_privacy_notes_are_compacted():
    setup = equal_setup(n_sites=10, site_size=20, eps=2.0)
    notes = " | ".join(setup.privacy.notes)
    assert "sites s1, s2, s3, s4, s5, s6 and 4 more: classic Gaussian calibration at eps = 2" in notes
    assert notes.count("classic Gaussian calibration") == 1


def test_mismatched_design_or_sizes_are_rejected():
    setup = equal_setup()
    other = design_general(np.ones(3), np.full(3, 1 / 3))
    with pytest.raises(InputError, match="other sites or budgets"):
        pca_privacy(setup.privacy.scenario, other)
    wrong = pca_privacy(equal_sites_scenario(4, 51, 0.5, 0.01))
    with pytest.raises(InputError, match="site sizes"):
        run_algorithm("cape", setup.problem, wrong, np.random.default_rng(0))


# ----------------------------------------------------------------------------------------------
# The capePCA message flow
# ----------------------------------------------------------------------------------------------


def test_every_released_matrix_and_noise_term_is_symmetric():
    setup = unequal_setup()
    problem, privacy = setup.problem, setup.privacy
    messages = cape_messages(problem.site_moments, privacy.design, np.random.default_rng(1))
    for term in ("e", "f", "g", "released"):
        mats = messages.matrices(term, problem.dim)
        assert mats.shape == (3, problem.dim, problem.dim)
        np.testing.assert_array_equal(mats, np.swapaxes(mats, 1, 2))
        assert np.all(mats != 0)
    for algorithm, entry in ALGORITHMS.items():
        result = run_algorithm(algorithm, problem, privacy, np.random.default_rng(2), keep_matrix=True)
        if result.matrix is None:  # only a reference that uses no data decomposes no matrix
            assert not entry.uses_data, algorithm
            continue
        np.testing.assert_array_equal(result.matrix, result.matrix.T)


def test_release_and_aggregation_are_the_protocol():
    setup = unequal_setup()
    problem, design = setup.problem, setup.privacy.design
    m = cape_messages(problem.site_moments, design, np.random.default_rng(3))
    np.testing.assert_allclose(m.released, problem.site_moments + m.e + m.f + m.g, atol=1e-15)
    np.testing.assert_allclose(design.weights @ m.e, 0.0, atol=1e-12 * np.abs(m.e).max())
    aggregate = cape_aggregate(m.released, m.f, design.weights)
    np.testing.assert_allclose(aggregate, design.weights @ (problem.site_moments + m.g), atol=1e-14)
    # weights N_s / N: the noiseless part is exactly the pooled matrix
    np.testing.assert_allclose(design.weights @ problem.site_moments, problem.pooled_unique, atol=1e-15)


def test_site_noise_variances_follow_the_design():
    setup = unequal_setup(dim=30)
    problem, design = setup.problem, setup.privacy.design
    draws = [cape_messages(problem.site_moments, design, np.random.default_rng([5, i])) for i in range(20)]
    n = 20 * problem.site_moments.shape[1]  # 9,300 entries per site and term
    for term, variances in (("e", design.var_e), ("f", design.var_f), ("g", design.var_g)):
        values = np.concatenate([getattr(d, term) for d in draws], axis=1)
        ratio = values.var(axis=1) / variances
        np.testing.assert_allclose(ratio, 1.0, atol=5 * math.sqrt(2 / n))


@pytest.mark.parametrize("equal", [True, False])
def test_aggregated_cape_noise_has_the_pooled_variance(equal):
    setup = equal_setup(n_sites=5, site_size=40, dim=6, k=2) if equal else unequal_setup(dim=6)
    problem, privacy = setup.problem, setup.privacy
    draws = 3000
    noise = np.empty((draws, problem.pooled_unique.size))
    for i in range(draws):
        m = cape_messages(problem.site_moments, privacy.design, np.random.default_rng([9, i]))
        noise[i] = cape_aggregate(m.released, m.f, privacy.design.weights) - problem.pooled_unique
    target = privacy.pooled_std**2 if equal else privacy.design.tau_c**2
    n = noise.size  # 63,000 entries: standard error of the variance ratio sqrt(2/n) = 0.56%
    assert noise.var() / target == pytest.approx(1.0, abs=5 * math.sqrt(2 / n))
    assert abs(noise.mean()) < 5 * math.sqrt(target / n)
    # independent entries (diagonal and off-diagonal alike), as in pooled Analyze Gauss
    corr = np.corrcoef(noise, rowvar=False)
    off = corr[~np.eye(corr.shape[0], dtype=bool)]
    assert np.abs(off).max() < 5 / math.sqrt(draws)
    np.testing.assert_allclose(np.diag(np.cov(noise, rowvar=False)) / target, 1.0, atol=5 * math.sqrt(2 / draws))


@pytest.mark.parametrize("algorithm", ["pool_ag", "central", "conv", "local"])
def test_baseline_noise_levels(algorithm):
    setup = equal_setup(n_sites=5, site_size=40, dim=6, k=2)
    problem, privacy = setup.problem, setup.privacy
    target = {"pool_ag": privacy.pooled_std, "central": privacy.pooled_std, "conv": privacy.conventional_std,
              "local": privacy.tau[0]}[algorithm]
    base = problem.site_moments[0] if algorithm == "local" else problem.pooled_unique
    draws = 1500
    results = [run_algorithm(algorithm, problem, privacy, np.random.default_rng([4, i]), keep_matrix=True)
               for i in range(draws)]
    noise = np.array([unique_entries_matrix(r.matrix) - base for r in results])
    assert noise.var() / target**2 == pytest.approx(1.0, abs=5 * math.sqrt(2 / noise.size))
    assert results[0].noise_std == pytest.approx(target)


def test_cape_and_pooled_ag_have_the_same_mean_captured_energy():
    setup = equal_setup(n_sites=5, site_size=40, dim=10, k=3, eps=1.0)
    result = compare_pca(setup.problem, setup.privacy, ["cape", "pool_ag", "conv"], runs=300, seed=12)
    stats = {m.algorithm: m for m in result.summary if m.metric == "captured_energy"}
    cape, pooled, conv = stats["cape"], stats["pool_ag"], stats["conv"]
    se = math.sqrt(cape.std**2 / cape.runs + pooled.std**2 / pooled.runs)
    assert abs(cape.mean - pooled.mean) < 4.5 * se
    # the test has power: the conventional scheme is many standard errors below
    assert cape.mean - conv.mean > 10 * se


# ----------------------------------------------------------------------------------------------
# Trends
# ----------------------------------------------------------------------------------------------


def test_large_eps_approaches_non_dp_pool():
    setup = equal_setup(n_sites=4, site_size=20_000, dim=10, k=3, eps=1e4, solver_dtype="float64")  # exact to 1e-9
    problem, privacy = setup.problem, setup.privacy
    for algorithm in ("cape", "pool_ag", "conv", "central"):
        r = run_algorithm(algorithm, problem, privacy, run_rng(0, 0, algorithm, "pca"))
        assert r.captured_energy_ratio == pytest.approx(1.0, abs=1e-9)
        assert r.subspace_distance < 1e-4
    full = run_algorithm("dpdis", problem, privacy, np.random.default_rng(0), rank=problem.dim)
    assert full.subspace_distance < 1e-4  # R = D keeps every site's whole matrix
    assert run_algorithm("dpdis", problem, privacy, np.random.default_rng(0)).captured_energy_ratio > 0.99
    local = run_algorithm("local", problem, privacy, np.random.default_rng(0))
    own = top_eigenpairs(problem.site_matrix(0), problem.k)[1]
    assert subspace_distance(local.subspace, own) < 1e-4  # local approaches its own site's PCA


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_cape_beats_conv_and_local_at_reduced_fig2_settings(eps):
    # Fig. 2(a) settings reduced: S = 10, delta = 0.01; D = 30, K = 8, N_s = 100 instead of 200, 50, 1000
    setup = equal_setup(n_sites=10, site_size=100, dim=30, k=8, eps=eps, delta=0.01, seed=1)
    result = compare_pca(setup.problem, setup.privacy, ["cape", "conv", "local"], runs=20, seed=3)
    stats = {m.algorithm: m for m in result.summary if m.metric == "captured_energy"}
    for other in ("conv", "local"):
        se = math.sqrt(stats["cape"].std**2 / 20 + stats[other].std**2 / 20)
        assert stats["cape"].mean - stats[other].mean > 4 * se


# ----------------------------------------------------------------------------------------------
# Common random numbers, runner, helpers
# ----------------------------------------------------------------------------------------------


def test_same_seed_reuses_the_same_standard_normals_at_any_eps():
    low, high = (equal_setup(eps=e, calibration="analytic") for e in (0.2, 0.8))
    ratio = high.privacy.tau[0] / low.privacy.tau[0]
    m_low = cape_messages(low.problem.site_moments, low.privacy.design, run_rng(4, 2, "cape", "pca"))
    m_high = cape_messages(high.problem.site_moments, high.privacy.design, run_rng(4, 2, "cape", "pca"))
    for term in ("e", "f", "g"):
        np.testing.assert_allclose(getattr(m_high, term), ratio * getattr(m_low, term), rtol=1e-6, atol=1e-15)
    np.testing.assert_array_equal(low.problem.pooled, high.problem.pooled)  # same data, other budget
    for algorithm in ("pool_ag", "conv", "local", "central"):
        base = low.problem.site_matrix(0) if algorithm == "local" else low.problem.pooled
        a = run_algorithm(algorithm, low.problem, low.privacy, run_rng(4, 2, algorithm, "pca"), keep_matrix=True)
        b = run_algorithm(algorithm, high.problem, high.privacy, run_rng(4, 2, algorithm, "pca"), keep_matrix=True)
        np.testing.assert_allclose(b.matrix - base, ratio * (a.matrix - base), rtol=1e-6, atol=1e-14)
    first, other = run_rng(4, 2, "cape", "pca"), run_rng(4, 3, "cape", "pca")
    assert not np.allclose(first.standard_normal(3), other.standard_normal(3))


def test_nonpriv_draws_nothing():
    setup = equal_setup()
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    r = run_algorithm("nonpriv", setup.problem, setup.privacy, rng)
    assert rng.bit_generator.state == before
    assert run_algorithm("nondp", setup.problem, setup.privacy, rng).algorithm == "nonpriv"  # the old name
    assert r.captured_energy_ratio == pytest.approx(1.0) and r.subspace_distance < 1e-12


def test_compare_summary_progress_and_table():
    setup = equal_setup()
    calls = []
    result = compare_pca(setup.problem, setup.privacy, ["cape", "local", "cape"], runs=3, seed=5,
                         progress=lambda done, total, label: calls.append((done, total, label)))
    assert list(result.results) == ["cape", "local"]
    assert [c[0] for c in calls] == list(range(1, 7)) and all(c[1] == 6 for c in calls)
    for m in result.summary:
        values = [r.metric(m.metric) for r in result.results[m.algorithm]]
        assert m.mean == pytest.approx(np.mean(values)) and m.std == pytest.approx(np.std(values, ddof=1))
        assert m.runs == 3
    assert {m.metric for m in result.summary} == set(METRICS)
    assert len(result.runs_table()) == 6 and result.communication["local"] == 0
    assert any("local uses site s1" in n for n in result.notes)
    again = compare_pca(setup.problem, setup.privacy, ["local"], runs=3, seed=5)
    assert [r.captured_energy for r in again.results["local"]] == [r.captured_energy for r in result.results["local"]]
    single = compare_pca(setup.problem, setup.privacy, ["cape"], runs=1)
    assert all(m.std == 0.0 for m in single.summary)


def test_compare_errors():
    setup = equal_setup()
    with pytest.raises(InputError, match="algorithm must be one of"):
        compare_pca(setup.problem, setup.privacy, ["cape", "pca-magic"])
    with pytest.raises(InputError, match="at least one algorithm"):
        compare_pca(setup.problem, setup.privacy, [])
    with pytest.raises(InputError, match="runs must be an integer from 1 to 1,000"):
        compare_pca(setup.problem, setup.privacy, runs=0)
    with pytest.raises(InputError, match="K = 3 <= R <= D = 8"):
        compare_pca(setup.problem, setup.privacy, ["dpdis"], rank=2)
    with pytest.raises(InputError, match="local site"):
        run_algorithm("local", setup.problem, setup.privacy, np.random.default_rng(0), local_site=9)


def test_local_defaults_to_the_site_with_least_noise():
    setup = unequal_setup()
    result = compare_pca(setup.problem, setup.privacy, ["local"], runs=1)
    assert result.results["local"][0].noise_std == pytest.approx(setup.privacy.tau.min())
    assert any("local uses site C" in n for n in result.notes)


def test_scree_sorted_true_and_noisy():
    setup = equal_setup()
    r = run_algorithm("cape", setup.problem, setup.privacy, np.random.default_rng(0), keep_matrix=True)
    true, noisy = scree(setup.problem, r.matrix, 5)
    np.testing.assert_allclose(true, setup.problem.eigenvalues[:5])
    np.testing.assert_allclose(noisy, np.sort(np.linalg.eigvalsh(r.matrix))[::-1][:5])
    bound = 4 * math.sqrt(setup.problem.dim) * float(np.finfo(np.float32).eps) * np.abs(noisy).max()
    np.testing.assert_allclose(noisy[: setup.problem.k], r.eigenvalues, rtol=0, atol=bound)  # float32 solver


def test_prepare_pca_on_bundled_digits_with_replacement():
    scenario = equal_sites_scenario(4, 600, 0.5, 1e-4)
    with pytest.raises(InputError, match="allow sampling with replacement"):
        prepare_pca(load_bundled("digits"), scenario, 5)  # off by default
    setup = prepare_pca(load_bundled("digits"), scenario, 5, by_label=True, allow_replacement=True)
    assert setup.split.with_replacement
    assert any("with replacement" in n for n in setup.notes)
    assert any("not private" in n for n in setup.notes)
    assert setup.problem.sizes.tolist() == [600] * 4
    with pytest.raises(InputError, match="K must be <= D = 64"):
        prepare_pca(load_bundled("digits"), scenario, 65)


def test_noise_spectral_norm_is_the_semicircle_edge(rng):
    dim, std = 300, 0.01
    norms = [np.linalg.norm(symmetric_matrix(rng.normal(0, std, dim * (dim + 1) // 2), dim), 2) for _ in range(5)]
    # finite-D fluctuations of the largest eigenvalue are O(std D^(-1/6)), about 1% of the edge here
    assert np.mean(norms) == pytest.approx(pca.noise_spectral_norm(dim, std), rel=0.05)


def test_noise_dominance_note():
    noisy = equal_setup(n_sites=3, site_size=30, dim=20, k=10, eps=0.05)
    assert any("mostly noise" in n for n in noisy.notes)
    quiet = equal_setup(n_sites=3, site_size=30, dim=20, k=2, eps=1e4)
    assert pca.noise_dominance_note(quiet.problem, quiet.privacy) is None


def test_csv_exports_and_sign_alignment(rng):
    setup = equal_setup()
    result = compare_pca(setup.problem, setup.privacy, ["cape", "nonpriv"], runs=2, seed=1)
    summary = result.summary_csv().splitlines()
    assert summary[0] == "algorithm,metric,mean,std,runs" and len(summary) == 1 + 2 * len(METRICS)
    first = result.summary[0]
    assert summary[1] == f"cape,captured_energy,{first.mean!r},{first.std!r},2"
    runs = result.runs_csv().splitlines()
    assert runs[0] == "algorithm,run,captured_energy,captured_energy_ratio,subspace_distance,numbers_sent"
    assert len(runs) == 1 + 4
    v = random_basis(rng, 6, 3)
    flipped = v * np.array([-1.0, 1.0, -1.0])
    np.testing.assert_array_equal(pca.align_signs(v, flipped), v)


def test_symmetric_matrix_round_trip_used_by_the_flow(rng):
    m = rng.standard_normal((5, 5))
    m = m + m.T
    np.testing.assert_array_equal(symmetric_matrix(unique_entries_matrix(m), 5), m)


# ----------------------------------------------------------------------------------------------
# Precision of the eigensolver (docs/math/capepca.md, "Precision of the eigensolver")
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps", [0.1, 1.0, 10.0])
def test_float32_eigensolves_stay_within_their_rounding_bounds(eps):
    """float32 against float64 on capePCA's noisy aggregate: eigenvalues within delta = 4 sqrt(D) eps32 ||M||_2
    (rounding plus a backward-stable solver, Weyl), captured energy within 2 K ||A||_2 delta / gap (Davis-Kahan),
    and that error below 1% of the run-to-run spread the DP noise causes. Deterministic bounds: they hold on any
    machine (measured: eigenvalue errors at most 7% of delta, energy errors at most 0.03% of their bound)."""
    from dpcore.pca.algorithms.cape import cape_aggregate, cape_messages
    from dpcore.pca.metrics import captured_energy
    from dpcore.pca.result import lower_matrix

    eps32 = float(np.finfo(np.float32).eps)
    setup = pca.prepare_pca(load_bundled("digits"), equal_sites_scenario(10, 300, eps, 0.01), 10, seed=1,
                           allow_replacement=True)
    problem, privacy = setup.problem, setup.privacy
    k, dim = problem.k, problem.dim
    energies, errors = [], []
    for run in range(4):
        messages = cape_messages(problem.site_moments, privacy.design, run_rng(0, run, "cape", "pca"))
        unique = cape_aggregate(messages.released, messages.f, privacy.design.weights)
        spectrum = np.linalg.eigvalsh(symmetric_matrix(unique, dim))[::-1]
        delta = 4 * math.sqrt(dim) * eps32 * np.abs(spectrum).max()
        gap = spectrum[k - 1] - spectrum[k]
        single = top_eigenpairs(lower_matrix(unique, dim, "float32"), k)
        double = top_eigenpairs(lower_matrix(unique, dim, "float64"), k)
        assert single[0].dtype == np.float32 and double[0].dtype == np.float64
        assert np.max(np.abs(single[0] - double[0])) <= delta
        q32, q64 = captured_energy(problem.pooled, single[1]), captured_energy(problem.pooled, double[1])
        assert abs(q32 - q64) <= 2 * k * problem.eigenvalues[0] * delta / gap
        energies.append(q64)
        errors.append(abs(q32 - q64))
    assert max(errors) < 0.01 * np.std(energies, ddof=1)


def test_comparisons_use_float32_by_default_and_float64_on_request():
    scenario = equal_sites_scenario(4, 300, 1.0, 0.01)
    single = pca.prepare_pca(load_bundled("digits"), scenario, 5, seed=2)
    double = pca.prepare_pca(load_bundled("digits"), scenario, 5, seed=2, solver_dtype="float64")
    assert single.problem.solver_dtype == "float32" and double.problem.solver_dtype == "float64"
    a = pca.compare_pca(single.problem, single.privacy, ("cape", "conv"), runs=2, seed=1)
    b = pca.compare_pca(double.problem, double.privacy, ("cape", "conv"), runs=2, seed=1)
    for name in ("cape", "conv"):
        for x, y in zip(a.results[name], b.results[name], strict=True):
            assert x.subspace.dtype == np.float32 and y.subspace.dtype == np.float64
            assert abs(x.captured_energy - y.captured_energy) < 1e-5 * y.captured_energy
    with pytest.raises(InputError, match="solver precision"):
        pca.prepare_pca(load_bundled("digits"), scenario, 5, solver_dtype="float16")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dpdis_gram_route_gives_the_d_by_d_subspace(dtype):
    """DPdisPCA's last eigensolve on the S R x S R Gram matrix: the same eigenvalues and subspace as the D x D
    matrix P P^T, to the solver's precision (S R = 40 < D = 64)."""
    from dpcore.pca.algorithms.dpdis import top_of_outer

    scenario = equal_sites_scenario(4, 300, 2.0, 0.01)
    setup = pca.prepare_pca(load_bundled("digits"), scenario, 5, seed=3, solver_dtype=dtype)
    rng = run_rng(0, 0, "dpdis", "pca")
    stacked_rng = np.random.default_rng(7)
    stacked = (stacked_rng.standard_normal((64, 40)) * np.linspace(1.0, 0.05, 40)).astype(dtype)
    values, vectors = top_of_outer(stacked, 5)
    full_values, full_vectors = top_eigenpairs((stacked @ stacked.T).astype(dtype), 5)
    tol = 50 * float(np.finfo(dtype).eps)
    np.testing.assert_allclose(values, full_values, rtol=tol * 10)
    np.testing.assert_allclose(vectors.T @ vectors, np.eye(5), atol=tol * 10)
    assert np.linalg.norm(vectors @ vectors.T - full_vectors @ full_vectors.T, 2) < tol * 100
    result = pca.dpdis_pca(setup.problem, setup.privacy, rng, rank=10)  # S R = 40 < D = 64: the Gram route
    kept = pca.dpdis_pca(setup.problem, setup.privacy, run_rng(0, 0, "dpdis", "pca"), rank=10, keep_matrix=True)
    assert np.array_equal(result.subspace, kept.subspace)  # keeping the matrix changes nothing
    full = top_eigenpairs(kept.matrix.astype(dtype), 5)
    assert np.linalg.norm(result.subspace @ result.subspace.T - full[1] @ full[1].T, 2) < 1e3 * tol
    assert top_of_outer(np.ones((3, 4)), 2) == (None, None)  # S R >= D: the D x D route
    assert top_of_outer(np.outer(np.arange(6.0), np.ones(2)), 2) == (None, None)  # rank 1 < K: l_K ~ 0


# ----------------------------------------------------------------------------------------------
# Streaming the noise (memory O(D^2) whatever S)
# ----------------------------------------------------------------------------------------------

def test_streamed_aggregate_is_the_message_flow_and_memory_does_not_grow_with_s(monkeypatch, settled):
    """capePCA's run draws its noise block by block of unique entries: the aggregate equals the one formed from every
    message (same draws, exactly), and the memory a run allocates beyond the data stays at a few blocks and a few
    D(D+1)/2 arrays - the same at S = 10 and S = 40 (tracemalloc peak)."""
    import tracemalloc

    import dpcore.pca.algorithms.cape as cape_module
    from dpcore.pca.algorithms.cape import cape_aggregate, cape_aggregate_streamed, cape_messages, noise_blocks

    monkeypatch.setattr(cape_module, "BLOCK_NUMBERS", 1 << 12)
    peaks = {}
    for n_sites in (10, 40):
        setup = equal_setup(n_sites=n_sites, site_size=20, dim=60, k=3, eps=1.0)
        problem, privacy = setup.problem, setup.privacy
        assert len(noise_blocks(n_sites, problem.site_moments.shape[1])) > 3
        messages = cape_messages(problem.site_moments, privacy.design, run_rng(0, 1, "cape", "pca"))
        expected = cape_aggregate(messages.released, messages.f, privacy.design.weights)
        streamed = cape_aggregate_streamed(problem.site_moments, privacy.design, run_rng(0, 1, "cape", "pca"))
        assert np.array_equal(streamed, expected)
        tracemalloc.start()
        pca.cape_pca(problem, privacy, run_rng(0, 2, "cape", "pca"))
        peaks[n_sites] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peaks[n_sites] < 8 * (12 * (1 << 12) + 10 * 60 * 60)  # a few blocks and D x D arrays
    assert peaks[40] < 1.5 * peaks[10]  # 4 times the sites, not 4 times the memory
