"""Shared test set-up: the repository root and federated/ on sys.path, seeded generators, AppTest helper."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "federated"):  # dpcore, and the Flower app's package capefed
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261121)


def app_test(page_path: str | None = None, timeout: float = 60):
    """AppTest of the whole app (app.py navigation), switched to ``page_path`` and run."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    at.run()
    if page_path is not None:
        at.switch_page(page_path)
        at.run()
    return at
