"""Uploaded data for capeAGN: text documents, count CSVs, vocabularies (STM) and numeric samples (MOG)."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.agn import compare_algorithms, corpus_problem, make_model, mog_problem, sample_mog
from dpcore.data import NOT_PRIVATE_VOCABULARY, parse_count_csv, parse_documents, parse_vocabulary, tokenize, top_words
from dpcore.scenario import scenario_from_dict
from dpcore.validation import InputError

TEXT = (
    "The cat sat on the mat.\n"
    "Dogs and cats, don't fight!\n"
    "\n"
    "hi there\n"
    "The DOG ate 3 bones and the cat ate fish\n"
)


def test_tokenize_lowercases_and_keeps_inner_apostrophes():
    assert tokenize("The DOG ate 3 bones, don't!") == ["the", "dog", "ate", "bones", "don't"]
    assert tokenize("Café–naïve  x2y") == ["café", "naïve", "x", "y"]


def test_documents_with_a_vocabulary_from_the_data():
    corpus = parse_documents(TEXT, vocab_size=5)
    # counts: the 5, cat 2, ate 2, and 2, ... ties alphabetical
    assert corpus.vocabulary == ("the", "and", "ate", "cat", "bones")
    assert corpus.n_read == 4  # the blank line is not a document
    assert corpus.n_dropped == 2 and corpus.n == 2  # "hi there" and "Dogs and cats..." keep < 3 words
    assert corpus.first.tolist() == [[0, 3, 0], [0, 2, 4]]
    assert corpus.counts.toarray().tolist() == [[2, 0, 0, 1, 0], [2, 1, 2, 1, 1]]
    assert NOT_PRIVATE_VOCABULARY in corpus.notes and corpus.vocabulary_source == "data"
    assert any("fewer than 3" in note for note in corpus.notes)


def test_documents_with_a_user_vocabulary():
    vocab = parse_vocabulary("cat\nDog, ate\n\nfish\ncat\nthe\n")
    assert vocab == ("cat", "dog", "ate", "fish", "the")
    corpus = parse_documents(TEXT, vocabulary=vocab)
    assert corpus.n == 2 and corpus.n_dropped == 2 and corpus.vocabulary_source == "user"
    assert NOT_PRIVATE_VOCABULARY not in corpus.notes
    assert corpus.counts.toarray().tolist() == [[1, 0, 0, 0, 2], [1, 1, 2, 1, 2]]  # no stemming: "cats" is not "cat"


@pytest.mark.parametrize("content, message", [
    (b"\x00\x01binary", "binary"),
    (b"caf\xe9 latte au lait", "not UTF-8"),
    ("", "no documents"),
    ("a b\nc d\n", "at least 2 are needed"),
])
def test_bad_text_uploads_are_explained(content, message):
    with pytest.raises(InputError, match=message):
        parse_documents(content, vocab_size=10)


def test_bad_vocabularies_and_sizes_are_explained():
    with pytest.raises(InputError, match="not a single word"):
        parse_vocabulary("cat\nhot dog\n")
    with pytest.raises(InputError, match="at least 2 distinct words"):
        parse_vocabulary("cat\ncat\n")
    with pytest.raises(InputError, match="vocabulary size D or a vocabulary file"):
        parse_documents(TEXT)
    with pytest.raises(InputError, match="at most 20,000"):
        parse_documents(TEXT, vocab_size=50_000)
    with pytest.raises(InputError, match="limit"):
        parse_documents("word " * 100, vocab_size=3, max_bytes=100)


def test_count_csv():
    csv = "apple,banana,cherry\n1,2,0\n0,1,1\n3,0,0\n"
    corpus = parse_count_csv(csv)
    assert corpus.vocabulary == ("apple", "banana", "cherry") and corpus.first is None
    assert corpus.n == 2 and corpus.n_dropped == 1  # the second row has 2 words
    top2 = parse_count_csv(csv, vocab_size=2)
    assert top2.vocabulary == ("apple", "banana") and NOT_PRIVATE_VOCABULARY in top2.notes
    with pytest.raises(InputError, match="non-negative whole number"):
        parse_count_csv("a,b,c\n1,2.5,0\n1,1,1\n")
    with pytest.raises(InputError, match="non-negative whole number"):
        parse_count_csv("a,b,c\n1,-2,0\n1,1,1\n")
    with pytest.raises(InputError, match="columns"):
        parse_count_csv(csv, vocabulary=("x", "y"))


def test_corpus_is_split_over_sites_and_top_words():
    text = "\n".join(["apple banana apple cherry"] * 30 + ["dog cat dog bird cat"] * 30)
    corpus = parse_documents(text, vocab_size=6)
    problem = corpus_problem(corpus, 2, np.array([0.25, 0.75]), np.random.default_rng(0))
    assert problem.sizes.tolist() == [15, 45] and problem.sites[0].estimator == "first"
    assert problem.vocabulary == corpus.vocabulary and problem.truth is None
    counts_problem = corpus_problem(parse_count_csv("a,b\n2,1\n1,3\n4,4\n"), 1, np.array([0.5, 0.5]),
                                    np.random.default_rng(0))
    assert counts_problem.sites[0].estimator == "all"
    words = top_words(np.array([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]]), ("x", "y", "z"), n=2)
    assert words == [[("y", 0.6), ("z", 0.3)], [("x", 0.5), ("z", 0.3)]]
    with pytest.raises(InputError, match="K must be <= D"):
        corpus_problem(corpus, 7, np.array([1.0]), np.random.default_rng(0))


def test_topics_are_recovered_from_an_uploaded_corpus():
    """Two clearly separated topics written as text: the non-private result finds them, the reference
    is the non-private result (no ground truth) and capeAGN at a generous budget lands close to it."""
    rng = np.random.default_rng(1)
    topics = [["apple", "banana", "cherry", "grape"], ["dog", "cat", "bird", "horse"]]
    lines = [" ".join(rng.choice(topics[i % 2], size=6)) for i in range(4000)]
    corpus = parse_documents("\n".join(lines), vocab_size=8)
    scenario = scenario_from_dict({"sites": [{"name": n, "n": 1, "eps": 50.0, "delta": 0.01} for n in "ABCD"]})
    problem = corpus_problem(corpus, 2, np.full(4, 0.25), np.random.default_rng(2))
    result = compare_algorithms(scenario, ["cape", "nonpriv"], problem=problem, runs=2, seed=3)
    assert result.reference == "nonprivate"
    assert result.summary("nonpriv").mean < 1e-9
    assert result.summary("cape").mean < 0.05
    found = [{w for w, _ in row[:4]} for row in top_words(result.reference_components, corpus.vocabulary, 4)]
    assert sorted(map(sorted, found)) == sorted(map(sorted, topics))
    assert any("no ground truth" in note for note in result.notes)


def test_mog_upload_estimates_sigma2_and_scales():
    rng = np.random.default_rng(4)
    model = make_model("mog", 8, 3, rng, sigma2=0.05)
    x = sample_mog(model, 4000, rng)
    problem = mog_problem(x, 3, [0.5, 0.5], np.random.default_rng(0))
    sigma2 = problem.sigma2 * problem.scale**2
    assert abs(sigma2 - 0.05) < 0.01
    assert problem.scale == pytest.approx(np.linalg.norm(x, axis=1).max())
    assert any("not differentially private" in n for n in problem.notes)
    assert any("not private" in n and "largest norm" in n for n in problem.notes)
    given = mog_problem(x, 3, [0.5, 0.5], np.random.default_rng(0), sigma2=0.05, norm_bound=2.0)
    assert given.scale == 2.0 and given.sigma2 == pytest.approx(0.05 / 4)
    assert not any("estimated" in n for n in given.notes)
    with pytest.raises(InputError, match="give sigma\\^2"):
        mog_problem(x[:5], 3, [1.0], np.random.default_rng(0))
    with pytest.raises(InputError, match="NaN"):
        mog_problem(np.array([[1.0, np.nan], [0.0, 1.0]]), 1, [1.0], np.random.default_rng(0), sigma2=0.1)


@pytest.mark.parametrize("kind", ["stm", "mog"])
def test_the_pages_run_data_give_the_comparison_of_the_upload_itself(kind):
    """dpcore.agn.contract.run_data (the capeAGN page's Run) with an upload: D is the upload's, K is checked against
    it, and the contract's comparison is the one of the upload's own problem (upload_problem + compare_algorithms,
    the page's earlier path), number for number."""
    from dpcore.agn import OtdSettings, upload_problem
    from dpcore.agn.contract import OtdRunUpload, compare, run_data

    rng = np.random.default_rng(5)
    if kind == "stm":
        topics = [["apple", "banana", "cherry", "grape"], ["dog", "cat", "bird", "horse"]]
        values = parse_documents("\n".join(" ".join(rng.choice(topics[i % 2], size=6)) for i in range(600)),
                                 vocab_size=8)
        upload = OtdRunUpload(values=values)
    else:
        values = sample_mog(make_model("mog", 6, 2, rng, sigma2=0.05), 600, rng)
        upload = OtdRunUpload(values=values, sigma2=0.05, norm_bound=4.0)
    settings = OtdSettings(eps_split=0.4, collusion=1)
    scenario = scenario_from_dict({"sites": [{"name": n, "n": 150, "eps": 5.0, "delta": 1e-4} for n in "ABCD"]})
    with pytest.raises(InputError, match=r"K must be <= D = (8|6) \(got K = 9\)"):
        run_data(settings, upload=upload, k=9)
    data = run_data(settings, upload=upload, k=2)
    assert data.dim == (8 if kind == "stm" else 6) and data.model == kind and data.eps_split == 0.4
    got = compare(scenario, data, ("cape", "conv", "nonpriv"), runs=2, seed=7, collusion=1).detail
    problem = upload_problem(values, 2, scenario, 7, sigma2=upload.sigma2, norm_bound=upload.norm_bound)
    want = compare_algorithms(scenario, ["cape", "conv", "nonpriv"], problem=problem, runs=2, seed=7,
                              settings=settings)
    for name in ("cape", "conv", "nonpriv"):
        assert got.summary(name).mean == want.summary(name).mean and got.summary(name).std == want.summary(name).std
