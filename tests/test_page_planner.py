"""AppTest of the Planner page: a plan on bundled data, its sentences from dpcore (the forward answer first, the
answer, the guarantee at the answer), the check, the exports, bad input, uploads (a public proxy by default, kept
while the user visits other pages) and the corners of issue 36."""

from __future__ import annotations

import json

from conftest import app_test

from dpcore.notation import symbolic
from dpcore.pca.sweep import PcaData
from dpcore.planner import plan_target, prepare_data, question
from dpcore.scenario import default_scenario

PAGE = "pages/planner.py"


def _clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_plan_check_and_exports_on_digits():
    at = app_test(PAGE, timeout=180)
    _clean(at)
    at.session_state["scenario"] = default_scenario().with_sizes([300, 300, 300, 300, 300])
    at.selectbox(key="plan_source").set_value("digits").run()
    at.number_input(key="plan_target").set_value(70.0).run()
    at.radio(key="plan_solve").set_value("eps").run()
    _clean(at)
    scenario = default_scenario().with_sizes([300, 300, 300, 300, 300])
    intro = next(m.value for m in at.markdown if m.value.startswith("For capePCA on"))
    assert f"with the {scenario.n_sites} sites of the scenario" in intro and "70% of the non-private" in intro
    assert "ε of every site" in intro
    at.button(key="plan_go").click().run()
    _clean(at)
    data = prepare_data("pca", PcaData(dataset="digits"), None, 0)
    expected = plan_target("pca", data, scenario, question("eps", 0.7, scenario), seed=0)
    assert at.info[0].value == symbolic(expected.forward_sentence)  # the first answer: the scenario as it stands
    assert at.success[0].value == symbolic(expected.sentence)
    assert "90% of fresh studies reach 70% of the non-private result (a study reaches it when" in at.success[0].value
    from dpcore.planner.report import guarantee_lines
    shown = next(m.value for m in at.markdown if "capePCA, aggregator" in m.value)
    assert shown == "\n".join(f"- {symbolic(line)}" for line in guarantee_lines(expected))
    assert "capePCA, aggregator" in shown and "certified" in shown
    assert "discrete capePCA, aggregator" in shown  # discrete CAPE's guarantee at its answer, the discrete audit's
    table = at.dataframe[0].value
    assert list(table["scheme"]) == ["capePCA", "discrete capePCA", "the conventional scheme"]
    bits = expected.answers["cape-discrete"].bits
    assert list(table["bits per value"]) == ["float64", str(bits), "float64"] and 20 <= bits <= 64
    at.button(key="plan_check_go").click().run()
    _clean(at)
    assert any("fresh studies reached the target" in m.value and "95 % CI" in m.value for m in at.markdown)
    check = at.dataframe[-1].value  # every scheme's own algorithm at its answer and at 0.8 x, discrete CAPE's too
    assert sorted(set(check["scheme"])) == ["capePCA", "discrete capePCA", "the conventional scheme"]
    buttons = at.get("download_button")
    assert len(buttons) == 4
    assert not at.error


def test_target_outside_the_data_is_answered_plainly():
    at = app_test(PAGE, timeout=180)
    at.selectbox(key="plan_source").set_value("digits").run()
    at.number_input(key="plan_target").set_value(100.0).run()
    at.radio(key="plan_solve").set_value("sites").run()
    at.button(key="plan_go").click().run()
    _clean(at)
    assert "cannot" in at.warning[0].value and not at.success  # issue 36: never in a green success box
    for frame in at.dataframe:
        assert not frame.value.isna().any().any()  # no None cells; the reasons are shown in full under the table
    assert any(c.value.startswith("Why capePCA cannot: ") for c in at.caption)
    assert not at.error


def test_tensor_family_has_its_own_target_and_settings_in_the_link():
    at = app_test(PAGE, timeout=180)
    at.selectbox(key="plan_family").set_value("lda").run()
    _clean(at)
    assert any(n.label.startswith("Target topic error") for n in at.number_input)
    link = json.loads(at.query_params["settings"][0] if isinstance(at.query_params["settings"], list)
                      else at.query_params["settings"])
    assert link["plan_family"] == "lda"


def _upload_mog(at, name: str, content: bytes, read: str = "mine") -> None:
    at.selectbox(key="plan_family").set_value("otd").run()
    at.selectbox(key="plan_source").set_value("upload-mog").run()
    at.file_uploader(key="plan_upload_upload-mog").set_value((name, content, "text/csv"))
    at.run()
    if read != "proxy" and not at.exception and at.get("radio"):
        at.radio(key="plan_read").set_value(read).run()


def test_plan_check_and_exports_on_an_uploaded_mog_csv():
    from test_planner_uploads import mog_csv

    from dpcore.planner.sources import read_upload, source_settings

    at = app_test(PAGE, timeout=180)
    scenario = default_scenario().with_sizes([300, 300, 300, 300, 300])
    at.session_state["scenario"] = scenario
    _upload_mog(at, "mine.csv", mog_csv(0))
    _clean(at)
    at.number_input(key="plan_upload_k").set_value(3).run()
    at.radio(key="plan_solve").set_value("eps").run()
    at.number_input(key="plan_error").set_value(0.3).run()
    _clean(at)
    intro = next(m.value for m in at.markdown if m.value.startswith("For capeAGN on"))
    assert "mine.csv: 3,000 samples x D = 6; K = 3" in intro
    at.button(key="plan_go").click().run()
    _clean(at)
    dataset, loader = read_upload("otd", "upload-mog", mog_csv(0), "mine.csv")
    data = prepare_data("otd", source_settings("otd", "upload-mog", k=3), dataset, 0, loader)
    expected = plan_target("otd", data, scenario, question("eps", 0.3, scenario), seed=0)
    assert expected.answers["cape"].answer is not None
    assert at.success[0].value == symbolic(expected.sentence)
    assert any("3,000 samples you have" in i.value for i in at.info)
    at.button(key="plan_check_go").click().run()
    _clean(at)
    assert any("fresh studies reached the target" in m.value for m in at.markdown)
    assert len(at.get("download_button")) == 4
    assert not at.error


def test_a_bad_upload_is_explained_next_to_the_file_and_the_inputs_are_kept():
    at = app_test(PAGE, timeout=180)
    at.selectbox(key="plan_family").set_value("otd").run()
    at.number_input(key="plan_error").set_value(0.4).run()
    _upload_mog(at, "bad.csv", b"1,2\n3,oops\n4,5\n")
    _clean(at)
    assert any("bad.csv: row 2, column 2 is the text 'oops'" in e.value for e in at.error)
    assert not at.get("download_button") and not at.success
    assert at.selectbox(key="plan_source").value == "upload-mog" and at.number_input(key="plan_error").value == 0.4


def test_capelda_on_uploaded_text_with_its_vocabulary_options_and_the_check():
    from test_planner_uploads import documents

    at = app_test(PAGE, timeout=180)
    scenario = default_scenario().with_sizes([600, 600, 600, 600, 600])
    at.session_state["scenario"] = scenario
    at.selectbox(key="plan_family").set_value("lda").run()
    at.selectbox(key="plan_source").set_value("upload").run()
    at.file_uploader(key="plan_upload_upload").set_value(("docs.txt", documents(), "text/plain"))
    at.run()
    at.radio(key="plan_read").set_value("mine")
    at.selectbox(key="plan_opt_rule").set_value("frequent")
    at.number_input(key="plan_opt_vocab_size").set_value(24)
    at.number_input(key="plan_upload_k").set_value(3)
    at.radio(key="plan_solve").set_value("eps").run()
    at.number_input(key="plan_error").set_value(0.3).run()
    _clean(at)
    intro = next(m.value for m in at.markdown if m.value.startswith("For capeLDA on"))
    assert "docs.txt: 4,000 documents, D = 24 words; K = 3" in intro
    at.button(key="plan_go").click().run()
    _clean(at)
    assert at.success[0].value.startswith("capeLDA: with ε of every site = ")
    assert any("not differentially private" in i.value for i in at.info)
    at.button(key="plan_check_go").click().run()
    _clean(at)
    assert any(m.value.startswith("capeLDA at ") and "fresh studies" in m.value for m in at.markdown)
    assert len(at.get("download_button")) == 4 and not at.error


def test_capeagn_documents_with_a_public_vocabulary_file_and_a_bad_one():
    from test_planner_uploads import documents

    at = app_test(PAGE, timeout=180)
    at.selectbox(key="plan_family").set_value("otd").run()
    at.selectbox(key="plan_source").set_value("upload-stm").run()
    at.file_uploader(key="plan_upload_upload-stm").set_value(("docs.txt", documents(), "text/plain"))
    at.file_uploader(key="plan_opt_vocabulary").set_value(("words.txt", b"apple\ncar\nred\nbus\npear\n", "text/plain"))
    at.number_input(key="plan_upload_k").set_value(3)
    at.run()
    at.radio(key="plan_read").set_value("mine").run()
    _clean(at)
    intro = next(m.value for m in at.markdown if m.value.startswith("For capeAGN on"))
    assert "documents, D = 5 words (single topic model)" in intro  # those with 3 of its words
    at.file_uploader(key="plan_opt_vocabulary").set_value(("words.txt", b"two words\n", "text/plain")).run()
    _clean(at)
    assert any(e.value.startswith("words.txt: ") for e in at.error)
    assert at.selectbox(key="plan_source").value == "upload-stm"


def test_an_upload_is_planned_on_a_public_proxy_by_default_and_kept_across_pages():
    """The proxy reads only the upload's N and D (issue 32, 4); the file stays when the uploader is not drawn (as when
    the user visits Sites and budgets to change N_s), with a note saying which file is used."""
    from test_planner_uploads import mog_csv

    at = app_test(PAGE, timeout=180)
    _upload_mog(at, "mine.csv", mog_csv(0), read="proxy")
    _clean(at)
    assert at.radio(key="plan_read").value == "proxy"
    intro = next(m.value for m in at.markdown if m.value.startswith("For capeAGN on"))
    assert "public proxy of mine.csv" in intro and "only its size (N = 3,000) and dimension (D = 6) were read" in intro
    at.selectbox(key="plan_source").set_value("synthetic").run()  # the uploader is not drawn ...
    at.selectbox(key="plan_source").set_value("upload-mog").run()
    at.file_uploader(key="plan_upload_upload-mog").set_value(None).run()  # ... and comes back empty
    _clean(at)
    assert any(c.value == "Using mine.csv, uploaded earlier (upload another file to replace it)." for c in at.caption)
    assert any(m.value.startswith("For capeAGN on public proxy of mine.csv") for m in at.markdown)


def test_issue_36_corners_unequal_sites_labels_and_the_detected_label_column():
    """The synthetic source's label from what runs; unequal sites: every site's N_s next to the mean; an upload's
    detected label column named in the data's description."""
    from dpcore.pca.planning import source_label

    at = app_test(PAGE, timeout=180)
    scenario = default_scenario().with_sizes([500, 1000, 1500, 1000, 1000]).with_sites(eps=4.0)
    at.session_state["scenario"] = scenario
    at.run()
    assert source_label(PcaData()) in at.selectbox(key="plan_source").options and "K = 10" in source_label(PcaData())
    at.button(key="plan_go").click().run()
    _clean(at)
    sentence = at.success[0].value
    assert "on average (the sites hold " in sentence
    table = at.dataframe[1].value
    assert list(table["site"]) == scenario.names
    assert table["N_s, capePCA"].str.replace(",", "").astype(int).nunique() == 3
    rows = ["f1,f2,f3,target"] + [f"{i % 7}.5,{i % 5}.25,{i % 3}.75,{i % 2}" for i in range(400)]
    at.selectbox(key="plan_source").set_value("upload").run()
    at.file_uploader(key="plan_upload_upload").set_value(("bc.csv", "\n".join(rows).encode(), "text/csv")).run()
    at.radio(key="plan_read").set_value("mine")
    at.number_input(key="plan_upload_k").set_value(2).run()
    _clean(at)
    assert not at.error, [e.value for e in at.error]
    intro = next(m.value for m in at.markdown if m.value.startswith("For capePCA on"))
    assert "label column 'target' excluded" in intro and "D = 3" in intro


def test_a_familys_data_settings_are_widgets_from_its_table_entry_and_reach_the_plan():
    """The settings' own data (a synthetic source): every field of the family's data type the source leaves free is a
    widget (plan_<family>_<field>, dpcore.family.data_form), so a family added later gets its planner fields; the
    values reach the data planned on, and a bad one is refused with the data type's message."""
    at = app_test(PAGE, timeout=180)
    at.selectbox(key="plan_family").set_value("otd").run()
    _clean(at)
    keys = {w.key for w in at.number_input}
    assert {"plan_otd_dim", "plan_otd_k"} <= keys and "plan_otd_model" in {w.key for w in at.text_input}
    at.number_input(key="plan_otd_dim").set_value(7).run()
    _clean(at)
    assert any("D = 7" in m.value for m in at.markdown), [m.value for m in at.markdown][:6]
    at.number_input(key="plan_otd_k").set_value(9).run()  # K > D: refused by OtdData, the page keeps running
    assert not at.exception and at.error and "K" in at.error[0].value
