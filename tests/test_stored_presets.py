"""Stored full-size preset results (dpcore/data/files/presets, docs/experiments.md "Stored results"): the manifest
records what produced them, the files are intact, and a slice recomputed here equals the stored rows."""

from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pytest

from dpcore.experiments import get_preset, preset_names, sweep_runs
from dpcore.experiments.presets import quick_name
from dpcore.experiments.stored import (
    FIRST_FIGURE,
    estimate_seconds,
    run_seconds,
    stored_dir,
    stored_entry,
    stored_result,
    stored_status,
)

IDS = ["parameter", "value", "algorithm", "run", "metric", "status"]


def test_every_available_preset_is_stored_or_listed_as_missing_with_a_reason():
    directory = stored_dir()
    assert directory is not None and directory.name == "presets"
    for name in preset_names(available_only=True):
        entry = stored_entry(name)
        if entry is None:
            status = stored_status(name)
            assert status is not None and ("not stored" in status or "no stored result" in status), (name, status)
            continue
        assert stored_status(name) is None, (name, stored_status(name))
        spec = get_preset(name).spec
        assert entry["spec"] == spec.to_dict() and entry["complete"] is True
        assert entry["command"] == (f"python -m dpcore sweep --preset {name} --out {name}.csv --workers "
                                    f"{entry['workers']}")
        assert entry["seed"] == spec.seed == 0 and entry["runs"] == spec.runs == 10
        assert entry["dpcore_version"] and len(entry["git_commit"]) == 40 and entry["work_tree_clean"] is True
        assert entry["seconds"] > 0 and "CPUs" in entry["machine"] and entry["notes"]
        text = gzip.decompress((directory / entry["file"]).read_bytes())
        assert hashlib.sha256(text).hexdigest() == entry["table_sha256"]
        expected_rows = len(spec.grid) * len(spec.algorithms) * spec.runs * len(spec.metrics)
        assert entry["rows"] == expected_rows == text.count(b"\n") - 1


def test_a_stored_result_reads_back_as_a_complete_sweep_result():
    stored = stored_result(FIRST_FIGURE)
    assert stored is not None
    result = stored.result
    spec = get_preset(FIRST_FIGURE).spec
    assert result.complete and result.runs_done == 10 and result.spec == spec
    assert len(result.table) == stored.entry["rows"] and list(result.gains["value"].unique()) == list(spec.grid)
    assert result.to_csv().encode() == gzip.decompress((stored_dir() / stored.entry["file"]).read_bytes())
    assert f"--preset {FIRST_FIGURE}" in stored.provenance() and "seed 0" in stored.provenance()
    summary = result.summary_of("cape", "q_comp")
    rows = result.table[(result.table["algorithm"] == "cape") & (result.table["metric"] == "q_comp")]
    assert summary["mean"].tolist() == pytest.approx(rows.groupby("value")["result"].mean().tolist(), rel=1e-12)


@pytest.mark.parametrize("name, value, runs, rtol", [
    # PCA decomposes the noisy matrices in float32: another CPU's BLAS kernels may round the eigenvectors
    # differently in the last float32 bits (docs/math/capepca.md, "Precision of the eigensolver"). Measured with
    # multi-threaded BLAS instead of one thread (another summation order, as on another machine): 2.8e-7 relative.
    ("fig2a-synthetic-eps", 1.0, [0, 7], 1e-4),
    # OTD runs in float64. At eps = 10 the power iterations converge to well-separated fixed points: the same
    # multi-threaded check moved q_comp by 1.6e-13 relative. (At eps = 1 it moved one run's q_comp by 30%: there
    # rounding can change which restart the power method keeps, so no slice there is comparable across machines.)
    ("fig3-mog-d10-eps", 10.0, [0, 9], 1e-6),
    # LDA (float64, D = 100): at eps = 300 the power method converges as at OTD's eps = 10; one and two BLAS
    # threads gave the same 15 digits.
    ("lda-cape-eps", 300.0, [0, 9], 1e-6),
])
def test_a_recomputed_slice_equals_the_stored_rows(name, value, runs, rtol):
    """Runs are independent and keyed by (seed, run, name), and along eps every grid point sees the same standard
    normals, so one grid point of two runs can be recomputed alone. Identifiers and statuses must match exactly;
    the numbers within the rounding tolerance stated per preset (exact on the machine that stored them)."""
    stored = stored_result(name)
    assert stored is not None, f"{name} has no stored result: {stored_status(name)}"
    spec = get_preset(name).spec
    table = sweep_runs(spec.replace(grid=(value,)), runs, workers=1)
    mine = stored.result.table
    mine = mine[(mine["value"] == value) & mine["run"].isin(runs)].reset_index(drop=True)
    assert len(table) == len(mine) == len(runs) * len(spec.algorithms) * len(spec.metrics)
    assert table[IDS].equals(mine[IDS])
    np.testing.assert_allclose(table["result"].to_numpy(), mine["result"].to_numpy(), rtol=rtol, atol=1e-12)


def test_the_estimate_scales_the_stored_seconds_by_runs_steps_and_workers():
    entry = stored_entry(FIRST_FIGURE)
    spec = get_preset(FIRST_FIGURE).spec
    per_run = entry["seconds"] * entry["workers"] / entry["runs"]
    assert run_seconds(entry) == pytest.approx(per_run)
    seconds, basis = estimate_seconds(spec, 2)
    assert seconds == pytest.approx(per_run * 5) and f"`{FIRST_FIGURE}`" in basis
    three = spec.replace(runs=3, grid=spec.grid[:2])
    assert estimate_seconds(three, 1)[0] == pytest.approx(per_run * 3 * 2 / 5)
    other = spec.replace(data=spec.data.__class__(model="stm", dim=10, k=5, path="projected"))
    assert estimate_seconds(other, 2) is None or "fig4" in estimate_seconds(other, 2)[1]


def test_a_reduced_variant_is_named_for_what_it_runs():
    assert quick_name(get_preset("fig2b-mnist-eps")) == (
        "digits 8x8, D = 64, K = 10, 3 runs (reduced from Fig. 2(b): MNIST, D = 784, K = 50, 10 runs)")
    assert get_preset("fig2a-synthetic-eps").describe(quick=True).startswith("synthetic, D = 50, K = 10, 3 runs")
    assert "Fig. 2(b)" in get_preset("fig2b-mnist-eps").describe()
