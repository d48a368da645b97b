"""Real-browser test of the planner (issue 20): an uploaded CSV, a plan, the check, every export button, and the
exported script run in a subprocess reproducing the check's numbers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from test_browser import ROOT, _assert_clean, _goto, _page, _rerun, _wait_idle, browser, server  # noqa: F401

from dpcore.notation import symbolic
from dpcore.planner.export import SCRIPT_MARK

pytestmark = pytest.mark.browser


def _csv(path, rows: int = 6000, cols: int = 20) -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((rows, 4)) @ rng.standard_normal((4, cols)) * 3 + rng.standard_normal((rows, cols))
    path.write_text("\n".join([",".join(f"v{j}" for j in range(cols))] +
                              [",".join(f"{v:.4f}" for v in row) for row in x]) + "\n")


def test_planner_on_an_upload_with_check_exports_and_script(server, browser, tmp_path):  # noqa: F811
    upload = tmp_path / "consortium.csv"
    _csv(upload)
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, accept_downloads=True)
    page = _page(context, 1280)
    page.goto(server, wait_until="domcontentloaded")
    _wait_idle(page)
    _goto(page, "Planner")
    page.locator(".st-key-plan_source").click()
    _rerun(page, page.get_by_role("option", name="your own CSV (one sample per row)").click)
    _rerun(page, lambda: page.locator('.st-key-plan_upload_upload input[type="file"]').set_input_files(str(upload)))
    _rerun(page, page.get_by_text("ε", exact=True).click)
    _rerun(page, page.get_by_role("button", name="Plan").click)
    sentence = page.locator('[data-testid="stAlertContentSuccess"]').first.inner_text(timeout=120_000)
    sentence = sentence.strip().split("\n")[-1]  # after the icon's name
    assert sentence.startswith("capePCA reaches 80% of the non-private result with ε of every site")
    _assert_clean(page, "planner after Plan")
    page.get_by_role("button", name="Check: run capePCA").click()
    page.get_by_text("target met").first.wait_for(timeout=300_000)
    _assert_clean(page, "planner after the check")
    files = {}
    for name in ("JSON", "CSV", "HTML report", "Python script"):
        with page.expect_download(timeout=60_000) as download:
            page.get_by_role("button", name=f"Download {name}").click()
        assert download.value.failure() is None, name
        files[name] = download.value.path().read_text(encoding="utf-8")
    record = json.loads(files["JSON"])
    assert symbolic(record["sentence"]) == sentence and record["guarantees"]["cape"] and record["version"]
    assert record["check"] is not None and record["seed"] == 0
    assert files["CSV"].startswith("section,name,field,value") and "guarantee,cape" in files["CSV"]
    assert "<html" in files["HTML report"][:200].lower() and "Plotly" in files["HTML report"]
    script = tmp_path / "plan.py"
    script.write_text(files["Python script"])
    out = subprocess.run([sys.executable, str(script), str(upload)], capture_output=True, text=True, timeout=600,
                         cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1"))
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(x for x in out.stdout.splitlines() if x.startswith(SCRIPT_MARK))
    numbers = json.loads(line[len(SCRIPT_MARK):])
    expected = {f"{p['scheme']}@{p['where']}": p["values"] for p in record["check"]["points"]}
    assert numbers.keys() == expected.keys()
    for key, values in expected.items():  # the same runs; the float32 eigensolver rounds differently across BLAS
        assert numbers[key] == pytest.approx(values, rel=1e-6), key  # thread counts (about 1e-7: docs/math/capepca.md)
    context.close()
