"""Privacy-utility page (AppTest): default state, presets, sweeps of the shared scenario, bad grids, Stop, cache."""

from __future__ import annotations

import pytest
from conftest import app_test

from dpcore import experiments, pca
from dpcore.scenario import default_scenario

PAGE = "pages/privacy_utility.py"


@pytest.fixture
def at():
    return app_test(PAGE, timeout=120)


def errors(at):
    return [e.value for e in at.error]


def has_stop(at) -> bool:
    return any(b.key == "pu_stop" for b in at.button)


def finish(at, limit: int = 30):
    """Let the sweep fragment take its steps (one run per script run, as its timer does in a browser)."""
    for _ in range(limit):
        if not has_stop(at):
            return at
        at.run()
    raise AssertionError("the sweep did not finish")


def results_table(at):
    tables = [d.value for d in at.dataframe if "ci_high" in d.value.columns]
    return tables[0] if tables else None


def use_scenario(at, parameter="eps", grid=None, runs=2, seed=11, family="pca"):
    at.radio(key="pu_mode").set_value("scenario").run()
    if family != "pca":
        at.radio(key="pu_family").set_value(family).run()
    at.selectbox(key="pu_parameter").set_value(parameter).run()
    if grid is not None:
        at.text_input(key=f"pu_grid_{parameter}").set_value(grid)
    at.number_input(key="pu_runs").set_value(runs)
    at.number_input(key="pu_seed").set_value(seed)
    at.run()


def test_default_state_renders_without_running_anything(at):
    assert not at.exception and errors(at) == []
    assert at.title[0].value == "Privacy-utility"
    assert at.radio(key="pu_mode").value == "preset"
    assert at.selectbox(key="pu_preset").value == "fig2a-synthetic-eps"
    assert at.toggle(key="pu_quick").value is True
    assert "Nothing runs until you do" in at.info[0].value
    assert not has_stop(at) and results_table(at) is None
    assert any("Covertype" in m.value and "not bundled" in m.value for m in at.markdown)
    assert any("classic Gaussian calibration" in c.value for c in at.caption)
    assert not at.button(key="pu_run").disabled


def test_preset_selection_and_a_quick_run(at):
    at.selectbox(key="pu_preset").set_value("fig3-mog-d10-eps").run()
    assert any(c.value.startswith("Fig. 3 (top row)") and "3 runs" in c.value for c in at.caption)
    at.button(key="pu_run").click().run()
    assert not at.exception
    finish(at)
    assert not at.exception and errors(at) == []
    assert [s.value for s in at.subheader] == ["Results"]
    assert any("Complete: 3 runs" in c.value for c in at.caption)
    table = results_table(at)
    assert set(table["algorithm"]) == {"capeAGN", "conv", "local", "non-private", "random vectors"}
    assert set(table["runs"]) <= {3, 2, 1} and table["eps"].tolist()[:5] == [0.1] * 5
    assert len(at.get("plotly_chart")) == 2
    assert len(at.get("download_button")) == 3
    assert any("classic Gaussian calibration at eps = 1, 3, 10" in w.value for w in at.warning)
    at.selectbox(key="pu_metric_otd").set_value("weight_error").run()
    assert not at.exception and results_table(at) is not None


def test_sweep_of_the_shared_scenario(at):
    use_scenario(at, "ns", "50, 100", runs=2)
    assert any(c.value.startswith("Base scenario: 5 sites") for c in at.caption)
    at.button(key="pu_run").click().run()
    finish(at)
    assert not at.exception and errors(at) == []
    table = results_table(at)
    assert sorted(table["N_s"].unique()) == [50, 100] and set(table["runs"]) == {2}
    assert "capePCA" in set(table["algorithm"])
    note_text = " ".join(m.value for m in at.markdown)
    assert "nested samples" in note_text
    assert default_scenario().n_sites == 5


@pytest.mark.parametrize("grid, message", [
    ("", "the grid is empty"),
    ("0.1, abc", "grid value 'abc' is not a number"),
    ("0.5, 0.5", "the grid repeats 0.5"),
])
def test_bad_grid_is_explained_next_to_it_and_inputs_are_kept(at, grid, message):
    use_scenario(at, "eps", grid, runs=3)
    assert not at.exception
    assert any(message in e for e in errors(at)), errors(at)
    assert at.button(key="pu_run").disabled
    assert at.number_input(key="pu_runs").value == 3 and at.text_input(key="pu_grid_eps").value == grid


def test_collusion_bound_beyond_the_sites_and_no_algorithm(at):
    use_scenario(at, "c", "0, 7")
    assert any("collusion bound c must be at most S - 1 = 4" in e for e in errors(at))
    at.text_input(key="pu_grid_c").set_value("0, 2")
    at.multiselect(key="pu_algorithms_pca").set_value([]).run()
    assert errors(at) == [f"choose at least one algorithm ({', '.join(pca.ALGORITHMS)})"]
    assert at.button(key="pu_run").disabled


def test_stop_keeps_the_finished_runs(at):
    use_scenario(at, "eps", "0.5, 2", runs=4, seed=23)
    at.button(key="pu_run").click().run()
    assert has_stop(at)  # one run done, the fragment shows the progress and the Stop button
    assert at.get("progress")[0].proto.text.startswith("1 of 4 runs done")
    at.button(key="pu_stop").click().run()
    assert not at.exception and not has_stop(at)
    assert any(w.value.startswith("Stopped after 1 of 4 runs") for w in at.warning)
    table = results_table(at)
    assert set(table["runs"]) == {1}
    at.run()  # a re-render keeps the partial result and does not resume the sweep
    assert not has_stop(at) and results_table(at) is not None


def test_running_a_finished_sweep_again_is_instant(at):
    use_scenario(at, "delta", "0.001, 0.01", runs=2, seed=31)
    at.button(key="pu_run").click().run()
    finish(at)
    hits = experiments.cache_info()["hits"]
    at.button(key="pu_run").click().run()
    assert not has_stop(at)  # no step needed: the complete result came from the cache
    assert experiments.cache_info()["hits"] == hits + 1
    assert results_table(at) is not None and any("Complete: 2 runs" in c.value for c in at.caption)


def test_tensor_sweep_of_the_shared_scenario(at):
    use_scenario(at, "eps", "1, 10", runs=1, seed=5, family="otd")
    at.button(key="pu_run").click().run()
    finish(at)
    assert not at.exception and errors(at) == []
    table = results_table(at)
    assert "capeAGN" in set(table["algorithm"]) and sorted(table["eps"].unique()) == [1.0, 10.0]


def test_topic_model_sweep_of_the_shared_scenario_and_an_lda_preset(at):
    use_scenario(at, "eps", "100, 1000", runs=1, seed=5, family="lda")
    at.number_input(key="pu_lda_d").set_value(20).run()
    at.number_input(key="pu_lda_k").set_value(3).run()
    at.button(key="pu_run").click().run()
    finish(at)
    assert not at.exception and errors(at) == []
    table = results_table(at)
    assert "capeLDA" in set(table["algorithm"]) and sorted(table["eps"].unique()) == [100.0, 1000.0]
    at.radio(key="pu_mode").set_value("preset").run()
    at.selectbox(key="pu_preset").set_value("lda-cape-eps").run()
    assert not at.exception and "analytic Gaussian calibration" in " ".join(c.value for c in at.caption)
