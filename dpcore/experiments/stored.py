"""Stored full-size results of the sweep presets (docs/experiments.md, "Stored results").

``tools/precompute_presets.py`` runs every preset at the paper's size with ``python -m dpcore sweep --preset NAME``
and keeps the tidy table gzipped in ``data/presets/NAME.csv.gz`` with a manifest (``data/presets/manifest.json``:
command, seed, runs, spec, dpcore version, git commit, machine note, seconds, rows, the table's SHA-256).
"""

from __future__ import annotations

__all__ = ["MANIFEST_NAME", "STORED_DIR", "stored_file_name"]

STORED_DIR = "data/presets"
"""Where the stored results live, relative to the repository root (and under ``share/dpcore`` when installed)."""
MANIFEST_NAME = "manifest.json"


def stored_file_name(name: str) -> str:
    """The file of preset ``name``'s tidy table: ``NAME.csv.gz``."""
    return f"{name}.csv.gz"
