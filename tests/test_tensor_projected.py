"""Large D: the projected path (docs/math/capeagn.md, "Large D: the projected path") agrees with the dense one; path
choice and memory."""

from __future__ import annotations

import itertools
import math
import tracemalloc

import numpy as np
import pytest

import dpcore.otd.release as release_mod
import dpcore.otd.whitening as whitening_mod
from dpcore.otd import (
    MogSite,
    OtdSettings,
    StageNoise,
    choose_path,
    make_model,
    memory_estimate,
    mog_norm_bound,
    mog_sites,
    release_m2,
    release_m3,
    run_algorithm,
    sample_mog,
    sample_stm,
    stm_site_from_words,
    synthetic_problem,
    whiten,
)
from dpcore.privacy import symmetric_matrix, unique_count_matrix
from dpcore.scenario import scenario_from_dict
from dpcore.seeding import run_rng
from dpcore.validation import InputError


def _sym_matrix(k: int) -> np.ndarray:
    """The symmetrisation operator on vec(K x K x K) (C order)."""
    p = np.zeros((k**3, k**3))
    for a, b, c in itertools.product(range(k), repeat=3):
        for perm in itertools.permutations((a, b, c)):
            p[(a * k + b) * k + c, (perm[0] * k + perm[1]) * k + perm[2]] += 1 / 6
    return p


def _noise_draws(path: str, law: str, w: np.ndarray, tau: float, draws: int, seed: int) -> np.ndarray:
    """Third-moment noise alone (a site with a zero moment), projected on W, flattened."""
    dim, k = w.shape
    site = MogSite(np.zeros((1, dim)), 0.0)
    rng = np.random.default_rng(seed)
    noise = StageNoise("independent", stds=np.array([tau]))
    return np.array([release_m3([site], np.ones(1), w, noise, rng, path=path, law=law)[0].ravel()
                     for _ in range(draws)])


def _covariance_check(samples: np.ndarray, mean: np.ndarray, cov: np.ndarray, z: float = 5.0) -> np.ndarray:
    """Per-entry standardised errors of the empirical mean and covariance (Gaussian standard errors)."""
    m = samples.shape[0]
    emp_mean = samples.mean(axis=0)
    emp_cov = np.cov(samples, rowvar=False)
    var = np.diag(cov)
    mean_z = np.abs(emp_mean - mean) / np.sqrt(var / m)
    cov_se = np.sqrt((np.outer(var, var) + cov**2) / m)
    return np.concatenate([mean_z, (np.abs(emp_cov - cov) / cov_se).ravel()])


@pytest.mark.slow
def test_projected_noise_has_the_dense_noise_mean_and_covariance():
    """Dense: sqrt(6) tau Sym(Z), Z D^3 i.i.d., projected by the site. Projected: sampled as
    sqrt(6) tau Sym(Y(R, R, R)), R^T R = W^T W. Both must have mean 0 and covariance
    6 tau^2 P (W^T W)^(x)3 P (P the symmetrisation); the paper's 'published' law must fail the same check."""
    w = np.random.default_rng(1).standard_normal((4, 2)) * 0.7
    tau = 0.3
    gram = w.T @ w
    sym = _sym_matrix(2)
    theory = 6 * tau**2 * sym @ np.kron(np.kron(gram, gram), gram) @ sym.T
    zero = np.zeros(8)
    dense = _noise_draws("dense", "symmetrized", w, tau, 3000, 2)
    projected = _noise_draws("projected", "symmetrized", w, tau, 3000, 3)
    assert _covariance_check(dense, zero, theory).max() < 5
    assert _covariance_check(projected, zero, theory).max() < 5
    published = _noise_draws("dense", "published", w, tau, 3000, 4)
    assert _covariance_check(published, zero, theory).max() > 10  # the check has power


@pytest.mark.parametrize("kind", ["mog", "stm-first", "stm-all"])
def test_dense_and_projected_paths_have_the_same_data_term(kind):
    rng = np.random.default_rng(6)
    dim, k = 8, 3
    if kind == "mog":
        model = make_model("mog", dim, k, rng)
        sites, _, _ = mog_sites([sample_mog(model, 300, rng), sample_mog(model, 200, rng)], model.sigma2,
                                mog_norm_bound(dim, model.sigma2))
    else:
        model = make_model("stm", dim, k, rng, doc_length=6)
        sites = [stm_site_from_words(sample_stm(model, n, rng), dim, kind.split("-")[1]) for n in (300, 200)]
    w = whiten(sum(0.5 * s.m2() for s in sites), k, noisy=False).w
    mu = np.array([0.6, 0.4])
    dense, _ = release_m3(sites, mu, w, StageNoise("none"), rng, path="dense")
    projected, _ = release_m3(sites, mu, w, StageNoise("none"), rng, path="projected")
    assert np.max(np.abs(dense - projected)) <= 1e-12 * np.max(np.abs(dense))


def test_m2_blocks_reassemble_the_matrix_in_colex_order(monkeypatch):
    monkeypatch.setattr(release_mod, "BLOCK_UNIQUE", 7)
    assert len(release_mod._column_blocks(9)) > 4
    covered = sum((j1 * (j1 + 1) - j0 * (j0 + 1)) // 2 for j0, j1 in release_mod._column_blocks(9))
    assert covered == unique_count_matrix(9)
    rng = np.random.default_rng(2)
    model = make_model("stm", 9, 2, rng)
    sites = [stm_site_from_words(sample_stm(model, 50, rng), 9, "first") for _ in range(2)]
    mu = np.array([0.5, 0.5])
    plain, _ = release_m2(sites, mu, StageNoise("none"), rng)
    np.testing.assert_allclose(plain, 0.5 * sites[0].m2() + 0.5 * sites[1].m2(), atol=1e-15)
    noisy, msg = release_m2(sites, mu, StageNoise("independent", stds=np.array([0.1, 0.2])), rng, keep_messages=True)
    for s in range(2):
        np.testing.assert_allclose(symmetric_matrix(msg.releases[s], 9), sites[s].m2() + symmetric_matrix(msg.g[s], 9),
                                   atol=1e-15)
    np.testing.assert_allclose(noisy, symmetric_matrix(mu @ msg.releases, 9), atol=1e-15)


def test_lanczos_whitening_matches_the_full_eigensolver(monkeypatch):
    rng = np.random.default_rng(3)
    basis, _ = np.linalg.qr(rng.standard_normal((60, 4)))
    noise = rng.standard_normal((60, 60)) * 1e-3
    m2 = basis @ np.diag([4.0, 3.0, 2.0, 1.0]) @ basis.T + (noise + noise.T) / 2
    exact = whiten(m2, 4)
    monkeypatch.setattr(whitening_mod, "EIGH_MAX_DIM", 10)
    lanczos = whiten(m2, 4)
    np.testing.assert_allclose(lanczos.eigenvalues, exact.eigenvalues, rtol=1e-9)
    np.testing.assert_allclose(np.abs(lanczos.u.T @ exact.u), np.eye(4), atol=1e-8)


def test_memory_estimate_and_path_choice():
    assert memory_estimate("projected", 100, 5, 4) == 16 * 100**2 + 48 * 4 * 5050 + 64 * 125 * 4
    assert memory_estimate("projected", 5000, 10, 5) == 16 * 5000**2 + 48 * 5 * 2**18 + 64 * 1000 * 5
    assert memory_estimate("dense", 100, 5, 4) == memory_estimate("projected", 100, 5, 4) + 8 * 100**3 * 34
    assert choose_path("auto", 10, 5, 5).path == "dense"
    auto = choose_path("auto", 500, 10, 5)
    assert auto.path == "projected" and "budget" in auto.reason
    assert choose_path("projected", 10, 5, 5).path == "projected"
    with pytest.raises(InputError, match="too large for the dense path"):
        choose_path("dense", 500, 10, 5)
    with pytest.raises(InputError, match="too large even for the projected path"):
        choose_path("auto", 20_000, 10, 5)
    small = choose_path("auto", 60, 5, 5, budget=40 * 2**20)
    assert small.path == "projected" and small.budget == 40 * 2**20


def test_projected_path_runs_at_large_d_without_a_d3_array():
    """D = 1200 (a dense D^3 tensor would take 13.8 GB): capeAGN runs on the projected path with the
    Lanczos eigensolver, and the peak of traced allocations stays far below one D^3 array."""
    dim, k, sizes = 1200, 5, [400, 400, 400]
    scenario = scenario_from_dict({"sites": [{"name": f"s{i}", "n": n, "eps": 2.0, "delta": 0.01}
                                             for i, n in enumerate(sizes)]})
    model = make_model("stm", dim, k, np.random.default_rng(4))
    problem = synthetic_problem(model, sizes, np.random.default_rng(5))
    tracemalloc.start()
    try:
        dec = run_algorithm("cape", problem, scenario, OtdSettings(), run_rng(0, 0, "cape", "otd"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert dec.path == "projected"
    assert dec.components.shape == (k, dim) and np.all(np.isfinite(dec.components))
    np.testing.assert_allclose(dec.components.sum(axis=1), 1.0)
    assert peak < 200 * 2**20 < 8 * dim**3
    assert math.isclose(whitening_mod.EIGH_MAX_DIM, 800) and dim > whitening_mod.EIGH_MAX_DIM


def test_avn_and_published_noise_need_the_dense_path():
    scenario = scenario_from_dict({"sites": [{"name": "a", "n": 300, "eps": 1.0, "delta": 0.01}]})
    model = make_model("stm", 6, 2, np.random.default_rng(0))
    problem = synthetic_problem(model, [300], np.random.default_rng(1))
    with pytest.raises(InputError, match="AVN needs the dense path"):
        run_algorithm("avn", problem, scenario, OtdSettings(path="projected"), np.random.default_rng(0))
    with pytest.raises(InputError, match="dense path"):
        run_algorithm("cape", problem, scenario, OtdSettings(path="projected", m3_noise="published"),
                      np.random.default_rng(0))
    assert run_algorithm("avn", problem, scenario, OtdSettings(path="dense"), np.random.default_rng(0)).path == "dense"
