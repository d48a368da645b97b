"""Topic models page (AppTest): the opening story, its defaults' margins (press Run, nothing else), the one click to
where CAPE stops helping and back, the bundled corpus with top words and reasons, uploads and their vocabulary
warning, bad inputs next to the input, the audit and the regime comparisons."""

from __future__ import annotations

import math
import re

import pytest
from conftest import app_test

from dpcore.lda.story import BREAKDOWN, OPENING, corpus_words, lda_claim, setting_sentence
from dpcore.notation import symbolic
from dpcore.scenario import default_scenario, equal_sites_scenario
from dpcore.summary import MEET_SHARE
from pages.shared.catalog import PAGES

PAGE = "pages/topic_models.py"


def _texts(elements) -> str:
    return " ".join(str(e.value) for e in elements)


def _clean(at) -> None:
    assert not at.exception, at.exception
    assert len(at.error) == 0, _texts(at.error)


def test_page_is_listed_and_opens_on_the_story():
    assert any(p.path == PAGE and p.title == "Topic models" for p in PAGES)
    at = app_test(PAGE)
    _clean(at)
    assert at.title[0].value == "Topic models: private LDA across sites"
    lecture = equal_sites_scenario(OPENING.sites, OPENING.docs_per_site, OPENING.grid[0], OPENING.delta,
                                   calibration="analytic", name_prefix="site ")
    intro = symbolic(setting_sentence(corpus_words(OPENING.spec), lecture, OPENING.grid))  # from what will run
    assert intro in _texts(at.markdown) and intro.startswith("20 sites each hold 1,000 documents")
    assert "This page runs the lecture setting" in _texts(at.markdown)
    assert "Press **Run**" in _texts(at.info)
    assert at.number_input(key="tm_sites").value == OPENING.sites
    assert at.number_input(key="tm_docs").value == OPENING.docs_per_site
    assert at.multiselect(key="tm_algorithms").value == list(OPENING.algorithms)
    assert not at.button(key="tm_run").disabled and at.button(key="tm_breakdown").label.startswith("Show where")


def test_defaults_show_a_large_and_statistically_clear_capelda_advantage():
    """Press Run and nothing else. At eps = 30 capeLDA must close at least half of the conventional scheme's gap to
    the non-private result, and privacy must visibly cost the conventional scheme (at least a fifth of the way from
    the non-private result to random topics) - both at two standard errors (from the run-to-run spread, propagated
    to the ratios) below the estimate. Seen over seeds 0-7 of the page (5 runs each, published third-moment law,
    the keyed-chunk noise streams): closure 0.66-0.80, two standard errors below it 0.57-0.75 (closure at least 3.6
    of its standard errors above one half); cost 0.47-0.60, two standard errors below it 0.39-0.57."""
    at = app_test(PAGE, timeout=300)
    at.button(key="tm_run").click().run()
    _clean(at)
    curve = at.session_state["tm_result"]
    row = {name: curve.at(name, 30.0) for name in ("cape", "conv", "nonpriv", "random")}
    cape, conv = row["cape"]["mean"], row["conv"]["mean"]
    best, worst = row["nonpriv"]["mean"], row["random"]["mean"]
    closure = (conv - cape) / (conv - best)
    closure_se = math.hypot(row["cape"]["se"] / (conv - best), row["conv"]["se"] * (cape - best) / (conv - best) ** 2)
    cost = (conv - best) / (worst - best)
    assert closure - 2 * closure_se >= 0.5
    assert cost - 2 * row["conv"]["se"] / (worst - best) >= 0.2
    assert "closes" in _texts(at.markdown) and "capeLDA's topic error is" in _texts(at.markdown)
    assert len(at.get("plotly_chart")) == 1
    table = at.dataframe[0].value
    assert table["algorithm"].tolist() == ["capeLDA", "conventional", "local", "non-private", "random topics"]
    assert "What each party can learn" in _texts(at.markdown)


def test_the_page_prints_the_audits_guarantee_and_offers_the_collusion_robust_design():
    """At the opening setting (tests/test_guarantee.py: the aggregator's exact composed eps is 34.9 by the oracle) the
    page says so, never '(ε, δ)-DP' for that view, and the collusion-robust design certifies every view."""
    at = app_test(PAGE, timeout=300)
    at.number_input(key="tm_runs").set_value(1).run()
    at.button(key="tm_run").click().run()
    _clean(at)
    text = _texts(at.markdown)
    assert "capeLDA - aggregator: NOT certified for every site - ε 34.9 > promised 30" in text
    assert "capeLDA - release: (30, 1e-06)-DP certified" in text
    assert "views learn more than each site promised" in _texts(at.warning)
    for line in text.split("capeLDA - ")[1:]:
        assert "-DP" not in line.split("\n")[0] or "-DP certified" in line
    at.checkbox(key="tm_robust").check().run()
    at.button(key="tm_run").click().run()
    _clean(at)
    text = _texts(at.markdown)
    assert "capeLDA - aggregator: (30, 1e-06)-DP certified" in text
    assert "coalition of 6: (30, 1e-06)-DP certified" in text
    assert "NOT certified" not in text.split("Privacy guarantees")[1].split("Which algorithms")[0]


def test_one_click_shows_where_cape_stops_helping_and_back():
    """100 documents per site: at eps = 10 every private curve stays near random topics (asserted above 0.6 of
    random's error; over seeds 0-7 the lowest was 0.86 of it, a margin of 1.43 times, with the keyed-chunk noise
    streams too)."""
    at = app_test(PAGE, timeout=300)
    at.button(key="tm_breakdown").click().run()
    _clean(at)
    assert symbolic(BREAKDOWN.explanation) in _texts(at.info)
    assert at.number_input(key="tm_docs").value == BREAKDOWN.docs_per_site
    curve = at.session_state["tm_result"]
    random = curve.at("random", 10.0)["mean"]
    for name in ("cape", "conv", "local", "pooled"):  # every private curve near random topics at eps = 10
        assert curve.at(name, 10.0)["mean"] > 0.6 * random
    at.button(key="tm_opening").click().run()
    _clean(at)
    assert at.number_input(key="tm_docs").value == OPENING.docs_per_site
    assert at.session_state["tm_result"].problem.sizes.tolist() == [OPENING.docs_per_site] * OPENING.sites


def test_bundled_corpus_with_top_words_usability_and_reasons():
    at = app_test(PAGE, timeout=300)
    at.radio(key="tm_source").set_value("Python documentation (bundled)").run()
    at.text_input(key="tm_grid_text").set_value("3000").run()
    at.multiselect(key="tm_algorithms").set_value(["cape", "nonpriv", "3"]).run()
    at.number_input(key="tm_runs").set_value(1).run()
    at.button(key="tm_run").click().run()
    _clean(at)
    text = _texts(at.markdown)
    assert "**configuration 3** - unusable, *not DP as published" in text and "configuration 3 is unusable" in text
    assert "not DP as published" in text
    assert "the non-private topics" in _texts(at.caption)
    words = at.dataframe[1].value
    assert list(words.columns)[:2] == ["topic 1", "topic 2"] and len(words) == 8


def test_upload_mode_warns_that_frequent_words_are_not_private_and_needs_a_file():
    at = app_test(PAGE)
    at.radio(key="tm_source").set_value("Upload text").run()
    at.radio(key="tm_rule").set_value("frequent").run()
    assert "not private" in _texts(at.warning)
    at.button(key="tm_run").click().run()
    assert "upload a text file first" in _texts(at.error)


def test_bad_inputs_are_shown_next_to_the_input_and_keep_the_rest():
    at = app_test(PAGE)
    at.text_input(key="tm_grid").set_value("3, ten").run()
    assert "ε values" in _texts(at.error) and at.button(key="tm_run").disabled
    at.text_input(key="tm_grid").set_value("3, 30").run()
    at.number_input(key="tm_dim").set_value(5).run()
    assert "topics K must be ≤ D - 1" in _texts(at.error) and at.button(key="tm_run").disabled
    assert at.text_input(key="tm_grid").value == "3, 30"  # what the user entered stays
    at.number_input(key="tm_dim").set_value(100).run()
    _clean(at)


def test_regime_comparisons_read_the_remarks_off_the_curves():
    at = app_test(PAGE, timeout=600)
    at.text_input(key="tm_grid").set_value("30, 300").run()
    at.number_input(key="tm_runs").set_value(1).run()
    at.button(key="tm_run").click().run()
    at.button(key="tm_regimes_run").click().run()
    _clean(at)
    text = _texts(at.markdown)
    for remark in ("Remark 5.1", "Remark 5.2", "Remark 5.3"):
        assert remark in text
    assert "Observed (paired test over the runs): configuration" in text
    from test_page_notation import ascii_notation

    assert ascii_notation(at) == []  # one notation: ε, τ_c, Δ_T, never eps, tau_c, Delta_T
    assert len(at.get("plotly_chart")) == 3


def test_too_large_a_synthetic_corpus_is_refused_before_run():
    at = app_test(PAGE)
    at.number_input(key="tm_docs").set_value(200_000).run()
    assert "more than one synthetic corpus may hold" in _texts(at.error) and at.button(key="tm_run").disabled
    at.number_input(key="tm_docs").set_value(1000).run()
    _clean(at)


def test_a_scenario_the_user_built_is_what_runs():
    """Item 2 of issue 20: the user's scenario (sites, sizes, delta, calibration) is what the curve runs, every site's
    eps along the curve; one click in the sidebar returns to the lecture setting."""
    at = app_test(PAGE)
    own = default_scenario().with_sizes([900, 800, 700, 600, 500])
    at.session_state["scenario"] = own
    at.run()
    _clean(at)
    assert at.radio(key="tm_sites_mode").value == "scenario"
    shown = own.with_sites(eps=OPENING.grid[0])
    assert symbolic(setting_sentence(corpus_words(OPENING.spec), shown, OPENING.grid)) in _texts(at.markdown)
    at.button(key="tm_to_lecture").click().run()
    assert at.radio(key="tm_sites_mode").value == "lecture"


def _row(at, name: str) -> dict[str, float]:
    """The page's table: the mean topic error of ``name`` per eps (its 'mean ± se' cells)."""
    table = at.dataframe[0].value
    row = table[table["algorithm"] == name].iloc[0]
    return {float(c.split("= ")[1]): float(str(row[c]).split(" ")[0]) for c in table.columns if c.startswith("ε = ")}


def test_the_python_documentation_opens_where_the_comparison_shows_something_or_says_why_not():
    """Issue 29: the bundled corpus (2,208 documents over 20 sites) over eps = 3 to 100 is random topics for every
    method, and the headline there said that capeLDA closes 2 % of the gap. On its own eps (TEXT_GRID) the headline
    reads the eps where capeLDA's advantage is visible (checked here against the page's own table: clearly better,
    by at least MEET_SHARE of the way to random topics, the share computed from the printed numbers); on eps 3 to 100
    the page says that no eps shows it, and why, and claims no share of the gap."""
    at = app_test(PAGE, timeout=600)
    at.radio(key="tm_source").set_value("Python documentation (bundled)").run()
    assert "20 sites hold 110 to 111 documents of Python documentation (bundled) (2,208 in all)" in _texts(at.markdown)
    assert "from the non-private ones" in _texts(at.markdown)  # not "the true ones": a text has no truth
    at.button(key="tm_run").click().run()
    _clean(at)
    sentence = next(m.value for m in at.markdown if "capeLDA's topic error is" in m.value)
    found = re.search(r"At ε = ([\d.]+) capeLDA's topic error is ([\d.]+) against ([\d.]+) for the conventional "
                      r"scheme.*closes (\d+)% of the conventional scheme's gap", sentence)
    assert found, sentence
    eps, cape, conv, closed = float(found[1]), float(found[2]), float(found[3]), int(found[4])
    cape_row, conv_row, random_row = _row(at, "capeLDA"), _row(at, "conventional"), _row(at, "random topics")
    # the sentence prints 3 significant digits, the table 3 decimals: the same number to both roundings
    assert cape == pytest.approx(cape_row[eps], rel=5e-3, abs=6e-4)
    assert conv == pytest.approx(conv_row[eps], rel=5e-3, abs=6e-4)
    assert conv - cape >= MEET_SHARE * (random_row[eps] - _row(at, "non-private")[eps])  # visible on the chart
    assert closed == round(100 * (conv - cape) / conv)  # the share of the printed numbers (reference: error 0)
    curve = at.session_state["tm_result"]
    assert lda_claim(curve, "cape", "conv", eps).relation == "better"
    at.text_input(key="tm_grid_text").set_value("3, 10, 30, 100").run()
    at.number_input(key="tm_runs").set_value(3).run()
    at.button(key="tm_run").click().run()
    _clean(at)
    text = _texts(at.markdown)
    assert "At no ε of this chart (3, 10, 30, 100) does capeLDA differ visibly" in text and "closes" not in text
    curve = at.session_state["tm_result"]
    cape_row, conv_row, random_row = _row(at, "capeLDA"), _row(at, "conventional"), _row(at, "random topics")
    for e in curve.grid:  # what the sentence says, checked at every eps against the table and the paired test
        visible = conv_row[e] - cape_row[e] >= MEET_SHARE * (random_row[e] - _row(at, "non-private")[e]) + 2e-3
        assert not (visible and lda_claim(curve, "cape", "conv", e).relation == "better"), e
