"""``python -m dpcore plan``: the JSON answer for every family, unreachable targets, exports, one-line errors."""

from __future__ import annotations

import json

import pytest

from dpcore.cli import main


def run_cli(capsys, *args):
    code = main(["plan", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_issue_example_prints_both_schemes(capsys):
    code, out, _ = run_cli(capsys, "--algorithm", "pca", "--dataset", "synthetic", "--sites", "5", "--eps", "1",
                           "--delta", "1e-5", "--target", "0.8", "--solve", "n", "--json", "--workers", "2")
    assert code == 0
    data = json.loads(out)
    for scheme in ("cape", "conv"):
        a = data[scheme]
        assert isinstance(a["answer"], int) and a["interval"][0] <= a["answer"] <= a["interval"][1]
        assert a["predicted"] >= 0.8 and a["reason"] is None
    assert data["conv"]["answer"] > 2 * data["cape"]["answer"]
    assert data["guarantees"]["cape"] and data["version"] and data["seed"] == 0
    assert data["sentence"].startswith("capePCA: with samples per site = ")
    assert "90% of fresh studies reach 80% of the non-private result" in data["sentence"]
    assert data["question"]["probability"] == 0.9 and data["cape"]["probability"] == 0.9
    assert data["forward_sentence"].startswith("With the scenario as it stands, capePCA gets")
    assert {g["view"] for g in data["guarantees"]["cape"]} >= {"release", "aggregator"}


@pytest.mark.parametrize("family", ["otd", "lda"])
def test_tensor_families_answer_or_say_why(capsys, family):
    code, out, _ = run_cli(capsys, "--algorithm", family, "--target", "0.3", "--solve", "n", "--runs", "3", "--json",
                           "--workers", "2")
    assert code == 0
    data = json.loads(out)
    for scheme in ("cape", "conv"):
        a = data[scheme]
        assert (a["answer"] is None) == (a["reason"] is not None)
    assert data["question"]["metric"] in ("q_comp", "topic_error")


def test_unreachable_target_is_null_with_a_reason(capsys):
    code, out, _ = run_cli(capsys, "--dataset", "digits", "--target", "1.2", "--solve", "eps", "--ns", "300",
                           "--json")
    assert code == 0
    data = json.loads(out)
    assert data["cape"]["answer"] is None and "above the non-private result" in data["cape"]["reason"]


def test_exports_and_the_check(capsys, tmp_path):
    paths = {flag: tmp_path / name for flag, name in (("--out-json", "a.json"), ("--out-csv", "a.csv"),
                                                       ("--html", "a.html"), ("--script", "a.py"))}
    args = [x for flag, path in paths.items() for x in (flag, str(path))]
    code, out, _ = run_cli(capsys, "--dataset", "digits", "--k", "5", "--sites", "5", "--ns", "300", "--target", "0.7",
                           "--solve", "eps", "--check", "--check-runs", "2", *args)
    assert code == 0 and "fresh studies reached the target" in out
    record = json.loads(paths["--out-json"].read_text())
    assert record["check"]["runs"] == 2 and record["settings"]["data"]["dataset"] == "digits"
    assert record["cape"]["answer"] is not None and len(record["check"]["points"]) == 4
    text = paths["--out-csv"].read_text()
    assert text.startswith("section,name,field,value")
    for field in ("site", "view", "colluders", "eps", "delta", "certified"):  # named fields, no JSON blobs
        assert f"guarantee,cape release,{field}," in text
    assert '{"view"' not in text
    assert "<html" in paths["--html"].read_text()[:200].lower()
    assert "PLANNER-CHECK" in paths["--script"].read_text()


@pytest.mark.parametrize("args, message", [
    (["--target", "0", "--solve", "n"], "--target"),
    (["--target", "0.8", "--solve", "delta"], "--solve"),
    (["--target", "0.8", "--solve", "sites", "--site", "s1"], "not to the number of sites"),
    (["--target", "0.8", "--solve", "n", "--site", "zz"], "not in the scenario"),
    (["--algorithm", "otd", "--target", "0.8", "--solve", "n", "--dataset", "digits"], "do(es) not apply"),
    (["--algorithm", "lda", "--target", "0.8", "--solve", "n", "--csv", "x.csv"], "do(es) not apply"),
    (["--target", "0.8", "--solve", "n", "--runs", "2"], "--runs"),
    (["--target", "0.8", "--solve", "n", "--probability", "0.3"], "--probability"),
    (["--target", "0.8", "--solve", "n", "--design", "trusting"], "--design"),
    (["--target", "0.8", "--solve", "n", "--out-json", ""], "--out-json needs a file name"),
    (["--target", "0.8", "--solve", "n", "--out-csv", " "], "--out-csv needs a file name"),
    (["--target", "0.8", "--solve", "n", "--html", ""], "--html needs a file name"),
    (["--target", "0.8", "--solve", "n", "--script", ""], "--script needs a file name"),
    (["--target", "0.8", "--solve", "n", "--scenario", "missing.json", "--sites", "3"], "do(es) not apply"),
])
def test_bad_input_exits_2_with_one_line(capsys, args, message):
    code, out, err = run_cli(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


def test_html_without_the_figures_extra_is_refused_before_any_work(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "plotly", None)  # as if dpcore[figures] were not installed
    code, out, err = run_cli(capsys, "--target", "0.8", "--solve", "n", "--html", str(tmp_path / "r.html"))
    assert code == 2 and "pip install 'dpcore[figures]'" in err and not (tmp_path / "r.html").exists()


def test_the_capelda_check_runs_on_the_synthetic_model(capsys):
    """The LDA check reads each run's topic error by the metric's name (it crashed before: LdaRun has no
    topic_error attribute)."""
    code, out, _ = run_cli(capsys, "--algorithm", "lda", "--solve", "eps", "--target", "0.5", "--runs", "3",
                           "--check", "--check-runs", "2", "--json", "--workers", "1")
    assert code == 0
    record = json.loads(out)
    points = record["check"]["points"]
    assert len(points) == 4 and all(len(p["values"]) == 2 and None not in p["values"] for p in points)


def test_pca_and_plan_read_a_csv_with_the_same_features(capsys, tmp_path):
    """A CSV with a label column ('target': few distinct whole numbers, last) is read with the same features by
    ``dpcore pca --csv`` and ``plan --csv`` (and the page): the label left out by default (issue 32: 31 against 30)."""
    import numpy as np
    rng = np.random.default_rng(3)
    rows = [",".join([f"f{j}" for j in range(6)] + ["target"])]
    rows += [",".join(f"{v:.4f}" for v in rng.normal(size=6)) + f",{i % 2}" for i in range(200)]
    path = tmp_path / "mine.csv"
    path.write_text("\n".join(rows) + "\n")
    assert main(["pca", "--csv", str(path), "--sites", "2", "--k", "2", "--runs", "1", "--json"]) == 0
    pca = json.loads(capsys.readouterr().out)
    code, out, _ = run_cli(capsys, "--csv", str(path), "--k", "2", "--sites", "2", "--ns", "100", "--target", "0.5",
                           "--solve", "eps", "--runs", "3", "--json", "--workers", "1")
    assert code == 0
    plan = json.loads(out)
    assert pca["settings"]["dim"] == 6 and plan["settings"]["data"]["dim"] == 6
    assert "label column 'target' excluded" in plan["data"]


def test_a_public_proxy_reads_only_the_files_shape(capsys, tmp_path):
    """--proxy plans on the family's synthetic source with the file's D; the data's description says what was read."""
    import numpy as np
    rng = np.random.default_rng(4)
    path = tmp_path / "mine.csv"
    path.write_text("\n".join(",".join(f"{v:.4f}" for v in rng.normal(size=5)) for _ in range(300)) + "\n")
    code, out, _ = run_cli(capsys, "--csv", str(path), "--k", "2", "--sites", "2", "--ns", "100", "--target", "0.5",
                           "--solve", "eps", "--runs", "3", "--json", "--workers", "1", "--proxy")
    assert code == 0
    record = json.loads(out)
    assert record["data"].startswith("public proxy of mine.csv: synthetic zero-mean Gaussian")
    assert "only its size (N = 300) and dimension (D = 5) were read" in record["data"]
    code, out, err = run_cli(capsys, "--target", "0.5", "--solve", "eps", "--proxy")
    assert code == 2 and "--proxy applies to a file of yours" in err


def test_plan_help_says_how_a_csv_is_scaled(capsys):
    import contextlib
    with contextlib.suppress(SystemExit):
        main(["plan", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "standardise (default for --csv, as the Planner page)" in text
    assert "--probability" in text and "certified against the aggregator" in text
