"""Run the sweep presets at full paper size with the project's own sweep command and store the results in
dpcore/data/files/presets/, package data of dpcore.data (docs/experiments.md, "Stored results").

For every preset (default: every available one, in the paper's order) this runs::

    python -m dpcore sweep --preset NAME --out <tmp>.csv --workers W --json

with one BLAS thread per process (as ``make run`` and ``make test`` set, so the table is the same byte for byte
for any number of workers), gzips the tidy table into ``presets/NAME.csv.gz`` (gzip header without a
time stamp, so the same table gives the same bytes) and records in ``presets/manifest.json``: the command,
the seed, the runs, the spec, the dpcore version, the git commit and whether the work tree had changes, a
machine note, the wall seconds and the sweep's own seconds, the number of rows and the table's SHA-256.

The manifest is written after every preset, so an interrupted generation keeps what it finished; presets already
stored with the same spec are skipped unless ``--force``. ``--max-seconds`` stops a preset that runs longer
(it is then recorded under ``"missing"`` with the reason and the seconds it ran, never stored shrunk).

Run (from the repository root; it is slow: see the manifest's seconds)::

    nice python tools/precompute_presets.py [--workers 2] [--max-seconds 1500] [--force] [NAME ...]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpcore import __version__  # noqa: E402
from dpcore.data import FILES_FOLDER  # noqa: E402
from dpcore.experiments import get_preset, preset_names  # noqa: E402
from dpcore.experiments.stored import MANIFEST_NAME, STORED_FOLDER, stored_file_name  # noqa: E402
from dpcore.outfiles import write_atomic  # noqa: E402

BLAS_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def _code_clean(out_dir: Path) -> bool:
    """Whether the work tree has no changes to tracked files outside ``out_dir`` (the stored results and the
    manifest this tool writes itself, which a regeneration changes before it asks)."""
    inside = out_dir.resolve().relative_to(ROOT) if out_dir.resolve().is_relative_to(ROOT) else None
    excluded = [f":(exclude){inside.as_posix()}"] if inside is not None else []
    return _git("status", "--porcelain", "--untracked-files=no", "--", ".", *excluded) == ""


def machine_note(workers: int) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.machine()} {platform.processor() or platform.system()}, {os.cpu_count()} CPUs, Python "
            f"{platform.python_version()}, {workers} worker process(es) with one BLAS thread each, run with nice; "
            f"load average {load:.1f} at the start (the machine was shared with other jobs, so the seconds are "
            "an upper estimate)")


def _load_manifest(path: Path) -> dict:
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    return {"about": "Full-size results of the sweep presets (docs/experiments.md, 'Stored results'); "
                     "made by tools/precompute_presets.py", "presets": {}, "missing": {}}


def _write_manifest(path: Path, manifest: dict) -> None:
    manifest["presets"] = dict(sorted(manifest["presets"].items(), key=lambda kv: _order(kv[0])))
    manifest["missing"] = dict(sorted(manifest["missing"].items(), key=lambda kv: _order(kv[0])))
    write_atomic(path, json.dumps(manifest, indent=1, sort_keys=False) + "\n", "manifest")


def _order(name: str) -> int:
    names = preset_names()
    return names.index(name) if name in names else len(names)


def run_preset(name: str, out_dir: Path, workers: int, max_seconds: float) -> tuple[dict | None, str | None]:
    """Run one preset with the sweep command; (manifest entry, None) or (None, why it is missing)."""
    preset = get_preset(name)
    command = [sys.executable, "-m", "dpcore", "sweep", "--preset", name, "--out", "TABLE.csv", "--workers",
               str(workers), "--json"]
    env = {**os.environ, **BLAS_ONE_THREAD}
    with tempfile.TemporaryDirectory() as tmp:
        table_path = Path(tmp) / f"{name}.csv"
        argv = [a if a != "TABLE.csv" else str(table_path) for a in command]
        start = time.perf_counter()
        try:
            done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=max_seconds)
        except subprocess.TimeoutExpired:
            return None, (f"not stored: the full preset ran longer than {max_seconds:.0f} s with {workers} workers "
                          "on this machine and was stopped")
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            return None, f"the sweep command failed: {done.stderr.strip()[-400:]}"
        info = json.loads(done.stdout)
        text = table_path.read_bytes()
    target = out_dir / stored_file_name(name)
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0, compresslevel=9) as gz:
        gz.write(text)
    write_atomic(target, packed.getvalue(), "stored table")
    shown = ["python", "-m", "dpcore", "sweep", "--preset", name, "--out", f"{name}.csv", "--workers", str(workers)]
    return {
        "file": target.name,
        "figure": preset.figure,
        "title": preset.title,
        "command": " ".join(shown),
        "seed": preset.spec.seed,
        "runs": preset.spec.runs,
        "complete": bool(info["complete"]),
        "spec": preset.spec.to_dict(),
        "dpcore_version": __version__,
        "git_commit": _git("rev-parse", "HEAD"),
        "work_tree_clean": _code_clean(out_dir),
        "machine": machine_note(workers),
        "workers": workers,
        "seconds": round(seconds, 1),
        "sweep_seconds": round(float(info["seconds"]), 1),
        "rows": text.count(b"\n") - 1,
        "notes": list(info["notes"]),
        **file_digests(target.read_bytes(), text),
        "made": time.strftime("%Y-%m-%d", time.gmtime()),
    }, None


def file_digests(packed: bytes, text: bytes) -> dict:
    """What dpcore.experiments.stored verifies before it uses a stored table: the gzip file's size and SHA-256, the
    table's size and SHA-256."""
    return {"file_bytes": len(packed), "file_sha256": hashlib.sha256(packed).hexdigest(),
            "table_bytes": len(text), "table_sha256": hashlib.sha256(text).hexdigest()}


def sweep_notes(name: str) -> list[str]:
    """The notes a sweep of preset ``name`` carries (its plan's and its algorithms'; what ``--json`` prints)."""
    from dpcore.experiments.prepare import algorithm_notes, sweep_plan

    spec = get_preset(name).spec
    return list(dict.fromkeys(sweep_plan(spec).notes + algorithm_notes(spec)))


def markdown_table(out_dir: Path) -> str:
    """The stored presets as a Markdown table: name, figure, seconds, workers, rows and bytes; then the missing."""
    manifest = _load_manifest(out_dir / MANIFEST_NAME)
    lines = ["| preset | figure | seconds (full size) | workers | rows | bytes |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name in preset_names(available_only=True):
        entry = manifest["presets"].get(name)
        if entry is not None:
            size = (out_dir / entry["file"]).stat().st_size
            lines.append(f"| `{name}` | {entry['figure']} | {entry['seconds']:.1f} | {entry['workers']} | "
                         f"{entry['rows']} | {size:,} |")
        elif name in manifest["missing"]:
            lines.append(f"| `{name}` | {get_preset(name).figure} | not stored: {manifest['missing'][name]['reason']} "
                         "| | | |")
        else:
            lines.append(f"| `{name}` | {get_preset(name).figure} | not run yet | | | |")
    total = sum(f.stat().st_size for f in out_dir.iterdir() if f.is_file())
    return "\n".join(lines) + f"\n\nTotal size of {out_dir.name}/: {total:,} bytes."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="presets to run (default: every available one)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--max-seconds", type=float, default=1500.0, help="stop a preset after this long "
                        "(default 1500) and record it as missing")
    parser.add_argument("--force", action="store_true", help="run presets that are already stored")
    parser.add_argument("--notes-only", action="store_true", help="only add the sweep's notes to stored entries "
                        "that lack them (prepares the data, runs nothing)")
    parser.add_argument("--digests", action="store_true", help="only record the sizes and SHA-256 of the stored "
                        "files in entries that lack them (after checking each table against its recorded SHA-256)")
    parser.add_argument("--table", action="store_true", help="print the stored presets as a Markdown table and exit")
    parser.add_argument("--out-dir", default=str(ROOT / "dpcore" / "data" / FILES_FOLDER / STORED_FOLDER),
                        help="where to store (default dpcore/data/files/presets)")
    args = parser.parse_args(argv)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / MANIFEST_NAME
    names = args.names or preset_names(available_only=True)
    if args.table:
        print(markdown_table(out_dir))
        return 0
    if args.digests:
        manifest = _load_manifest(manifest_path)
        for name, entry in manifest["presets"].items():
            packed = (out_dir / entry["file"]).read_bytes()
            text = gzip.decompress(packed)
            if hashlib.sha256(text).hexdigest() != entry["table_sha256"]:
                raise SystemExit(f"{name}: {entry['file']} does not hold the table recorded; rerun it with --force")
            entry.update(file_digests(packed, text))
        _write_manifest(manifest_path, manifest)
        return 0
    if args.notes_only:
        manifest = _load_manifest(manifest_path)
        for name, entry in manifest["presets"].items():
            if "notes" not in entry and name in names:
                entry["notes"] = sweep_notes(name)
        _write_manifest(manifest_path, manifest)
        return 0
    for name in names:
        preset = get_preset(name)
        if not preset.available:
            print(f"{name}: unavailable ({preset.unavailable})", flush=True)
            continue
        manifest = _load_manifest(manifest_path)
        stored = manifest["presets"].get(name)
        if stored and stored["spec"] == preset.spec.to_dict() and not args.force:
            print(f"{name}: stored ({stored['seconds']} s), skipped", flush=True)
            continue
        print(f"{name}: running ...", flush=True)
        entry, missing = run_preset(name, out_dir, args.workers, args.max_seconds)
        manifest = _load_manifest(manifest_path)  # re-read: another run may have written meanwhile
        if entry is not None:
            manifest["presets"][name] = entry
            manifest["missing"].pop(name, None)
            print(f"{name}: {entry['seconds']} s, {entry['rows']} rows", flush=True)
        else:
            manifest["missing"][name] = {"reason": missing, "command": f"python -m dpcore sweep --preset {name}",
                                         "workers": args.workers, "machine": machine_note(args.workers)}
            print(f"{name}: missing - {missing}", flush=True)
        _write_manifest(manifest_path, manifest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
