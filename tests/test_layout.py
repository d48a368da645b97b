"""The layout check of ``make lint`` (tools/check_layout.py) passes on dpcore and catches what it is for: upward and
sideways imports between layers, import cycles (also through imports inside functions), UI imports in the library,
and over-long modules and functions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("check_layout", ROOT / "tools" / "check_layout.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_dpcore_imports_strictly_downward_without_cycles():
    tool = _tool()
    failures, _, modules = tool.check(ROOT)
    assert failures == []
    packages = {m.package for m in modules.values()}
    assert packages == {"bottom", "privacy", "data", "scenario", "cape", "tensor", "family", "pca", "otd", "lda",
                        "experiments", "federation", "cli", "root"}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_check_finds_upward_sideways_and_cyclic_imports(tmp_path):
    tool = _tool()
    long_body = "".join(f"    x{i} = {i}\n" for i in range(tool.MAX_FUNCTION_LINES + 1))
    _write(tmp_path, {
        "dpcore/__init__.py": "",
        "dpcore/validation.py": "",
        "dpcore/privacy/__init__.py": "",
        "dpcore/privacy/calibration.py": "from ..cape.design import x\n",  # upward
        "dpcore/cape/__init__.py": "",
        "dpcore/cape/design.py": "x = 1\n\ndef f():\n    from .audit import y\n",  # cycle via a local import
        "dpcore/cape/audit.py": "from .design import x\ny = x\n",
        "dpcore/pca/__init__.py": "from ..otd import z\n",  # sideways
        "dpcore/otd/__init__.py": "z = 1\nimport streamlit\n",
        "dpcore/otd/long.py": "def g():\n" + long_body + "\n\ndef h():  # long: a table read top to bottom\n"
                              + long_body,
    })
    failures, _, _ = tool.check(tmp_path)
    text = "\n".join(failures)
    assert "dpcore/privacy/calibration.py:1: upward import of dpcore.cape.design" in text
    assert "dpcore/pca/__init__.py:1: sideways import of dpcore.otd" in text
    assert "import cycle: dpcore.cape.audit -> dpcore.cape.design" in text
    assert "dpcore/otd/__init__.py:2: dpcore must not import streamlit" in text
    assert "function g has" in text and "function h" not in text
    assert len(failures) == 5
