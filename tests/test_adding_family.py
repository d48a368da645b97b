"""docs/adding-a-family.md is true (issue 33): every file it shows (each code block after a ``<!-- file: PATH -->``
marker) is written into a scratch copy of the repository - and nothing else changes there - and the family's own test
it shows passes there: the family list, the front door, the command line, a report, the sweep, the planner (``python -m
dpcore plan`` and the Planner page), the pages and the layout check pick the new family up. The guide's numbered list
of files is exactly the files it marks."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from test_adding_guide import guide_files

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "adding-a-family.md"
LISTED = re.compile(r"^\d+\. `([\w/]+\.py)` - ")
COPIED = ("dpcore", "pages", "tools", "app.py", ".streamlit")


def test_the_guides_list_of_files_is_its_whole_list():
    text = GUIDE.read_text()
    listed = [m.group(1) for line in text.split("\n") if (m := LISTED.match(line))]
    assert listed == list(guide_files(text)), "the numbered list must name exactly the files the guide shows, in order"
    assert all(not (ROOT / path).exists() for path in listed), "the guide adds files; it replaces none"


def test_the_new_family_is_picked_up_with_no_other_file_changed(tmp_path):
    files = guide_files(GUIDE.read_text())
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("presets"))
        elif source.exists():
            shutil.copy(source, tmp_path / name)
    shutil.copytree(ROOT / "dpcore" / "data" / "files" / "presets", tmp_path / "dpcore" / "data" / "files" / "presets")
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "tests" / "conftest.py")
    before = {p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()}
    for path, content in files.items():
        target = tmp_path / path
        assert not target.exists(), f"{path} would replace a file"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    after = {p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()}
    assert after - before == {Path(p) for p in files}
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "OPENBLAS_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": ""}
    tests = sorted(p for p in files if p.startswith("tests/"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "9 passed" in done.stdout, done.stdout[-2000:]
