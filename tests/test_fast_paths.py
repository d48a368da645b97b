"""The faster computations of the large runs against the formulas they replaced (docs/experiments.md, "Speed"):
exact where the same floating-point operations are done, to rounding where the order of a sum changed."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from scipy.sparse.linalg import LinearOperator, eigsh

import dpcore.normals as normals_mod
import dpcore.tensor.release as release_mod
from dpcore import linalg
from dpcore.agn import make_model, sample_mog, sample_stm
from dpcore.cape import (
    design_closed_form,
    design_collusion_robust,
    design_equal,
    design_general,
    noise_from_normals,
    noise_rows,
    sample_noise,
    site_budgets,
    solve_general,
)
from dpcore.cape.design import _diagonal_plus_rank_one, helper_rows
from dpcore.privacy import symmetric_matrix
from dpcore.tensor import MogSite, StageNoise, release_m2, stm_site_from_words

FLOAT32_EPS = float(np.finfo(np.float32).eps)


def _symmetric(rng: np.random.Generator, dim: int) -> np.ndarray:
    a = rng.standard_normal((dim, dim))
    return ((a + a.T) / 2).astype(np.float32)


def test_symmetric_product_is_the_matrix_product_to_float32_rounding():
    rng = np.random.default_rng(5)
    larger = _symmetric(rng, 320)
    single = np.ascontiguousarray(larger[:301, :301])
    v = rng.standard_normal(301)
    exact = single.astype(np.float64) @ v.astype(np.float32).astype(np.float64)
    # a float32 dot product of length D errs by at most D eps |A| |v| (entry-wise absolute values)
    bound = 301 * FLOAT32_EPS * (np.abs(single).astype(np.float64) @ np.abs(v))
    for matrix in (single, np.asfortranarray(single), larger[:301, :301]):  # C, Fortran, neither
        product = linalg._symmetric_product(matrix)(v)
        assert product.dtype == np.float64
        assert np.all(np.abs(product - exact) <= bound)


def _general_product_lanczos(matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The former solver: the same Lanczos with a general float32 product (sgemv) instead of ssymv."""
    d = matrix.shape[0]
    operator = LinearOperator((d, d), matvec=lambda v: (matrix @ v.astype(np.float32)).astype(np.float64),
                              dtype=np.float64)
    _, vecs = eigsh(operator, k=k, which="LA", v0=np.random.default_rng(0).standard_normal(d), ncv=max(4 * k, 20),
                    tol=1e-6, maxiter=20 * d)
    basis, _ = np.linalg.qr(vecs)
    small = basis.T @ linalg._times(matrix, basis)
    vals, rotation = scipy.linalg.eigh((small + small.T) / 2)
    return vals, basis @ rotation


def test_lanczos_with_the_symmetric_product_finds_the_former_eigenpairs():
    # a noisy second moment like capeAGN's at large D: a rank-5 signal under a Wigner-like noise bulk
    rng = np.random.default_rng(11)
    dim, k = 900, 5
    basis, _ = np.linalg.qr(rng.standard_normal((dim, k)))
    signal = basis @ np.diag([5.0, 4.0, 3.5, 3.0, 2.5]) @ basis.T
    matrix = (signal + _symmetric(rng, dim) / np.sqrt(dim)).astype(np.float32)
    before_values, before_vectors = _general_product_lanczos(matrix, k)
    values, vectors = linalg._lanczos(matrix, k)
    exact_values, exact_vectors = scipy.linalg.eigh(matrix.astype(np.float64), subset_by_index=[dim - k, dim - 1])
    np.testing.assert_allclose(values, before_values, rtol=1e-9)
    np.testing.assert_allclose(values, exact_values, rtol=1e-9)
    np.testing.assert_allclose(np.abs(vectors.T @ before_vectors), np.eye(k), atol=1e-6)
    np.testing.assert_allclose(np.abs(vectors.T @ exact_vectors), np.eye(k), atol=1e-6)


def _plain_release_m2(sites, weights, noise, rng, dtype):
    """release_m2 written plainly: every site's whole M2, the stage's normals for every unique entry in one call of
    the keyed stream, the releases data + e + f + g in whole arrays, both triangles written by masks."""
    from dpcore.normals import stage_stream

    dim = sites[0].dim
    iu = np.triu_indices(dim)
    order = np.lexsort((iu[0], iu[1]))
    data = np.stack([site.m2()[iu[0][order], iu[1][order]] for site in sites])
    if noise.mode == "cape":
        stream = stage_stream(rng, noise_rows(noise.design), data.shape[1])
        drawn = noise_from_normals(noise.design, stream.columns(0, data.shape[1]))
        releases = data + drawn.e
        releases += drawn.f
        releases += drawn.g
        agg = np.tensordot(weights, releases - drawn.f, axes=1)
    elif noise.mode == "independent":
        z = stage_stream(rng, len(sites), data.shape[1]).columns(0, data.shape[1])
        z *= np.asarray(noise.stds, float)[:, None]
        agg = np.tensordot(weights, data + z, axes=1)
    else:
        agg = np.tensordot(weights, data, axes=1)
    out = np.empty((dim, dim), dtype=dtype)
    out[iu[0][order], iu[1][order]] = agg
    out[iu[1][order], iu[0][order]] = agg
    return out


@pytest.mark.parametrize("kind", ["stm-first", "stm-all", "mog"])
@pytest.mark.parametrize("mode", ["cape", "independent", "none"])
@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_release_m2_in_blocks_chunks_and_threads_is_the_plain_flow_bit_for_bit(monkeypatch, kind, mode, precision):
    """Blocks of unique entries, chunks of the keyed stream drawn and combined on several threads: the same bytes as
    the whole flow at once (a chunk's numbers depend on its index only)."""
    dim = 37
    monkeypatch.setattr(normals_mod, "CHUNK_NORMALS", 40)  # 16-column chunks: 45 of them at D = 37
    monkeypatch.setattr(release_mod, "_MIRROR_TILE", 8)  # many mirror tiles
    monkeypatch.setattr(release_mod, "EIGH_MAX_DIM", 10 if precision == "float32" else 10_000)
    rng = np.random.default_rng(4)
    if kind == "mog":
        model = make_model("mog", dim, 3, rng)
        sites = tuple(MogSite(sample_mog(model, 40, rng) / 5.0, 0.01) for _ in range(3))
    else:
        model = make_model("stm", dim, 3, rng)
        sites = tuple(stm_site_from_words(sample_stm(model, 30, rng), dim, kind[4:]) for _ in range(3))
    weights = np.array([0.5, 0.3, 0.2])
    taus = np.array([0.05, 0.08, 0.1])
    noise = {"cape": StageNoise("cape", design=solve_general(site_budgets(taus, weights))),
             "independent": StageNoise("independent", stds=taus), "none": StageNoise("none")}[mode]
    plain = _plain_release_m2(sites, weights, noise, np.random.default_rng(9), np.dtype(precision))
    results = {}
    for block, threads in ((60, 1), (60, 3), (10**6, 1), (10**6, 2)):  # one chunk a block; every chunk in one block
        monkeypatch.setattr(release_mod, "BLOCK_UNIQUE", block)
        normals_mod.set_draw_threads(threads)
        try:
            results[block, threads], _ = release_m2(sites, weights, noise, np.random.default_rng(9))
        finally:
            normals_mod.set_draw_threads(None)
    for (block, _threads), new in results.items():
        assert new.dtype == np.dtype(precision) and np.array_equal(new, new.T)
        assert np.array_equal(new, results[block, 1])  # the threads never change a byte
        if kind == "mog":  # a MOG site's dense M2 block is a BLAS product whose rounding depends on its columns
            np.testing.assert_allclose(new, plain, rtol=0, atol=4 * np.finfo(new.dtype).eps * np.abs(plain).max())
        else:
            assert np.array_equal(new, plain)


def test_keyed_chunks_do_not_depend_on_the_columns_asked_for_nor_the_threads(monkeypatch):
    monkeypatch.setattr(normals_mod, "CHUNK_NORMALS", 64)  # 16-column chunks for 4 rows
    stream = normals_mod.stage_stream(np.random.default_rng(1), 4, 100)
    assert stream.width == 16 and stream.chunks == 7 and stream.bounds(6) == (96, 100)
    whole = stream.columns(0, 100)
    assert whole.shape == (4, 100)
    np.testing.assert_array_equal(stream.columns(16, 48), whole[:, 16:48])
    np.testing.assert_array_equal(stream.columns(5, 99), whole[:, 5:99])  # chunks cut at both ends
    normals_mod.set_draw_threads(3)
    try:
        np.testing.assert_array_equal(stream.columns(0, 100), whole)
    finally:
        normals_mod.set_draw_threads(None)
    again = normals_mod.stage_stream(np.random.default_rng(1), 4, 100)
    np.testing.assert_array_equal(again.columns(0, 100), whole)  # the key is the generator's next two words
    other = normals_mod.stage_stream(np.random.default_rng(2), 4, 100)
    assert not np.array_equal(other.columns(0, 100), whole)


def test_sample_noise_is_one_array_of_normals_scaled():
    """capePCA's draws are unchanged: sample_noise takes e, f and g from one (rows, n) array in that order, as the
    three draws it made before (the generator gives the same sequence of normals in one call as in three)."""
    design = design_general(np.array([1.0, 1.5, 2.0]), np.array([0.5, 0.3, 0.2]))
    drawn = sample_noise(design, np.random.default_rng(3), 11)
    rng = np.random.default_rng(3)
    normals = rng.standard_normal((design.e_mixing.shape[1], 11))
    np.testing.assert_array_equal(drawn.e, design.e_mixing @ normals)
    np.testing.assert_array_equal(drawn.f, rng.standard_normal((3, 11)) * np.sqrt(design.var_f)[:, None])
    np.testing.assert_array_equal(drawn.g, rng.standard_normal((3, 11)) * np.sqrt(design.var_g)[:, None])


def _designs() -> dict[str, object]:
    weights = np.array([0.4, 0.3, 0.2, 0.1])
    taus = np.array([1.0, 1.5, 2.0, 3.0])
    many = np.random.default_rng(2).uniform(0.5, 2.0, 100)
    return {
        "equal": design_equal(0.7, 6),
        "general": design_general(taus, weights),
        "general, 100 sites": design_general(many, np.full(100, 0.01)),
        "general, e_scale 3": design_general(taus, weights, e_scale=3.0),
        "general, one weight 0": design_general(taus, np.array([0.5, 0.3, 0.2, 0.0])),
        "collusion-robust": design_collusion_robust(taus, weights, 2),
        "closed form": design_closed_form(np.full(4, 1.0), np.full(4, 0.25), 0.4),
    }


@pytest.mark.parametrize("name", list(_designs()))
def test_helper_rows_are_the_mixing_product_to_rounding(name):
    design = _designs()[name]
    assert design.feasible, design.reason
    z = np.random.default_rng(3).standard_normal((design.e_mixing.shape[1], 500))
    e = helper_rows(design, z.copy())
    former = design.e_mixing @ z
    # each entry is a sum of at most S products: rounding below S eps times the sum of absolute terms
    bound = (design.n_sites + 2) * np.finfo(float).eps * (np.abs(design.e_mixing) @ np.abs(z))
    assert np.all(np.abs(e - former) <= bound + 1e-300)
    # and the helper's rows still cancel in the weighted sum, to rounding
    assert np.max(np.abs(design.weights @ e)) <= 1e-13 * np.max(np.abs(e))


def test_helper_rows_use_the_factored_law_for_the_solvers_designs():
    factored = {name: _diagonal_plus_rank_one(d) is not None for name, d in _designs().items()}
    assert factored["equal"] and factored["general"] and factored["general, 100 sites"]
    assert not factored["closed form"]  # S x (S - 1) mixing: the product


def test_factored_sampling_draws_the_same_stream():
    design = _designs()["general, 100 sites"]
    plain = sample_noise(design, np.random.default_rng(8), 300)
    factored = sample_noise(design, np.random.default_rng(8), 300, factored=True)
    assert np.array_equal(plain.f, factored.f) and np.array_equal(plain.g, factored.g)
    np.testing.assert_allclose(factored.e, plain.e, rtol=0, atol=1e-13 * np.max(np.abs(plain.e)))
    assert not np.array_equal(factored.e, plain.e)  # a different sum order: equal to rounding, not bit for bit


# ----------------------------------------------------------------------------------------------
# Above FLOW_MAX_NORMALS, without messages: the M2 aggregate drawn from its exact law
# ----------------------------------------------------------------------------------------------

def _m2_case(mode: str):
    rng = np.random.default_rng(11)
    dim = 40
    model = make_model("stm", dim, 3, rng)
    sites = tuple(stm_site_from_words(sample_stm(model, 60, rng), dim, "first") for _ in range(4))
    weights = np.array([0.4, 0.3, 0.2, 0.1])
    taus = np.array([0.05, 0.08, 0.1, 0.2])
    noise = (StageNoise("cape", design=solve_general(site_budgets(taus, weights))) if mode == "cape"
             else StageNoise("independent", stds=taus))
    data = sum(w * s.m2() for w, s in zip(weights, sites, strict=True))
    return sites, weights, noise, data


@pytest.mark.parametrize("mode", ["cape", "independent"])
def test_m2_aggregate_law_is_the_weighted_data_plus_one_keyed_normal_per_entry(monkeypatch, mode):
    sites, weights, noise, data = _m2_case(mode)
    monkeypatch.setattr(normals_mod, "CHUNK_NORMALS", 64)  # several chunks and blocks
    monkeypatch.setattr(release_mod, "BLOCK_UNIQUE", 200)
    monkeypatch.setattr(release_mod, "FLOW_MAX_NORMALS", 0)
    rng = np.random.default_rng(9)
    m2, messages = release_m2(sites, weights, noise, rng)
    assert messages is None and np.array_equal(m2, m2.T)
    twin = np.random.default_rng(9)
    z = normals_mod.stage_stream(twin, 1, 40 * 41 // 2).columns(0, 40 * 41 // 2)[0]
    std = release_mod.aggregate_std(noise, weights)
    np.testing.assert_allclose(m2, data + symmetric_matrix(std * z, 40), rtol=0, atol=1e-14)
    assert rng.integers(1 << 62) == twin.integers(1 << 62)  # one key taken, as by the flow: later stages unchanged
    expected = (noise.design.output_std if mode == "cape"
                else float(np.sqrt(np.sum(weights**2 * noise.stds**2))))
    assert std == pytest.approx(expected, rel=1e-12)  # the e terms cancel: e_mixing^T mu = 0
    kept, msg = release_m2(sites, weights, noise, np.random.default_rng(9), keep_messages=True)
    assert msg is not None and msg.releases.shape == (4, 40 * 41 // 2)  # kept messages: always the real flow


@pytest.mark.parametrize("mode", ["cape", "independent"])
def test_m2_aggregate_law_has_the_variance_of_the_flows_aggregate(monkeypatch, mode):
    """The per-site flow and the exact law leave noise of the same variance in the aggregate: each sample variance
    within 5 standard errors (chi-square: relative SE sqrt(2 / n)) of aggregate_std^2, on fresh seeds."""
    sites, weights, noise, data = _m2_case(mode)
    std = release_mod.aggregate_std(noise, weights)
    upper = np.triu_indices(40)
    for limit in (10**12, 0):  # the flow, then the law
        monkeypatch.setattr(release_mod, "FLOW_MAX_NORMALS", limit)
        draws = np.concatenate([(release_m2(sites, weights, noise, np.random.default_rng([limit, seed]))[0]
                                 - data)[upper] for seed in range(15)])
        rel_se = np.sqrt(2 / draws.size)
        assert abs(draws.var() / std**2 - 1) < 5 * rel_se
        assert abs(draws.mean()) < 5 * std / np.sqrt(draws.size)
