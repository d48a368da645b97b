"""Scenario <-> JSON text and files, editable table, URL query and uploaded file, with every problem reported per cell
(the JSON format: docs/cli.md).

The dashboard's Sites page edits the sites as a table (one row per site, columns :data:`SITE_COLUMNS`)
and shares the scenario through a link. This module does the conversions and keeps them testable:

* :func:`scenario_to_rows` / :func:`scenario_from_rows` - table rows (dicts) <-> :class:`Scenario`.
  Blank cells (None, NaN, empty text) count as missing; a blank weight column means mu_s = N_s / N.
  :func:`scenario_from_rows` returns ``(errors, scenario)`` so a page can show every problem at once
  and keep the last valid scenario; :func:`cell_errors` maps the errors to ``(row, column)`` cells.
* :func:`scenario_to_query` / :func:`scenario_from_query` - the value of the ``?scenario=`` URL
  parameter: ``"1."`` followed by the base64url text of the zlib-compressed compact JSON. Plain JSON
  (starting with ``{``) is accepted too, for hand-written links.
* :func:`scenario_from_bytes` - an uploaded JSON file; :func:`scenario_from_json`, :func:`load_scenario` - JSON
  text and a file on disk (the command line's ``--scenario``).

Every failure raises or returns :class:`~dpcore.scenario.model.ScenarioError` / FieldError entries whose
message says what is wrong and what is allowed.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..limits import MAX_LINK_JSON_CHARS, MAX_QUERY_CHARS, MAX_SCENARIO_FILE_BYTES
from ..textio import decode_text, load_json, read_file
from ..validation import InputError, shown
from .model import SITE_FIELDS, FieldError, Scenario, ScenarioError, scenario_errors, scenario_from_dict

__all__ = [
    "QUERY_KEY",
    "QUERY_VERSION",
    "SITE_COLUMNS",
    "cell_errors",
    "load_scenario",
    "rows_to_dict",
    "scenario_from_bytes",
    "scenario_from_json",
    "scenario_from_query",
    "scenario_from_rows",
    "scenario_to_query",
    "scenario_to_rows",
    "settings_of",
]

SITE_COLUMNS = SITE_FIELDS
"""The columns of the sites table: a site's fields (:data:`dpcore.scenario.model.SITE_FIELDS`), in order."""
QUERY_KEY = "scenario"
QUERY_VERSION = "1."
_NOT_BASE64URL = re.compile(r"[^A-Za-z0-9_-]")


# ----------------------------------------------------------------------------------------------
# JSON text and files
# ----------------------------------------------------------------------------------------------

def _json_error(exc: InputError, field: str = "json") -> ScenarioError:
    return ScenarioError([FieldError(field, str(exc))])


def scenario_from_json(text: str) -> Scenario:
    """Validated Scenario from JSON text (nesting and number literals bounded before parsing,
    :func:`dpcore.textio.load_json`)."""
    try:
        data = load_json(text, "scenario")
    except InputError as exc:
        raise _json_error(exc) from None
    return scenario_from_dict(data)


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario JSON file: at most MAX_SCENARIO_FILE_BYTES are read (devices and pipes too),
    UTF-8 with or without a byte-order mark, or UTF-16 with one."""
    raw = read_file(path, MAX_SCENARIO_FILE_BYTES, "scenario file")
    try:
        text = decode_text(raw, "scenario file")
    except InputError as exc:
        raise InputError(f"{path}: {exc}", "file") from None
    return scenario_from_json(text)


# ----------------------------------------------------------------------------------------------
# Table
# ----------------------------------------------------------------------------------------------

def scenario_to_rows(scenario: Scenario) -> list[dict[str, Any]]:
    """One dict per site with keys :data:`SITE_COLUMNS`; ``weight`` is None when the scenario omits weights."""
    return [
        {"name": s.name, "n": int(s.n), "eps": float(s.eps), "delta": float(s.delta),
         "weight": None if s.weight is None else float(s.weight)}
        for s in scenario.sites
    ]


def settings_of(scenario: Scenario) -> dict[str, Any]:
    """The scenario-level fields (everything but the sites)."""
    return {"neighbouring": scenario.neighbouring, "calibration": scenario.calibration,
            "tau_c": scenario.tau_c, "seed": scenario.seed}


def _is_blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip() == ""
    try:
        return bool(value != value)  # NaN
    except (TypeError, ValueError):  # pandas.NA and friends refuse comparison
        return True


def _plain(value: Any) -> Any:
    """A JSON-friendly Python value: numpy scalars to int/float, integral floats stay floats."""
    if isinstance(value, bool) or isinstance(value, str):
        return value
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item):
        value = item()
    return value


def rows_to_dict(
    rows: Iterable[Mapping[str, Any]], *, neighbouring: Any = "replace-one", calibration: Any = "classic",
    tau_c: Any = None, seed: Any = 0,
) -> dict[str, Any]:
    """The scenario dict (JSON format of :mod:`dpcore.scenario.model`) for table rows and settings.

    Blank cells become missing fields (so validation says "is missing"); a blank ``weight`` is
    omitted; whole numbers of samples given as floats (``1000.0``) become integers; a blank ``tau_c``
    means the DP floor.
    """
    sites = []
    for row in rows:
        entry: dict[str, Any] = {}
        for column in SITE_COLUMNS:
            value = row.get(column)
            if _is_blank(value):
                if column == "name":
                    entry["name"] = ""
                elif column != "weight":
                    entry[column] = None
                continue
            value = _plain(value)
            if column == "name":
                value = str(value).strip()
            elif column == "n" and isinstance(value, float) and math.isfinite(value) and value == int(value):
                value = int(value)
            entry[column] = value
        # missing required numbers are reported by scenario_errors as "is missing"
        sites.append({k: v for k, v in entry.items() if v is not None})
    return {
        "sites": sites,
        "neighbouring": neighbouring,
        "calibration": calibration,
        "tau_c": None if _is_blank(tau_c) else _plain(tau_c),
        "seed": 0 if _is_blank(seed) else _plain(seed),
    }


def scenario_from_rows(
    rows: Iterable[Mapping[str, Any]], **settings: Any
) -> tuple[list[FieldError], Scenario | None]:
    """``(errors, scenario)`` for table rows plus the settings of :func:`rows_to_dict`; the scenario
    is None when there is any error."""
    return scenario_errors(rows_to_dict(rows, **settings))


def cell_errors(errors: Iterable[FieldError], n_rows: int) -> dict[tuple[int | None, str], list[str]]:
    """Messages per table cell: ``(row, column)`` for site fields, ``(None, field)`` for scenario fields.

    "weights must sum to 1" marks every weight cell; a malformed site marks its name cell."""
    cells: dict[tuple[int | None, str], list[str]] = {}
    for err in errors:
        if err.site is not None:
            column = err.field if err.field in SITE_COLUMNS else "name"
            cells.setdefault((err.site, column), []).append(err.message)
        elif err.field == "weights":
            for row in range(n_rows):
                cells.setdefault((row, "weight"), []).append(err.message)
        else:
            cells.setdefault((None, err.field), []).append(err.message)
    return cells


# ----------------------------------------------------------------------------------------------
# URL query and file
# ----------------------------------------------------------------------------------------------

def scenario_to_query(scenario: Scenario) -> str:
    """The ``?scenario=`` value: ``"1."`` + base64url(zlib(compact JSON)), without padding."""
    text = json.dumps(scenario.to_dict(), separators=(",", ":"))
    packed = zlib.compress(text.encode("utf-8"), 9)
    return QUERY_VERSION + base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def _link_error(message: str) -> ScenarioError:
    return ScenarioError([FieldError("link", message)])


def scenario_from_query(value: Any) -> Scenario:
    """The scenario in a ``?scenario=`` value (see :func:`scenario_to_query`); raises ScenarioError."""
    if isinstance(value, list):  # a repeated parameter: the last one wins, as in the browser
        value = value[-1] if value else ""
    if not isinstance(value, str) or not value.strip():
        raise _link_error("holds no scenario (the ?scenario= parameter is empty)")
    text = value.strip()
    if len(text) > MAX_QUERY_CHARS:
        raise _link_error(f"is too long ({len(text):,} characters; at most {MAX_QUERY_CHARS:,})")
    if text.startswith("{"):
        return scenario_from_json(text)
    if not text.startswith(QUERY_VERSION):
        raise _link_error(
            f"is not a scenario link: the value must start with {QUERY_VERSION!r} (as the Sites page writes it) "
            "or be JSON starting with '{'"
        )
    body = text[len(QUERY_VERSION):].rstrip("=")  # padding, if a tool added it, is not needed
    if not body:
        raise _link_error("holds no scenario after '1.'; copy the whole link again")
    wrong = _NOT_BASE64URL.search(body)
    if wrong is not None:
        where = wrong.start() + len(QUERY_VERSION) + 1
        raise _link_error(f"is damaged: the text after '1.' is not base64url ({shown(wrong.group())} at character "
                          f"{where} is none of A-Z, a-z, 0-9, '-', '_'); copy the whole link again")
    try:
        packed = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        raise _link_error("is damaged: the text after '1.' is not valid base64url (its length is impossible); "
                          "copy the whole link again") from None
    decomp = zlib.decompressobj()
    try:
        raw = decomp.decompress(packed, MAX_LINK_JSON_CHARS)
    except zlib.error:
        raise _link_error(
            "is damaged: its data cannot be decompressed (it is base64url but not a compressed scenario); copy the "
            "whole link again"
        ) from None
    if decomp.unconsumed_tail:
        raise _link_error(f"holds more than {MAX_LINK_JSON_CHARS:,} characters of JSON")
    if not decomp.eof:
        raise _link_error("is cut short (its compressed data ends early); copy the whole link again")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _link_error("is damaged (its data is not UTF-8 text)") from None
    return scenario_from_json(text)


def scenario_from_bytes(data: bytes) -> Scenario:
    """A scenario from the bytes of an uploaded JSON file (UTF-8 with or without a byte-order mark, or UTF-16
    with one); raises ScenarioError."""
    if len(data) > MAX_SCENARIO_FILE_BYTES:
        raise ScenarioError([FieldError("file", f"is too large ({len(data):,} bytes; at most "
                                                f"{MAX_SCENARIO_FILE_BYTES:,})")])
    try:
        text = decode_text(bytes(data), "scenario file")
    except InputError as exc:
        raise _json_error(exc, "file") from None
    return scenario_from_json(text)
