"""Data sets as the library holds them: features D x N, one sample per column (docs/math/setting.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..limits import MAX_DATA_MAGNITUDE, MAX_UPLOAD_CELLS
from ..validation import InputError, check_magnitude
from .numeric_csv import NumericTable

__all__ = ["Dataset", "dataset_from_array", "table_to_dataset"]


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


def dataset_from_array(values: object, name: str = "array", *, labels: object = None,
                       image_shape: tuple[int, int] | None = None) -> Dataset:
    """A :class:`Dataset` from an array a user holds in memory, N x D with one sample per row (the layout of a CSV
    file and of scikit-learn): the boundary for arrays, checked like an upload (2-D, at most
    :data:`~dpcore.limits.MAX_UPLOAD_CELLS` numbers, finite, at most
    :data:`~dpcore.limits.MAX_DATA_MAGNITUDE` in magnitude), then transposed once. ``labels``: one per row, or
    None."""
    shape = np.shape(values)
    if len(shape) != 2 or shape[0] < 1 or shape[1] < 1:
        raise InputError(f"the data must be a 2-D array, one sample per row and one feature per column (got shape "
                         f"{shape})", "data")
    if shape[0] * shape[1] > MAX_UPLOAD_CELLS:
        raise InputError(f"the data have {shape[0] * shape[1]:,} numbers; at most {MAX_UPLOAD_CELLS:,} are allowed",
                         "data")
    x = check_magnitude(values, "data", MAX_DATA_MAGNITUDE)
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (shape[0],):
            raise InputError(f"labels must have one entry per row ({shape[0]:,}; got shape {labels.shape})",
                             "labels")
    if image_shape is not None and image_shape[0] * image_shape[1] != shape[1]:
        raise InputError(f"image shape {image_shape} does not match D = {shape[1]}", "image_shape")
    return Dataset(name=name, x=np.ascontiguousarray(x.T), labels=labels, image_shape=image_shape,
                   description=f"an array, D = {shape[1]}, N = {shape[0]:,}")
