"""The metric entry of the family contract: each family defines its metrics once, as a table of :class:`Metric`
(``dpcore.pca.METRICS``, ``dpcore.agn.METRICS``, ``dpcore.lda.METRICS``), and every label, description and direction
shown anywhere (command line, figures, computed sentences, pages) is read from it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Metric", "metric_table"]


@dataclass(frozen=True, kw_only=True)
class Metric:
    """One metric: ``name`` (the key in every table and result), ``label`` (axis and column titles), ``words`` (in
    computed sentences: "the mean <words>"), ``description`` (the definition, for help texts), whether a higher
    value is better, and ``compute``, the family's function that evaluates it (its arguments are the family's:
    PCA ``(problem, subspace)``, OTD ``(components, weights, reference_components, reference_weights)``, LDA
    ``(topics, reference_topics)``; None where
    the family computes it elsewhere); ``column``: its short column title in the command line's tables (default: the
    name); ``bounds``: the range of its values where one exists (:meth:`phrase` says it)."""

    name: str
    label: str
    words: str
    description: str
    higher_is_better: bool
    compute: Callable[..., float] | None = None
    column: str = ""
    bounds: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if not self.column:
            object.__setattr__(self, "column", self.name)

    def phrase(self) -> str:
        """The label with the range of its values, for sentences: "topic error (mean L1 per topic, 0 to 2)"."""
        if self.bounds is None:
            return self.label
        span = f"{self.bounds[0]:g} to {self.bounds[1]:g}"
        return f"{self.label[:-1]}, {span})" if self.label.endswith(")") else f"{self.label} ({span})"


def metric_table(metrics: Iterable[Metric]) -> dict[str, Metric]:
    """Metrics by name, in the order given (the order tables show them); a repeated name is a TypeError."""
    table: dict[str, Metric] = {}
    for metric in metrics:
        if metric.name in table:
            raise TypeError(f"metric {metric.name} is defined twice")
        table[metric.name] = metric
    return table
