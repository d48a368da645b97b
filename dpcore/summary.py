"""The result summary of every comparison: mean and standard deviation of one metric of one algorithm over runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["MetricSummary", "summarise_values"]


@dataclass(frozen=True, kw_only=True)
class MetricSummary:
    """Mean and standard deviation (ddof = 1; 0 for a single run; None for no run) of ``metric`` over the ``runs``
    runs of ``algorithm`` that finished. ``failed`` counts runs that stopped (OTD: whitening failed); it is None for
    a family whose runs cannot fail (PCA), and then left out of :meth:`to_dict`."""

    algorithm: str
    metric: str
    mean: float | None
    std: float | None
    runs: int
    failed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"algorithm": self.algorithm, "metric": self.metric, "mean": self.mean,
                               "std": self.std, "runs": self.runs}
        if self.failed is not None:
            out["failed"] = self.failed
        return out


def summarise_values(algorithm: str, metric: str, values: np.ndarray | list[float], failed: int | None = None
                     ) -> MetricSummary:
    """The :class:`MetricSummary` of the finished runs' ``values``."""
    values = np.asarray(values, dtype=float)
    n = int(values.size)
    mean = float(values.mean()) if n else None
    std = float(values.std(ddof=1)) if n > 1 else (0.0 if n == 1 else None)
    return MetricSummary(algorithm=algorithm, metric=metric, mean=mean, std=std, runs=n, failed=failed)
