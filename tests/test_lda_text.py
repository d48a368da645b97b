"""Real text for topic models: the bundled corpus and its public vocabulary, stop-word removal, the three vocabulary
rules (the not-private one says so), any uploaded text gives a corpus or one clear InputError, and the
non-private method finds recognisable topics in the bundled corpus."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.data import (
    NOT_PRIVATE_VOCABULARY,
    VOCABULARY_RULES,
    bundled_vocabulary,
    load_bundled_corpus,
    parse_text_corpus,
    stop_words,
    top_words,
)
from dpcore.lda import corpus_lda_problem, fit_lda
from dpcore.limits import MAX_LDA_VOCABULARY
from dpcore.validation import InputError


def test_bundled_corpus_has_its_public_vocabulary_and_no_stop_words():
    corpus = load_bundled_corpus()
    assert corpus.n == 2208 and corpus.dim == 600 and corpus.vocabulary == bundled_vocabulary()
    assert corpus.vocabulary_source == "user" and not corpus.notes  # a public list: nothing to caveat
    assert not set(corpus.vocabulary) & stop_words()
    assert {"the", "and", "of", "which"} <= stop_words() and len(stop_words()) == 318
    assert np.asarray(corpus.counts.sum(axis=1)).min() >= 3


def test_stop_words_are_removed_before_the_vocabulary_is_chosen():
    text = "\n".join(["the the the apple banana the cherry", "and and apple cherry date of of"] * 10)
    corpus = parse_text_corpus(text, rule="frequent", vocab_size=3)
    assert corpus.vocabulary == ("apple", "cherry", "banana")
    assert NOT_PRIVATE_VOCABULARY in corpus.notes  # the most frequent words of the upload: not private
    public = parse_text_corpus(text, rule="file", vocabulary=("apple", "date", "cherry"))
    assert public.vocabulary == ("apple", "date", "cherry") and NOT_PRIVATE_VOCABULARY not in public.notes
    assert "NOT private" in VOCABULARY_RULES["frequent"]
    with pytest.raises(InputError, match="needs a vocabulary file"):
        parse_text_corpus(text, rule="file")
    with pytest.raises(InputError, match="needs a vocabulary size"):
        parse_text_corpus(text, rule="frequent")
    with pytest.raises(InputError, match="vocabulary rule must be one of"):
        parse_text_corpus(text, rule="magic")


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab cde\nthe and\u00e9\u2019'0,.")), max_size=300),
       rule=st.sampled_from(["frequent", "bundled", "file"]), size=st.integers(1, 8))
def test_any_uploaded_text_gives_a_corpus_or_one_clear_input_error(text, rule, size):
    try:
        corpus = parse_text_corpus(text, rule=rule, vocab_size=size, vocabulary=("ab", "cde", "e") if rule == "file"
                                   else None)
    except InputError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert corpus.n >= 2 and corpus.dim >= 2
    assert np.asarray(corpus.counts.sum(axis=1)).min() >= 3


def test_the_bundled_corpus_gives_recognisable_topics():
    """Non-private method of moments, K = 8, alpha_0 = 1: at least one topic about sparse matrices and one about
    probability distributions among the top-8 words. Over 8 streams (split and start seeds 2s and 2s + 1,
    s = 0..7) every run had a topic with both "sparse" and "matrix" and one with 3 of the 5 distribution words."""
    corpus = load_bundled_corpus()
    problem = corpus_lda_problem(corpus, 8, 1.0, np.ones(1), np.random.default_rng(0))
    fit = fit_lda(problem.pooled.counts, 8, 1.0, np.random.default_rng(1))
    words = [{w for w, _ in topic} for topic in top_words(fit.topics, corpus.vocabulary, 8)]
    assert any({"sparse", "matrix"} <= topic for topic in words)
    assert any(len({"distribution", "random", "variable", "continuous", "discrete"} & topic) >= 2 for topic in words)


def test_a_text_vocabulary_beyond_the_lda_limit_is_refused_before_the_sites_are_built():
    """Every site keeps a D x D second moment, so a public word list longer than MAX_LDA_VOCABULARY is refused with
    the limit named (the synthetic corpus has the same limit)."""
    words = tuple("".join(letters) for letters in itertools.islice(itertools.product("bcdfghjklmnpqrstvwxz", repeat=4),
                                                                   MAX_LDA_VOCABULARY + 1))
    text = "\n".join(" ".join(words[j:j + 5]) for j in range(0, 300, 5))
    corpus = parse_text_corpus(text, rule="file", vocabulary=words)
    assert corpus.dim == MAX_LDA_VOCABULARY + 1
    with pytest.raises(InputError, match=f"at most {MAX_LDA_VOCABULARY:,}"):
        corpus_lda_problem(corpus, 3, 1.0, np.ones(2) / 2, np.random.default_rng(0))
