"""``python -m dpcore lda``: JSON shape, curves over eps, the table, text corpora and vocabulary rules, every bound
and bad flag (exit 2, one line)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcore.cli import main
from dpcore.cli.options import LDA_ALPHA0, LDA_DOC_LENGTH, LDA_DOCS, LDA_TOP_WORDS, LDA_TOPICS, LDA_VOCAB
from dpcore.lda import ALGORITHMS
from dpcore.lda import contract as lda_contract
from dpcore.limits import (
    MAX_LDA_DOC_LENGTH,
    MAX_LDA_DOCUMENTS,
    MAX_LDA_TOP_WORDS,
    MAX_LDA_TOPICS,
    MAX_LDA_VOCABULARY,
    MAX_RUNS,
    MAX_SITES,
)
from dpcore.validation import InputError

SMALL = ["--docs", "3000", "--sites", "3", "--vocab", "20", "--topics", "3", "--doc-length", "20", "--runs", "2",
         "--eps", "50"]


def run_json(capsys, *args):
    code = main(["lda", *args, "--json"])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


def test_json_per_algorithm_mean_standard_error_and_usable_or_the_reason(capsys):
    """The JSON rows; non-private < capeLDA < random at eps = 50 (over seeds 0-7 capeLDA's error was 2.3-5.6 times the
    non-private one and random topics' 8-30 times capeLDA's)."""
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
    assert rows["3"]["privacy"] == ("release: not DP as published (local sensitivity); aggregator: not DP as "
                                    "published (local sensitivity)")
    assert not any(g["certified"] for g in rows["3"]["guarantees"])
    views = {g["view"]: g for g in rows["cape"]["guarantees"]}
    assert set(views) == {"release", "aggregator"} and views["release"]["certified"]
    assert "guarantee" not in rows["cape"], "issue 33: no hand-written privacy sentence beside the computed views"


def test_several_eps_give_a_curve_with_common_random_numbers(capsys):
    """capeLDA's error at eps = 10 was 6-14 times its error at eps = 1000 over seeds 0-7."""
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
    (["--docs", str(MAX_LDA_DOCUMENTS + 1)], f"argument --docs: must be an integer from 3 to {MAX_LDA_DOCUMENTS:,}"),
    (["--docs", "2"], "argument --docs: must be an integer from 3 to"),
    (["--docs", "10", "--sites", "5"], "each site needs at least 3 documents"),
    (["--sites", str(MAX_SITES + 1)], f"argument --sites: must be an integer from 1 to {MAX_SITES}"),
    (["--runs", "0"], f"argument --runs: must be an integer from 1 to {MAX_RUNS:,} (got '0')"),
    (["--runs", str(MAX_RUNS + 1)], "argument --runs: must be an integer from 1 to"),
    (["--runs", "2.5"], "argument --runs: must be an integer"),
    (["--vocab", str(MAX_LDA_VOCABULARY + 1)], f"argument --vocab: must be an integer from 3 to "
                                                f"{MAX_LDA_VOCABULARY:,}"),
    (["--vocab", "10", "--topics", "10"], "topics K must be <= D - 1"),
    (["--topics", str(MAX_LDA_TOPICS + 1), "--vocab", "200"], f"argument --topics: must be an integer from 1 to "
                                                               f"{MAX_LDA_TOPICS}"),
    (["--alpha0", "-1"], "argument --alpha0: must be a finite number in (0, 1000] (got '-1')"),
    (["--alpha0", "5000"], "argument --alpha0: must be a finite number in (0, 1000]"),
    (["--alpha0", "nan"], "argument --alpha0: must be a finite number"),
    (["--eps", "-1"], "argument --eps: must be a finite number in [1e-06, 10000] (got '-1')"),
    (["--eps", "10", "inf"], "argument --eps: must be a finite number"),
    (["--delta", "2"], "argument --delta: must be a finite number in [1e-100, 1) (got '2')"),
    (["--doc-length", "2"], f"argument --doc-length: must be an integer from 3 to {MAX_LDA_DOC_LENGTH:,}"),
    (["--docs", "1000000", "--doc-length", "100"], "words is more than the limit"),
    (["--split", "1"], "argument --split: must be a finite number in [0.01, 0.99]"),
    (["--top-words", "99"], f"argument --top-words: must be an integer from 0 to {MAX_LDA_TOP_WORDS}"),
    (["--seed", "-3"], "argument --seed: must be an integer from 0 to"),
    (["--corpus", "python-docs", "--vocab", "50"], "--vocab does not apply to --corpus"),
    (["--corpus", "python-docs", "--docs", "50"], "--docs applies to synthetic corpora only"),
    (["--text", "/nonexistent/docs.txt", "--vocab", "5"], "cannot read text file /nonexistent/docs.txt"),
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
    is refused with exit 2 and one line naming it (the check runs before any work: too few documents for the sites
    would be refused after it)."""
    words = [",".join(names)] if comma else list(names)
    assert main(["lda", "--configuration", *words, "--docs", "10", "--sites", "5"]) == 2
    assert "each site needs at least 3 documents" in capsys.readouterr().err
    if junk in ALGORITHMS:
        return
    assert main(["lda", "--configuration", *words, junk]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"unknown --configuration {junk}" in err


WORK_STARTED = "work started (test stub)"


FLAG_TYPES = {"--docs": LDA_DOCS, "--vocab": LDA_VOCAB, "--topics": LDA_TOPICS, "--alpha0": LDA_ALPHA0,
              "--doc-length": LDA_DOC_LENGTH, "--top-words": LDA_TOP_WORDS}
HOSTILE = st.one_of(st.sampled_from(["nan", "inf", "-inf", "-1", "0", "2", "3", "1e9", "1e3", "2.5", "abc", "", "1_000",
                                     "1" * 60, "0x10", "\x1b[31m", "-0", "1e-400", "4294967296", "50", "5000"]),
                    st.integers(-5, 2 * MAX_LDA_DOCUMENTS).map(str), st.floats(allow_nan=True).map(repr))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flags=st.lists(st.sampled_from(sorted(FLAG_TYPES) + ["--runs", "--seed", "--eps", "--delta", "--split",
                                                              "--sites"]), min_size=1, max_size=3, unique=True),
       values=st.lists(HOSTILE, min_size=3, max_size=3))
def test_every_numeric_flag_is_typed_and_refused_before_any_work(flags, values, monkeypatch, capsys):
    """Any value of any numeric flag is refused with exit 2 and one line naming the flag, or the command line gets
    past every check to the computation (replaced here by an exception) with each value inside its documented range;
    nothing else happens in between (no corpus is drawn before the checks)."""

    def started(*args, **kwargs):
        raise InputError(WORK_STARTED)

    monkeypatch.setattr(lda_contract, "compare_lda", started)  # the work of Family.compare, after every check
    argv = ["lda"]
    for flag, value in zip(flags, values, strict=False):
        argv += [flag, value]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "\x1b" not in err
    if WORK_STARTED in err:
        for flag, value in zip(flags, values, strict=False):
            if flag in FLAG_TYPES:
                FLAG_TYPES[flag](value)  # accepted: inside the flag's range (raises otherwise)
    else:
        assert "argument --" in err or "--docs" in err or "topics K" in err, err
