"""Files shipped with dpcore (docs/data.md, "Bundled data"): the data sets of :data:`~dpcore.data.BUNDLED`, the text
corpus, its vocabulary and the stop words, and the stored full-size sweep results (``presets/``). They are package
data of :mod:`dpcore.data`, in its folder ``files/`` (:data:`FILES_FOLDER`), read with :mod:`importlib.resources`:
the same files whether dpcore runs from a clone of the repository or from ``pip install .`` (pyproject.toml,
``[tool.setuptools.package-data]``).

The folder named by the environment variable ``DPCORE_DATA_DIR`` (:data:`DATA_DIR_ENV`), when set, is looked in
first: a copy of the files elsewhere, or a test's damaged copy. Every read goes through
:func:`dpcore.textio.read_data_file` (bounded, Git LFS pointers refused, size and SHA-256 checked where recorded,
gzip decompressed with a bound).
"""

from __future__ import annotations

import os
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from ..limits import MAX_SHIPPED_FILE_BYTES, MAX_SHIPPED_TEXT_BYTES
from ..textio import read_data_file
from ..validation import InputError

__all__ = ["DATA_DIR_ENV", "FILES_FOLDER", "data_dirs", "find_shipped", "read_item", "read_shipped", "shipped_path"]

DATA_DIR_ENV = "DPCORE_DATA_DIR"
FILES_FOLDER = "files"
"""The folder of :mod:`dpcore.data`'s package data that holds every shipped file (``dpcore/data/files/`` in the
repository)."""


def data_dirs() -> list[Traversable]:
    """Where shipped files are looked for, in order: ``$DPCORE_DATA_DIR`` when it is set, then the package data."""
    dirs: list[Traversable] = [Path(os.environ[DATA_DIR_ENV])] if os.environ.get(DATA_DIR_ENV) else []
    dirs.append(resources.files(__package__).joinpath(FILES_FOLDER))
    return dirs


def find_shipped(name: str) -> Traversable | None:
    """The first copy of the shipped file ``name`` (a path relative to the folder, ``/``-separated, such as
    ``presets/manifest.json``), or None."""
    for folder in data_dirs():
        item = folder.joinpath(*name.split("/"))
        if item.is_file():
            return item
    return None


def shipped_path(name: str) -> Path | None:
    """The file system path of :func:`find_shipped`'s copy (None when there is none, or when the package is not on
    the file system, as in a zip archive)."""
    found = find_shipped(name)
    return found if isinstance(found, Path) else None


def read_item(item: Traversable, what: str, *, size: int | None = None, sha256: str | None = None,
               max_decompressed: int = MAX_SHIPPED_TEXT_BYTES) -> bytes:
    """One shipped file, verified and decompressed by :func:`dpcore.textio.read_data_file` (``size`` and ``sha256``:
    what a manifest recorded), through a file system path (:func:`importlib.resources.as_file`)."""
    with resources.as_file(item) as path:
        return read_data_file(path, what, max_bytes=MAX_SHIPPED_FILE_BYTES, max_decompressed=max_decompressed,
                              size=size, sha256=sha256)


def read_shipped(name: str, what: str) -> bytes:
    """The first copy of the shipped file ``name`` (:func:`find_shipped`), verified (:func:`read_item`); an
    InputError says where it looked when no copy exists."""
    found = find_shipped(name)
    if found is None:
        looked = ", ".join(str(d) for d in data_dirs())
        raise InputError(f"{what} {name} is missing (looked in {looked}); reinstall dpcore (`pip install .`) or set "
                         f"{DATA_DIR_ENV} to the folder that holds it", "file")
    return read_item(found, what)
