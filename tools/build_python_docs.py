"""Rebuild ``dpcore/data/files/python_docs.txt.gz`` and ``dpcore/data/files/python_docs_vocabulary.txt`` from the
Python documentation that ships with the interpreter (see dpcore/data/files/README.md for origin and licence).

Run: ``.venv/bin/python tools/build_python_docs.py`` (CPython 3.11.7 produced the bundled files; other versions
give slightly different documents).

Documents, one per line (whitespace collapsed):

1. the paragraphs of the Python Language Reference and Library Reference topics of ``pydoc_data.topics`` (the
   text of ``help('topics')``), without indented code and grammar blocks;
2. the docstrings of the standard-library modules listed in ``MODULES`` and of their public functions, classes
   and methods;
3. the docstrings of the public functions and classes of the SciPy subpackages in ``SCIPY_MODULES`` (scipy is a
   pinned dependency of the project), without their Examples, References and See Also sections.

Kept: documents with at least ``MIN_TOKENS`` vocabulary words after stop-word removal; exact duplicates dropped.

Vocabulary (a public rule applied to this public corpus, so it costs no privacy here; the same rule applied to a
private corpus would NOT be differentially private): lower-case words (dpcore.data.text.tokenize) of at least 3
letters, not in ``dpcore/data/files/stopwords_en.txt``, appearing in at least ``MIN_DF`` documents and at most
``MAX_DF_SHARE`` of them, the ``VOCABULARY_SIZE`` most frequent by document frequency (ties alphabetical).
"""

from __future__ import annotations

import gzip
import importlib
import inspect
import re
import sys
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FILES = ROOT / "dpcore" / "data" / "files"
"""Where the corpus, its vocabulary and the stop words live (package data of dpcore.data)."""

from dpcore.data.text import tokenize  # noqa: E402

MODULES = (
    "abc argparse array ast asyncio base64 binascii bisect bz2 calendar cmath codecs collections "
    "concurrent.futures configparser contextlib copy csv dataclasses datetime decimal difflib dis doctest "
    "email email.message email.utils enum fnmatch fractions ftplib functools gettext glob gzip hashlib heapq "
    "hmac html html.parser http.client http.cookies http.server imaplib importlib inspect io ipaddress "
    "itertools json locale logging lzma mailbox math mimetypes multiprocessing operator os pathlib pdb pickle "
    "platform poplib pprint queue quopri random re reprlib sched secrets select selectors shelve shutil signal "
    "smtplib socket sqlite3 ssl statistics string struct subprocess tarfile tempfile textwrap threading time "
    "timeit traceback typing unicodedata unittest urllib.parse urllib.request uuid weakref xml.dom.minidom "
    "xml.etree.ElementTree zipfile zoneinfo"
).split()
SCIPY_MODULES = (
    "scipy.cluster.hierarchy scipy.cluster.vq scipy.fft scipy.integrate scipy.interpolate scipy.io scipy.linalg "
    "scipy.ndimage scipy.optimize scipy.signal scipy.sparse scipy.sparse.csgraph scipy.sparse.linalg scipy.spatial "
    "scipy.special scipy.stats"
).split()
_NUMPYDOC_DROP = re.compile(r"\n(Examples|References|See Also|Notes)\n-{3,}\n.*?(?=\n[A-Z][A-Za-z ]+\n-{3,}\n|\Z)",
                            re.S)
MIN_TOKENS = 8
MIN_DF = 10
MAX_DF_SHARE = 0.05
VOCABULARY_SIZE = 600
_CODE_LINE = re.compile(r"^\s{3,}|^\s*(>>>|\.\.\.)|^[\w.]+\(.*\)\s*(->.*)?$")  # code, prompts, call signatures


def stop_words() -> frozenset[str]:
    lines = (FILES / "stopwords_en.txt").read_text(encoding="utf-8").splitlines()
    return frozenset(w.strip() for w in lines if w.strip() and not w.startswith("#"))


def _paragraphs(text: str) -> list[str]:
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if not _CODE_LINE.match(ln)]
        para = " ".join(" ".join(lines).split())
        if para:
            out.append(para)
    return out


def reference_documents() -> list[str]:
    from pydoc_data.topics import topics

    return [p for key in sorted(topics) for p in _paragraphs(topics[key])]


def _members(module: object) -> list[object]:
    found = []
    for name, obj in sorted(vars(module).items()):
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj) or inspect.isclass(obj):
            found.append(obj)
            if inspect.isclass(obj):
                found.extend(m for n, m in sorted(vars(obj).items())
                             if not n.startswith("_") and inspect.isfunction(m))
    return found


def docstring_documents() -> list[str]:
    docs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in MODULES:
            module = importlib.import_module(name)
            for obj in [module, *_members(module)]:
                text = inspect.getdoc(obj)
                if text:
                    docs.extend(_paragraphs(text) if obj is module else [" ".join(text.split())])
    return docs


def scipy_documents() -> list[str]:
    docs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in SCIPY_MODULES:
            module = importlib.import_module(name)
            for attr in sorted(getattr(module, "__all__", dir(module))):
                obj = getattr(module, attr, None)
                if attr.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj) or callable(obj)):
                    continue
                text = inspect.getdoc(obj)
                if not text or inspect.ismodule(obj):
                    continue
                text = _NUMPYDOC_DROP.sub("\n", "\n" + text)
                lines = [ln for ln in text.splitlines() if not _CODE_LINE.match(ln) and not set(ln.strip()) <= {"-"}]
                docs.append(" ".join(" ".join(lines).split()))
    return docs


def main() -> int:
    stops = stop_words()
    raw = list(dict.fromkeys(reference_documents() + docstring_documents() + scipy_documents()))
    tokens = [[t for t in tokenize(d) if len(t) >= 3 and t not in stops] for d in raw]
    df = Counter(w for toks in tokens for w in set(toks))
    limit = MAX_DF_SHARE * len(raw)
    ranked = sorted((w for w, f in df.items() if MIN_DF <= f <= limit), key=lambda w: (-df[w], w))
    vocabulary = ranked[:VOCABULARY_SIZE]
    vocab = set(vocabulary)
    kept = [d for d, toks in zip(raw, tokens, strict=True) if sum(t in vocab for t in toks) >= MIN_TOKENS]
    with gzip.open(FILES / "python_docs.txt.gz", "wt", encoding="utf-8", compresslevel=9) as fh:
        fh.write("\n".join(kept) + "\n")
    (FILES / "python_docs_vocabulary.txt").write_text("\n".join(vocabulary) + "\n", encoding="utf-8")
    print(f"{len(raw)} candidate documents, {len(kept)} kept, vocabulary of {len(vocabulary)} words")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
