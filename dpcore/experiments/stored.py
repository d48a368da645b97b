"""Stored full-size results of the sweep presets (docs/experiments.md, "Stored results").

``tools/precompute_presets.py`` runs every preset at the paper's size with ``python -m dpcore sweep --preset NAME``
and keeps the tidy table gzipped in ``presets/NAME.csv.gz`` among the shipped files (package data of
:mod:`dpcore.data`, ``dpcore/data/files/`` in the repository) with a manifest (``presets/manifest.json``:
command, seed, runs, spec, dpcore version, git commit, machine note, seconds, rows, the table's SHA-256, the
sweep's notes). :func:`stored_result` reads one back as a :class:`~dpcore.experiments.results.SweepResult`
without computing anything but the summary (mean and 95% interval per point) and the gains (designs only, no
data), so a page can show a full figure at once.

A stored table is used only after it is verified (:func:`stored_status` says why not, and the page falls back to a
live run): the manifest is read with a bound and must be well formed; the preset's record must have every field
with its type; its spec must be the preset's current spec; the file must be a regular file of exactly the recorded
size, not a Git LFS pointer, with the recorded SHA-256; it is decompressed with a bound (the recorded size, at most
:data:`~dpcore.limits.MAX_SHIPPED_TEXT_BYTES`: no gzip bomb) to exactly the recorded table bytes and SHA-256, and
the table must have the spec's rows. The checks are :func:`dpcore.textio.read_data_file`'s, the same the bundled
data sets and corpora pass.

:func:`estimate_seconds` turns a stored preset's seconds into an estimate for a live run of a similar sweep.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import pandas as pd

from ..data.shipped import data_dirs, read_item
from ..limits import MAX_SHIPPED_FILE_BYTES, MAX_SHIPPED_TEXT_BYTES
from ..textio import decode_text, load_json
from ..validation import InputError
from .designs import sweep_gains
from .presets import get_preset, preset_names
from .results import TABLE_COLUMNS, SweepResult, summarise_table, to_table
from .spec import SweepSpec

__all__ = ["FIRST_FIGURE", "MANIFEST_NAME", "STORED_FOLDER", "StoredResult", "clear_stored", "estimate_seconds",
           "run_seconds", "stored_dir",
           "stored_entry", "stored_file_name", "stored_names", "stored_result", "stored_status"]

STORED_FOLDER = "presets"
"""Where the stored results live among the shipped files (:func:`dpcore.data.shipped.data_dirs`):
``dpcore/data/files/presets/`` in the repository, the same folder of the package data in an installed dpcore."""
MANIFEST_NAME = "manifest.json"
FIRST_FIGURE = "fig3-mog-d10-eps"
"""The figure the Privacy-utility page opens on: MOG, D = 10, K = 5 over eps, where capeAGN closes about two
thirds of the conventional scheme's gap to the non-private result at eps = 1 (stored full-size result)."""


def stored_file_name(name: str) -> str:
    """The file of preset ``name``'s tidy table: ``NAME.csv.gz``."""
    return f"{name}.csv.gz"


def stored_dir() -> Traversable | None:
    """The first folder of shipped files with a ``presets/manifest.json``: its ``presets`` folder, or None."""
    for directory in data_dirs():
        if directory.joinpath(STORED_FOLDER, MANIFEST_NAME).is_file():
            return directory.joinpath(STORED_FOLDER)
    return None


_HEX64 = re.compile(r"[0-9a-f]{64}")
_ENTRY_FIELDS: dict[str, tuple[type, ...]] = {
    "file": (str,), "file_bytes": (int,), "file_sha256": (str,), "table_bytes": (int,), "table_sha256": (str,),
    "rows": (int,), "spec": (dict,), "complete": (bool,), "seconds": (int, float), "workers": (int,), "runs": (int,),
    "command": (str,), "seed": (int,), "dpcore_version": (str,), "git_commit": (str,), "made": (str,),
    "machine": (str,), "notes": (list,),
}
"""Every field of a stored preset's record that dpcore reads, with its JSON type."""


@lru_cache(maxsize=1)
def _manifest() -> tuple[dict[str, Any], str | None]:
    """The manifest, and None; or an empty manifest and why the file is not usable (every preset is then
    unavailable with that reason)."""
    empty: dict[str, Any] = {"presets": {}, "missing": {}}
    directory = stored_dir()
    if directory is None:
        return empty, None
    try:
        raw = read_item(directory.joinpath(MANIFEST_NAME), "the manifest")
        data = load_json(decode_text(raw, "manifest"), "manifest")
    except InputError as exc:
        return empty, f"the manifest {STORED_FOLDER}/{MANIFEST_NAME} cannot be read: {exc}"
    if not isinstance(data, dict) or not isinstance(data.get("presets"), dict) or not isinstance(
            data.get("missing", {}), dict):
        return empty, f"the manifest {STORED_FOLDER}/{MANIFEST_NAME} is not an object with 'presets' and 'missing'"
    return {"presets": data["presets"], "missing": data.get("missing", {})}, None


def _entry_problem(entry: Any) -> str | None:
    """Why a preset's record cannot be used (a field missing or of the wrong type, a file name with a folder in it,
    a size out of range, a digest that is not 64 hex digits), or None."""
    if not isinstance(entry, dict):
        return "it is not an object"
    for key, kinds in _ENTRY_FIELDS.items():
        value = entry.get(key)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            return f"its field {key!r} is missing or not a {' or '.join(k.__name__ for k in kinds)}"
    name = entry["file"]
    if name != Path(name).name or name.startswith(".") or not name.endswith(".csv.gz"):
        return f"its file {name!r} is not a .csv.gz file name in {STORED_FOLDER}"
    if not 0 < entry["file_bytes"] <= MAX_SHIPPED_FILE_BYTES or not 0 < entry["table_bytes"] <= MAX_SHIPPED_TEXT_BYTES:
        return "its recorded sizes are out of range"
    if not (_HEX64.fullmatch(entry["file_sha256"]) and _HEX64.fullmatch(entry["table_sha256"])):
        return "its recorded SHA-256 digests are not 64 hexadecimal digits"
    if not (math.isfinite(entry["seconds"]) and entry["seconds"] >= 0 and entry["workers"] >= 1
            and entry["runs"] >= 1 and all(isinstance(n, str) for n in entry["notes"])):
        return "its seconds, workers, runs or notes are not valid"
    return None


def stored_entry(name: str) -> dict[str, Any] | None:
    """The manifest's record of preset ``name`` (command, seed, runs, version, commit, machine, seconds, ...), or
    None when there is none or it is not usable (:func:`stored_status` says why)."""
    entry = _manifest()[0]["presets"].get(name)
    return entry if _entry_problem(entry) is None else None


def stored_names() -> list[str]:
    """Presets with a usable stored result, in the paper's order."""
    return [n for n in preset_names(available_only=True) if stored_status(n) is None]


@lru_cache(maxsize=64)
def _verified_table(name: str) -> tuple[pd.DataFrame | None, str | None]:
    """The stored table of preset ``name`` read, verified (module docstring) and parsed, or why not. Read once per
    process (:func:`clear_stored` forgets it)."""
    entry = stored_entry(name)
    spec: SweepSpec = get_preset(name).spec
    try:
        text = read_item(stored_dir().joinpath(entry["file"]), "the stored table",
                         max_decompressed=min(entry["table_bytes"], MAX_SHIPPED_TEXT_BYTES), size=entry["file_bytes"],
                         sha256=entry["file_sha256"])
    except InputError as exc:
        return None, str(exc)
    if len(text) != entry["table_bytes"] or hashlib.sha256(text).hexdigest() != entry["table_sha256"]:
        return None, f"{entry['file']} does not decompress to the table recorded in the manifest"
    try:
        table = to_table(spec, pd.read_csv(io.BytesIO(text), keep_default_na=False, na_values=[""]))
    except (ValueError, KeyError, TypeError) as exc:  # pandas' ParserError is a ValueError
        return None, f"{entry['file']} is not a table of this sweep ({type(exc).__name__}: {str(exc)[:120]})"
    expected_rows = len(spec.grid) * len(spec.algorithms) * spec.runs * len(spec.metrics)
    if list(table.columns) != list(TABLE_COLUMNS) or len(table) != entry["rows"] or (
            entry["complete"] and len(table) != expected_rows):
        return None, f"{entry['file']} does not have the columns and rows of this sweep"
    return table, None


def stored_status(name: str) -> str | None:
    """None when preset ``name`` has a usable stored result, else why not (in words): no result stored, a manifest
    or record that cannot be read, a preset changed since, a file missing, truncated, altered, a Git LFS pointer
    or a gzip bomb."""
    manifest, problem = _manifest()
    if problem is not None:
        return problem
    missing = manifest["missing"].get(name)
    raw_entry = manifest["presets"].get(name)
    if raw_entry is None:
        if isinstance(missing, dict) and isinstance(missing.get("reason"), str):
            return missing["reason"]
        return "no stored result (run tools/precompute_presets.py)"
    problem = _entry_problem(raw_entry)
    if problem is not None:
        return f"the manifest's record of {name} cannot be used: {problem}"
    preset = get_preset(name)
    if preset.spec is None or raw_entry["spec"] != preset.spec.to_dict():
        return "the stored result was made with other settings than the preset has now (rerun the generation)"
    if not stored_dir().joinpath(raw_entry["file"]).is_file():
        return f"the file {raw_entry['file']} is missing"
    return _verified_table(name)[1]


@dataclass(frozen=True, eq=False, kw_only=True)
class StoredResult:
    """A stored preset result and what produced it (``entry``: the manifest record)."""

    name: str
    result: SweepResult
    entry: dict[str, Any]

    def provenance(self) -> str:
        """One sentence: the command, seed, runs, version, commit, machine and seconds that produced it."""
        e = self.entry
        commit = e.get("git_commit", "")[:10] or "unknown"
        return (f"`{e['command']}` (seed {e['seed']}, {e['runs']} runs, dpcore {e['dpcore_version']}, commit "
                f"{commit}, made {e['made']}) took {_duration(e['seconds'])} on {e['machine']}")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


@lru_cache(maxsize=64)
def _load(name: str) -> StoredResult:
    """The verified stored table of ``name`` with its summary and gains (call after :func:`stored_status` is None)."""
    entry = stored_entry(name)
    table = _verified_table(name)[0]
    spec: SweepSpec = get_preset(name).spec
    result = SweepResult(spec=spec, table=table, summary=summarise_table(spec, table), gains=sweep_gains(spec),
                         notes=tuple(entry["notes"]), complete=entry["complete"],
                         runs_done=int(table["run"].nunique()), seconds=float(entry["seconds"]),
                         extra={"stored": name})
    return StoredResult(name=name, result=result, entry=entry)


def stored_result(name: str) -> StoredResult | None:
    """The stored full-size result of preset ``name`` (read once per process), or None (:func:`stored_status`
    says why)."""
    if stored_status(name) is not None:
        return None
    return _load(name)


def run_seconds(entry: dict[str, Any]) -> float:
    """Wall seconds of one run of the stored preset on one core: its seconds times its workers over its runs
    (runs are the unit of work handed to the workers)."""
    return float(entry["seconds"]) * min(int(entry["workers"]), int(entry["runs"])) / int(entry["runs"])


def estimate_seconds(spec: SweepSpec, workers: int) -> tuple[float, str] | None:
    """An estimate of the wall seconds of ``spec`` with ``workers`` processes, and what it rests on, from a stored
    preset of the same family, data and parameter: one run's seconds (:func:`run_seconds`) scaled by the number
    of (algorithm, grid point) steps per run and multiplied by the rounds of runs, ceil(R / W). None when no
    stored preset is comparable (then the page times the first run instead)."""
    for name in preset_names(available_only=True):
        entry = stored_entry(name)
        preset = get_preset(name)
        if entry is None or preset.spec is None:
            continue
        base = preset.spec
        try:
            like = base.replace(runs=spec.runs, grid=spec.grid, algorithms=spec.algorithms, seed=spec.seed)
        except InputError:  # a grid the preset's scenario cannot take: not comparable
            continue
        if like.to_dict() != spec.to_dict():
            continue
        steps = len(spec.grid) * len(spec.algorithms) / (len(base.grid) * len(base.algorithms))
        rounds = math.ceil(spec.runs / max(1, min(workers, spec.runs)))
        seconds = run_seconds(entry) * steps * rounds
        return seconds, (f"the stored full-size run of `{name}` ({_duration(float(entry['seconds']))} for "
                         f"{entry['runs']} runs with {entry['workers']} workers), scaled to {spec.runs} runs, "
                         f"{len(spec.grid)} values and {len(spec.algorithms)} algorithms with {workers} worker(s)")
    return None


def clear_stored() -> None:
    """Forget the manifest and the tables read (tests, or after the generation wrote new files)."""
    _manifest.cache_clear()
    _verified_table.cache_clear()
    _load.cache_clear()
