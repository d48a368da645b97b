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


ROUND_OFF = 1e-12
"""A printed value at most this large is zero to machine precision: its digits depend on the processor's BLAS
kernels (1.325e-15 with OpenBLAS's Haswell kernels, 2.267e-15 with SkylakeX, 3.347e-15 with Prescott), so the guide's
table and the command's agree on it when both are round-off, not digit for digit."""
PRINTED_DIGITS = 4
"""Significant digits the command prints (dpcore.cli.table.fmt): two values agree when they round alike."""
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?$")


def _cells(line: str) -> list[str]:
    """The cells of a table line (columns are two or more spaces apart; 'a ± b' is one cell)."""
    return [c for c in re.split(r"\s{2,}", line.strip()) if c]


def _agree(shown: str, printed: str) -> bool:
    """One cell of the guide's table against the command's: the same text, or the same numbers to the printed
    digits, where values within ROUND_OFF of zero are equal (round-off, not a result)."""
    if shown == printed:
        return True
    a, b = shown.split(" ± "), printed.split(" ± ")
    if len(a) != len(b) or not all(_NUMBER.match(x) for x in a + b):
        return False
    for x, y in zip(map(float, a), map(float, b), strict=True):
        if abs(x) <= ROUND_OFF and abs(y) <= ROUND_OFF:
            continue
        if f"{x:.{PRINTED_DIGITS - 1}e}" != f"{y:.{PRINTED_DIGITS - 1}e}":
            return False
    return True


def tables_agree(shown: list[str], printed: list[str]) -> bool:
    """The guide's table (``shown``) is what the command printed (``printed``), cell by cell (:func:`_agree`)."""
    if len(shown) != len(printed):
        return False
    for s, p in zip(shown, printed, strict=True):
        cs, cp = _cells(s), _cells(p)
        if len(cs) != len(cp) or not all(_agree(x, y) for x, y in zip(cs, cp, strict=True)):
            return False
    return True


def test_the_table_comparison_ignores_round_off_digits_only():
    shown = ["algorithm  captured_energy  subspace_distance", "---------  ---------------  -----------------",
             "cape       0.1847 ± 0.0063  0.9586 ± 0.045", "nonpriv    0.284 ± 0        1.325e-15 ± 0"]
    other_cpu = shown[:3] + ["nonpriv    0.284 ± 0        2.267e-15 ± 0"]
    assert tables_agree(shown, shown) and tables_agree(shown, other_cpu)
    for wrong in ("nonpriv    0.285 ± 0        1.325e-15 ± 0", "nonpriv    0.284 ± 0        1.325e-05 ± 0",
                  "nonpriv    0.284 ± 0.001    1.325e-15 ± 0", "randsub    0.284 ± 0        1.325e-15 ± 0"):
        assert not tables_agree(shown, shown[:3] + [wrong]), wrong
    assert not tables_agree(shown, shown[:3])


def test_the_guide_marks_every_example_file():
    files = guide_files(GUIDE.read_text())
    kinds = {p.split("/")[1] if p.startswith("dpcore/") else "tests" for p in files}
    assert {"pca", "agn", "lda", "cape", "tests"} <= kinds, sorted(files)


def test_the_guides_examples_pass_in_a_scratch_copy(tmp_path):
    text = GUIDE.read_text()
    files = guide_files(text)
    shutil.copytree(ROOT / "dpcore", tmp_path / "dpcore")
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "tests" / "conftest.py")
    for path, content in files.items():
        target = tmp_path / path
        assert path.startswith("tests/") or not target.exists(), f"{path} would replace a file of dpcore"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "OPENBLAS_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": ""}
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
    assert tables_agree(shown, printed[at:at + len(shown)]), done.stdout  # round-off digits differ by CPU
