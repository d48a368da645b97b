"""Uploaded documents for the single topic model: plain text or a document-term count CSV.

* Plain text: one document per line, tokenised into lower-case words (letters, with inner apostrophes;
  digits and punctuation are separators). The vocabulary is either the D most frequent words of the
  upload (ties broken alphabetically) or a user-supplied vocabulary file (one word per line, or
  separated by commas). Words outside the vocabulary are dropped; documents left with fewer than 3
  words are dropped and counted.
* Count CSV: one row per document, one column per word, non-negative integer counts (header = words;
  parsed by :func:`dpcore.data.parse_numeric_csv`). Word order is unknown, so the moment estimator is
  "all" (all ordered distinct word positions, see :mod:`dpcore.tensor.moments`).

A vocabulary chosen from the private documents is itself not differentially private (it reveals which
words are frequent): every result says so unless the vocabulary was supplied. Nothing uploaded is
executed or unpickled; sizes are limited (:mod:`dpcore.limits`). Splitting a corpus over sites is
:func:`dpcore.agn.corpus_problem`.
"""

from __future__ import annotations

import codecs
import re
from array import array
from collections import Counter
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..limits import MAX_DOCUMENTS, MAX_TEXT_BYTES, MAX_TEXT_LINES, MAX_VOCABULARY, MAX_VOCABULARY_BYTES
from ..textio import decode_text, size_text
from ..validation import InputError, check_positive_int
from .numeric_csv import parse_numeric_csv

__all__ = [
    "MIN_WORDS",
    "NOT_PRIVATE_VOCABULARY",
    "Corpus",
    "line_count",
    "parse_count_csv",
    "parse_documents",
    "parse_uploaded_documents",
    "parse_vocabulary",
    "tokenize",
    "top_words",
]

MIN_WORDS = 3
_TOKEN = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")
NOT_PRIVATE_VOCABULARY = (
    "the vocabulary was chosen from the uploaded (private) documents as the most frequent words; that choice is "
    "not differentially private. Upload a vocabulary chosen from public information for an end-to-end guarantee."
)


def _text(content: bytes | str, what: str, max_bytes: int = MAX_TEXT_BYTES) -> str:
    if isinstance(content, str):
        raw_size = len(content.encode("utf-8", errors="replace"))
        if raw_size > max_bytes:
            raise InputError(f"the {what} is {size_text(raw_size)}, more than the limit of {size_text(max_bytes)}",
                             "file")
        return content
    raw = bytes(content)
    if len(raw) > max_bytes:
        raise InputError(f"the {what} is {size_text(len(raw))}, more than the limit of {size_text(max_bytes)}",
                         "file")
    if not raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) and b"\x00" in raw[:4096]:
        raise InputError(f"the {what} is binary; upload plain UTF-8 text", "file")
    return decode_text(raw, what)


_LINE_BREAKS = ("\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def line_count(text: str) -> int:
    """The number of lines ``str.splitlines`` would return, from counting the line breaks (no list is built):
    every break ends a line, ``\\r\\n`` is one break, and text after the last break is one more line."""
    breaks = sum(text.count(b) for b in _LINE_BREAKS) - text.count("\r\n")
    return breaks + (1 if text and not text.endswith(_LINE_BREAKS) else 0)


def tokenize(line: str) -> list[str]:
    """Lower-case words of a line: runs of letters, with inner apostrophes kept ("don't")."""
    return [t.replace("\u2019", "'") for t in _TOKEN.findall(line.lower())]


def parse_vocabulary(content: bytes | str, *, max_words: int = MAX_VOCABULARY) -> tuple[str, ...]:
    """A vocabulary file: words one per line or separated by commas; lower-cased, duplicates removed
    (first occurrence kept). Every entry must be one word as :func:`tokenize` sees it."""
    text = _text(content, "vocabulary file", MAX_VOCABULARY_BYTES)
    words: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        for cell in line.split(","):
            cell = cell.strip()
            if not cell:
                continue
            tokens = tokenize(cell)
            if tokens != [cell.lower().replace("\u2019", "'")]:
                raise InputError(f"vocabulary line {number}: {cell[:40]!r} is not a single word (letters, optionally "
                                 "with inner apostrophes)", "vocabulary")
            if tokens[0] not in seen:
                seen.add(tokens[0])
                words.append(tokens[0])
                if len(words) > max_words:  # stop at the first word too many
                    raise InputError(f"the vocabulary has more than the limit of {max_words:,} words (the word "
                                     f"{max_words + 1:,} is on line {number:,})", "vocabulary")
    if len(words) < 2:
        raise InputError("the vocabulary needs at least 2 distinct words", "vocabulary")
    return tuple(words)


@dataclass(frozen=True, eq=False, kw_only=True)
class Corpus:
    """Kept documents as word counts (N x D) and, for text, their first three word indices."""

    counts: sp.csr_matrix
    first: np.ndarray | None
    vocabulary: tuple[str, ...]
    n_read: int
    n_dropped: int
    vocabulary_source: str
    notes: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return int(self.counts.shape[0])

    @property
    def dim(self) -> int:
        return len(self.vocabulary)

    def rows(self, rows: np.ndarray) -> Corpus:
        """The documents ``rows`` (indices, in that order), with the same vocabulary and notes."""
        rows = np.asarray(rows, dtype=np.int64)
        return replace(self, counts=self.counts[rows].tocsr(), first=None if self.first is None else self.first[rows])


def _check_vocab_size(vocab_size: object) -> int:
    size = check_positive_int(vocab_size, "vocabulary size D", minimum=2)
    if size > MAX_VOCABULARY:
        raise InputError(f"vocabulary size D must be at most {MAX_VOCABULARY:,} (got {size:,})", "D")
    return size


def _finish(counts: sp.csr_matrix, first: np.ndarray | None, vocabulary: tuple[str, ...], n_read: int,
            source: str, what: str) -> Corpus:
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    keep = lengths >= MIN_WORDS
    dropped = int((~keep).sum())
    if keep.sum() < 2:
        raise InputError(f"only {int(keep.sum())} of the {n_read:,} {what} have at least {MIN_WORDS} words in the "
                         f"vocabulary; at least 2 are needed (use a larger vocabulary or longer documents)", "file")
    notes = []
    if dropped:
        notes.append(f"{dropped:,} of {n_read:,} {what} had fewer than {MIN_WORDS} vocabulary words and were dropped")
    if source == "data":
        notes.append(NOT_PRIVATE_VOCABULARY)
    return Corpus(counts=counts[keep].tocsr(), first=None if first is None else first[keep], vocabulary=vocabulary,
                  n_read=n_read, n_dropped=dropped, vocabulary_source=source, notes=tuple(notes))


def parse_documents(
    content: bytes | str, *, vocab_size: int | None = None, vocabulary: tuple[str, ...] | None = None,
    max_bytes: int = MAX_TEXT_BYTES, stop_words: frozenset[str] | None = None,
) -> Corpus:
    """Plain text, one document per line (blank lines skipped). Give ``vocabulary`` (public) or
    ``vocab_size`` D (the D most frequent words of the upload, not private). ``stop_words`` are removed from every
    document first (before the vocabulary is chosen and before the first three words are taken)."""
    if vocabulary is None and vocab_size is None:
        raise InputError("give a vocabulary size D or a vocabulary file", "D")
    text = _text(content, "text file", max_bytes)
    lines = line_count(text)
    if lines > MAX_TEXT_LINES:  # before anything is split or tokenised
        raise InputError(f"the text file has {lines:,} lines, more than the limit of {MAX_TEXT_LINES:,} (one document "
                         f"per line, at most {MAX_DOCUMENTS:,} documents)", "file")
    raw_docs = [line for line in text.splitlines() if line.strip()]
    if not raw_docs:
        raise InputError("the text file has no documents (one document per line)", "file")
    if len(raw_docs) > MAX_DOCUMENTS:
        raise InputError(f"the text file has {len(raw_docs):,} documents, more than the limit of {MAX_DOCUMENTS:,}",
                         "file")
    stop = stop_words or frozenset()

    def words(line: str) -> list[str]:
        return [w for w in tokenize(line) if w not in stop]

    if vocabulary is None:  # one pass to count the words, one to index them: the tokens are never all held at once
        size = _check_vocab_size(vocab_size)
        freq: Counter[str] = Counter()
        for line in raw_docs:
            freq.update(words(line))
        if len(freq) < 2:
            raise InputError("the documents contain fewer than 2 distinct words", "file")
        ranked = sorted(freq.items(), key=lambda item: (-item[1], item[0]))
        vocabulary = tuple(word for word, _ in ranked[:size])
        source = "data"
    else:
        vocabulary = tuple(vocabulary)
        source = "user"
    index = {word: i for i, word in enumerate(vocabulary)}
    rows, cols, firsts = array("q"), array("q"), np.zeros((len(raw_docs), 3), dtype=np.int64)
    for n, line in enumerate(raw_docs):
        kept = [index[w] for w in words(line) if w in index]
        rows.extend([n] * len(kept))
        cols.extend(kept)
        firsts[n, : min(3, len(kept))] = kept[:3]
    counts = sp.csr_matrix((np.ones(len(rows)), (np.frombuffer(rows, dtype=np.int64),
                                                 np.frombuffer(cols, dtype=np.int64))),
                           shape=(len(raw_docs), len(vocabulary)))
    counts.sum_duplicates()
    return _finish(counts, firsts, vocabulary, len(raw_docs), source, "documents")


def parse_count_csv(
    content: bytes | str, *, vocab_size: int | None = None, vocabulary: tuple[str, ...] | None = None,
    header: bool | None = None,
) -> Corpus:
    """A document-term count CSV (rows = documents, columns = words, non-negative integers). Column names
    (a header row) or ``vocabulary`` name the words; ``vocab_size`` keeps the D most frequent columns."""
    table = parse_numeric_csv(content, header=header)
    values = table.values
    bad = (values < 0) | (values != np.round(values))
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"count CSV, document {row + 1}, column {col + 1}: {values[row, col]:g} is not a "
                         "non-negative whole number (counts only)", "file")
    if vocabulary is not None:
        if len(vocabulary) != values.shape[1]:
            raise InputError(f"the vocabulary has {len(vocabulary)} words but the count CSV has {values.shape[1]} "
                             "columns", "vocabulary")
        names = tuple(vocabulary)
        source = "user"
    elif table.header:
        names = tuple(str(c).strip().lower() for c in table.columns)
        source = "columns"
    else:
        names = tuple(f"word{i + 1}" for i in range(values.shape[1]))
        source = "columns"
    notes = []
    if vocab_size is not None and _check_vocab_size(vocab_size) < values.shape[1]:
        totals = values.sum(axis=0)
        keep = np.sort(np.argsort(-totals, kind="stable")[:vocab_size])
        values = values[:, keep]
        names = tuple(names[i] for i in keep)
        source = "data"
    corpus = _finish(sp.csr_matrix(values), None, names, values.shape[0], source, "documents (rows)")
    if source == "columns":
        notes.append("the vocabulary is the CSV's columns (as uploaded)")
    return replace(corpus, notes=corpus.notes + tuple(notes))


def parse_uploaded_documents(content: bytes | str, filename: str, *, vocab_size: int | None = None,
                             vocabulary: tuple[str, ...] | None = None) -> Corpus:
    """An uploaded corpus by its file name: a ``.csv``/``.tsv`` document-term count table (:func:`parse_count_csv`,
    ``vocab_size`` only without a ``vocabulary``), else plain text with one document per line
    (:func:`parse_documents`)."""
    if str(filename).lower().endswith((".csv", ".tsv")):
        return parse_count_csv(content, vocab_size=None if vocabulary is not None else vocab_size,
                               vocabulary=vocabulary)
    return parse_documents(content, vocab_size=vocab_size, vocabulary=vocabulary)


def top_words(components: np.ndarray, vocabulary: tuple[str, ...], n: int = 8) -> list[list[tuple[str, float]]]:
    """The ``n`` most probable words of each topic (rows of ``components``)."""
    out = []
    for row in np.asarray(components):
        idx = np.argsort(-row, kind="stable")[:n]
        out.append([(vocabulary[i], float(row[i])) for i in idx])
    return out
