"""`python -m dpcore design`: JSON shape, numbers, exit codes and one-line errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from dpcore.cli import main
from dpcore.privacy import noise_multiplier

ROOT = Path(__file__).resolve().parents[1]

SCENARIO = {
    "sites": [{"name": n, "n": 1000, "eps": 0.5, "delta": 1e-5, "weight": 0.2} for n in "ABCDE"],
    "neighbouring": "replace-one", "calibration": "analytic", "tau_c": None, "seed": 7,
}


@pytest.fixture
def scenario_file(tmp_path):
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(SCENARIO))
    return path


def run_json(capsys, *args):
    code = main(["design", *map(str, args), "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_json_shape_and_numbers(capsys, scenario_file):
    code, out = run_json(capsys, scenario_file)
    assert code == 0
    tau = noise_multiplier(0.5, 1e-5, "analytic") / 1000
    assert out["feasible"] is True and out["reason"] is None and out["calibration"] == "analytic"
    assert out["tau_c"] == pytest.approx(tau / 5)
    assert out["tau_conv"] == pytest.approx(tau / math.sqrt(5))
    assert out["gain"] == pytest.approx(5.0)
    site = out["sites"][0]
    assert set(site) >= {"name", "tau", "tau_e", "tau_f", "tau_g"}
    assert site["tau"] == pytest.approx(tau)
    assert site["tau_g"] == pytest.approx(tau / math.sqrt(5))
    assert site["tau_e"] == pytest.approx(tau * math.sqrt(0.8))
    views = {(r["site"], r["view"]) for r in out["audit"]}
    assert ("A", "outside") in views and ("A", "aggregator") in views
    assert ("A", "aggregator+coalition") in views and ("A", "sites") in views
    agg = next(r for r in out["audit"] if r["site"] == "A" and r["view"] == "aggregator")
    assert agg["sigma_eff"] == pytest.approx(tau * math.sqrt(0.6))
    assert agg["ok"] is False and agg["eps_eff"] > 0.5 and agg["colluders"] == 0
    assert set(agg) >= {"site", "view", "colluders", "sigma_eff", "eps_eff", "delta_eff", "eps", "delta", "ok"}
    assert out["robust"]["collusion"] == 1 and out["robust"]["gain"] == pytest.approx(4 / 1.01)


def test_statistic_and_collusion_options(capsys, scenario_file):
    _, out = run_json(capsys, scenario_file, "--statistic", "pca", "--collusion", "3")
    assert out["sites"][0]["sensitivity"] == pytest.approx(math.sqrt(2) / 1000)
    assert max(r["colluders"] for r in out["audit"]) == 3
    _, robust = run_json(capsys, scenario_file, "--solver", "collusion-robust", "--collusion", "2")
    assert robust["method"] == "collusion-robust" and all(r["ok"] for r in robust["audit"])
    assert robust["gain"] == pytest.approx(3 / 1.01)


def test_closed_form_infeasible_exits_one_with_reason(capsys, scenario_file):
    code, out = run_json(capsys, scenario_file, "--solver", "closed-form")
    assert code == 0  # JSON mode reports, text mode signals
    assert out["feasible"] is False
    assert "site E: tau_g^2 = " in out["reason"] and "< 0" in out["reason"]
    assert out["sites"][4]["tau_g"] is None and out["sites"][4]["var_g"] < 0
    assert main(["design", str(scenario_file), "--solver", "closed-form"]) == 1
    text = capsys.readouterr().out
    assert "feasible  NO: published closed form infeasible" in text


def test_text_output_has_the_tables(capsys, scenario_file):
    assert main(["design", str(scenario_file)]) == 0
    text = capsys.readouterr().out
    assert "tau_e" in text and "privacy audit" in text and "aggregator+coalition" in text
    assert "gain      5" in text


def test_bad_input_is_one_line_and_nonzero(tmp_path, scenario_file):
    bad = dict(SCENARIO, sites=[dict(SCENARIO["sites"][0], eps=-1), *SCENARIO["sites"][1:]])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    for args in ([str(path)], [str(tmp_path / "missing.json")], [str(scenario_file), "--collusion", "9"]):
        proc = subprocess.run([sys.executable, "-m", "dpcore", "design", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "site 1 (A), eps: must be a number > 0" in subprocess.run(
        [sys.executable, "-m", "dpcore", "design", str(path)], cwd=ROOT, capture_output=True, text=True
    ).stderr
