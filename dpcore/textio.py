"""Reading what a user hands over: files with bounded reads, bytes as text, JSON with bounded nesting.

* :func:`read_file` reads at most ``max_bytes + 1`` bytes, whatever the file claims to be: ``st_size`` is 0 for
  ``/dev/zero``, pipes and FIFOs, so the size check is on what was read, never on what ``stat`` says.
* :func:`decode_text` accepts UTF-8 with or without a byte-order mark (spreadsheet programs write one) and UTF-16
  with its byte-order mark ("Unicode text" exports); anything else (Latin-1, Windows-1252, UTF-16 without a mark)
  is refused with the position of the first byte that is not UTF-8 and what to do.
* :func:`json_ready` is the other direction: a value written as JSON (numpy scalars and arrays as Python values,
  non-finite numbers as null, so any JSON reader accepts it).
* :func:`long_csv` writes the downloads' one-value-per-row CSV (section, name, field, value).
* :func:`load_json` refuses nesting deeper than :data:`~dpcore.limits.MAX_JSON_DEPTH` (a scan of the brackets
  outside strings, before the parser's recursion) and number literals longer than
  :data:`~dpcore.limits.MAX_NUMBER_CHARS` (before Python turns them into integers).

Every failure is an :class:`~dpcore.validation.InputError` whose message says what is wrong and what is allowed.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import hashlib
import io
import json
import math
import re
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .limits import MAX_JSON_DEPTH, MAX_NUMBER_CHARS, MB
from .validation import InputError

__all__ = ["LFS_POINTER_PREFIX", "LONG_CSV_HEADER", "decode_text", "gunzip", "json_depth", "json_ready", "load_json",
           "long_csv", "printable", "read_data_file", "read_file", "seconds_text", "site_label", "size_text",
           "values_text"]

_CHUNK = 1 << 20
# A string literal, its closing quote optional: an unterminated string then ends the scan in one match (linear
# time; with a required closing quote, each escaped quote would restart the scan: quadratic).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def site_label(name: str) -> str:
    """'site A' for a site named A; a name that already starts with 'site' ('site 1') as it is, never 'site site 1'."""
    return name if name.lower().startswith("site") else f"site {name}"


def size_text(n: int) -> str:
    """A byte count for messages in the browser's unit: '64.0 MB' (MB = 10^6 bytes, :data:`~dpcore.limits.MB`) from
    one megabyte on, else '1,000 bytes'."""
    return f"{n / MB:,.1f} MB" if n >= MB else f"{n:,} bytes"


def seconds_text(seconds: float) -> str:
    """A duration as a sentence prints it: '13.4 s', or '0.04 s' below a tenth of a second (never '0.0 s')."""
    return f"{seconds:.1f} s" if seconds >= 0.095 else f"{seconds:.2f} s"


LISTED_VALUES = 8
"""Per-site values listed one by one in a caption; more are given as their range."""


def values_text(values, number_format: str = ",") -> str:
    """Per-site values for a caption: '2,000 each' when all are equal, the list when there are at most
    LISTED_VALUES, else 'from 200 to 5,000'."""
    items = [format(v, number_format) for v in values]
    if len(set(items)) == 1:
        return f"{items[0]} each"
    if len(items) <= LISTED_VALUES:
        return ", ".join(items)
    return f"from {format(min(values), number_format)} to {format(max(values), number_format)}"


def read_file(path: str | Path, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of ``path``, at most ``max_bytes`` of them (an InputError beyond). Reads in chunks and stops one
    byte past the limit, so a device or a pipe that never ends costs at most ``max_bytes + 1`` bytes."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            parts: list[bytes] = []
            total = 0
            while total <= max_bytes:
                chunk = handle.read(min(_CHUNK, max_bytes + 1 - total))
                if not chunk:
                    break
                parts.append(chunk)
                total += len(chunk)
    except IsADirectoryError:
        raise InputError(f"{what} {path} is a directory; give a file", "file") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror or exc}", "file") from None
    if total > max_bytes:
        raise InputError(f"{what} {path} is larger than the limit of {size_text(max_bytes)}", "file")
    return b"".join(parts)


def gunzip(raw: bytes, max_bytes: int, what: str = "file") -> bytes:
    """The decompressed bytes of gzip data, at most ``max_bytes`` of them: a decompression bomb costs at most
    ``max_bytes + 1`` bytes before it is refused; a truncated or corrupt stream (an altered byte fails the CRC) is an
    InputError too."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as handle:
            out = handle.read(max_bytes + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"the {what} looks gzip-compressed but cannot be decompressed ({exc})", "file") from None
    if len(out) > max_bytes:
        raise InputError(f"the decompressed {what} is larger than the limit of {size_text(max_bytes)}", "file")
    return out


LFS_POINTER_PREFIX = b"version https://git-lfs.github.com/spec/"
"""How a Git LFS pointer file begins: what a clone without ``git lfs`` holds in place of a large file."""


def read_data_file(path: str | Path, what: str, *, max_bytes: int, max_decompressed: int, size: int | None = None,
                   sha256: str | None = None) -> bytes:
    """A file shipped with the project (bundled data, corpora, stored results), verified before use: read with a
    bound (:func:`read_file`), refused when it is a Git LFS pointer, when its size is not the ``size`` recorded
    (truncated or replaced) or its SHA-256 not the ``sha256`` recorded (an altered byte), then decompressed with a
    bound when it is gzip (:func:`gunzip`). Every refusal is an InputError saying which check failed."""
    path = Path(path)
    raw = read_file(path, max_bytes, what)
    if raw.startswith(LFS_POINTER_PREFIX):
        raise InputError(f"{what} {path.name} is a Git LFS pointer ({len(raw):,} bytes), not the data; fetch the "
                         "file (git lfs pull) or reinstall the project", "file")
    if size is not None and len(raw) != size:
        raise InputError(f"{what} {path.name} has {len(raw):,} bytes, not the {size:,} recorded (truncated or "
                         "replaced)", "file")
    if sha256 is not None and hashlib.sha256(raw).hexdigest() != sha256:
        raise InputError(f"{what} {path.name} does not have the SHA-256 recorded (its bytes were altered)", "file")
    if raw[:2] == b"\x1f\x8b":
        raw = gunzip(raw, max_decompressed, what)
    return raw


def decode_text(raw: bytes, what: str = "file") -> str:
    """``raw`` as text: UTF-8 (a leading byte-order mark is dropped) or UTF-16 with a byte-order mark."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) and not raw.startswith(codecs.BOM_UTF32_LE):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            raise InputError(f"the {what} starts like UTF-16 text but is not valid UTF-16; save it as UTF-8",
                             "file") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        encoding = "UTF-32 or binary" if raw.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)) else (
            "probably Latin-1 or Windows-1252" if raw[exc.start] >= 0x80 else "binary")
        raise InputError(
            f"the {what} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at position {exc.start:,}, line {line:,}; "
            f"{encoding}); save it as UTF-8 (with or without BOM) or UTF-16", "file") from None


def json_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings (a linear scan, no recursion)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub('""', text))
    if not brackets:
        return 0
    codes = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps).max(initial=0))


class _LongNumber(Exception):
    def __init__(self, literal: str):
        self.literal = literal


def _int_literal(literal: str) -> int:
    if len(literal) > MAX_NUMBER_CHARS:
        raise _LongNumber(literal)
    return int(literal)


def _float_literal(literal: str) -> float:
    if len(literal) > MAX_NUMBER_CHARS:
        raise _LongNumber(literal)
    return float(literal)


def load_json(text: str, what: str = "JSON") -> Any:
    """Parsed JSON text, refusing nesting deeper than MAX_JSON_DEPTH and number literals longer than
    MAX_NUMBER_CHARS before they cost anything. ``NaN`` and ``Infinity`` (which Python writes) parse to floats;
    the validators refuse them where a finite number is needed. Errors are InputError with field "json"."""
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise InputError(f"the {what} is nested {depth:,} levels deep; at most {MAX_JSON_DEPTH} are allowed", "json")
    try:
        return json.loads(text, parse_int=_int_literal, parse_float=_float_literal)
    except _LongNumber as exc:
        raise InputError(f"the {what} holds a number written with {len(exc.literal):,} characters; at most "
                         f"{MAX_NUMBER_CHARS} are allowed", "json") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"the {what} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
                         "json") from None
    except RecursionError:  # pragma: no cover - the depth scan refuses such text first
        raise InputError(f"the {what} is nested too deeply", "json") from None


def json_ready(x: Any) -> Any:
    """``x`` ready for :func:`json.dumps`: numpy scalars and arrays (anything with ``tolist``) as Python values,
    non-finite floats as None (JSON has no NaN or infinity), dict keys as strings, tuples as lists."""
    tolist = getattr(x, "tolist", None)
    if callable(tolist):  # numpy arrays and scalars (np.float64 is a float too: its NaN is caught below all the same)
        return json_ready(tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {str(k): json_ready(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_ready(v) for v in x]
    return x


LONG_CSV_HEADER = ("section", "name", "field", "value")
"""The columns of :func:`long_csv`."""


def long_csv(rows: Iterable[tuple[Any, Any, Any, Any]]) -> str:
    """The CSV of ``rows`` (section, name, field, value: the callers encode a structured value, as JSON) under
    :data:`LONG_CSV_HEADER`, lines ending in a newline: the downloads that carry the same facts as their JSON."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(LONG_CSV_HEADER)
    writer.writerows(rows)
    return buffer.getvalue()


def printable(text: object) -> str:
    """``text`` with terminal control characters (escape sequences, carriage returns, bells) shown as ``\\x1b``
    and so on; newlines and tabs are kept."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))
