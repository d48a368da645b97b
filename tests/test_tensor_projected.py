"""Large D: the projected path (docs/math/capeagn.md, "Large D: the projected path") agrees with the dense one; path
choice and memory."""

from __future__ import annotations

import itertools
import math
import tracemalloc

import numpy as np
import pytest

import dpcore.normals as normals_mod
import dpcore.tensor.release as release_mod
import dpcore.tensor.whitening as whitening_mod
from dpcore.agn import (
    OtdSettings,
    make_model,
    mog_norm_bound,
    run_algorithm,
    sample_mog,
    sample_stm,
    synthetic_problem,
)
from dpcore.limits import MAX_PUBLISHED_PROJECTED_K
from dpcore.privacy import (
    symmetric_matrix,
    symmetric_tensor,
    unique_count_matrix,
    unique_count_tensor,
    unique_entries_tensor,
    unique_index_tuples,
)
from dpcore.scenario import scenario_from_dict
from dpcore.seeding import run_rng
from dpcore.tensor import (
    MogSite,
    StageNoise,
    check_m3_law,
    choose_path,
    memory_estimate,
    mog_sites,
    multilinear,
    release_m2,
    release_m3,
    stm_site_from_words,
    whiten,
)
from dpcore.tensor.projected_noise import published_covariance, published_factor
from dpcore.validation import InputError


def _sym_matrix(k: int) -> np.ndarray:
    """The symmetrisation operator on vec(K x K x K) (C order)."""
    p = np.zeros((k**3, k**3))
    for a, b, c in itertools.product(range(k), repeat=3):
        for perm in itertools.permutations((a, b, c)):
            p[(a * k + b) * k + c, (perm[0] * k + perm[1]) * k + perm[2]] += 1 / 6
    return p


def _published_projection(w: np.ndarray) -> np.ndarray:
    """B with unique(P(W, W, W)) = B unique(P), by brute force: column c is the projection of the symmetric tensor
    with unique entry c equal to 1. The published law has Cov(unique(P)) = I, so Cov(unique(P(W, W, W))) = B B^T."""
    dim, k = w.shape
    n = unique_count_tensor(dim)
    b = np.empty((unique_count_tensor(k), n))
    for c in range(n):
        unit = np.zeros(n)
        unit[c] = 1.0
        b[:, c] = unique_entries_tensor(multilinear(symmetric_tensor(unit, dim), w))
    return b


def _noise_draws(path: str, law: str, w: np.ndarray, tau: float, draws: int, seed: int) -> np.ndarray:
    """Third-moment noise alone (a site with a zero moment), projected on W: unique entries of each draw."""
    dim, k = w.shape
    site = MogSite(np.zeros((1, dim)), 0.0)
    rng = np.random.default_rng(seed)
    noise = StageNoise("independent", stds=np.array([tau]))
    return np.array([unique_entries_tensor(release_m3([site], np.ones(1), w, noise, rng, path=path, law=law)[0])
                     for _ in range(draws)])


def _covariance_check(samples: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Per-entry standardised errors of the empirical mean and covariance: the standard error of a mean is
    sqrt(C_ii / m), that of a Gaussian sample covariance sqrt((C_ii C_jj + C_ij^2) / m)."""
    m = samples.shape[0]
    emp_mean = samples.mean(axis=0)
    emp_cov = np.cov(samples, rowvar=False)
    var = np.diag(cov)
    mean_z = np.abs(emp_mean - mean) / np.sqrt(var / m)
    cov_se = np.sqrt((np.outer(var, var) + cov**2) / m)
    return np.concatenate([mean_z, (np.abs(emp_cov - cov) / cov_se).ravel()])


@pytest.mark.parametrize(("dim", "k", "seed"), [(6, 3, 0), (5, 5, 1), (7, 2, 2), (4, 1, 3), (1, 1, 4)])
def test_published_projected_covariance_is_the_brute_force_one(dim, k, seed):
    """The closed form of Cov(unique(P(W, W, W))) (dpcore.tensor.projected_noise) equals B B^T computed entry by entry,
    and its factor reproduces it: exact identities, to rounding."""
    w = np.random.default_rng(seed).standard_normal((dim, k))
    b = _published_projection(w)
    exact = b @ b.T
    scale = np.abs(exact).max()
    np.testing.assert_allclose(published_covariance(w), exact, atol=1e-13 * scale)
    factor = published_factor(w)
    np.testing.assert_allclose(factor @ factor.T, exact, atol=1e-13 * scale)


def test_published_law_variances_by_index_pattern():
    """With W = I the projection is the noise itself: every unique entry has variance exactly 1 (3, 2 or 1 distinct
    indices alike), while sqrt(6) Sym(Z) has 1, 2 and 6 - the excess the published law removes."""
    k = 4
    cov = published_covariance(np.eye(k))
    np.testing.assert_allclose(cov, np.eye(unique_count_tensor(k)), atol=1e-14)
    sym = _sym_matrix(k)
    excess = 6 * sym @ sym.T  # covariance of vec(sqrt(6) Sym(Z)), Z i.i.d.
    first, second, third = unique_index_tuples(k, 3)
    flat = (first * k + second) * k + third
    distinct = np.array([len({a, b, c}) for a, b, c in zip(first, second, third, strict=True)])
    variances = np.diag(excess)[flat]
    np.testing.assert_allclose(variances, np.select([distinct == 3, distinct == 2], [1.0, 2.0], 6.0))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 12])
def test_dense_and_projected_noise_have_the_same_law(seed):
    """The third-moment noise a site sends, tau P(W, W, W), drawn on the dense path (C(D+2, 3) i.i.d. unique entries,
    mirrored, projected by the site) and on the projected path (m normals times the factor): both have mean 0 and
    covariance tau^2 B B^T (brute force). The symmetrized law, dense or projected, has covariance
    6 tau^2 S (W^T W)^(x)3 S instead, and each law fails the other's check (the test has power).

    3,000 draws; the largest of the 10 + 100 standardised errors must stay below 5 (for each z-value
    P(|z| > 5) < 6e-7). Measured over the seeds 2, 3, 12, 22, 32, 42, 52, 62 (both paths, both laws; the
    keyed-chunk noise streams): largest 3.0 (3.8 with the former streams); the wrong-law checks gave at least 20.6."""
    w = np.random.default_rng(1).standard_normal((5, 3)) * 0.7
    tau = 0.3
    zero = np.zeros(unique_count_tensor(3))
    b = _published_projection(w)
    published = tau**2 * b @ b.T
    first, second, third = unique_index_tuples(3, 3)
    flat = (first * 3 + second) * 3 + third
    sym = _sym_matrix(3)
    gram = w.T @ w
    symmetrized = (6 * tau**2 * sym @ np.kron(np.kron(gram, gram), gram) @ sym.T)[np.ix_(flat, flat)]
    for path in ("dense", "projected"):
        draws = _noise_draws(path, "published", w, tau, 3000, seed + (path == "projected"))
        assert _covariance_check(draws, zero, published).max() < 5, path
        assert _covariance_check(draws, zero, symmetrized).max() > 10, path
        draws = _noise_draws(path, "symmetrized", w, tau, 3000, seed + 2 + (path == "projected"))
        assert _covariance_check(draws, zero, symmetrized).max() < 5, path
        assert _covariance_check(draws, zero, published).max() > 10, path


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
    monkeypatch.setattr(normals_mod, "CHUNK_NORMALS", 8)  # chunks of 16 unique entries
    monkeypatch.setattr(release_mod, "BLOCK_UNIQUE", 7)  # one chunk a block
    blocks = release_mod._unique_blocks(unique_count_matrix(9), 16)
    assert blocks == [(0, 16), (16, 32), (32, 45)]  # blocks of whole chunks, covering the 45 entries once
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


def test_block_krylov_whitening_matches_the_full_eigensolver_on_a_clear_spectrum(monkeypatch):
    """Above EIGH_MAX_DIM the whitening takes the Ritz pairs of a block Krylov space of fixed size: where the top K
    eigenvalues stand clear of the rest (a signal above the noise), they and their eigenvectors are the exact ones."""
    rng = np.random.default_rng(3)
    basis, _ = np.linalg.qr(rng.standard_normal((300, 4)))
    noise = rng.standard_normal((300, 300)) * 1e-3
    m2 = basis @ np.diag([4.0, 3.0, 2.0, 1.0]) @ basis.T + (noise + noise.T) / 2
    exact = whiten(m2, 4)
    monkeypatch.setattr(whitening_mod, "EIGH_MAX_DIM", 10)
    calls = []
    monkeypatch.setattr(whitening_mod, "_times", lambda matrix, block: calls.append(1) or matrix @ block)
    krylov = whiten(m2, 4)
    assert len(calls) == whitening_mod.KRYLOV_BLOCKS  # a fixed number of block products
    np.testing.assert_allclose(krylov.eigenvalues, exact.eigenvalues, rtol=1e-9)
    np.testing.assert_allclose(np.abs(krylov.u.T @ exact.u), np.eye(4), atol=1e-8)
    np.testing.assert_allclose(krylov.u.T @ krylov.u, np.eye(4), atol=1e-12)


def test_block_krylov_is_exact_when_its_space_covers_d_and_splits_products_over_threads(monkeypatch):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((90, 90))
    m2 = (a + a.T) / 2
    values, vectors = whitening_mod.block_krylov(m2, 3, blocks=8, oversample=9)  # 12 x 8 >= 90: full eigh
    full = np.linalg.eigvalsh(m2)[::-1][:3]
    np.testing.assert_allclose(values, full, rtol=1e-12)
    single = rng.standard_normal((1200, 1200)).astype(np.float32)
    block = rng.standard_normal((1200, 7))
    normals_mod.set_draw_threads(3)
    try:
        threaded = whitening_mod._times(single, block)
    finally:
        normals_mod.set_draw_threads(None)
    right = block.astype(np.float32).astype(np.float64)
    bound = 1200 * np.finfo(np.float32).eps * (np.abs(single).astype(np.float64) @ np.abs(right))
    assert threaded.dtype == np.float64
    assert np.all(np.abs(threaded - single.astype(np.float64) @ right) <= bound)


def test_memory_estimate_and_path_choice():
    assert memory_estimate("projected", 100, 5, 4) == 16 * 100**2 + 48 * 4 * 5050 + 64 * 125 * 4 + 40 * 35**2
    # above EIGH_MAX_DIM = 800 the second moment is kept in float32 and read without a copy (4 D^2); the block
    # Krylov basis and its products: 16 D (K + 10) 12
    krylov = 16 * 5000 * 12
    assert memory_estimate("projected", 5000, 10, 5) == 4 * 5000**2 + 48 * 5 * 2**18 + 64 * 1000 * 5 + 40 * 220**2 \
        + krylov * 20
    assert memory_estimate("projected", 5000, 21, 5) == 4 * 5000**2 + 48 * 5 * 2**18 + 64 * 21**3 * 5 + krylov * 31
    assert memory_estimate("projected", 10_000, 10, 5) < 2**30  # STM at D = 10,000 fits the default budget
    assert memory_estimate("dense", 100, 5, 4) == 16 * 100**2 + 48 * 4 * 5050 + 64 * 125 * 4 + 8 * 100**3 * 34
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


def test_projected_path_runs_at_large_d_without_a_d3_array(settled):
    """D = 1200 (a dense D^3 tensor would take 13.8 GB): capeAGN runs on the projected path with the
    block Krylov eigensolver, and the peak of traced allocations stays far below one D^3 array."""
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


def test_avn_needs_the_dense_path_and_published_projected_noise_a_small_k():
    scenario = scenario_from_dict({"sites": [{"name": "a", "n": 300, "eps": 1.0, "delta": 0.01}]})
    model = make_model("stm", 6, 2, np.random.default_rng(0))
    problem = synthetic_problem(model, [300], np.random.default_rng(1))
    with pytest.raises(InputError, match="AVN needs the dense path"):
        run_algorithm("avn", problem, scenario, OtdSettings(path="projected"), np.random.default_rng(0))
    assert run_algorithm("cape", problem, scenario, OtdSettings(path="projected"), np.random.default_rng(0)).path \
        == "projected"
    assert run_algorithm("avn", problem, scenario, OtdSettings(path="dense"), np.random.default_rng(0)).path == "dense"
    big = MAX_PUBLISHED_PROJECTED_K + 1
    assert check_m3_law("published", "dense", big) == "published"
    assert check_m3_law("symmetrized", "projected", big) == "symmetrized"
    with pytest.raises(InputError, match=f"needs K <= {MAX_PUBLISHED_PROJECTED_K}.*symmetrized"):
        check_m3_law("published", "projected", big)
