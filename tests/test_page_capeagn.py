"""capeAGN page (AppTest): default state, a run with results, bad inputs shown next to the input."""

from __future__ import annotations

from conftest import app_test

from pages.shared.catalog import PAGES

PAGE = "pages/capeagn.py"


def _texts(elements) -> str:
    return " ".join(str(e.value) for e in elements)


def test_page_is_listed_and_renders_its_default_state():
    assert any(p.path == PAGE and p.title == "capeAGN" for p in PAGES)
    at = app_test(PAGE)
    assert not at.exception and len(at.error) == 0
    assert at.title[0].value == "capeAGN: private tensor decomposition across sites"
    assert "press **Run**" in _texts(at.info)
    assert "Path: **dense**" in _texts(at.caption)


def test_run_shows_the_table_chart_components_and_weights():
    at = app_test(PAGE)
    at.toggle(key="capeagn_override").set_value(True).run()
    at.number_input(key="capeagn_eps").set_value(4.0).run()
    at.number_input(key="capeagn_runs").set_value(2).run()
    at.button(key="capeagn_run").click().run()
    assert not at.exception and len(at.error) == 0
    table = at.dataframe[0].value
    assert table["algorithm"].tolist() == ["capeAGN", "conv", "local", "non-private", "random vectors"]
    assert (table["runs"] == 2).all() and (table["failed (whitening)"] == 0).all()
    q = dict(zip(table["algorithm"], table["q_comp"], strict=True))
    assert q["non-private"] < q["capeAGN"] < q["random vectors"]
    charts = at.get("plotly_chart")
    assert len(charts) == 3  # q_comp, components heatmap, weights
    assert at.selectbox(key="capeagn_show").value == "cape"
    assert "5 sites" in _texts(at.caption) and "path **dense**" in _texts(at.caption)


def test_mog_on_the_projected_path_and_privacy_statements():
    at = app_test(PAGE)
    at.selectbox(key="capeagn_model").set_value("mog").run()
    at.selectbox(key="capeagn_path").set_value("projected").run()
    at.multiselect(key="capeagn_algorithms").set_value(["cape", "agn", "noisy_tpm"]).run()
    at.number_input(key="capeagn_runs").set_value(1).run()
    at.button(key="capeagn_run").click().run()
    assert not at.exception and len(at.error) == 0
    assert at.dataframe[0].value["algorithm"].tolist() == ["capeAGN", "AGN (pooled)", "noisy TPM"]
    assert "path **projected**" in _texts(at.caption)
    assert "sample-level" in _texts(at.markdown)


def test_bad_inputs_are_shown_next_to_the_input():
    at = app_test(PAGE)
    at.selectbox(key="capeagn_preset").set_value("custom").run()
    at.number_input(key="capeagn_k_custom").set_value(30).run()
    assert not at.exception
    assert "K must be <= D = 20 (got K = 30)" in _texts(at.error)
    assert at.button(key="capeagn_run").disabled
    at.number_input(key="capeagn_k_custom").set_value(3).run()
    assert len(at.error) == 0 and not at.button(key="capeagn_run").disabled
    at.toggle(key="capeagn_override").set_value(True).run()
    at.number_input(key="capeagn_eps").set_value(0.0).run()
    assert "eps: must be a number > 0" in _texts(at.error)
    at.number_input(key="capeagn_eps").set_value(1.0).run()
    at.selectbox(key="capeagn_path").set_value("dense").run()
    at.number_input(key="capeagn_d_custom").set_value(400).run()
    assert "too large for the dense path" in _texts(at.error)
    assert at.number_input(key="capeagn_k_custom").value == 3  # everything else the user entered is kept


def test_upload_mode_without_a_file_explains_what_is_missing():
    at = app_test(PAGE)
    at.radio(key="capeagn_source").set_value("Upload").run()
    assert not at.exception and len(at.error) == 0
    at.button(key="capeagn_run").click().run()
    assert "upload a file first" in _texts(at.error)
