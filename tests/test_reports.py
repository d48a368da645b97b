"""Results that stand on their own (issue 20, item 3; docs/reports.md): every result's report carries the settings,
seed, version and every view's guarantee in JSON and CSV, renders as one HTML file, and its script, run in a
subprocess, prints the same numbers."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

from dpcore.agn import OtdSettings, SyntheticSpec, compare_algorithms
from dpcore.cape import plan_scenario
from dpcore.data import load_bundled
from dpcore.experiments import get_preset, quick_spec, run_sweep
from dpcore.lda import LdaSettings, LdaSpec
from dpcore.lda.curves import eps_curve
from dpcore.pca import compare_pca, prepare_pca
from dpcore.reports import (
    NUMBERS_MARK,
    design_report,
    lda_report,
    otd_report,
    pca_report,
    report_csv,
    report_html,
    report_json,
    sweep_report,
)
from dpcore.scenario import default_scenario, equal_sites_scenario


def _script_numbers(report, tmp_path, *args) -> dict:
    path = tmp_path / "again.py"
    path.write_text(report.script)
    out = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=600,
                         cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1"))
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(x for x in out.stdout.splitlines() if x.startswith(NUMBERS_MARK))
    return json.loads(line[len(NUMBERS_MARK):])


def _forms(report) -> dict:
    record = json.loads(report_json(report))
    assert record["version"] and record["seed"] == report.seed and record["settings"]
    assert record["guarantees"], "every view's guarantee"
    text = report_csv(report)
    assert text.startswith("section,name,field,value") and "\nguarantee," in text and "\nsettings," in text
    page = report_html(report)
    assert page.startswith("<!DOCTYPE html>") and "Plotly" in page and html.escape(report.summary[0][:40]) in page
    return record


def _close(a, b):
    """The same numbers; the float32 eigensolver may round differently under other BLAS thread counts (~1e-7)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k])
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _close(x, y)
    elif isinstance(a, float) and b is not None:
        assert a == pytest.approx(b, rel=1e-6, abs=1e-12)
    else:
        assert a == b


def test_pca_report_and_its_script_on_an_uploaded_csv(tmp_path):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((900, 3)) @ rng.standard_normal((3, 12)) + 0.3 * rng.standard_normal((900, 12))
    csv_path = tmp_path / "mine.csv"
    csv_path.write_text("\n".join(",".join(f"{v:.5f}" for v in row) for row in x) + "\n")
    from dpcore.data import parse_numeric_csv, table_to_dataset
    dataset = table_to_dataset(parse_numeric_csv(csv_path.read_bytes(), header=False), "mine.csv")
    scenario = equal_sites_scenario(3, 300, 1.0, 1e-5)
    options = {"k": 3, "features": "standardise", "preprocessing": "max-norm", "scale": 1.0, "by_label": False,
               "allow_replacement": False, "seed": 4}
    setup = prepare_pca(dataset, scenario, **options)
    comparison = compare_pca(setup.problem, setup.privacy, ["cape", "conv", "nonpriv"], 3, 4)
    report = pca_report(setup, comparison, source={"kind": "upload", "file": "mine.csv", "header": False,
                                                   "label": None, "drop": []},
                        algorithms=["cape", "conv", "nonpriv"], runs=3, rank=None, **options)
    record = _forms(report)
    assert {g["algorithm"] for g in record["guarantees"]} == {"cape", "conv", "nonpriv"}
    _close(_script_numbers(report, tmp_path, str(csv_path)), record["numbers"])


def test_pca_report_on_bundled_data_reproduces():
    scenario = equal_sites_scenario(3, 200, 2.0, 1e-5)
    setup = prepare_pca(load_bundled("digits"), scenario, 4, seed=1)
    comparison = compare_pca(setup.problem, setup.privacy, ["cape", "conv"], 2, 1)
    report = pca_report(setup, comparison, source={"kind": "bundled", "name": "digits"}, k=4, features="centre",
                        preprocessing="max-norm", scale=1.0, by_label=False, allow_replacement=False, seed=1,
                        algorithms=["cape", "conv"], runs=2, rank=None)
    assert report.summary[0].startswith("capePCA")


def test_otd_lda_design_and_sweep_reports_reproduce(tmp_path):
    scenario = equal_sites_scenario(3, 400, 2.0, 1e-4)
    spec = SyntheticSpec(kind="mog", dim=6, k=3)
    otd = compare_algorithms(scenario, ["cape", "conv"], spec=spec, runs=2, seed=3, settings=OtdSettings())
    report = otd_report(otd, spec=spec, source="synthetic MOG")
    _close(_script_numbers(report, tmp_path), _forms(report)["numbers"])

    lda_spec = LdaSpec(dim=30, k=3, doc_length=20)
    curve = eps_curve(equal_sites_scenario(3, 300, 10.0, 1e-6), ["cape", "conv"], [10.0, 30.0], spec=lda_spec,
                      runs=2, seed=5, settings=LdaSettings())
    report = lda_report(curve, spec=lda_spec, source="synthetic corpus")
    _close(_script_numbers(report, tmp_path), _forms(report)["numbers"])

    options = {"statistic": "mean", "solver": "general", "collusion": 1}
    plan = plan_scenario(default_scenario(), **options)
    report = design_report(plan, options=options)
    record = _forms(report)
    assert record["audit"] and record["numbers"]["feasible"]
    _close(_script_numbers(report, tmp_path), record["numbers"])

    sweep = run_sweep(quick_spec(get_preset("fig3-mog-d10-eps").spec), use_cache=False, workers=1)
    report = sweep_report(sweep)
    _close(_script_numbers(report, tmp_path), _forms(report)["numbers"])


def test_discrete_runs_report_their_bits_and_their_scripts_reproduce(tmp_path):
    """Issue 35: a capePCA and a capeAGN comparison with the discrete design - the results carry bits_per_value (the
    result's ring), the summary its sentence, and the script prints the same numbers (the discrete streams are keyed
    from the run's seed, so the integers repeat)."""
    scenario = equal_sites_scenario(3, 200, 2.0, 1e-5)
    setup = prepare_pca(load_bundled("digits"), scenario, 4, seed=1)
    comparison = compare_pca(setup.problem, setup.privacy, ["cape", "cape-discrete"], 2, 1)
    report = pca_report(setup, comparison, source={"kind": "bundled", "name": "digits"}, k=4, features="centre",
                        preprocessing="max-norm", scale=1.0, by_label=False, allow_replacement=False, seed=1,
                        algorithms=["cape", "cape-discrete"], runs=2, rank=None)
    record = _forms(report)
    bits = comparison.results["cape-discrete"][0].bits_per_value
    assert {r["algorithm"]: r["bits_per_value"] for r in record["results"]} == {"capePCA": None,
                                                                               "capePCA (discrete)": bits}
    assert any(f"modulo 2^{bits} ({bits} bits per value)" in s for s in record["summary"])
    _close(_script_numbers(report, tmp_path), record["numbers"])
    spec = SyntheticSpec(kind="mog", dim=5, k=2)
    otd = compare_algorithms(equal_sites_scenario(3, 400, 2.0, 1e-4), ["cape", "cape-discrete"], spec=spec, runs=2,
                             seed=3, settings=OtdSettings())
    report = otd_report(otd, spec=spec, source="synthetic MOG")
    record = _forms(report)
    bits = otd.examples["cape-discrete"].bits_per_value
    assert {r["bits_per_value"] for r in record["results"] if r["algorithm"] == "capeAGN (discrete)"} == {bits}
    _close(_script_numbers(report, tmp_path), record["numbers"])
