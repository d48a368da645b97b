"""The planner's exports against hostile input (issue 29, cause 8): the exported script is built by construction from
literals of JSON data, so any site name, file name or value compiles and runs and reproduces the check; the script
runs from an empty folder; the CSV carries guarantee rows as named fields."""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcore.pca.sweep import PcaData
from dpcore.planner import check_plan, plan_target, prepare_data, question
from dpcore.planner.export import SCRIPT_MARK, plan_csv, plan_html, plan_script
from dpcore.scenario import scenario_from_dict

TINY = PcaData(dim=6, k=2)
_NAME = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=24).filter(
    lambda s: s.strip() != "")
"""Site names as the scenario allows them: any printable text, quotes, backslashes, braces, '\"\"\"', emoji ..."""


@pytest.fixture(scope="module")
def tiny():
    return prepare_data("pca", TINY, None, 0)


def _scenario(names, eps):
    return scenario_from_dict({"sites": [{"name": n, "n": 400, "eps": e, "delta": 1e-5}
                                         for n, e in zip(names, eps, strict=True)]})


def _run(source: str, path, argv=()) -> dict:
    path.write_text(source, encoding="utf-8")
    compile(source, str(path), "exec")
    out = io.StringIO()
    old = sys.argv
    sys.argv = [str(path), *argv]
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(str(path), run_name="__main__")
    finally:
        sys.argv = old
    line = next(x for x in out.getvalue().splitlines() if x.startswith(SCRIPT_MARK))
    return json.loads(line[len(SCRIPT_MARK):])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_NAME, min_size=2, max_size=3, unique_by=lambda s: s.strip()),
       eps=st.lists(st.floats(0.5, 20.0), min_size=3, max_size=3),
       upload=st.one_of(st.none(), _NAME))
def test_the_script_compiles_and_runs_for_any_names_and_values(tiny, tmp_path_factory, names, eps, upload):
    scenario = _scenario(names, eps[:len(names)])
    result = plan_target("pca", tiny, scenario, question("eps", 0.6, scenario), seed=0, workers=1, runs=4)
    folder = tmp_path_factory.mktemp("script")
    if upload is not None:  # a hostile upload's name: compiles; reads the file given as the first argument
        source = plan_script(result, 2, upload_name=upload)
        compile(source, "named.py", "exec")
    source = plan_script(result, 2)
    numbers = _run(source, folder / "plan.py")
    check = check_plan(result, runs=2, workers=1)
    expected = {f"{p.scheme}@{p.where}": list(p.values) for p in check.points}
    assert numbers.keys() == expected.keys()
    for key, values in expected.items():
        assert numbers[key] == pytest.approx(values, rel=1e-6)
    for text in (plan_csv(result, check), plan_html(result, check)):
        assert text


def test_the_script_runs_from_an_empty_folder_without_the_project_on_the_path(tiny, tmp_path):
    """Copied to an empty folder and run by the project's Python with nothing on PYTHONPATH: it finds dpcore (the
    folder it was written from) and prints the check's numbers; with no dpcore anywhere it says in one line how to
    install it."""
    scenario = _scenario(["a\\b", 'q"uote'], [2.0, 2.0])
    result = plan_target("pca", tiny, scenario, question("eps", 0.6, scenario), seed=0, workers=1, runs=4)
    (tmp_path / "plan.py").write_text(plan_script(result, 2))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "plan.py"], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                         env={**env, "OPENBLAS_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(x for x in out.stdout.splitlines() if x.startswith(SCRIPT_MARK))
    check = check_plan(result, runs=2, workers=1)
    numbers = json.loads(line[len(SCRIPT_MARK):])
    for p in check.points:
        assert numbers[f"{p.scheme}@{p.where}"] == pytest.approx(list(p.values), rel=1e-6)
    lost = (tmp_path / "plan.py").read_text().replace("GENERATED_IN = ", "GENERATED_IN = '/nowhere' or ", 1)
    (tmp_path / "lost.py").write_text(lost)
    out = subprocess.run([sys.executable, "-S", "lost.py"], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path, env=env)
    assert out.returncode != 0 and len(out.stderr.strip().splitlines()) == 1
    assert "dpcore is not installed" in out.stderr and "pip install" in out.stderr


def test_the_csv_has_guarantee_rows_with_named_fields_and_no_json(tiny):
    scenario = _scenario(["A", "B"], [1.0, 1.0])
    result = plan_target("pca", tiny, scenario, question("eps", 0.6, scenario), seed=0, workers=1, runs=4)
    text = plan_csv(result)
    rows = [line.split(",", 3) for line in text.splitlines()[1:]]
    guarantee = [r for r in rows if r[0] == "guarantee"]
    names = {r[1] for r in guarantee}
    assert {"cape release", "cape aggregator", "conv release", "conv aggregator"} <= names
    for name in names:
        fields = {r[2]: r[3] for r in guarantee if r[1] == name}
        assert {"site", "view", "colluders", "eps", "delta", "certified"} <= set(fields)
        assert fields["certified"] in ("True", "False") and fields["site"] in ("A", "B")
    assert not any(r[3].startswith("{") for r in rows if r[0] in ("guarantee", "answer"))
    html = plan_html(result)
    assert "<th>site</th><th>view</th><th>colluders</th><th>eps</th><th>delta</th>" in html
    assert "{&#x27;" not in html and "{'view'" not in html
