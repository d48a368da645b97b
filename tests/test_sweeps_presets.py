"""Presets of the paper's Figs. 2-5: settings as in docs/experiments.md, unavailable ones explained, every one runs
small."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpcore import experiments
from dpcore.experiments import LDA_CALIBRATION, PRESET_CALIBRATION, get_preset, preset_names, presets, quick_spec
from dpcore.experiments.presets import FIG2_DELTA, FIG2_EPS, FIG2_NS
from dpcore.validation import InputError

AVAILABLE = preset_names(available_only=True)
PAPER = [n for n in AVAILABLE if not n.startswith("lda-")]  # the journal paper's Figs. 2-5 (LDA: test_sweeps_lda.py)


def test_every_panel_of_the_paper_is_listed():
    table = presets()
    figures = {p.figure for p in table.values()}
    assert {f"Fig. 2({c})" for c in "abcdefghi"} <= figures
    assert {"Fig. 3 (top row)", "Fig. 3 (bottom row)", "Fig. 4 (top row)", "Fig. 4 (bottom row)",
            "Fig. 5 (top row)", "Fig. 5 (bottom row)"} <= figures
    unavailable = [p for p in table.values() if not p.available]
    assert [p.figure for p in unavailable] == ["Fig. 2(c)", "Fig. 2(f)", "Fig. 2(i)"]
    for p in unavailable:
        assert p.spec is None and "Covertype" in p.unavailable and "not bundled" in p.unavailable
        assert "unavailable" in p.describe()
    assert len(PAPER) == 6 + 12 + 2  # Fig. 2 (a, b, d, e, g, h), Figs. 3-5 (12), the authors' set-up (2)
    assert len(AVAILABLE) == len(PAPER) + 4  # and the LDA presets (test_sweeps_lda.py)
    with pytest.raises(InputError, match="unknown preset 'fig9'"):
        get_preset("fig9")


def test_fig2_presets_use_the_papers_settings():
    expected = {"eps": FIG2_EPS, "ns": FIG2_NS, "delta": FIG2_DELTA}
    fixed_eps = {"fig2d-synthetic-ns": 0.5, "fig2e-mnist-ns": 1.0, "fig2g-synthetic-delta": 1.0,
                 "fig2h-mnist-delta": 2.0}
    for name in (n for n in AVAILABLE if n.startswith("fig2")):
        spec = get_preset(name).spec
        assert spec.family == "pca" and spec.runs == 10
        assert spec.grid == expected[spec.parameter]
        assert spec.algorithms == ("cape", "dpdis", "conv", "local", "nonpriv")
        scenario = spec.scenario
        assert scenario.n_sites == 10 and scenario.calibration == "classic"
        assert scenario.neighbouring == "as-published"
        assert set(scenario.sizes) == {1000} and set(scenario.delta) == {0.01}
        assert spec.data.k == 50 and spec.data.dim == (784 if "mnist" in name else 200)
        if name in fixed_eps:
            assert set(scenario.eps) == {fixed_eps[name]}


def test_otd_presets_use_the_papers_settings():
    for name in (n for n in PAPER if not n.startswith("fig2")):
        preset = get_preset(name)
        spec = preset.spec
        authors = name.startswith("authors")
        assert spec.family == "otd" and spec.runs == 10
        assert preset.metric == ("q_comp_normalised" if authors else "q_comp")
        assert spec.data.truth == ("authors" if authors else "ours")
        assert spec.algorithms == ("cape", "conv", "local", "nonpriv", "random")
        assert spec.scenario.n_sites == 5 and set(spec.scenario.delta) == {0.01}
        assert spec.scenario.calibration == "classic" and spec.data.eps_split == 0.5
        assert (spec.data.dim, spec.data.k) in {(10, 5), (50, 10)}
        assert spec.data.model == ("mog" if "mog" in name else "stm")
        if spec.data.model == "mog":
            assert spec.data.sigma2 == 0.05
        figure = {"eps": ("Fig. 3", "Fig. 4"), "ns": ("Fig. 3", "Fig. 4"), "delta": ("Fig. 5",)}[spec.parameter]
        assert preset.figure.startswith(figure)
        assert "our grid" in preset.grid_source


def test_presets_state_their_calibration():
    assert "classic" in PRESET_CALIBRATION and "eps >= 1" in PRESET_CALIBRATION
    for name in AVAILABLE:
        preset = get_preset(name)
        calibration = LDA_CALIBRATION if name.startswith("lda-") else PRESET_CALIBRATION
        assert calibration in preset.describe()
        data = json.loads(json.dumps(preset.to_dict()))
        assert data["available"] and data["calibration"] == calibration
        assert experiments.spec_from_dict(data["spec"]) == preset.spec


def test_quick_versions_are_small_and_keep_the_sweep():
    for name in AVAILABLE:
        spec = get_preset(name).spec
        quick = quick_spec(spec)
        assert quick.runs == 3 and quick.grid == spec.grid and quick.algorithms == spec.algorithms
        assert quick.scenario == spec.scenario
        if spec.family == "pca":
            assert quick.data.dim <= 64 and quick.data.k <= 10
        else:
            assert quick.data == spec.data


@pytest.mark.parametrize("name", AVAILABLE)
def test_a_tiny_version_of_every_preset_runs(name):
    spec = quick_spec(get_preset(name).spec).replace(runs=1, grid=get_preset(name).spec.grid[:2])
    result = experiments.run_sweep(spec, use_cache=False)
    assert result.complete and result.runs_done == 1
    reference = "nonpriv"
    rows = result.summary[result.summary["algorithm"] == reference]
    assert np.all(np.isfinite(rows["mean"]))
    assert len(result.gains) == len(spec.grid) * (1 if spec.family == "pca" else 2)
    expected = ("analytic calibration, replace-one neighbours" if spec.family == "lda" else
                "classic calibration, as-published neighbours (the papers' constants)")
    assert result.notes[1] == expected


def test_mnist_preset_samples_with_replacement_and_says_so():
    spec = get_preset("fig2b-mnist-eps").spec.replace(runs=1, grid=(1.0, 10.0), algorithms=("cape", "nonpriv"))
    result = experiments.run_sweep(spec, use_cache=False)
    notes = " ".join(result.notes)
    assert "sampled with replacement: the sites need 10,000 samples but the data set has 5,000" in notes
    assert "classic Gaussian calibration at eps = 1, 10 (>= 1) is not a valid" in notes
    cape = result.summary_of("cape", "captured_energy_ratio")["mean"].to_numpy()
    assert 0 < cape[0] < cape[1] <= 1.0
