"""AppTest of the Any family page (issue 33): one page for every family through the single-run contract - its data
widgets come from the family's data type, its table from the family's metric table, its privacy from the computed
guarantees - and its result is the contract's (the same numbers as dpcore.compare)."""

from __future__ import annotations

import pytest
from conftest import app_test

import dpcore
from dpcore.family import data_form, families
from dpcore.lda.sweep import LdaData
from dpcore.scenario import default_scenario

PAGE = "pages/families.py"


def _clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_every_family_and_its_data_fields_are_offered():
    at = app_test(PAGE)
    _clean(at)
    assert list(at.selectbox(key="fam_family").options) == [f.label for f in families().values()]
    for name, family in families().items():
        at.selectbox(key="fam_family").set_value(name).run()
        _clean(at)
        keys = {w.key for w in (*at.number_input, *at.text_input, *at.toggle)}
        assert set(data_form(family, f"fam_{name}_")) <= keys


@pytest.mark.slow
def test_a_run_shows_the_families_metrics_and_guarantees_and_equals_the_front_door():
    at = app_test(PAGE)
    at.selectbox(key="fam_family").set_value("lda").run()
    for field, value in (("dim", 20), ("k", 3), ("doc_length", 20)):
        at.number_input(key=f"fam_lda_{field}").set_value(value).run()
    at.multiselect(key="fam_lda_algorithms").set_value(["cape", "conv", "nonpriv"]).run()
    at.number_input(key="fam_runs").set_value(2).run()
    at.button(key="fam_run").click().run()
    _clean(at)
    table = at.dataframe[0].value
    assert list(table["algorithm"]) == ["capeLDA", "conventional", "non-private"]
    expected = dpcore.compare("lda", default_scenario(), LdaData(dim=20, k=3, doc_length=20),
                              ("cape", "conv", "nonpriv"), runs=2, seed=0)
    label = families()["lda"].metrics["topic_error"].label
    s = expected.summary("cape", "topic_error")
    assert table[label].iloc[0] == f"{s.mean:.4g} ± {s.std:.2g}"
    assert len(at.dataframe) >= 2  # every view's guarantee, computed
