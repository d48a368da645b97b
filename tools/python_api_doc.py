"""Run the Python examples of docs/python-api.md in order, in one namespace, and compare what each prints with the
``text`` block that follows it (tests/test_python_api.py runs it from the clone and from a fresh ``pip install .``).

Run: ``python tools/python_api_doc.py [--write] [FILE]`` (default docs/python-api.md next to this tool): without
``--write`` it exits 1 and shows the first example whose output differs; ``--write`` puts what every example prints
into its ``text`` block. Standard library only, so that a virtual environment with nothing but dpcore can run it
(``python -I`` keeps the clone off ``sys.path``); it prints ``dpcore: <the path of the dpcore it imported>`` last.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DOC = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"
_FENCE = re.compile(r"^```(?P<lang>[a-z]*)\n(?P<body>.*?)^```\n", re.S | re.M)


@dataclass(frozen=True)
class Example:
    """A ``python`` block and, when a ``text`` block follows it with nothing but blank lines between, that block's
    body and its place in the file."""

    code: str
    expected: str | None
    expected_span: tuple[int, int] | None


def examples(text: str) -> list[Example]:
    """The ``python`` blocks of ``text`` in order, each with the output block that follows it."""
    fences = list(_FENCE.finditer(text))
    out = []
    for i, fence in enumerate(fences):
        if fence.group("lang") != "python":
            continue
        following = fences[i + 1] if i + 1 < len(fences) else None
        adjacent = following is not None and not text[fence.end():following.start()].strip()
        if adjacent and following.group("lang") == "text":
            out.append(Example(fence.group("body"), following.group("body"), following.span("body")))
        else:
            out.append(Example(fence.group("body"), None, None))
    return out


def run(text: str, name: str = "python-api.md") -> list[tuple[Example, str]]:
    """Every example executed in order in one namespace, with what it printed."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    results = []
    for number, example in enumerate(examples(text), start=1):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(example.code, f"<{name}, example {number}>", "exec"), namespace)  # noqa: S102
        results.append((example, printed.getvalue()))
    return results


def filled(text: str, results: list[tuple[Example, str]]) -> str:
    """``text`` with every output block replaced by what its example printed."""
    for example, printed in reversed(results):
        if example.expected_span is not None:
            start, end = example.expected_span
            text = text[:start] + printed + text[end:]
    return text


def first_difference(results: list[tuple[Example, str]]) -> str | None:
    """The first example whose printed output is not its output block, in words, or None."""
    for number, (example, printed) in enumerate(results, start=1):
        if example.expected is not None and printed != example.expected:
            return (f"example {number} printed:\n{printed}\ninstead of:\n{example.expected}\n"
                    f"its code:\n{example.code}")
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", default=str(DEFAULT_DOC))
    parser.add_argument("--write", action="store_true", help="fill every output block with what its example prints")
    args = parser.parse_args(argv)
    path = Path(args.file)
    text = path.read_text(encoding="utf-8")
    results = run(text, path.name)
    if args.write:
        path.write_text(filled(text, results), encoding="utf-8")
    problem = None if args.write else first_difference(results)
    if problem:
        print(problem, file=sys.stderr)
    print(f"{len(results)} examples run")
    print(f"dpcore: {sys.modules['dpcore'].__file__}")
    return 1 if problem else 0


if __name__ == "__main__":
    raise SystemExit(main())
