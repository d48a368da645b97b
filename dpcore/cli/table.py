"""Plain-text tables for the command line (a cell: :func:`dpcore.family.summary_table.fmt`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..family import Metric
from ..family.summary_table import fmt
from ..textio import printable


def metrics_text(metrics: Mapping[str, Metric]) -> str:
    """Every metric of a family's table by its description, for a command's help: "a; b; and c"."""
    parts = [m.description for m in metrics.values()]
    return parts[0] if len(parts) == 1 else "; ".join(parts[:-1]) + "; and " + parts[-1]


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[fmt(c) for c in row] for row in rows]
    numeric = [all(isinstance(r[i], (int, float, np.number)) and not isinstance(r[i], bool) for r in rows)
               for i in range(len(headers))]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    headers = [printable(h) for h in headers]
    line = "  ".join(h.rjust(w) if num else h.ljust(w) for h, w, num in zip(headers, widths, numeric, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    for r in cells:
        out.append("  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(r, widths, numeric, strict=True)))
    return "\n".join(out)
