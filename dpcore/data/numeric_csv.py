"""Uploaded numeric CSV files: text only, nothing is evaluated, unpickled or executed.

A CSV file has one sample per row, and :class:`NumericTable` keeps that layout (``values`` is n_samples x D)
because it describes the file; :func:`dpcore.data.dataset.table_to_dataset` does the single transpose to the
library's D x N layout (docs/math/setting.md). The parser accepts comma, semicolon or tab separated text
(optionally gzip-compressed), with an optional header row and an optional label column that is kept apart from
the numeric features. :func:`parse_numeric_csv` runs the steps below in order; each raises
:class:`~dpcore.validation.InputError` naming the row and column of the problem and the limits.
"""

from __future__ import annotations

import codecs
import csv
import io
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..limits import MAX_DATA_MAGNITUDE, MAX_UPLOAD_BYTES, MAX_UPLOAD_CELLS, MAX_UPLOAD_COLUMNS
from ..textio import decode_text, gunzip, size_text
from ..validation import InputError, check_positive_int

if TYPE_CHECKING:  # pandas is imported where a file is read: a command that reads none does not pay for it
    import pandas as pd

__all__ = ["LABEL_MAX_CLASSES", "CsvColumns", "NumericTable", "parse_label_column", "parse_numeric_csv",
           "sniff_columns"]

_DELIMITERS = (",", ";", "\t")
LABEL_MAX_CLASSES = 20
"""A first or last column of whole numbers with 2 to this many distinct values (and fewer than half as many as rows)
is taken for a label column by :func:`sniff_columns`."""
_NAN_WORDS = {"nan", "+nan", "-nan"}


@dataclass(frozen=True, kw_only=True)
class NumericTable:
    """A parsed CSV: ``values`` (n_samples x D floats, file layout), column names, optional labels.

    ``dropped_label`` is the name of the label column that was taken out of ``values`` (None when
    there was none); ``labels`` holds its cells (numbers when they all are, else text).
    """

    values: np.ndarray
    columns: list[str]
    labels: np.ndarray | None = None
    dropped_label: str | None = None
    dropped_columns: tuple[str, ...] = ()
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
    return size_text(n)


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
        raw = gunzip(raw, max_bytes, "file")
    elif len(raw) > max_bytes:
        raise InputError(f"the file is {_megabytes(len(raw))}, more than the limit of {_megabytes(max_bytes)}", "file")
    utf16 = raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    if not utf16 and b"\x00" in raw[:4096]:
        raise InputError("the file is binary, not CSV text (only numeric CSV files are accepted)", "file")
    return decode_text(raw, "file")


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
    if number is not None and abs(number) > MAX_DATA_MAGNITUDE:
        return f"is {number:g}, larger in magnitude than {MAX_DATA_MAGNITUDE:g}"
    shown = text if len(text) <= 30 else text[:27] + "..."
    return f"is the text {shown!r}, not a number"


def _column_label(index: int, columns: list[str], header: bool) -> str:
    return f"column {index + 1} ({columns[index]!r})" if header else f"column {index + 1}"

@dataclass(frozen=True)
class _Layout:
    """What the first line says: the delimiter, its cells and their number."""

    delimiter: str
    first_row: list[str]
    n_fields: int


def _sniff(text: str, max_cells: int, max_columns: int) -> _Layout:
    """The delimiter (the most frequent of comma, semicolon, tab in the first line; comma when none occurs) and
    the column and cell limits, checked on the first line and the line count before anything is parsed."""
    first_line = text.split("\n", 1)[0].rstrip("\r")
    delimiter = max(_DELIMITERS, key=first_line.count)
    if first_line.count(delimiter) == 0:
        delimiter = ","
    n_fields = first_line.count(delimiter) + 1  # an upper bound (quoted delimiters), before the csv module reads it
    if n_fields > max_columns:
        raise InputError(
            f"the first row has {n_fields:,} columns, more than the limit of {max_columns:,} columns; use fewer "
            "features", "file")
    first_row = next(csv.reader([first_line], delimiter=delimiter))
    n_fields = len(first_row)
    n_lines = text.count("\n") + 1
    if n_fields * n_lines > max_cells:
        raise InputError(
            f"the file has {n_lines:,} rows x {n_fields:,} columns = {n_fields * n_lines:,} cells, more than the "
            f"limit of {max_cells:,} cells; use fewer samples or features", "file"
        )
    return _Layout(delimiter, first_row, n_fields)


def _has_header(header: bool | None, label_column: str | int | None, first_row: list[str]) -> bool:
    """``header`` as given, or decided from the first row: a label column given by name implies a header; otherwise
    the first row is a header when its non-empty cells (the label column's aside) are all text, data when they are
    all numbers, and an InputError asks the user to say which when it mixes the two."""
    if header is not None:
        return header
    if isinstance(label_column, str):
        return True
    skip = None
    if isinstance(label_column, (int, np.integer)) and not isinstance(label_column, bool):
        if -len(first_row) <= int(label_column) < len(first_row):
            skip = int(label_column) % len(first_row)
    cells = [(j, c.strip()) for j, c in enumerate(first_row) if j != skip and c.strip()]
    text = [(j, c) for j, c in cells if not _is_number(c)]
    if not text:
        return False
    if len(text) == len(cells):
        return True
    number = next((j, c) for j, c in cells if _is_number(c))
    raise InputError(
        f"the first row mixes text (row 1, column {text[0][0] + 1} is {_short(text[0][1])}) and numbers (column "
        f"{number[0] + 1} is {_short(number[1])}), so it is neither clearly a header nor clearly data; say whether "
        "it is a header (header yes or no)", "header")


def _short(cell: str) -> str:
    return repr(cell if len(cell) <= 30 else cell[:27] + "...")


def _read_frame(text: str, layout: _Layout, header: bool, max_cells: int) -> pd.DataFrame:
    """The data rows as text or numbers (pandas' C parser, no NaN words, blank lines kept as rows)."""
    import pandas as pd
    try:
        frame = pd.read_csv(
            io.StringIO(text), sep=layout.delimiter, header=None, skiprows=1 if header else 0, na_filter=False,
            skip_blank_lines=False, dtype=None, engine="c",
        )
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame(np.zeros((0, layout.n_fields)))
    except pd.errors.ParserError as exc:
        match = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if match:
            expected, line, saw = (int(g) for g in match.groups())
            raise InputError(
                f"row {line + (1 if header else 0)} has {saw} cells but the first row has {expected}; every row "
                "needs the same number of cells", "file"
            ) from exc
        raise InputError(f"the file is not a valid CSV table ({str(exc).strip()})", "file") from exc
    if frame.shape[1] != layout.n_fields:
        raise InputError(
            f"the data rows have {frame.shape[1]} cells but the first row has {layout.n_fields}; every row needs the "
            "same number of cells", "file"
        )
    if frame.shape[0] * frame.shape[1] > max_cells:  # pragma: no cover - caught by the estimate in _sniff
        raise InputError(f"the file has more than the limit of {max_cells:,} cells", "file")
    return frame


def _label_index(label_column: str | int | None, header: bool, columns: list[str], n_fields: int) -> int | None:
    """The 0-based position of the label column: a header name, or a position (negative counts from the end)."""
    if label_column is None:
        return None
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
        return matches[0]
    if isinstance(label_column, (int, np.integer)):
        if not -n_fields <= int(label_column) < n_fields:
            raise InputError(
                f"label column position {int(label_column)} is outside the {n_fields} columns "
                f"(allowed 0..{n_fields - 1}, or -1 for the last)", "label_column"
            )
        return int(label_column) % n_fields
    raise InputError(f"label_column must be a column name or position (got {label_column!r})", "label_column")


def _check_size(n_rows: int, n_features: int, has_label: bool) -> None:
    if n_rows < 2 or n_features < 2:
        besides = " besides the label column" if has_label else ""
        raise InputError(
            f"the table needs at least 2 rows (samples) and 2 numeric columns (features); it has {n_rows} data "
            f"row(s) and {n_features} numeric column(s){besides}", "file"
        )


def _column_numbers(column: pd.Series) -> tuple[np.ndarray, pd.Series | None]:
    """A column as floats (NaN where a cell is not a number) and, for text columns, the cells as text."""
    import pandas as pd
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
        return column.to_numpy(dtype=float), None
    cells = column.astype(str)
    return pd.to_numeric(cells.str.strip(), errors="coerce").to_numpy(dtype=float), cells


@dataclass(frozen=True)
class _BadCell:
    """The first bad cell (smallest row, then column) and how many bad cells there are."""

    row: int
    column: int
    problem: str
    count: int


def _feature_values(frame: pd.DataFrame, feature_index: list[int]) -> tuple[np.ndarray, _BadCell | None]:
    """The features as an n_rows x len(feature_index) float array, and the first non-finite cell if any.
    Columns pandas already read as numbers are converted and checked in one step (a 784-column image file costs no
    loop over its columns); only text columns are read cell by cell."""
    import pandas as pd
    values = np.empty((frame.shape[0], len(feature_index)), dtype=float)
    dtypes = frame.dtypes.to_numpy()
    numeric = [out for out, j in enumerate(feature_index)
               if pd.api.types.is_numeric_dtype(dtypes[j]) and not pd.api.types.is_bool_dtype(dtypes[j])]
    worst: tuple[int, int, str] | None = None
    n_bad = 0
    if numeric:
        block = frame.iloc[:, [feature_index[out] for out in numeric]].to_numpy(dtype=float)
        values[:, numeric] = block
        bad = _out_of_range(block)
        n_bad = int(bad.sum())
        if n_bad:
            first = int(np.argmax(bad.any(axis=1)))
            out = min((numeric[c] for c in np.flatnonzero(bad[first])), key=lambda o: feature_index[o])
            worst = (first, feature_index[out], _cell_problem(str(values[first, out])))
    numeric_set = set(numeric)
    for out, j in enumerate(feature_index):
        if out in numeric_set:
            continue
        numbers, cells = _column_numbers(frame.iloc[:, j])
        values[:, out] = numbers
        bad = _out_of_range(numbers)
        if bad.any():
            n_bad += int(bad.sum())
            first = int(np.argmax(bad))
            if worst is None or first < worst[0] or (first == worst[0] and j < worst[1]):
                worst = (first, j, _cell_problem(str(cells.iloc[first])))
    return values, None if worst is None else _BadCell(worst[0], worst[1], worst[2], n_bad)


def _out_of_range(numbers: np.ndarray) -> np.ndarray:
    """True where a value is NaN, infinite, or too large to square and sum (over MAX_DATA_MAGNITUDE). Two comparisons,
    not ``abs``: no float copy of a whole upload's block (a NaN fails both)."""
    with np.errstate(invalid="ignore"):
        return ~((numbers >= -MAX_DATA_MAGNITUDE) & (numbers <= MAX_DATA_MAGNITUDE))


def _bad_cell_error(bad: _BadCell, offset: int, columns: list[str], header: bool, has_label: bool) -> InputError:
    more = f" ({bad.count:,} bad cells in total)" if bad.count > 1 else ""
    hint = ""
    if bad.row == 0 and not header and "text" in bad.problem:
        hint = "; if the first row is a header, say so (header=True)"
    elif "text" in bad.problem and not has_label:
        hint = "; a text column holding labels can be excluded as the label column"
    allowed = (f"numbers up to {MAX_DATA_MAGNITUDE:g} in magnitude are allowed (their squares must sum without "
               "overflow): rescale the data" if "magnitude" in bad.problem
               else "only finite numbers are allowed outside the label column")
    return InputError(
        f"row {bad.row + offset}, {_column_label(bad.column, columns, header)} {bad.problem}{more}; {allowed}{hint}",
        "file"
    )


def _labels(column: pd.Series) -> np.ndarray:
    """Label cells as integers when they all are whole numbers, as floats when they are numbers, else as text."""
    import pandas as pd
    as_numbers = pd.to_numeric(column.astype(str).str.strip(), errors="coerce").to_numpy(dtype=float)
    if np.all(np.isfinite(as_numbers)):
        return as_numbers.astype(int) if np.all(as_numbers == np.round(as_numbers)) else as_numbers
    return column.astype(str).str.strip().to_numpy(dtype=object)


def parse_numeric_csv(
    content: bytes | str,
    *,
    header: bool | None = None,
    label_column: str | int | None = None,
    drop_columns: tuple[int, ...] = (),
    max_cells: int = MAX_UPLOAD_CELLS,
    max_bytes: int = MAX_UPLOAD_BYTES,
    max_columns: int = MAX_UPLOAD_COLUMNS,
) -> NumericTable:
    """Parse CSV text (comma, semicolon or tab separated; gzip accepted) into a :class:`NumericTable`.

    ``header`` None decides from the first row: a header when its non-empty cells are all text, data when they
    are all numbers, an InputError asking which when it mixes both. ``label_column`` (a header name or a 0-based
    position, negative counts from the end) is excluded from the numeric values and returned as ``labels``;
    ``drop_columns`` (0-based positions, e.g. :func:`sniff_columns`' identifier columns) are left out and named in
    ``dropped_columns``. Every
    other cell must be a finite number. Errors (:class:`InputError`) name the row (line of the file, counting from
    1) and the column of the first bad cell, and state the limits (bytes, MAX_UPLOAD_COLUMNS columns checked on the
    first line, cells). Nothing is evaluated or unpickled.
    """
    max_cells = check_positive_int(max_cells, "max_cells")
    max_bytes = check_positive_int(max_bytes, "max_bytes")
    max_columns = check_positive_int(max_columns, "max_columns")
    if header is not None and not isinstance(header, bool):
        raise InputError(f"header must be True, False or None for auto-detection (got {header!r})", "header")
    text = _to_text(content, max_bytes).rstrip()  # trailing blank lines are not samples
    if not text:
        raise InputError("the file is empty; it needs at least 2 rows (samples) and 2 numeric columns", "file")
    layout = _sniff(text, max_cells, max_columns)
    header = _has_header(header, label_column, layout.first_row)
    columns = [c.strip() for c in layout.first_row] if header else [f"x{j + 1}" for j in range(layout.n_fields)]
    frame = _read_frame(text, layout, header, max_cells)
    label_index = _label_index(label_column, header, columns, layout.n_fields)
    dropped = {int(j) % layout.n_fields for j in drop_columns if -layout.n_fields <= int(j) < layout.n_fields}
    feature_index = [j for j in range(layout.n_fields) if j != label_index and j not in dropped]
    _check_size(frame.shape[0], len(feature_index), label_index is not None)
    values, bad = _feature_values(frame, feature_index)
    if bad is not None:
        offset = 2 if header else 1  # file line of the first data row
        raise _bad_cell_error(bad, offset, columns, header, label_index is not None)
    labels = None if label_index is None else _labels(frame.iloc[:, label_index])
    return NumericTable(
        values=values, columns=[columns[j] for j in feature_index], labels=labels,
        dropped_label=None if label_index is None else columns[label_index], header=bool(header),
        delimiter=layout.delimiter, dropped_columns=tuple(columns[j] for j in sorted(dropped) if j != label_index),
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



@dataclass(frozen=True, kw_only=True)
class CsvColumns:
    """What :func:`sniff_columns` saw: the column names (the header's, else x1, x2, ...), whether the first row is a
    header, and the detected label column (0-based position, or None) with the reason."""

    columns: tuple[str, ...]
    header: bool
    label: int | None
    reason: str
    n_rows: int
    ids: tuple[int, ...] = ()
    id_reasons: tuple[str, ...] = ()


def _decide_header(first_row: list[str], text_columns: set[int]) -> bool:
    """A header when the first row's non-empty cells outside the text columns are all text (or there are none and the
    whole row is text)."""
    cells = [(j, c.strip()) for j, c in enumerate(first_row) if c.strip()]
    outside = [c for j, c in cells if j not in text_columns]
    if outside:
        return all(not _is_number(c) for c in outside)
    return bool(cells) and all(not _is_number(c) for _, c in cells)


def _whole_number_classes(column: pd.Series, n_rows: int) -> int | None:
    """The number of distinct values of a column of whole numbers that looks like labels, else None."""
    import pandas as pd
    numbers = pd.to_numeric(column.astype(str).str.strip(), errors="coerce").to_numpy(dtype=float)
    if not np.all(np.isfinite(numbers)) or not np.all(numbers == np.round(numbers)):
        return None
    distinct = np.unique(numbers).size
    return distinct if 2 <= distinct <= LABEL_MAX_CLASSES and 2 * distinct <= n_rows else None


ID_NAMES = re.compile(r"(?i)^(id|ids|index|idx|#|no\.?|row|row[ _-]?(id|no|number)|(sample|record|patient|subject)"
                      r"[ _-]?(id|no|number)|unnamed: ?\d+)$")
"""Header names that mark a record identifier, not a feature."""
ID_MIN_ROWS = 5
"""A column of distinct consecutive whole numbers counts as a running index from this many rows on."""


def _id_reason(name: str, column: pd.Series, header: bool) -> str | None:
    """Why a column looks like record identifiers (its header name, or distinct whole numbers counting up by one:
    a row number), else None. An identifier carries no information about the data but would become a PCA
    feature, and one with the largest spread."""
    import pandas as pd
    if header and ID_NAMES.match(name.strip()):
        return f"its header {name.strip()!r} names an identifier"
    numbers = pd.to_numeric(column.astype(str).str.strip(), errors="coerce").to_numpy(dtype=float)
    if numbers.size < ID_MIN_ROWS or not np.all(np.isfinite(numbers)) or not np.all(numbers == np.round(numbers)):
        return None
    steps = np.diff(numbers)
    if np.all(steps == 1) or np.all(steps == -1):
        return f"its {numbers.size:,} values count {'up' if steps[0] > 0 else 'down'} by one, like row numbers"
    return None


def sniff_columns(content: bytes | str, *, header: bool | None = None, max_cells: int = MAX_UPLOAD_CELLS,
                  max_bytes: int = MAX_UPLOAD_BYTES, max_columns: int = MAX_UPLOAD_COLUMNS) -> CsvColumns:
    """The columns of a CSV upload and the label column it probably has (docs/data.md, "Uploads"): the one column whose
    data cells are all text, else the last (then the first) column of whole numbers with 2 to
    :data:`LABEL_MAX_CLASSES` distinct values and fewer than half as many as rows. ``header`` None decides from the
    first row outside the text columns. Reads the file like :func:`parse_numeric_csv` (same limits and messages for an
    unreadable file) but does not check the feature cells."""
    import pandas as pd
    max_cells = check_positive_int(max_cells, "max_cells")
    max_bytes = check_positive_int(max_bytes, "max_bytes")
    max_columns = check_positive_int(max_columns, "max_columns")
    text = _to_text(content, max_bytes).rstrip()
    if not text:
        raise InputError("the file is empty; it needs at least 2 rows (samples) and 2 numeric columns", "file")
    layout = _sniff(text, max_cells, max_columns)
    frame = _read_frame(text, layout, False, max_cells)
    body = frame.iloc[1:] if frame.shape[0] > 1 else frame
    text_columns = {j for j in range(frame.shape[1]) if not pd.api.types.is_numeric_dtype(body.dtypes.iloc[j])
                    and bool(pd.to_numeric(body.iloc[:, j].astype(str).str.strip(), errors="coerce").isna().all())}
    has_header = _decide_header(layout.first_row, text_columns) if header is None else bool(header)
    data = frame.iloc[1:] if has_header else frame
    columns = tuple(c.strip() for c in layout.first_row) if has_header else tuple(
        f"x{j + 1}" for j in range(layout.n_fields))
    n_rows = int(data.shape[0])
    label, reason = None, "no column looks like labels"
    if text_columns:
        label = max(text_columns)
        reason = "its cells are text"
    else:
        for j in dict.fromkeys((layout.n_fields - 1, 0)):
            classes = _whole_number_classes(data.iloc[:, j], n_rows) if n_rows else None
            if classes is not None:
                label, reason = j, f"{classes} distinct whole numbers in {n_rows:,} rows"
                break
    found = [(j, _id_reason(columns[j], data.iloc[:, j], has_header)) for j in range(layout.n_fields) if j != label]
    found = [(j, why) for j, why in found if why is not None]
    if len(found) >= layout.n_fields - (label is not None) - 1:  # never leave fewer than two features
        found = []
    return CsvColumns(columns=columns, header=has_header, label=label, reason=reason, n_rows=n_rows,
                      ids=tuple(j for j, _ in found), id_reasons=tuple(why for _, why in found))
