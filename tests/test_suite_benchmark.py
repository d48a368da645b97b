"""benchmarks/suite.py's per-module CPU (benchmarks/cpu_plugin.py): a real pytest run in a subprocess, whose test
reaps a child that spent CPU, is recorded with the child's CPU under its module; without the variable nothing is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.cpu_plugin import OUT_VARIABLE
from benchmarks.suite import module_cpu

ROOT = Path(__file__).resolve().parents[1]
BURN = '''
import subprocess, sys

CHILD = "import time\\nend = time.process_time() + 0.4\\nwhile time.process_time() < end: pass"

def test_a_child_burns():
    subprocess.run([sys.executable, "-c", CHILD], check=True)

def test_nothing():
    pass
'''


def _pytest(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "test_burn.py").write_text(BURN)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                           "-p", "benchmarks.cpu_plugin", "--rootdir", str(tmp_path), str(tmp_path / "test_burn.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**{k: v for k, v in os.environ.items() if k != OUT_VARIABLE}, "PYTHONPATH": str(ROOT),
                               **env})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_each_test_is_recorded_with_the_cpu_of_the_children_it_reaped(tmp_path):
    prefix = tmp_path / "records"
    _pytest(tmp_path, {OUT_VARIABLE: str(prefix)})
    (path,) = tmp_path.glob("records-*.jsonl")
    records = {r["id"].split("::")[1]: r for r in map(json.loads, path.read_text().splitlines())}
    assert set(records) == {"test_a_child_burns", "test_nothing"}
    assert records["test_a_child_burns"]["children"] >= 0.4  # the child's CPU (user + system), counted once reaped
    assert records["test_nothing"]["children"] == 0.0
    assert all(r["self"] >= 0 and r["wall"] >= 0 for r in records.values())
    (module,) = module_cpu(prefix)
    assert module.endswith("test_burn.py")
    assert module_cpu(prefix)[module] >= 0.4


def test_without_the_variable_nothing_is_written(tmp_path):
    _pytest(tmp_path, {})
    assert not list(tmp_path.glob("*.jsonl"))
