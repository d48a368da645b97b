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
    assert record["cape"]["answer"] is not None and len(record["check"]["points"]) == 2 * len(record["schemes"]) == 6
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
                           "--solve", "eps", "--runs", "3", "--json", "--workers", "1", "--use-my-data")
    assert code == 0
    plan = json.loads(out)
    assert pca["settings"]["dim"] == 6 and plan["settings"]["data"]["dim"] == 6
    assert "label column 'target' excluded" in plan["data"]


def _table(path, seed: int, rows: int = 300, cols: int = 5) -> str:
    import numpy as np
    rng = np.random.default_rng(seed)
    path.write_text("\n".join(",".join(f"{v:.4f}" for v in rng.normal(size=cols) * (1 + seed)) for _ in range(rows))
                    + "\n")
    return str(path)


PROXY_ARGS = ("--k", "2", "--sites", "2", "--ns", "100", "--target", "0.9", "--solve", "eps", "--runs", "3", "--json",
              "--workers", "1")


def test_a_file_is_planned_on_a_public_proxy_of_its_shape_by_default(capsys, tmp_path):
    """As the Planner page: --csv plans on the family's synthetic source with the file's D, reading only its N and D,
    and says so (data, settings.read); two files of the same shape but other values get the same answer, to the
    digit. --use-my-data reads the values: the description is the file's, settings.read 'mine', and the answer's
    limits say that reading them is not differentially private; without a file it is refused on one line."""
    answers = []
    for seed in (4, 5):
        code, out, _ = run_cli(capsys, "--csv", _table(tmp_path / "mine.csv", seed), *PROXY_ARGS)
        assert code == 0
        record = json.loads(out)
        assert record["data"].startswith("public proxy of mine.csv: synthetic zero-mean Gaussian")
        assert "only its size (N = 300) and dimension (D = 5) were read" in record["data"]
        assert record["settings"]["read"] == "proxy"
        answers.append({s: record[s]["answer"] for s in ("cape", "conv")})
    assert answers[0] == answers[1]
    code, out, _ = run_cli(capsys, "--csv", str(tmp_path / "mine.csv"), *PROXY_ARGS, "--use-my-data")
    assert code == 0
    record = json.loads(out)
    assert record["settings"]["read"] == "mine" and record["data"].startswith("mine.csv; 300 samples x D = 5")
    assert any("planned on the values of mine.csv" in x and "not differentially private" in x
               for x in record["limits"])
    code, out, err = run_cli(capsys, "--target", "0.5", "--solve", "eps", "--use-my-data")
    assert code == 2 and out == "" and "--use-my-data applies to a file of yours" in err


def test_a_capeagn_data_file_is_planned_on_a_proxy_unless_asked(capsys, tmp_path):
    """otd --data: the proxy (capeAGN's synthetic model with the file's D) by default, the file's samples with
    --use-my-data; the text output's first line says what was read."""
    path = _table(tmp_path / "samples.csv", 6, rows=400, cols=4)
    args = ("--algorithm", "otd", "--data", path, "--k", "2", "--sites", "2", "--ns", "150", "--target", "0.6",
            "--solve", "eps", "--runs", "3", "--workers", "1")
    code, out, _ = run_cli(capsys, *args)
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("Data: public proxy of samples.csv") and "(read: a public proxy of the same shape" in first
    code, out, _ = run_cli(capsys, *args, "--use-my-data")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("Data: samples.csv: 400 samples x D = 4") and "(read: my data (reads its values" in first


def test_a_proxy_plans_script_reads_no_file(capsys, tmp_path):
    """The exported script of a proxy plan repeats the check on the proxy (it needs no file); of a plan on the file's
    values it reads the file."""
    path = _table(tmp_path / "mine.csv", 4)
    for extra, reads in (((), False), (("--use-my-data",), True)):
        script = tmp_path / "check.py"
        code, _, _ = run_cli(capsys, "--csv", path, *PROXY_ARGS, "--script", str(script), *extra)
        assert code == 0
        assert ("mine.csv" in script.read_text()) == reads and ("dataset = None" in script.read_text()) != reads


def test_plan_help_says_how_a_csv_is_scaled(capsys):
    import contextlib
    with contextlib.suppress(SystemExit):
        main(["plan", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "standardise (default for --csv, as the Planner page)" in text
    assert "--probability" in text and "certified against the aggregator" in text
    assert "planned on a public proxy of its shape (only its N and D are used) unless --use-my-data" in text
    assert "--use-my-data" in text and "not differentially private" in text


def test_the_target_help_names_every_planned_familys_metric_from_its_planner(capsys):
    """plan --help reads the headline metric of every family the planner answers for from its table (issue 33)."""
    from dpcore.experiments import PLANNED

    assert main(["plan", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for name, family in PLANNED.items():
        words = " ".join(family.planner.target_words.split())
        assert f"{name}: the {words}" in text
        assert f"{name}: the {words}, {'in (0, 1]' if family.planner.percent else '> 0'}" in text
