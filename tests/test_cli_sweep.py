"""``python -m dpcore sweep``: preset list, CSV / summary / HTML / JSON outputs, scenario sweeps, errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pandas as pd
import pytest
from conftest import ROOT

from dpcore import experiments
from dpcore.cli import main
from dpcore.experiments import get_preset, presets, quick_spec


def run_cli(capsys, *args):
    code = main(["sweep", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def write_scenario(tmp_path, sites=3, n=120, eps=1.0, delta=1e-3):
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"sites": [{"name": f"h{i}", "n": n, "eps": eps, "delta": delta}
                                          for i in range(sites)], "seed": 4}))
    return path


def test_list_presets_text_and_json(capsys):
    code, out, _ = run_cli(capsys, "--list-presets")
    assert code == 0
    for name in presets():
        assert name in out
    assert "Unavailable (fig2c-covertype-eps, fig2f-covertype-ns, fig2i-covertype-delta): Covertype" in out
    assert "classic Gaussian calibration" in out
    code, out, _ = run_cli(capsys, "--list-presets", "--json")
    data = json.loads(out)
    assert code == 0 and len(data["presets"]) == len(presets())
    by_name = {p["name"]: p for p in data["presets"]}
    covertype = by_name["fig2c-covertype-eps"]
    assert not covertype["available"] and "Covertype" in covertype["unavailable"]
    assert by_name["fig2b-mnist-eps"]["spec"]["grid"] == [0.001, 0.01, 0.1, 1.0, 10.0]


def test_preset_writes_table_summary_and_figure(capsys, tmp_path):
    out_csv, summary_csv, html = tmp_path / "t.csv", tmp_path / "s.csv", tmp_path / "f.html"
    code, out, err = run_cli(capsys, "--preset", "fig2a-synthetic-eps", "--quick", "--runs", "2", "--out",
                             str(out_csv), "--summary-out", str(summary_csv), "--html", str(html))
    assert code == 0, err
    table = pd.read_csv(out_csv)
    assert list(table.columns) == list(experiments.TABLE_COLUMNS)
    assert len(table) == 5 * 5 * 2 * 3  # values x algorithms x runs x metrics
    assert set(table["status"]) == {"ok"}
    assert "Reduced variant: synthetic, D = 50, K = 10, 2 runs (reduced from Fig. 2(a): synthetic, D = 200" in out
    spec = quick_spec(get_preset("fig2a-synthetic-eps").spec).replace(runs=2)
    assert out_csv.read_text() == experiments.run_sweep(spec, use_cache=False).to_csv()  # the library's table, verbatim
    summary = pd.read_csv(summary_csv)
    assert list(summary.columns) == list(experiments.SUMMARY_COLUMNS) and len(summary) == 5 * 5 * 3
    page = html.read_text()
    assert "<html>" in page[:100] and "plotly" in page and len(page) > 1_000_000  # plotly.js embedded
    assert "Fig. 2(a)" in page
    assert "captured_energy: mean" in out and "capePCA" in out and "gain G" in out
    assert "note: classic Gaussian calibration at eps = 1, 10 (>= 1) is not a valid" in err


def test_same_seed_gives_the_same_file(capsys, tmp_path):
    args = ["--vary", "eps", "--grid", "0.5,2", "--dataset", "digits", "--k", "3", "--sites", "3", "--ns", "100",
            "--runs", "2", "--seed", "9", "--algorithms", "cape", "conv"]
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert run_cli(capsys, *args, "--out", str(a))[0] == 0
    experiments.clear_cache()
    assert run_cli(capsys, *args, "--out", str(b))[0] == 0
    assert a.read_bytes() == b.read_bytes()


def test_json_output(capsys):
    code, out, _ = run_cli(capsys, "--vary", "c", "--grid", "0,2", "--dataset", "digits", "--k", "3", "--sites",
                           "4", "--ns", "80", "--runs", "2", "--algorithms", "cape,conv", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["complete"] and data["runs_done"] == 2
    assert data["spec"]["parameter"] == "c" and data["spec"]["grid"] == [0, 2]
    assert len(data["summary"]) == 2 * 2 * 3
    gains = [g["gain"] for g in data["gains"]]
    assert gains == pytest.approx([4 / 1.01, 2 / 1.01], rel=1e-3)
    assert any("collusion-robust" in n for n in data["notes"])


def test_scenario_file_and_otd_sweeps(capsys, tmp_path):
    scenario = write_scenario(tmp_path)
    out_csv = tmp_path / "ns.csv"
    code, out, err = run_cli(capsys, "--scenario", str(scenario), "--vary", "ns", "--grid", "60,120",
                             "--dataset", "digits", "--k", "3", "--runs", "2", "--algorithms", "cape", "nonpriv",
                             "--out", str(out_csv))
    assert code == 0, err
    table = pd.read_csv(out_csv)
    assert sorted(table["value"].unique()) == [60, 120] and set(table["algorithm"]) == {"cape", "nonpriv"}
    assert "seed 4" in out  # the scenario's seed
    code, out, err = run_cli(capsys, "--family", "otd", "--model", "stm", "--d", "8", "--k", "3", "--vary", "eps",
                             "--grid", "1,10", "--sites", "3", "--ns", "400", "--runs", "1", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert {r["metric"] for r in data["summary"]} == {"q_comp", "q_comp_normalised", "weight_error"}
    assert {g["design"] for g in data["gains"]} == {"M2 stage", "M3 stage"}


@pytest.mark.parametrize("args, message", [
    (["--vary", "eps", "--grid", "0.1,abc"], "grid value 'abc' is not a number"),
    (["--vary", "eps", "--grid", ""], "the grid is empty"),
    (["--vary", "delta", "--grid", "0.1,2"], "must be in [1e-100, 1) (got 2)"),
    (["--vary", "c", "--grid", "0,9", "--sites", "5"], "collusion bound c must be at most S - 1 = 4"),
    (["--preset", "fig9"], "unknown preset 'fig9'"),
    (["--preset", "fig2c-covertype-eps"], "is unavailable: Covertype"),
    (["--preset", "fig2a-synthetic-eps", "--grid", "1,2"], "--grid do(es) not apply with --preset"),
    (["--quick", "--vary", "eps"], "--quick applies to --preset only"),
    (["--dataset", "digits"], "say what to vary"),
    (["--family", "otd", "--vary", "eps", "--dataset", "digits"], "--dataset do(es) not apply to a otd sweep"),
    (["--vary", "eps", "--algorithms", "cape", "magic"], "unknown pca algorithm(s) magic"),
    (["--vary", "eps", "--metric", "q_comp"], "--metric must be one of"),
    (["--vary", "eps", "--dataset", "digits", "--k", "80"], "K must be <= D = 64"),
    (["--vary", "eps", "--runs", "0"], "argument --runs: must be an integer from 1 to 200 (got '0')"),
    (["--scenario", "/nonexistent/s.json", "--vary", "eps"], "/nonexistent/s.json"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, message):
    code, out, err = run_cli(capsys, *args)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err


def test_runs_as_a_module(tmp_path):
    out_csv = tmp_path / "m.csv"
    proc = subprocess.run([sys.executable, "-m", "dpcore", "sweep", "--preset", "fig3-mog-d10-eps", "--quick",
                           "--runs", "1", "--out", str(out_csv)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(io.StringIO(out_csv.read_text()))
    assert set(table["metric"]) == {"q_comp", "q_comp_normalised", "weight_error"} and len(table) == 5 * 5 * 1 * 3
    proc = subprocess.run([sys.executable, "-m", "dpcore", "sweep", "--vary", "eps", "--grid", "x"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0


def test_a_sweep_runs_on_an_uploaded_csv(capsys, tmp_path):
    """Sweeps run on uploaded data (issue 20): --csv is read as the pca command reads it, features standardised as on
    the capePCA page; the spec names the upload and the result carries every view's guarantee."""
    import numpy as np
    rng = np.random.default_rng(3)
    x = rng.standard_normal((800, 3)) @ rng.standard_normal((3, 10)) + 0.2 * rng.standard_normal((800, 10))
    path = tmp_path / "ours.csv"
    path.write_text("\n".join(",".join(f"{v:.4f}" for v in row) for row in x) + "\n")
    code, out, err = run_cli(capsys, "--family", "pca", "--csv", str(path), "--k", "3", "--vary", "eps", "--grid",
                             "0.5,5", "--sites", "3", "--ns", "200", "--runs", "2", "--json",
                             "--algorithms", "cape", "conv")
    assert code == 0, err
    data = json.loads(out)
    assert data["spec"]["data"]["upload"] and data["spec"]["data"]["features"] == "standardise"
    assert data["guarantees"] and data["complete"]
    code, _, err = run_cli(capsys, "--family", "otd", "--csv", str(path), "--vary", "eps")
    assert code == 2 and "--csv" in err
