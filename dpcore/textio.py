"""Reading what a user hands over: files with bounded reads, bytes as text, JSON with bounded nesting.

* :func:`read_file` reads a regular file only, at most ``max_bytes + 1`` bytes of it: a directory, a FIFO, a device
  or a socket (or a symbolic link to one) is refused by its status before it is opened, then opened without blocking
  and checked again on the open descriptor (:func:`open_regular`), so a FIFO without a writer never blocks and
  ``/dev/zero`` is never read. Every file input (command line, ledger, roster, keys, a site's data) reads through it.
* :func:`decode_text` accepts UTF-8 with or without a byte-order mark (spreadsheet programs write one) and UTF-16
  with its byte-order mark ("Unicode text" exports); anything else (Latin-1, Windows-1252, UTF-16 without a mark)
  is refused with the position of the first byte that is not UTF-8 and what to do.
* :func:`json_ready` is the other direction: a value written as JSON (numpy scalars and arrays as Python values,
  non-finite numbers as null, so any JSON reader accepts it).
* :func:`long_csv` writes the downloads' one-value-per-row CSV (section, name, field, value).
* :func:`load_json` is the one JSON reader of the project (``tools/check_layout.py`` fails on a JSON parse
  anywhere else): it refuses text longer than its bound (:data:`~dpcore.limits.MAX_JSON_BYTES` unless the caller
  names a smaller one), bytes that are not UTF-8, nesting deeper than :data:`~dpcore.limits.MAX_JSON_DEPTH` (a
  linear scan of the brackets outside strings, before the parser's recursion, so a RecursionError cannot happen),
  number literals longer than :data:`~dpcore.limits.MAX_NUMBER_CHARS` (before Python turns them into integers) and
  strings holding a lone surrogate (``"\\ud800"``: not text, and no page, terminal or file can show it).

Every failure is an :class:`~dpcore.validation.InputError` whose message says what is wrong and what is allowed.
"""

from __future__ import annotations

import codecs
import csv
import errno
import gzip
import hashlib
import io
import json
import math
import os
import re
import stat
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .limits import MAX_JSON_BYTES, MAX_JSON_DEPTH, MAX_NUMBER_CHARS, MB
from .validation import InputError

__all__ = ["LFS_POINTER_PREFIX", "LONG_CSV_HEADER", "MissingFile", "decode_text", "file_kind", "gunzip", "json_depth",
           "json_ready", "load_json", "long_csv", "open_regular", "printable", "read_data_file", "read_file",
           "seconds_text", "site_label", "size_text", "values_text"]

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


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    """What a file of status ``mode`` is, for a message: 'a directory', 'a named pipe (FIFO)', 'a character device',
    'a block device', 'a socket' (anything but a regular file)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"  # pragma: no cover - doors, ports and other kinds Linux does not have


class MissingFile(InputError):
    """The file to read does not exist (a caller for which absence means something else catches this one)."""


def _not_regular(path: Path, mode: int, what: str) -> InputError:
    return InputError(f"{what} {path} is {file_kind(mode)}, not a regular file; give a regular file", "file")


def open_regular(path: str | os.PathLike[str], what: str = "file", max_bytes: int | None = None) -> int:
    """A read-only descriptor of the regular file ``path`` (the caller closes it). Anything else is refused before
    it is opened for reading: its status (symbolic links followed) must be a regular file; it is then opened with
    ``O_NONBLOCK`` (a FIFO swapped in meanwhile cannot block the open) and its descriptor's status checked again.
    With ``max_bytes``, a file whose size is already beyond it is refused before anything is read."""
    text = os.fspath(path)
    if not str(text).strip():
        raise InputError(f"{what}: needs a file name (got an empty one)", "file")
    path = Path(text)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise MissingFile(f"cannot read {what} {path}: {os.strerror(errno.ENOENT)}", "file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        raise InputError(f"cannot read {what} {path}: {getattr(exc, 'strerror', None) or exc}", "file") from None
    if not stat.S_ISREG(mode):
        raise _not_regular(path, mode, what)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise MissingFile(f"cannot read {what} {path}: {os.strerror(errno.ENOENT)}", "file") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror or exc}", "file") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise _not_regular(path, status.st_mode, what)
        if max_bytes is not None and status.st_size > max_bytes:
            raise InputError(f"{what} {path} is larger than the limit of {size_text(max_bytes)} ({status.st_size:,} "
                             "bytes)", "file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file(path: str | os.PathLike[str], max_bytes: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path`` (:func:`open_regular`), at most ``max_bytes`` of them (an InputError
    beyond, whatever ``stat`` said: a file growing while it is read stops at ``max_bytes + 1`` bytes). A missing file
    is a :class:`MissingFile`; every other failure an InputError naming the file and the problem."""
    fd = open_regular(path, what, max_bytes)
    try:
        with os.fdopen(fd, "rb") as handle:
            parts: list[bytes] = []
            total = 0
            while total <= max_bytes:
                chunk = handle.read(min(_CHUNK, max_bytes + 1 - total))
                if not chunk:
                    break
                parts.append(chunk)
                total += len(chunk)
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


def _lone_surrogate(value: Any) -> str | None:
    """The first string (key or value) of parsed JSON that holds a lone surrogate, shown escaped; None when there is
    none. Iterative: the nesting is bounded already, and a walk needs no recursion anyway."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item[:40].encode("utf-8", "backslashreplace").decode("ascii", "replace")
    return None


def load_json(text: str | bytes | bytearray, what: str = "JSON", *, max_bytes: int = MAX_JSON_BYTES,
              max_depth: int = MAX_JSON_DEPTH, surrogates: bool = False) -> Any:
    """Parsed JSON (text, or bytes as UTF-8 or UTF-16 with a byte-order mark), refusing, before they cost anything,
    more than ``max_bytes`` (characters of text, bytes of bytes), nesting deeper than ``max_depth`` (at most
    MAX_JSON_DEPTH) and number literals longer than MAX_NUMBER_CHARS; then strings with a lone surrogate.
    ``NaN`` and ``Infinity`` (which Python writes) parse to floats; the validators refuse them where a finite number
    is needed. Every refusal is an InputError with field "json" (never a RecursionError, UnicodeError or
    OverflowError). ``surrogates=True`` returns strings with lone surrogates as they are, for a caller that refuses
    them value by value and keeps the rest (a page's settings link)."""
    max_depth = min(int(max_depth), MAX_JSON_DEPTH)
    if not isinstance(text, (str, bytes, bytearray)):
        raise InputError(f"the {what} must be JSON text (got {type(text).__name__})", "json")
    if len(text) > max_bytes:
        raise InputError(f"the {what} has {len(text):,} {'characters' if isinstance(text, str) else 'bytes'}, more "
                         f"than the {max_bytes:,} allowed", "json")
    if not isinstance(text, str):
        try:
            text = decode_text(bytes(text), what)
        except InputError as exc:
            raise InputError(str(exc), "json") from None
    depth = json_depth(text)
    if depth > max_depth:
        raise InputError(f"the {what} is nested {depth:,} levels deep; at most {max_depth} are allowed", "json")
    try:
        value = json.loads(text, parse_int=_int_literal, parse_float=_float_literal)
    except _LongNumber as exc:
        raise InputError(f"the {what} holds a number written with {len(exc.literal):,} characters; at most "
                         f"{MAX_NUMBER_CHARS} are allowed", "json") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"the {what} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
                         "json") from None
    except RecursionError:  # pragma: no cover - the depth scan refuses such text first
        raise InputError(f"the {what} is nested too deeply", "json") from None
    lone = None if surrogates else _lone_surrogate(value)
    if lone is not None:
        raise InputError(f"the {what} holds a string with a lone surrogate ({lone}), which is not text; write "
                         "characters as UTF-8", "json")
    return value


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
