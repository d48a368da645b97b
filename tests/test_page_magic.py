"""Streamlit's "magic" writes every bare expression of a page script onto the page: a string meant as a constant's
docstring (``X = ...`` then ``\"\"\"what X is\"\"\"``) appears as a stray paragraph. Only a page's module docstring (its
first statement) is exempt, and only at the top of the module: a bare string anywhere in a page's own statements is
an error. Functions are not affected (magic applies to the script's statements, not to function bodies)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py")])


def _script_statements(body: list[ast.stmt]):
    """The statements the script runs itself (module level, and inside if/for/while/with/try blocks), not bodies of
    functions or classes."""
    for node in body:
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _script_statements([n for n in inner if isinstance(n, ast.stmt)] +
                                              [s for h in inner if isinstance(h, ast.ExceptHandler) for s in h.body])


def bare_strings(source: str) -> list[int]:
    """Line numbers of bare string expressions that magic would write, the module docstring excepted."""
    tree = ast.parse(source)
    body = tree.body[1:] if ast.get_docstring(tree) is not None else tree.body
    return [node.lineno for node in _script_statements(body) if isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)]


def test_the_check_finds_a_constant_docstring():
    source = '"""page"""\nX = 1\n"""what X is"""\nif X:\n    "shown too"\ndef f():\n    """fine"""\n'
    assert bare_strings(source) == [3, 5]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_no_page_writes_a_stray_string(script):
    lines = bare_strings(script.read_text())
    assert not lines, f"{script.name}: bare strings at lines {lines} would be written onto the page by Streamlit magic"
