"""``python -m dpcore lda``: JSON shape, curves over eps, the table, text corpora and vocabulary rules, every bound
and bad flag (exit 2, one line)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcore.cli import main
from dpcore.lda import ALGORITHMS
from dpcore.limits import MAX_LDA_DOCUMENTS, MAX_LDA_TOPICS, MAX_LDA_VOCABULARY, MAX_RUNS, MAX_SITES

SMALL = ["--docs", "3000", "--sites", "3", "--vocab", "20", "--topics", "3", "--doc-length", "20", "--runs", "2",
         "--eps", "50"]


def run_json(capsys, *args):
    code = main(["lda", *args, "--json"])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


def test_json_per_algorithm_mean_standard_error_and_usable_or_the_reason(capsys):
    data = run_json(capsys, *SMALL, "--configuration", "cape", "conv", "local", "1", "3", "nonpriv", "random")
    rows = {r["algorithm"]: r for r in data["results"]}
    assert list(rows) == ["cape", "conv", "local", "1", "3", "nonpriv", "random"]
    assert data["reference"] == "truth" and data["dim"] == 20 and data["k"] == 3 and data["sizes"] == [1000] * 3
    for name in ("cape", "conv", "local", "1", "nonpriv", "random"):
        row = rows[name]
        assert row["usable"] and row["runs"] == 2 and row["reason"] is None
        assert 0 <= row["mean"] <= 2 and row["standard_error"] >= 0
    assert rows["nonpriv"]["mean"] < rows["cape"]["mean"] < rows["random"]["mean"]
    assert not rows["3"]["usable"] and rows["3"]["mean"] is None and rows["3"]["unusable"] == 2
    assert "unusable" in rows["3"]["reason"] and "too close together" in rows["3"]["reason"]
    assert rows["3"]["privacy"] == "not DP as published (local sensitivity)"
    assert rows["cape"]["privacy"] == "(eps, delta)-DP" and "per site" in rows["cape"]["guarantee"]


def test_several_eps_give_a_curve_with_common_random_numbers(capsys):
    data = run_json(capsys, *SMALL[:-2], "--eps", "10", "1000", "--configuration", "cape", "nonpriv")
    assert [c["eps"] for c in data["curves"]] == [10, 1000]
    by_eps = {c["eps"]: {r["algorithm"]: r["mean"] for r in c["results"]} for c in data["curves"]}
    assert by_eps[10]["nonpriv"] == by_eps[1000]["nonpriv"]  # computed once per run
    assert by_eps[1000]["cape"] < by_eps[10]["cape"]
    again = run_json(capsys, *SMALL[:-2], "--eps", "10", "1000", "--configuration", "cape", "nonpriv")
    assert again == data  # the seed reproduces every number


def test_table_names_every_algorithm_and_the_reason_on_stderr(capsys):
    code = main(["lda", *SMALL, "--configuration", "cape,conv", "4"])
    captured = capsys.readouterr()
    assert code == 0
    assert "capeLDA" in captured.out and "conventional" in captured.out and "UNUSABLE" in captured.out
    assert "topic error" in captured.out and "configuration 4 is unusable" in captured.err


def test_bundled_corpus_with_top_words(capsys):
    code = main(["lda", "--corpus", "python-docs", "--topics", "6", "--runs", "1", "--eps", "1000",
                 "--configuration", "cape", "nonpriv", "--top-words", "5"])
    out = capsys.readouterr().out
    assert code == 0
    assert "against the non-private topics" in out and "top words, non-private" in out
    assert out.count("topic ") >= 12


def test_text_with_frequent_words_says_it_is_not_private(tmp_path, capsys):
    lines = ["apple banana cherry apple banana date", "cherry date elder apple fig grape",
             "banana fig grape elder cherry apple", "the and of apple banana cherry date"] * 30
    path = tmp_path / "docs.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    data = run_json(capsys, "--text", str(path), "--vocab", "6", "--topics", "2", "--runs", "1", "--sites", "2",
                    "--configuration", "nonpriv", "cape")
    assert any("not differentially private" in note for note in data["notes"])
    assert data["dim"] == 6 and data["reference"] == "nonprivate"


@pytest.mark.parametrize(("args", "message"), [
    (["--configuration", "cape", "magic"], "unknown --configuration magic"),
    (["--docs", str(MAX_LDA_DOCUMENTS + 1)], "--docs must be at most"),
    (["--docs", "10", "--sites", "5"], "each site needs at least 3 documents"),
    (["--sites", str(MAX_SITES + 1)], "--sites must be at most"),
    (["--runs", "0"], "--runs must be an integer >= 1"),
    (["--runs", str(MAX_RUNS + 1)], "--runs must be at most"),
    (["--vocab", str(MAX_LDA_VOCABULARY + 1)], "vocabulary size D must be at most"),
    (["--vocab", "10", "--topics", "10"], "topics K must be <= D - 1"),
    (["--topics", str(MAX_LDA_TOPICS + 1), "--vocab", "200"], "topics K must be at most"),
    (["--alpha0", "-1"], "alpha_0 must be > 0"),
    (["--alpha0", "5000"], "alpha_0 must be at most"),
    (["--eps", "-1"], "--eps must be in [1e-06, 10000] (got -1)"),
    (["--delta", "2"], "--delta must be in [1e-100, 1) (got 2)"),
    (["--doc-length", "2"], "words per document must be an integer >= 3"),
    (["--docs", "1000000", "--doc-length", "100"], "words is more than the limit"),
    (["--split", "1"], "--split must be strictly between 0 and 1"),
    (["--top-words", "99"], "--top-words must be in 0.."),
    (["--seed", "-3"], "--seed must be an integer >= 0"),
    (["--corpus", "python-docs", "--vocab", "50"], "--vocab does not apply to --corpus"),
    (["--corpus", "python-docs", "--docs", "50"], "--docs applies to synthetic corpora only"),
    (["--text", "/nonexistent/docs.txt", "--vocab", "5"], "No such file"),
])
def test_bad_input_exits_2_with_one_line(capsys, args, message):
    code = main(["lda", *args])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error:") and message in err and err.count("\n") == 1


def test_text_with_frequent_rule_needs_a_vocabulary_size(tmp_path, capsys):
    path = tmp_path / "docs.txt"
    path.write_text("one two three four\n" * 20, encoding="utf-8")
    assert main(["lda", "--text", str(path)]) == 2
    assert "needs --vocab D" in capsys.readouterr().err


NAMES = st.sampled_from(sorted(ALGORITHMS))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(NAMES, min_size=1, max_size=4), junk=st.text(alphabet="abcxyz!?0123456789", min_size=1,
                                                                    max_size=6), comma=st.booleans())
def test_configuration_names_parse_in_any_grouping_and_an_unknown_one_is_refused(names, junk, comma, capsys):
    """Any names of the table, given as separate words or joined by commas, are accepted; a word that is not a name
    is refused with exit 2 and one line naming it (the check runs before any work: --runs 0 would fail after it)."""
    words = [",".join(names)] if comma else list(names)
    assert main(["lda", "--configuration", *words, "--runs", "0"]) == 2
    assert "--runs" in capsys.readouterr().err
    if junk in ALGORITHMS:
        return
    assert main(["lda", "--configuration", *words, junk]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"unknown --configuration {junk}" in err
