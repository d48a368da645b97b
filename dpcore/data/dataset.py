"""Data sets as the library holds them: features D x N, one sample per column (docs/math/setting.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import InputError
from .numeric_csv import NumericTable

__all__ = ["Dataset", "table_to_dataset"]


@dataclass(frozen=True, kw_only=True)
class Dataset:
    """Raw features ``x`` (D x N, one sample per column), optional labels (N,), image shape for pictures."""

    name: str
    x: np.ndarray
    labels: np.ndarray | None = None
    image_shape: tuple[int, int] | None = None
    description: str = ""

    @property
    def dim(self) -> int:
        return int(self.x.shape[0])

    @property
    def n_samples(self) -> int:
        return int(self.x.shape[1])


def table_to_dataset(table: NumericTable, name: str = "upload", *, image_shape: tuple[int, int] | None = None,
                     description: str = "") -> Dataset:
    """A :class:`Dataset` (D x N, samples as columns) from a parsed table (rows are samples): the one transpose."""
    x = np.ascontiguousarray(table.values.T, dtype=float)
    if image_shape is not None and image_shape[0] * image_shape[1] != x.shape[0]:
        raise InputError(f"image shape {image_shape} does not match D = {x.shape[0]}", "image_shape")
    excluded = f", label column {table.dropped_label!r} excluded" if table.dropped_label else ""
    return Dataset(name=name, x=x, labels=table.labels, image_shape=image_shape,
                   description=description or f"uploaded table, D = {x.shape[0]}, N = {x.shape[1]:,}{excluded}")
