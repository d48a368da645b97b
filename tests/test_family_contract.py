"""Issue 33: the single-run contract. Every family - found by the family layer, not by a list above it - runs through
one comparison signature (``Family.compare``, and ``dpcore.compare`` at the front door) into one result type
(``Comparison``: summaries, one ``RunRecord`` per algorithm and run, every view's computed guarantee), reports progress
in one form ``(done, total, label)``, and keeps the numbers of the family's own comparison bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import dpcore
from dpcore.agn import compare_algorithms
from dpcore.agn.sweep import OtdData
from dpcore.cape.guarantee import Guarantee
from dpcore.family import STATUSES, Comparison, RunRecord, families
from dpcore.lda import compare_lda
from dpcore.lda.sweep import LdaData
from dpcore.pca import compare_pca, prepare_pca
from dpcore.pca.sweep import PcaData, data_set
from dpcore.scenario import equal_sites_scenario
from dpcore.validation import InputError

SMALL = {"pca": PcaData(dataset="synthetic", dim=8, k=2), "otd": OtdData(model="mog", dim=6, k=2),
         "lda": LdaData(dim=20, k=3, doc_length=20)}
SCENARIO = equal_sites_scenario(3, 300, 2.0, 1e-5)
ALGORITHMS = ("cape", "conv", "nonpriv")


def test_the_family_layer_lists_every_family_in_position_order():
    table = families()
    assert list(table) == ["pca", "otd", "lda"]
    assert dpcore.experiments.FAMILIES == table
    assert all(f.sources and callable(f.compare) for f in table.values())


@pytest.mark.parametrize("name", ["pca", "otd", "lda"])
def test_every_family_runs_through_one_signature_into_one_result(name):
    family = families()[name]
    steps = []
    result = family.compare(SCENARIO, SMALL[name], ALGORITHMS, runs=2, seed=3, workers=1,
                            progress=lambda done, total, label: steps.append((done, total, label)))
    assert isinstance(result, Comparison) and result.family == name and result.algorithms == ALGORITHMS
    assert result.runs == 2 and not result.stopped
    # one summary per algorithm and metric of the family's table, one record per algorithm and run
    assert {(s.algorithm, s.metric) for s in result.summaries} == {(a, m) for a in ALGORITHMS
                                                                    for m in family.metrics}
    assert len(result.records) == 2 * len(ALGORITHMS)
    assert all(isinstance(r, RunRecord) and r.status in STATUSES for r in result.records)
    for s in result.summaries:  # the summary is the mean of the records that have the metric
        values = [r.metrics[s.metric] for r in result.records if r.algorithm == s.algorithm and r.status == "ok"]
        assert s.runs == len(values) and s.mean == pytest.approx(np.mean(values), rel=1e-12)
    # the one progress form: (done, total, label), total = runs x algorithms, ending at total
    assert steps[-1][0] == steps[-1][1] == 2 * len(ALGORITHMS)
    assert [d for d, _, _ in steps] == list(range(1, len(steps) + 1))
    # guarantees are computed views (Guarantee objects), not sentences; the private algorithms are certified here
    assert set(result.guarantees) == set(ALGORITHMS)
    assert all(isinstance(g, Guarantee) for views in result.guarantees.values() for g in views)
    assert result.guarantees["conv"] and all(g.certified for g in result.guarantees["conv"])
    record = result.to_dict()
    assert record["family"] == name and len(record["results"]) == len(result.summaries) and record["guarantees"]


def _own(name):
    """The family's own comparison with the same data, scenario and seed."""
    if name == "pca":
        data = SMALL["pca"]
        setup = prepare_pca(data_set(data, SCENARIO.total_n, 3), SCENARIO, data.k, seed=3)
        own = compare_pca(setup.problem, setup.privacy, ALGORITHMS, 2, 3, workers=1)
        return {(s.algorithm, s.metric): s.mean for s in own.summary}
    if name == "otd":
        own = compare_algorithms(SCENARIO, ALGORITHMS, spec=SMALL["otd"].synthetic(), runs=2, seed=3,
                                 settings=SMALL["otd"].settings(), workers=1)
    else:
        own = compare_lda(SCENARIO, ALGORITHMS, spec=SMALL["lda"].synthetic(), runs=2, seed=3,
                          settings=SMALL["lda"].settings(), workers=1)
    return {(s.algorithm, s.metric): s.mean for s in own.summaries}


@pytest.mark.parametrize("name", ["pca", "otd", "lda"])
def test_the_front_door_runs_any_family_and_keeps_its_own_numbers(name):
    result = dpcore.compare(name, SCENARIO, SMALL[name], ALGORITHMS, runs=2, seed=3, workers=1)
    assert {(s.algorithm, s.metric): s.mean for s in result.summaries} == _own(name)


def test_the_front_door_refuses_an_unknown_family_or_a_bad_argument():
    with pytest.raises(InputError, match="family"):
        dpcore.compare("cca", SCENARIO)
    with pytest.raises(InputError, match="runs"):
        dpcore.compare("pca", SCENARIO, runs=0)


def test_one_report_builder_serves_every_family_and_its_script_repeats_the_numbers(tmp_path):
    """dpcore.reports.comparison_report: written once, read from the family's tables; its sentence comes from the
    numbers, its guarantees are the computed views, and its script (run in a subprocess) prints the same numbers."""
    import json
    import os
    import subprocess
    import sys

    from conftest import ROOT

    from dpcore.reports import NUMBERS_MARK, comparison_report, report_csv, report_html, report_json

    for name in ("pca", "lda"):
        result = dpcore.compare(name, SCENARIO, SMALL[name], ALGORITHMS, runs=2, seed=3, workers=1)
        report = comparison_report(result, SMALL[name])
        record = json.loads(report_json(report))
        family = families()[name]
        metric = family.planner.metric
        cape = result.summary("cape", metric).mean
        assert report.summary[0].startswith(f"{family.cape}: {family.metrics[metric].label} {cape:.4g}")
        assert {g["algorithm"] for g in record["guarantees"]} == set(ALGORITHMS)
        assert "\nguarantee," in report_csv(report) and report_html(report).startswith("<!DOCTYPE html>")
        path = tmp_path / f"again_{name}.py"
        path.write_text(report.script)
        out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                             env=dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1"))
        assert out.returncode == 0, out.stderr[-3000:]
        line = next(x for x in out.stdout.splitlines() if x.startswith(NUMBERS_MARK))
        assert json.loads(line[len(NUMBERS_MARK):]) == record["numbers"]


def test_the_compare_command_runs_any_family_from_its_data_type(capsys):
    """python -m dpcore compare: the flags of the family's data settings are its dataclass fields (--set), the
    columns its metric table; JSON is the contract's Comparison; a bad field is one line and exit status 2."""
    import json

    from dpcore.cli import main

    assert main(["compare", "--family", "lda", "--set", "dim=20", "--set", "k=3", "--set", "doc_length=20",
                 "--sites", "3", "--ns", "300", "--eps", "10", "--runs", "2", "--seed", "3", "--workers", "1",
                 "--algorithms", "cape", "conv", "nonpriv", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["family"] == "lda" and record["data"]["dim"] == 20 and record["runs"] == 2
    assert {r["metric"] for r in record["results"]} == set(families()["lda"].metrics)
    assert {g["algorithm"] for g in record["guarantees"]} == set(ALGORITHMS)
    assert main(["compare", "--family", "pca", "--set", "dimension=3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "FIELD one of" in err and "dim" in err
    assert main(["compare", "--family", "pca", "--set", "k=three"]) == 2
    assert "--set k: 'three' is not a int" in capsys.readouterr().err
