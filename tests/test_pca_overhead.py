"""What the PCA sweep skips to be fast gives the numbers it would give without skipping: the metrics' shared captured
energy, the Fortran-order lower-triangle matrices, the replayed normals handed out read-only (never copied), and the
grid designs solved once per process. tests/test_sweeps.py checks the whole sweep against compare_pca exactly."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore import experiments
from dpcore.cape import sample_noise
from dpcore.experiments import designs as design_module
from dpcore.linalg import top_eigenpairs
from dpcore.pca import pca_privacy, pca_problem
from dpcore.pca.algorithms.cape import _block_noise
from dpcore.pca.algorithms.conv import conventional_release
from dpcore.pca.metrics import METRICS, metric_values
from dpcore.pca.result import lower_matrix
from dpcore.pca.sweep import PcaData, ReplayNormals
from dpcore.privacy import symmetric_matrix
from dpcore.scenario import equal_sites_scenario


def _setup(rng, n_sites=3, dim=12, k=3):
    sites = []
    for _ in range(n_sites):
        x = rng.standard_normal((dim, 40))
        sites.append(x / np.linalg.norm(x, axis=0).max())
    scenario = equal_sites_scenario(n_sites, 40, 1.0, 0.01)
    return pca_problem(sites, k), pca_privacy(scenario)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_metric_values_equal_every_metrics_own_compute(rng, dtype):
    problem, _ = _setup(rng)
    basis, _ = np.linalg.qr(rng.standard_normal((problem.dim, problem.k)))
    basis = basis.astype(dtype)
    values = metric_values(problem, basis)
    assert list(values) == list(METRICS)
    for name, metric in METRICS.items():
        assert values[name] == metric.compute(problem, basis), name  # the same operations: equal, not close


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lower_matrix_is_fortran_order_and_decomposes_as_the_full_matrix(rng, dtype):
    dim, k = 30, 4
    unique = rng.standard_normal(dim * (dim + 1) // 2)
    full = symmetric_matrix(unique, dim).astype(dtype)
    lower = lower_matrix(unique, dim, dtype)
    assert lower.flags.f_contiguous and lower.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.tril(lower), np.tril(full))
    # LAPACK reads the same lower triangle in the same layout: the eigenpairs are the same numbers
    values, vectors = top_eigenpairs(lower.copy(order="K"), k)
    expected_values, expected_vectors = top_eigenpairs(np.ascontiguousarray(full), k)
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(vectors, expected_vectors)
    before = lower.copy(order="K")
    top_eigenpairs(lower, k, overwrite=True)
    assert not np.array_equal(np.tril(lower), np.tril(before))  # overwritten in place: no copy was made for LAPACK


def test_replayed_normals_are_read_only_until_the_last_pass():
    replay = ReplayNormals(np.random.default_rng(5))
    first = [replay.standard_normal(7), replay.standard_normal((2, 3))]
    fresh = np.random.default_rng(5)
    np.testing.assert_array_equal(first[0], fresh.standard_normal(7))
    np.testing.assert_array_equal(first[1], fresh.standard_normal((2, 3)))
    for z in first:
        assert not z.flags.writeable
        with pytest.raises(ValueError):
            z *= 2.0
    replay.rewind()
    again = [replay.standard_normal(7), replay.standard_normal((2, 3))]
    assert all(a is b and not a.flags.writeable for a, b in zip(again, first, strict=True))
    replay.rewind(final=True)
    last = [replay.standard_normal(7), replay.standard_normal((2, 3))]
    assert all(z.flags.writeable for z in last)


def test_consumers_of_read_only_normals_leave_them_and_compute_the_same(rng):
    problem, privacy = _setup(rng)
    replay = ReplayNormals(np.random.default_rng(11))
    got = [conventional_release(problem, privacy, replay, s) for s in range(problem.n_sites)]
    fresh = np.random.default_rng(11)
    for s, release in enumerate(got):
        np.testing.assert_array_equal(release, conventional_release(problem, privacy, fresh, s))
    recorded = [z.copy() for z in replay._draws]
    replay.rewind()
    for s in range(problem.n_sites):
        conventional_release(problem, privacy, replay, s)
    for z, kept in zip(replay._draws, recorded, strict=True):
        np.testing.assert_array_equal(z, kept)  # the replayed normals were read, never scaled in place

    design, width = privacy.design, problem.site_moments.shape[1]
    replay = ReplayNormals(np.random.default_rng(12))
    for final in (None, False, True):  # the first pass, a middle replay, the last replay
        if final is not None:
            replay.rewind(final=final)
        noise = _block_noise(design, replay, width)
        expected = sample_noise(design, np.random.default_rng(12), width, factored=True)
        for term in ("e", "f", "g"):
            np.testing.assert_array_equal(getattr(noise, term), getattr(expected, term))


def test_grid_designs_are_solved_once_per_point(monkeypatch):
    calls = []
    solve = design_module.grid_design

    def counting(*args, **kwargs):
        calls.append(args[3])
        return solve(*args, **kwargs)

    monkeypatch.setattr(design_module, "_DESIGNS", type(design_module._DESIGNS)())
    monkeypatch.setattr(design_module, "grid_design", counting)
    spec = experiments.SweepSpec(family="pca", parameter="eps", grid=(0.5, 2.0), algorithms=("cape", "conv"),
                                 scenario=equal_sites_scenario(3, 200, 1.0, 0.01),
                                 data=PcaData(dataset="synthetic", k=2, dim=6), runs=1, seed=2)
    first = experiments.check_designs(spec)
    assert sorted(calls) == [0.5, 2.0]
    again = experiments.check_designs(spec.replace(runs=3, algorithms=("cape",)))
    assert sorted(calls) == [0.5, 2.0]  # neither the runs nor the algorithms change a design
    assert first[first["algorithm"] == "cape"].reset_index(drop=True).equals(again.reset_index(drop=True))
    scenario = experiments.scenario_at(spec, 0.5)
    mine = design_module.grid_designs(spec, scenario, 0.5)
    mine.clear()  # each call gets its own dict
    assert design_module.grid_designs(spec, scenario, 0.5)["capePCA"].feasible
    experiments.check_designs(spec.replace(seed=3))
    assert sorted(calls) == [0.5, 0.5, 2.0, 2.0]  # another spec is solved for itself
