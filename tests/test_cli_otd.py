"""``python -m dpcore otd``: options, table, --json shape with "path", uploads, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcore.agn import make_model, sample_mog
from dpcore.cli import main

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--d", "8", "--k", "3", "--sites", "3", "--ns", "500", "--eps", "2", "--delta", "0.01", "--runs", "2"]


def run_json(capsys, *args):
    code = main(["otd", *args, "--json"])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


def test_json_shape_and_path(capsys):
    data = run_json(capsys, "--model", "stm", *SMALL, "--algorithms", "cape", "nonpriv", "random", "--seed", "3")
    assert data["path"] == "dense"
    assert [(r["algorithm"], r["metric"]) for r in data["results"]] == [
        (a, m) for a in ("cape", "nonpriv", "random") for m in ("q_comp", "q_comp_normalised", "weight_error")]
    for row in data["results"]:
        assert set(row) >= {"algorithm", "metric", "mean", "std", "runs"}
        assert row["runs"] == 2 and row["failed"] == 0 and row["mean"] >= 0 and row["std"] >= 0
    assert data["reference"] == "truth" and data["dim"] == 8 and data["k"] == 3 and data["sizes"] == [500] * 3
    q = {r["algorithm"]: r["mean"] for r in data["results"] if r["metric"] == "q_comp"}
    assert q["nonpriv"] < q["cape"] < q["random"]


def test_seed_reproduces_and_projected_path_is_forced(capsys):
    args = ["--model", "mog", *SMALL, "--algorithms", "cape,conv", "--seed", "5", "--path", "projected"]
    first = run_json(capsys, *args)
    second = run_json(capsys, *args)
    assert first["results"] == second["results"] and first["path"] == "projected"


def test_table_output(capsys):
    code = main(["otd", "--model", "stm", *SMALL, "--algorithms", "cape", "local", "--calibration", "analytic"])
    captured = capsys.readouterr()
    assert code == 0
    assert "capeAGN" in captured.out and "local" in captured.out and "q_comp" in captured.out
    assert "path: dense" in captured.out and "analytic calibration" in captured.out
    assert "against true components" in captured.out


@pytest.mark.parametrize("args, message", [
    (["--model", "stm", "--d", "5", "--k", "6"], "K must be <= D"),
    (["--model", "stm", "--algorithms", "cape", "magic"], "unknown algorithm"),
    (["--model", "mog", "--eps", "-1"], "eps"),
    (["--model", "stm", "--d", "600", "--k", "3", "--path", "dense"], "too large for the dense path"),
    (["--model", "stm", "--d", "600", "--k", "3", "--algorithms", "avn"], "AVN needs the dense path"),
    (["--model", "stm", "--split", "1.5"], "argument --split: must be a finite number in [0.01, 0.99]"),
    (["--model", "stm", "--runs", "0"], "runs"),
])
def test_bad_input_exits_2_with_one_line(capsys, args, message):
    code = main(["otd", *args])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error:") and message in err and err.count("\n") == 1


def test_scenario_file_and_overrides(tmp_path, capsys):
    scenario = {"sites": [{"name": "A", "n": 400, "eps": 1.0, "delta": 0.01},
                          {"name": "B", "n": 600, "eps": 1.0, "delta": 0.01}], "seed": 9}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario))
    data = run_json(capsys, "--model", "stm", "--d", "6", "--k", "2", "--scenario", str(path), "--runs", "1",
                    "--algorithms", "cape")
    assert data["sizes"] == [400, 600] and data["seed"] == 9
    data = run_json(capsys, "--model", "stm", "--d", "6", "--k", "2", "--scenario", str(path), "--ns", "300",
                    "--runs", "1", "--algorithms", "cape")
    assert data["sizes"] == [300, 300]
    assert main(["otd", "--model", "stm", "--scenario", str(path), "--sites", "3"]) == 2
    assert "disagrees" in capsys.readouterr().err


def test_uploaded_data(tmp_path, capsys):
    rng = np.random.default_rng(0)
    x = sample_mog(make_model("mog", 6, 2, rng), 600, rng)
    csv = tmp_path / "samples.csv"
    csv.write_text("\n".join(",".join(f"{v:.6f}" for v in row) for row in x))
    data = run_json(capsys, "--model", "mog", "--k", "2", "--data", str(csv), "--runs", "2", "--sites", "2",
                    "--eps", "5", "--algorithms", "cape", "nonpriv")
    assert data["reference"] == "nonprivate" and data["dim"] == 6 and sum(data["sizes"]) == 600
    assert any("not differentially private" in n for n in data["notes"])
    text = tmp_path / "docs.txt"
    text.write_text("\n".join(["apple banana cherry apple"] * 40 + ["dog cat bird dog"] * 40))
    data = run_json(capsys, "--model", "stm", "--k", "2", "--d", "6", "--data", str(text), "--runs", "1",
                    "--sites", "2", "--algorithms", "nonpriv")
    assert data["dim"] == 6 and any("not differentially private" in n for n in data["notes"])
    assert main(["otd", "--model", "stm", "--data", str(text)]) == 2
    assert "--vocabulary" in capsys.readouterr().err


def test_module_entry_point():
    result = subprocess.run([sys.executable, "-m", "dpcore", "otd", "--model", "stm", "--d", "5", "--k", "2",
                             "--runs", "1", "--algorithms", "nonpriv", "--json"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["path"] == "dense"


def test_authors_truth_workers_and_both_metrics(capsys):
    """--truth authors uses the authors' set-up (its note says so), --workers 2 gives the same numbers as one worker,
    and the table shows both metrics; a bad worker count or --truth with uploaded data is refused with one line."""
    args = ["--model", "mog", *SMALL, "--algorithms", "cape", "nonpriv", "--truth", "authors", "--seed", "2"]
    one = run_json(capsys, *args, "--workers", "1")
    two = run_json(capsys, *args, "--workers", "2")
    for a, b in zip(one["results"], two["results"], strict=True):  # equal; approx only for multi-threaded BLAS here
        assert (a["algorithm"], a["metric"]) == (b["algorithm"], b["metric"]) and a["mean"] == pytest.approx(b["mean"])
    assert any("the authors' synthetic set-up" in n for n in one["notes"])
    assert {r["metric"] for r in one["results"]} == {"q_comp", "q_comp_normalised", "weight_error"}
    assert main(["otd", "--model", "mog", *SMALL, "--truth", "authors"]) == 0
    assert "q_comp unit" in capsys.readouterr().out
    assert main(["otd", "--model", "mog", *SMALL, "--workers", "0"]) == 2
    assert "argument --workers: must be an integer from 1 to 8 (got '0')" in capsys.readouterr().err
