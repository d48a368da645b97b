"""Optional dependencies, imported where they are used: plotly is dpcore's figures extra (``pip install
'dpcore[figures]'``), needed only to draw a figure or an HTML report; everything else works without it."""

from __future__ import annotations

from typing import Any

from .validation import InputError

__all__ = ["FIGURES_EXTRA", "plotly_objects"]

FIGURES_EXTRA = "pip install 'dpcore[figures]'"
"""How to install what figures and HTML reports need."""


def plotly_objects() -> Any:
    """``plotly.graph_objects``, or an InputError that names the extra to install (call it before any work that ends
    in a figure, so that a missing extra costs nothing)."""
    try:
        import plotly.graph_objects as go
    except ModuleNotFoundError as exc:
        raise InputError(f"figures and HTML reports draw with plotly, which is not installed: {FIGURES_EXTRA} (the "
                         "project's requirements.txt has it)", "html") from exc
    return go
