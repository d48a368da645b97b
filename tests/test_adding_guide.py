"""docs/adding-a-baseline.md is true: every file it shows (each code block after a ``<!-- file: PATH -->`` marker)
is written into a scratch copy of ``dpcore`` with nothing else changed, and the example tests it shows pass there;
the PCA example's command prints the table the guide shows. Slow-ish (a subprocess with its own imports): one test
for the whole guide."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "adding-a-baseline.md"
MARK = re.compile(r"^<!-- file: ((?:dpcore|tests)/[\w/]+\.py) -->$")


def guide_files(text: str) -> dict[str, str]:
    """Path -> content of every code block the guide marks as a whole file."""
    lines = text.split("\n")
    files = {}
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if m:
            assert lines[i + 1].startswith("```python"), f"line {i + 2}: a marker must stand right above a python block"
            end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
            files[m.group(1)] = "\n".join(lines[i + 2:end]) + "\n"
    return files


def _shown_table(text: str) -> list[str]:
    """The table the guide shows under ``$ python -m dpcore pca ... randsub ...``."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("$ python -m dpcore pca") and "randsub" in line)
    end = next(j for j in range(start, len(lines)) if lines[j].startswith("```"))
    return [line.rstrip() for line in lines[start + 1:end]]


def test_the_guide_marks_every_example_file():
    files = guide_files(GUIDE.read_text())
    kinds = {p.split("/")[1] if p.startswith("dpcore/") else "tests" for p in files}
    assert {"pca", "otd", "lda", "cape", "tests"} <= kinds, sorted(files)


def test_the_guides_examples_pass_in_a_scratch_copy(tmp_path):
    text = GUIDE.read_text()
    files = guide_files(text)
    shutil.copytree(ROOT / "dpcore", tmp_path / "dpcore", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "tests" / "conftest.py")
    for path, content in files.items():
        target = tmp_path / path
        assert path.startswith("tests/") or not target.exists(), f"{path} would replace a file of dpcore"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "OPENBLAS_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    tests = sorted(p for p in files if p.startswith("tests/"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"{len(tests)} passed" in done.stdout, done.stdout[-2000:]
    command = next(line for line in text.split("\n") if line.startswith("$ python -m dpcore pca") and "randsub" in line)
    done = subprocess.run([sys.executable, *command.split()[2:]], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    shown = _shown_table(text)
    printed = [line.rstrip() for line in done.stdout.split("\n")]
    assert shown and shown[0] in printed, done.stdout  # the command prints its settings first, then the table
    at = printed.index(shown[0])
    assert printed[at:at + len(shown)] == shown, done.stdout
