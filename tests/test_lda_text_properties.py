"""Properties of the text a user uploads for a topic model (docs/math/lda.md; dpcore.data.parse_text_corpus and
parse_vocabulary): the parsed corpus equals an independent count of the generated documents under each vocabulary
rule - stop words removed first, the 'frequent' rule's D most frequent words (ties alphabetical) and its
not-private note, a public list kept as given, documents with fewer than 3 vocabulary words dropped and counted -
or one InputError exactly when the reference says the text cannot give a corpus."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.data import NOT_PRIVATE_VOCABULARY, parse_text_corpus, parse_vocabulary, stop_words
from dpcore.data.text import MIN_WORDS
from dpcore.validation import InputError

CONTENT = ("apple", "banana", "cherry", "date", "elder", "fig", "grape", "o'neil")
STOP = ("the", "and", "of", "which")
SEPARATORS = (" ", "  ", "\t", " , ", "; ", " 42 ", "_", "-", ". ")


def _case(word: str, upper: bool) -> str:
    return word.upper() if upper else word


@st.composite
def documents(draw):
    """Lines of text and, for each line that is a document, its tokens (lower case)."""
    n_docs = draw(st.integers(0, 12))
    lines, tokens = [], []
    for _ in range(n_docs):
        words = draw(st.lists(st.sampled_from(CONTENT + STOP), max_size=10))
        upper = draw(st.lists(st.booleans(), min_size=len(words), max_size=len(words)))
        sep = draw(st.sampled_from(SEPARATORS))
        line = sep.join(_case(w, u) for w, u in zip(words, upper, strict=True))
        lines.append(line)
        if line.strip():
            tokens.append(list(words))
    return "\n".join(lines), tokens


def _reference(tokens: list[list[str]], vocabulary: tuple[str, ...]) -> tuple[np.ndarray, int]:
    """Counts of the kept documents (rows in order) and the number dropped, counted directly."""
    rows = []
    for doc in tokens:
        kept = Counter(w for w in doc if w not in STOP and w in vocabulary)
        rows.append([kept[w] for w in vocabulary])
    counts = np.array(rows, dtype=float).reshape(len(tokens), len(vocabulary))
    keep = counts.sum(axis=1) >= MIN_WORDS
    return counts[keep], int((~keep).sum())


def test_the_generated_stop_words_are_in_the_bundled_list_and_the_content_words_are_not():
    assert set(STOP) <= stop_words() and not set(CONTENT) & stop_words()


@settings(max_examples=150, deadline=None)
@given(doc=documents(), size=st.integers(2, 10))
def test_frequent_rule_takes_the_most_frequent_non_stop_words_and_says_it_is_not_private(doc, size):
    text, tokens = doc
    freq = Counter(w for d in tokens for w in d if w not in STOP)
    vocabulary = tuple(w for w, _ in sorted(freq.items(), key=lambda item: (-item[1], item[0]))[:size])
    expected, dropped = _reference(tokens, vocabulary)
    fails = not tokens or len(freq) < 2 or expected.shape[0] < 2
    try:
        corpus = parse_text_corpus(text, rule="frequent", vocab_size=size)
    except InputError as exc:
        assert fails, str(exc)
        assert str(exc) and "\n" not in str(exc)
        return
    assert not fails
    assert corpus.vocabulary == vocabulary and not set(corpus.vocabulary) & stop_words()
    np.testing.assert_array_equal(corpus.counts.toarray(), expected)
    assert corpus.n_read == len(tokens) and corpus.n_dropped == dropped
    assert NOT_PRIVATE_VOCABULARY in corpus.notes and corpus.vocabulary_source == "data"


@settings(max_examples=150, deadline=None)
@given(doc=documents(), chosen=st.lists(st.sampled_from(CONTENT + STOP), min_size=2, max_size=8, unique=True))
def test_a_public_word_list_is_kept_as_given_and_costs_nothing(doc, chosen):
    """The 'file' rule keeps the list and its order (a stop word in it simply never counts); no not-private note."""
    text, tokens = doc
    vocabulary = tuple(chosen)
    expected, dropped = _reference(tokens, vocabulary)
    fails = not tokens or expected.shape[0] < 2
    try:
        corpus = parse_text_corpus(text, rule="file", vocabulary=vocabulary)
    except InputError as exc:
        assert fails, str(exc)
        return
    assert not fails
    assert corpus.vocabulary == vocabulary and corpus.vocabulary_source == "user"
    np.testing.assert_array_equal(corpus.counts.toarray(), expected)
    assert corpus.n_dropped == dropped and NOT_PRIVATE_VOCABULARY not in corpus.notes


@settings(max_examples=150, deadline=None)
@given(words=st.lists(st.sampled_from(CONTENT + STOP), min_size=1, max_size=12),
       upper=st.lists(st.booleans(), min_size=12, max_size=12),
       joins=st.lists(st.sampled_from(["\n", ",", " , ", "\n\n", ",\n"]), min_size=12, max_size=12),
       bad=st.sampled_from([None, "two words", "x1", "a_b", "-", "p.q"]), where=st.integers(0, 12))
def test_a_vocabulary_file_gives_its_distinct_words_in_order_or_names_the_bad_line(words, upper, joins, bad, where):
    """Words one per line or separated by commas, any case, duplicates dropped (first kept); an entry that is not
    one word is refused with its line number."""
    cells = [_case(w, u) for w, u in zip(words, upper, strict=False)]
    if bad is not None:
        cells.insert(min(where, len(cells)), bad)
    text = cells[0] + "".join(j + c for j, c in zip(joins, cells[1:], strict=False))
    distinct = tuple(dict.fromkeys(words))
    if bad is not None:
        line = text[: text.index(bad)].count("\n") + 1
        with pytest.raises(InputError, match=f"vocabulary line {line}: .* is not a single word"):
            parse_vocabulary(text)
    elif len(distinct) < 2:
        with pytest.raises(InputError, match="at least 2 distinct words"):
            parse_vocabulary(text)
    else:
        assert parse_vocabulary(text) == distinct
