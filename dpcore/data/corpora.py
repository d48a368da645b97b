"""Text shipped with the project for topic models (dpcore/data/files/README.md, docs/data.md): the Python and SciPy
documentation corpus with its public vocabulary, and the English stop-word list.

* ``python-docs``: 2,208 documents (paragraphs of the Python reference topics, docstrings of the standard library
  and of SciPy), PSF-2.0 and BSD-3-Clause. Its vocabulary (600 words) was chosen by a stated rule from this public
  corpus (dpcore/data/files/README.md), so it reveals nothing private; for private text it is a public word list
  fixed in advance.
* ``stopwords_en.txt``: scikit-learn's English stop words (BSD-3-Clause), removed from every document before the
  vocabulary is applied or chosen.

Vocabulary rules for an uploaded corpus (:data:`VOCABULARY_RULES`): a public list (the bundled one or the user's
file) costs no privacy; the D most frequent words of the upload are **not** differentially private, and every
result built on them says so (:data:`dpcore.data.NOT_PRIVATE_VOCABULARY`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..limits import MAX_SHIPPED_TEXT_BYTES
from ..textio import decode_text
from ..validation import InputError, check_choice
from .shipped import read_shipped
from .text import Corpus, parse_documents, parse_vocabulary

__all__ = ["BUNDLED_CORPORA", "STOP_WORDS_FILE", "VOCABULARY_RULES", "CorpusInfo", "bundled_vocabulary",
           "load_bundled_corpus", "parse_text_corpus", "stop_words"]

STOP_WORDS_FILE = "stopwords_en.txt"


@dataclass(frozen=True, kw_only=True)
class CorpusInfo:
    file: str
    vocabulary_file: str
    description: str
    origin: str


BUNDLED_CORPORA: dict[str, CorpusInfo] = {
    "python-docs": CorpusInfo(
        file="python_docs.txt.gz", vocabulary_file="python_docs_vocabulary.txt",
        description="Python and SciPy documentation: 2,208 documents (reference topics, standard-library and SciPy "
        "docstrings), 600-word public vocabulary",
        origin="Python 3.11.7 documentation (PSF License Version 2) and SciPy 1.17.1 docstrings (BSD-3-Clause)",
    ),
}
VOCABULARY_RULES: dict[str, str] = {
    "bundled": "the bundled public word list (600 words of the Python documentation corpus): no privacy cost",
    "file": "a word list you upload, chosen from public information: no privacy cost",
    "frequent": "the D most frequent words of the uploaded documents after stop-word removal: NOT private (which "
                "words are frequent is information about the documents)",
}


def _read_text(file: str) -> str:
    return decode_text(read_shipped(file, "bundled data file"), f"bundled data file {file}")


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """The bundled English stop words (lines starting with # are comments)."""
    lines = _read_text(STOP_WORDS_FILE).splitlines()
    return frozenset(w.strip().lower() for w in lines if w.strip() and not w.startswith("#"))


@lru_cache(maxsize=4)
def bundled_vocabulary(name: str = "python-docs") -> tuple[str, ...]:
    """The public vocabulary of a bundled corpus."""
    name = check_choice(name, "corpus", tuple(BUNDLED_CORPORA))
    return parse_vocabulary(_read_text(BUNDLED_CORPORA[name].vocabulary_file))


@lru_cache(maxsize=2)
def load_bundled_corpus(name: str = "python-docs") -> Corpus:
    """A bundled corpus with its public vocabulary, stop words removed (documents with fewer than 3 vocabulary words
    dropped, as for uploads)."""
    name = check_choice(name, "corpus", tuple(BUNDLED_CORPORA))
    info = BUNDLED_CORPORA[name]
    return parse_documents(_read_text(info.file), vocabulary=bundled_vocabulary(name), stop_words=stop_words(),
                           max_bytes=MAX_SHIPPED_TEXT_BYTES)


def parse_text_corpus(content: bytes | str, *, rule: str, vocab_size: int | None = None,
                      vocabulary: tuple[str, ...] | None = None) -> Corpus:
    """Uploaded plain text (one document per line) for a topic model, stop words removed, with the vocabulary of
    ``rule`` (:data:`VOCABULARY_RULES`): "bundled" (the public list), "file" (``vocabulary``, a public list the user
    gives) or "frequent" (the ``vocab_size`` most frequent words: not private, and the corpus's notes say so)."""
    rule = check_choice(rule, "vocabulary rule", tuple(VOCABULARY_RULES))
    if rule == "bundled":
        return parse_documents(content, vocabulary=bundled_vocabulary(), stop_words=stop_words())
    if rule == "file":
        if vocabulary is None:
            raise InputError("the 'file' vocabulary rule needs a vocabulary file (one word per line)", "vocabulary")
        return parse_documents(content, vocabulary=vocabulary, stop_words=stop_words())
    if vocab_size is None:
        raise InputError("the 'frequent' vocabulary rule needs a vocabulary size D", "D")
    return parse_documents(content, vocab_size=vocab_size, stop_words=stop_words())
