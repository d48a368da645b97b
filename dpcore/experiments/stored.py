"""Stored full-size results of the sweep presets (docs/experiments.md, "Stored results").

``tools/precompute_presets.py`` runs every preset at the paper's size with ``python -m dpcore sweep --preset NAME``
and keeps the tidy table gzipped in ``data/presets/NAME.csv.gz`` with a manifest (``data/presets/manifest.json``:
command, seed, runs, spec, dpcore version, git commit, machine note, seconds, rows, the table's SHA-256, the
sweep's notes). :func:`stored_result` reads one back as a :class:`~dpcore.experiments.results.SweepResult`
without computing anything but the summary (mean and 95% interval per point) and the gains (designs only, no
data), so a page can show a full figure at once.

A stored table is used only when its spec is the preset's current spec and its bytes have the recorded SHA-256;
otherwise :func:`stored_result` returns None and :func:`stored_status` says why (a preset changed since the
results were made, a file is missing or altered).

:func:`estimate_seconds` turns a stored preset's seconds into an estimate for a live run of a similar sweep.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from ..data.bundled import data_dirs
from ..validation import InputError
from .designs import sweep_gains
from .presets import get_preset, preset_names
from .results import SweepResult, summarise_table, to_table
from .spec import SweepSpec

__all__ = ["FIRST_FIGURE", "MANIFEST_NAME", "STORED_DIR", "StoredResult", "estimate_seconds", "run_seconds",
           "stored_dir", "stored_entry", "stored_file_name", "stored_result", "stored_status"]

STORED_DIR = "data/presets"
"""Where the stored results live, relative to the repository root (``presets`` under each data directory of
:func:`dpcore.data.bundled.data_dirs`, so an installed copy finds them in ``share/dpcore/data/presets``)."""
MANIFEST_NAME = "manifest.json"
FIRST_FIGURE = "fig3-mog-d10-eps"
"""The figure the Privacy-utility page opens on: MOG, D = 10, K = 5 over eps, where capeAGN closes about two
thirds of the conventional scheme's gap to the non-private result at eps = 1 (stored full-size result)."""


def stored_file_name(name: str) -> str:
    """The file of preset ``name``'s tidy table: ``NAME.csv.gz``."""
    return f"{name}.csv.gz"


def stored_dir() -> Path | None:
    """The first data directory with a ``presets/manifest.json``, or None."""
    for directory in data_dirs():
        if (directory / "presets" / MANIFEST_NAME).is_file():
            return directory / "presets"
    return None


@lru_cache(maxsize=1)
def _manifest() -> dict[str, Any]:
    directory = stored_dir()
    if directory is None:
        return {"presets": {}, "missing": {}}
    return json.loads((directory / MANIFEST_NAME).read_text(encoding="utf-8"))


def stored_entry(name: str) -> dict[str, Any] | None:
    """The manifest's record of preset ``name`` (command, seed, runs, version, commit, machine, seconds, ...)."""
    return _manifest()["presets"].get(name)


def stored_status(name: str) -> str | None:
    """None when preset ``name`` has a usable stored result, else why not (in words)."""
    missing = _manifest()["missing"].get(name)
    entry = stored_entry(name)
    if entry is None:
        return missing["reason"] if missing else "no stored result (run tools/precompute_presets.py)"
    preset = get_preset(name)
    if preset.spec is None or entry["spec"] != preset.spec.to_dict():
        return "the stored result was made with other settings than the preset has now (rerun the generation)"
    directory = stored_dir()
    if directory is None or not (directory / entry["file"]).is_file():
        return f"the file {entry['file']} is missing"
    return None


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
    entry = stored_entry(name)
    raw = (stored_dir() / entry["file"]).read_bytes()
    text = gzip.decompress(raw)
    if hashlib.sha256(text).hexdigest() != entry["table_sha256"]:
        raise ValueError(f"{entry['file']} does not have the SHA-256 recorded in the manifest")
    spec: SweepSpec = get_preset(name).spec
    table = to_table(spec, pd.read_csv(io.BytesIO(text), keep_default_na=False, na_values=[""]))
    result = SweepResult(spec=spec, table=table, summary=summarise_table(spec, table), gains=sweep_gains(spec),
                         notes=tuple(entry.get("notes", ())), complete=bool(entry["complete"]),
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


