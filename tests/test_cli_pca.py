"""``python -m dpcore pca``: JSON shape, wiring to the library, data sources, scenario and errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

from dpcore.cli import main
from dpcore.data import load_bundled
from dpcore.pca import METRICS, compare_pca, default_algorithms, prepare_pca
from dpcore.scenario import equal_sites_scenario


def run_cli(capsys, *args):
    code = main(["pca", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(capsys, *args):
    code, out, err = run_cli(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_json_shape_and_values(capsys):
    data = run_json(capsys, "--dataset", "digits", "--sites", "3", "--k", "5", "--runs", "2")
    results = data["results"]
    assert len(results) == len(default_algorithms()) * len(METRICS)
    assert [r["algorithm"] for r in results[::3]] == list(default_algorithms())
    for r in results:
        assert set(r) == {"algorithm", "metric", "mean", "std", "runs"}
        assert r["metric"] in METRICS and r["runs"] == 2
    by = {(r["algorithm"], r["metric"]): r for r in results}
    assert by[("nonpriv", "captured_energy_ratio")]["mean"] == pytest.approx(1.0)
    assert 0 < by[("cape", "captured_energy_ratio")]["mean"] < 1
    assert data["settings"]["site_sizes"] == [599, 599, 599]
    assert data["settings"]["calibration"] == "classic" and data["settings"]["neighbouring"] == "replace-one"
    assert data["communication"]["cape"] == 3 * 3 * 64 * 64
    assert any("not private" in n for n in data["notes"])


def test_json_matches_the_library(capsys):
    data = run_json(capsys, "--dataset", "digits", "--sites", "4", "--k", "3", "--runs", "3", "--seed", "5",
                    "--eps", "0.8", "--delta", "1e-4", "--algorithms", "cape", "conv")
    scenario = equal_sites_scenario(4, 449, 0.8, 1e-4, seed=5)
    setup = prepare_pca(load_bundled("digits"), scenario, 3, seed=5)
    expected = compare_pca(setup.problem, setup.privacy, ["cape", "conv"], 3, 5).records()
    assert len(data["results"]) == len(expected) == 6
    for got, want in zip(data["results"], expected, strict=True):
        assert got["algorithm"] == want["algorithm"] and got["metric"] == want["metric"]
        assert got["mean"] == pytest.approx(want["mean"], rel=1e-12)
        assert got["std"] == pytest.approx(want["std"], rel=1e-12)


def test_text_table_and_notes(capsys):
    code, out, err = run_cli(capsys, "--dataset", "digits", "--sites", "2", "--k", "2", "--runs", "2",
                             "--algorithms", "cape", "local", "dpdis", "--rank", "4")
    assert code == 0
    assert "digits: D = 64, 1,797 samples; S = 2 sites (N_s = 898)" in out
    assert "classic calibration, replace-one neighbours, eps = 0.5, delta = 0.01 at every site" in out
    lines = out.splitlines()
    assert lines[2].split() == ["algorithm", "captured_energy", "captured_energy_ratio", "subspace_distance",
                                "numbers", "sent"]
    assert [line.split()[0] for line in lines[4:7]] == ["cape", "local", "dpdis"]
    assert lines[6].split()[-1] == str(2 * 64 * 4)  # DPdisPCA sends S D R numbers
    assert lines[7].startswith("privacy (exact") and "cape   release: (0.5, 0.01)-DP certified" in lines[8]
    assert "note: preprocessing" in err and "not private" in err


def test_synthetic_with_skewed_sites(capsys):
    data = run_json(capsys, "--sites", "3", "--site-size", "40", "--dim", "8", "--k", "2", "--runs", "1",
                    "--split", "skewed", "--concentration", "0.5", "--algorithms", "nonpriv", "cape")
    settings = data["settings"]
    assert settings["dataset"] == "synthetic" and settings["dim"] == 8 and settings["samples"] == 120
    assert sum(settings["site_sizes"]) == 120 and len(set(settings["site_sizes"])) > 1


def test_csv_with_header_and_label(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = ["f1,f2,f3,f4,kind"] + [",".join(f"{v:.4f}" for v in rng.normal(size=4)) + f",{'ab'[i % 2]}"
                                   for i in range(60)]
    path = tmp_path / "mine.csv"
    path.write_text("\n".join(rows))
    data = run_json(capsys, "--csv", str(path), "--label-column", "kind", "--sites", "3", "--k", "2", "--runs", "1",
                    "--by-label")
    assert data["settings"]["dim"] == 4 and data["settings"]["samples"] == 60 and data["settings"]["by_label"]
    by_position = run_json(capsys, "--csv", str(path), "--label-column", "-1", "--sites", "3", "--k", "2",
                           "--runs", "1")
    assert by_position["settings"]["dim"] == 4
    detected = run_json(capsys, "--csv", str(path), "--label-column", "auto", "--features", "standardise",
                        "--sites", "3", "--k", "2", "--runs", "1")
    assert detected["settings"]["dim"] == 4 and detected["settings"]["features"] == "standardise"
    assert any("standardised" in n for n in detected["notes"])


def test_sampling_with_replacement_is_off_unless_asked_for_and_then_stated(capsys):
    args = ("--dataset", "digits", "--sites", "2", "--site-size", "1000", "--k", "2", "--runs", "1")
    code, out, err = run_cli(capsys, *args)
    assert code == 2 and "need 2,000 samples but the data set has 1,797" in err
    data = run_json(capsys, *args, "--with-replacement")
    assert data["settings"]["with_replacement"] and data["settings"]["features"] == "centre"
    assert any("protected only as a group of m records" in n for n in data["notes"])
    code, _, err = run_cli(capsys, *args, "--with-replacement", "--no-replacement")
    assert code == 2 and "not allowed with argument" in err


def test_csv_errors_name_the_cell(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("a,b,c\n1,2,3\n4,x,6\n7,8,9\n")
    code, out, err = run_cli(capsys, "--csv", str(path), "--sites", "1", "--k", "1")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "bad.csv: row 3, column 2 ('b') is the text 'x'" in err
    code, _, err = run_cli(capsys, "--csv", str(tmp_path / "missing.csv"))
    assert code == 2 and "cannot read" in err


def test_scenario_file_and_overrides(tmp_path, capsys):
    scenario = {"sites": [{"name": "H1", "n": 300, "eps": 0.4, "delta": 1e-4},
                          {"name": "H2", "n": 600, "eps": 0.6, "delta": 1e-4}],
                "neighbouring": "as-published", "calibration": "analytic"}
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    data = run_json(capsys, "--dataset", "digits", "--scenario", str(path), "--k", "3", "--runs", "1",
                    "--algorithms", "cape", "local")
    s = data["settings"]
    assert s["site_sizes"] == [300, 600] and s["eps"] == [0.4, 0.6]
    assert s["calibration"] == "analytic" and s["neighbouring"] == "as-published"
    assert any("local uses site H2" in n for n in data["notes"])
    data = run_json(capsys, "--dataset", "digits", "--scenario", str(path), "--k", "3", "--runs", "1",
                    "--eps", "2", "--calibration", "classic", "--algorithms", "cape")
    assert data["settings"]["eps"] == [2.0, 2.0] and data["settings"]["calibration"] == "classic"
    code, _, err = run_cli(capsys, "--dataset", "digits", "--scenario", str(path), "--sites", "3")
    assert code == 2 and "do not apply with --scenario" in err


@pytest.mark.parametrize(("args", "message"), [
    (["--dataset", "digits", "--k", "65"], "K must be <= D = 64"),
    (["--dataset", "digits", "--eps", "-1"], "argument --eps: must be a finite number in [1e-06, 10000] (got '-1')"),
    (["--dataset", "digits", "--delta", "1.5"], "argument --delta: must be a finite number in [1e-100, 1) (got '1.5')"),
    (["--dataset", "digits", "--sites", "2", "--site-size", "1000", "--no-replacement"],
     "need 2,000 samples but the data set has 1,797"),
    (["--dataset", "digits", "--runs", "0"], "argument --runs: must be an integer from 1 to 1,000 (got '0')"),
    (["--dataset", "digits", "--k", "5", "--rank", "3", "--algorithms", "dpdis"], "K = 5 <= R <= D = 64"),
])
def test_bad_inputs_exit_2_with_one_line(capsys, args, message):
    code, out, err = run_cli(capsys, *args)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_unknown_algorithm_is_an_argparse_error(capsys):
    assert main(["pca", "--algorithms", "magic"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'magic'" in err and err.count("\n") == 1  # one line, no usage block


def test_module_entry_point():
    """Also the old name of the non-private reference (nondp, before the families shared nonpriv) still works."""
    proc = subprocess.run(
        [sys.executable, "-m", "dpcore", "pca", "--dataset", "digits", "--sites", "2", "--k", "2", "--runs", "1",
         "--algorithms", "nondp", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"][0]["algorithm"] == "nonpriv"
