"""Every page listed in the navigation exists and starts with start_page() before drawing anything."""

from __future__ import annotations

import ast
from pathlib import Path

from pages.shared.catalog import PAGES

ROOT = Path(__file__).resolve().parents[1]


def test_every_page_exists_and_is_routed_first():
    assert len({p.path for p in PAGES}) == len(PAGES) and len({p.title for p in PAGES}) == len(PAGES)
    for info in PAGES:
        tree = ast.parse((ROOT / info.path).read_text())
        body = [node for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom))
                and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
        first = body[0]
        assert (isinstance(first, ast.Assign) and isinstance(first.value, ast.Call)
                and isinstance(first.value.func, ast.Name) and first.value.func.id == "start_page"), (
            f"{info.path}: the first statement after the imports must be `scenario = start_page()` (deep links on a "
            "fresh server run page files without app.py; see pages/shared/navigation.py)"
        )
