"""capePCA page (AppTest): default state, bad inputs shown next to their widgets, successful runs."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import app_test

from dpcore.data import load_bundled
from dpcore.pca import compare_pca, prepare_pca
from dpcore.scenario import default_scenario, scenario_from_dict

PAGE = "pages/capepca.py"


@pytest.fixture
def at():
    return app_test(PAGE, timeout=120)


def results_table(at):
    tables = [d.value for d in at.dataframe if "noise std per entry" in d.value.columns]
    return tables[0] if tables else None


def errors(at):
    return [e.value for e in at.error]


def use_equal_sites(at, sites=3, size=400, eps=0.5, delta=1e-4):
    at.radio(key="pca_site_mode").set_value("equal").run()
    at.number_input(key="pca_sites").set_value(sites)
    at.number_input(key="pca_site_size").set_value(size)
    at.number_input(key="pca_eps").set_value(eps)
    at.number_input(key="pca_delta").set_value(delta)


def test_default_state_renders_without_errors(at):
    assert not at.exception
    assert errors(at) == []
    assert at.title[0].value == "capePCA: distributed private PCA"
    assert at.radio(key="pca_data").value == "digits"
    assert at.radio(key="pca_site_mode").value == "scenario"
    assert "press **Run**" in at.info[0].value
    assert results_table(at) is None
    assert at.button(key="pca_run").label == "Run"
    sites = [d.value for d in at.dataframe if "site" in d.value.columns][0]
    assert list(sites["N_s"]) == list(default_scenario().sizes)


def test_uploaded_csv_with_text_is_explained_and_inputs_are_kept(at):
    at.number_input(key="pca_k").set_value(3)
    at.radio(key="pca_data").set_value("upload").run()
    at.file_uploader(key="pca_upload").set_value(("bad.csv", b"a,b,c\n1,2,3\n4,oops,6\n7,8,9\n", "text/csv"))
    at.run()
    assert not at.exception
    assert any("bad.csv: row 3, column 2 ('b') is the text 'oops'" in e for e in errors(at))
    at.button(key="pca_run").click().run()
    assert not at.exception
    assert results_table(at) is None
    assert at.number_input(key="pca_k").value == 3 and at.radio(key="pca_data").value == "upload"


def test_k_larger_than_d_is_explained(at):
    at.radio(key="pca_data").set_value("digits").run()
    use_equal_sites(at)
    at.number_input(key="pca_k").set_value(65)
    at.button(key="pca_run").click().run()
    assert not at.exception
    assert errors(at) == ["K must be ≤ D = 64 (got K = 65)"]
    assert results_table(at) is None
    assert at.number_input(key="pca_k").value == 65


def test_no_algorithm_and_missing_upload_are_explained(at):
    at.multiselect(key="pca_algorithms").set_value([])
    at.radio(key="pca_data").set_value("upload").run()
    at.button(key="pca_run").click().run()
    assert not at.exception
    assert set(errors(at)) == {"upload a CSV file first", "choose at least one algorithm"}


def test_successful_run_on_digits_matches_the_library(at):
    at.radio(key="pca_data").set_value("digits").run()
    use_equal_sites(at, sites=3, size=400, eps=0.5, delta=1e-4)
    at.number_input(key="pca_k").set_value(5)
    at.number_input(key="pca_runs").set_value(2)
    at.button(key="pca_run").click().run()
    assert not at.exception and errors(at) == []
    # 1,200 of 1,797 images: no resampling; eps < 1 and delta < 1/N_s: no caveats; but at eps = 0.5 the noise
    # swamps lambda_5 of the digits, which the page says
    assert len(at.warning) == 1 and "mostly noise" in at.warning[0].value
    table = results_table(at)
    assert list(table["algorithm"]) == ["capePCA", "pooled AG", "non-dp pool", "local", "conv", "DPdisPCA",
                                        "central (DPDPCA)"]
    ratio = dict(zip(table["algorithm"], table["q_CE / q_CE(non-dp pool)"], strict=True))
    assert ratio["non-dp pool"] == pytest.approx(1.0)
    shared = default_scenario()
    scenario = scenario_from_dict({"sites": [{"name": f"s{i + 1}", "n": 400, "eps": 0.5, "delta": 1e-4}
                                             for i in range(3)], "calibration": shared.calibration,
                                   "neighbouring": shared.neighbouring, "seed": shared.seed})
    setup = prepare_pca(load_bundled("digits"), scenario, 5, seed=shared.seed)
    expected = compare_pca(setup.problem, setup.privacy, runs=2, seed=shared.seed)
    want = {m.algorithm: m.mean for m in expected.summary if m.metric == "captured_energy_ratio"}
    assert ratio["capePCA"] == pytest.approx(want["cape"], rel=1e-12)
    assert ratio["DPdisPCA"] == pytest.approx(want["dpdis"], rel=1e-12)
    assert len(at.get("plotly_chart")) == 3  # bars, scree, component images (digits are 8 x 8 pictures)
    assert [b.label for b in at.download_button] == ["Download summary (CSV)", "Download every run (CSV)"]
    # the result stays when another widget changes
    at.selectbox(key="pca_chart_metric").set_value("subspace_distance").run()
    assert results_table(at) is not None and not at.exception


def test_successful_run_on_an_upload_with_labels(at):
    rng = np.random.default_rng(1)
    lines = ["f1,f2,f3,f4,kind"] + [",".join(f"{v:.5f}" for v in rng.normal(size=4)) + f",{'xy'[i % 2]}"
                                    for i in range(90)]
    at.radio(key="pca_data").set_value("upload").run()
    at.file_uploader(key="pca_upload").set_value(("mine.csv", "\n".join(lines).encode(), "text/csv"))
    at.text_input(key="pca_label").set_value("kind").run()
    assert errors(at) == []
    assert any("mine.csv: 90 samples x 4 features, label column 'kind' left out" in c.value for c in at.caption)
    use_equal_sites(at, sites=3, size=30, eps=0.5, delta=1e-3)
    at.toggle(key="pca_by_label").set_value(True)
    at.number_input(key="pca_k").set_value(2)
    at.number_input(key="pca_runs").set_value(2)
    at.multiselect(key="pca_algorithms").set_value(["cape", "nondp"])
    at.button(key="pca_run").click().run()
    assert not at.exception and errors(at) == []
    assert list(results_table(at)["algorithm"]) == ["capePCA", "non-dp pool"]
    assert len(at.get("plotly_chart")) == 2  # no pictures for a table without an image shape


def test_synthetic_data_with_the_shared_scenario(at):
    at.radio(key="pca_data").set_value("synthetic").run()
    at.number_input(key="pca_dim").set_value(12)
    at.number_input(key="pca_k").set_value(3)
    at.number_input(key="pca_runs").set_value(1)
    at.multiselect(key="pca_algorithms").set_value(["cape", "conv"])
    at.button(key="pca_run").click().run()
    assert not at.exception and errors(at) == []
    assert list(results_table(at)["algorithm"]) == ["capePCA", "conv"]
