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
from pathlib import Path

import numpy as np
import pandas as pd

from .validation import InputError, check_positive_int

__all__ = ["MAX_UPLOAD_BYTES", "MAX_UPLOAD_CELLS", "NumericTable", "parse_numeric_csv"]

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
