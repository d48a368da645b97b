"""Regression tests for the failure classes of issue 12 (a fuzz of 232 bad inputs found 52 failures), one section
per class, each named after it: what crashed, hung or exhausted memory now gets a message naming the limit.

Class 4 (the helper-noise scale) and the speed of plans for many sites (class 5) are covered where noted.
"""

from __future__ import annotations

import base64
import codecs
import json
import logging
import os
import subprocess
import sys
import time
import tomllib
import zlib

import numpy as np
import pytest
from conftest import ROOT, app_test
from streamlit.testing.v1 import AppTest

from dpcore import limits
from dpcore.cape import plan_scenario
from dpcore.cli import main
from dpcore.cli.table import fmt, table
from dpcore.data import parse_numeric_csv
from dpcore.scenario import (
    ScenarioError,
    default_scenario,
    load_scenario,
    scenario_from_bytes,
    scenario_from_dict,
    scenario_from_json,
    scenario_from_query,
    scenario_to_query,
)
from dpcore.validation import InputError


def _sites(**first):
    sites = [{"name": n, "n": 1000, "eps": 1.0, "delta": 1e-5} for n in "ABC"]
    sites[0].update(first)
    return sites


def _packed(text: str) -> str:
    """A ?scenario= value holding ``text`` (the link format: '1.' + base64url(zlib(text)))."""
    return "1." + base64.urlsafe_b64encode(zlib.compress(text.encode("utf-8"), 9)).decode().rstrip("=")


def _message(call) -> str:
    with pytest.raises(InputError) as info:
        call()
    assert str(info.value).strip()
    return str(info.value)


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line_error(capsys, *argv) -> str:
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and out == "", (code, err)
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


# --- class 1: n of 1e19 passed validation, then every page raised OverflowError (the sidebar sums the sizes) ------

def test_class1_sizes_beyond_the_limit_are_refused_where_they_enter(tmp_path, capsys):
    for n in (10**19, 1e19, "1e19", 10**9 + 1):
        message = _message(lambda n=n: scenario_from_dict({"sites": _sites(n=n)}))
        assert f"n: must be an integer from 1 to {limits.MAX_SITE_SIZE:,}" in message
    # the largest sizes allowed sum exactly
    biggest = scenario_from_dict({"sites": [{"name": f"s{i}", "n": limits.MAX_SITE_SIZE, "eps": 1, "delta": 1e-5}
                                            for i in range(limits.MAX_SITES)]})
    assert biggest.total_n == limits.MAX_SITES * limits.MAX_SITE_SIZE
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"sites": _sites(n=10**19)}))
    assert "n: must be an integer from 1 to 1,000,000,000" in _one_line_error(capsys, "design", path)


def test_class1_a_link_with_n_1e19_is_reported_and_every_page_keeps_working():
    value = _packed(json.dumps({"sites": _sites(n=10**19)}))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["scenario"] = value
    at.run()
    assert not at.exception
    assert "could not be loaded" in at.error[0].value and "1,000,000,000" in at.error[0].value
    for page in ("pages/sites.py", "pages/noise_design.py", "pages/gain.py", "pages/protocol.py"):
        at.switch_page(page).run()
        assert not at.exception, page
    assert at.session_state["scenario"] == default_scenario()


# --- class 2: values that crashed the validator itself ------------------------------------------------------------

@pytest.mark.parametrize("seed", [float("nan"), float("inf"), -1, 2.5, 10**300, 2**32, "nan", [1]])
def test_class2_any_seed_gets_a_message(seed):
    message = _message(lambda: scenario_from_dict({"sites": _sites(), "seed": seed}))
    assert f"seed: must be an integer from 0 to {limits.MAX_SEED:,}" in message


def test_class2_nan_and_infinity_in_json_get_a_message():
    sites = json.dumps(_sites())
    for tail in ('"seed": NaN', '"seed": Infinity', '"tau_c": -Infinity'):
        text = '{"sites": ' + sites + ", " + tail + "}"
        assert "must be" in _message(lambda text=text: scenario_from_json(text))


def test_class2_integers_of_hundreds_of_digits_get_a_message():
    huge = 10**400
    for field in ("n", "eps", "delta", "weight"):
        assert "400" not in _message(lambda field=field: scenario_from_dict({"sites": _sites(**{field: huge})}))
    assert "got an integer of about 401 digits" in _message(lambda: scenario_from_dict({"sites": _sites(n=huge)}))
    text = json.dumps({"sites": _sites()}).replace('"n": 1000', '"n": 1' + "0" * 400, 1)
    assert "a number written with 401 characters" in _message(lambda: scenario_from_json(text))
    text = json.dumps({"sites": _sites()}).replace('"n": 1000', '"n": 1' + "0" * 5000, 1)  # past Python's 4300
    assert f"at most {limits.MAX_NUMBER_CHARS} are allowed" in _message(lambda: scenario_from_json(text))


def test_class2_json_nested_a_thousand_levels_deep_is_refused_before_parsing():
    deep = "[" * 1000 + "]" * 1000
    assert len(deep) < 2500
    text = '{"sites": ' + deep + "}"
    message = _message(lambda: scenario_from_json(text))
    assert f"nested 1,001 levels deep; at most {limits.MAX_JSON_DEPTH}" in message
    link = _packed(text)
    assert len(link) < 600  # the 572 characters
    assert "nested" in _message(lambda: scenario_from_query(link))
    assert "nested" in _message(lambda: scenario_from_bytes(text.encode()))


# --- class 3: values that passed validation and crashed the noise design -----------------------------------------

@pytest.mark.parametrize(("field", "value", "expected"), [
    ("eps", 1e-300, "eps: must be a number from 1e-06 to 10000"),
    ("eps", 1e300, "eps: must be a number from 1e-06 to 10000"),
    ("delta", 1e-300, "delta: must be a number from 1e-100 to below 1"),
])
def test_class3_budgets_outside_the_exact_range_are_refused(field, value, expected):
    assert expected in _message(lambda: scenario_from_dict({"sites": _sites(**{field: value})}))


@pytest.mark.parametrize("tau_c", [1e-300, 1e300, 0.0, -1.0])
def test_class3_tau_c_outside_its_range_is_refused(tau_c):
    message = _message(lambda: scenario_from_dict({"sites": _sites(), "tau_c": tau_c}))
    assert "tau_c: must be a number from 1e-20 to 1e+20" in message


def test_class3_tau_c_far_from_the_floor_is_explained_not_raised():
    scenario = scenario_from_dict({"sites": _sites(), "tau_c": 1e-15})
    design = plan_scenario(scenario).design
    assert not design.feasible and "times the DP floor" in design.reason


def test_class3_eps_1e_300_typed_into_the_sites_table_is_listed(tmp_path):
    at = app_test("pages/sites.py")
    key = at.data_editor[0].key
    at.session_state[key] = {"edited_rows": {0: {"eps": "1e-300"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception
    assert "ε: must be a number from 1e-06 to 10000 (got '1e-300')" in at.error[0].value  # in the app's notation
    for page in ("pages/noise_design.py", "pages/gain.py", "pages/protocol.py"):
        at.switch_page(page).run()
        assert not at.exception, page


# --- class 4: the helper-noise scale accepted 1e308 ("Eigenvalues did not converge") ------------------------------

def test_class4_helper_noise_scale_is_bounded():
    scenario = default_scenario()
    for scale in (1e308, float("nan"), 0.5):
        assert "e_scale (helper-noise scale) must be in [1, 1e+06]" in _message(
            lambda scale=scale: plan_scenario(scenario, e_scale=scale))
    assert plan_scenario(scenario, e_scale=limits.E_SCALE_RANGE[1]).design.feasible


# --- class 5: 100 sites (the maximum) took 60 s and 3.4 GB in `design` -------------------------------------------
# The plan's speed for many sites is issue 12 item 4 (the audit work). Here: the site limit itself, checked before
# any site is read, and the bound on the collusion flag.

def test_class5_more_sites_than_the_limit_are_refused_before_reading_them(capsys, tmp_path):
    many = [{"name": f"s{i}", "n": 10, "eps": 1, "delta": 1e-5} for i in range(limits.MAX_SITES + 1)]
    errors = _message(lambda: scenario_from_dict({"sites": many}))
    assert f"at most {limits.MAX_SITES} sites" in errors
    path = tmp_path / "s.json"
    path.write_text(default_scenario().to_json())
    assert "--collusion: must be an integer from 0 to 99" in _one_line_error(capsys, "design", path, "--collusion",
                                                                           "1000")


# --- class 6: a 10 MB CSV with a 1,000,000-column header cost 4 minutes and 2.7 GB before it was refused -----------

def test_class6_a_million_column_header_is_refused_from_the_first_line():
    header = ",".join(f"c{i}" for i in range(1_000_000))
    content = (header + "\n" + ",".join("1" for _ in range(1_000_000)) + "\n").encode()
    assert len(content) > 9_000_000
    start = time.perf_counter()
    message = _message(lambda: parse_numeric_csv(content))
    assert time.perf_counter() - start < 5
    assert f"1,000,000 columns, more than the limit of {limits.MAX_UPLOAD_COLUMNS:,} columns" in message


def test_class6_the_widest_allowed_table_is_read():
    rows = np.arange(3 * limits.MAX_UPLOAD_COLUMNS, dtype=float).reshape(3, -1)
    content = "\n".join(",".join(f"{v:g}" for v in row) for row in rows)
    table_ = parse_numeric_csv(content)
    assert table_.values.shape == (3, limits.MAX_UPLOAD_COLUMNS)


# --- class 7: the CLI read /dev/zero and FIFOs until memory ran out (the size check trusted st_size); since issue 29
# anything but a regular file is refused before it is opened for reading (tests/test_hostile_files.py: every input) --

def _run_cli(*argv, timeout=60):
    return subprocess.run([sys.executable, "-m", "dpcore", *map(str, argv)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ, PYTHONPATH=str(ROOT)))


@pytest.mark.parametrize("argv", [
    ("design", "/dev/zero"),
    ("pca", "--csv", "/dev/zero"),
    ("otd", "--model", "mog", "--data", "/dev/zero"),
    ("otd", "--model", "stm", "--data", "/dev/zero", "--d", "5"),
])
def test_class7_devices_are_refused_before_they_are_read(argv):
    proc = _run_cli(*argv)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "/dev/zero is a character device, not a regular file" in proc.stderr


def test_class7_a_fifo_with_a_writer_is_refused_without_reading(tmp_path):
    """A FIFO is refused by its kind even when a writer waits: nothing of it is read (the writer, opened without
    blocking, finds no reader)."""
    fifo = tmp_path / "scenario.fifo"
    os.mkfifo(fifo)
    keep = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader of our own, so that a writer can open
    writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    os.write(writer, b" " * 4096)
    from dpcore.textio import read_file

    message = _message(lambda: read_file(fifo, limits.MAX_SCENARIO_FILE_BYTES, "scenario file"))
    assert "is a named pipe (FIFO), not a regular file" in message
    assert len(os.read(keep, 8192)) == 4096  # every byte still in the pipe: read_file took none
    os.close(writer)
    os.close(keep)


def test_class7_directories_and_missing_files_get_one_line(capsys, tmp_path):
    assert "is a directory" in _one_line_error(capsys, "design", tmp_path)
    assert "No such file or directory" in _one_line_error(capsys, "design", tmp_path / "missing.json")


# --- class 8: flags that ran unbounded or allocated gigabytes before failing ---------------------------------------

@pytest.mark.parametrize(("argv", "expected"), [
    (("pca", "--runs", "1000000000"), "argument --runs: must be an integer from 1 to 1,000"),
    (("otd", "--model", "mog", "--iterations", "1000000000"), "argument --iterations: must be an integer from 1 to"),
    (("otd", "--model", "mog", "--restarts", "1e9"), "argument --restarts: must be an integer from 1 to"),
    (("otd", "--model", "mog", "--ns", "100000000"), "the sites hold 500,000,000 samples in all (S x N_s), more than "
                                                     "the 5,000,000"),
    (("otd", "--model", "mog", "--ns", "1000000", "--d", "100"), "more than the 100,000,000 a run keeps in memory"),
    (("pca", "--dim", "100000"), "argument --dim: must be an integer from 2 to 3,000"),
    (("pca", "--site-size", "1000000000000"), "argument --site-size: must be an integer from 1 to 1,000,000,000"),
    (("pca", "--site-size", "1e12"), "argument --site-size: must be an integer from 1 to 1,000,000,000"),
    (("pca", "--site-size", "100000000"), "more than the 100,000,000 this tool keeps in memory"),
    (("otd", "--model", "mog", "--memory-budget", "nan"), "argument --memory-budget: must be a finite number in"),
    (("otd", "--model", "mog", "--split", "inf"), "argument --split: must be a finite number in [0.01, 0.99]"),
    (("pca", "--concentration", "1e-300", "--split", "skewed"), "argument --concentration: must be a finite number"),
    (("sweep", "--vary", "eps", "--runs", "1e9"), "argument --runs: must be an integer from 1 to 200"),
    (("pca", "--seed", "-1"), "argument --seed: must be an integer from 0 to 4,294,967,295"),
])
def test_class8_flags_are_bounded_before_any_work(capsys, argv, expected):
    start = time.perf_counter()
    assert expected in _one_line_error(capsys, *argv)
    assert time.perf_counter() - start < 10


def test_class8_library_entry_points_bound_the_same_work():
    from dpcore.agn import OtdSettings, SyntheticSpec
    from dpcore.data import synthetic_dataset

    assert "iterations N must be an integer from 1 to 1,000" in _message(lambda: OtdSettings(n_iter=10**9))
    assert "D must be an integer from 2 to 20,000" in _message(lambda: SyntheticSpec(kind="mog", dim=10**8, k=2))
    assert "more than the 100,000,000" in _message(
        lambda: synthetic_dataset(10**12, np.random.default_rng(0), dim=200))
    assert "D must be an integer from 2 to 3,000" in _message(
        lambda: synthetic_dataset(10, np.random.default_rng(0), dim=100_000))


# --- class 9: encodings (UTF-16, Latin-1 tracebacks; a BOM refused by the CLI) -------------------------------------

def test_class9_encodings_of_scenario_files(tmp_path, capsys):
    text = default_scenario().to_json()
    for name, raw in (("bom.json", codecs.BOM_UTF8 + text.encode()), ("utf16.json", text.encode("utf-16")),
                      ("utf16be.json", codecs.BOM_UTF16_BE + text.encode("utf-16-be"))):
        path = tmp_path / name
        path.write_bytes(raw)
        assert load_scenario(path) == default_scenario()
        assert scenario_from_bytes(raw) == default_scenario()
        code, _, _ = _cli(capsys, "design", path)
        assert code == 0
    latin = tmp_path / "latin1.json"
    latin.write_bytes(text.replace('"A"', '"Zürich"').encode("latin-1"))
    err = _one_line_error(capsys, "design", latin)
    assert "not UTF-8 text (byte 0xfc" in err and "Latin-1" in err and "save it as UTF-8" in err
    with pytest.raises(ScenarioError, match="not UTF-8 text"):
        scenario_from_bytes(latin.read_bytes())


def test_class9_encodings_of_csv_and_text_uploads():
    from dpcore.data import parse_documents

    text = "a,b\n1,2\n3,4\n"
    for raw in (text.encode("utf-16"), codecs.BOM_UTF8 + text.encode()):
        assert parse_numeric_csv(raw).columns == ["a", "b"]
    assert "Latin-1" in _message(lambda: parse_numeric_csv("é,b\n1,2\n3,4\n".encode("latin-1")))
    docs = "the cat sat\nthe dog ran far\n"
    assert parse_documents(docs.encode("utf-16"), vocab_size=10).n == 2
    assert "not UTF-8" in _message(lambda: parse_documents("caf\xe9 au lait\n".encode("latin-1"), vocab_size=5))


# --- class 10: site names with terminal escape sequences were printed raw ------------------------------------------

def test_class10_control_characters_are_refused_in_names_and_escaped_in_tables(tmp_path, capsys):
    message = _message(lambda: scenario_from_dict({"sites": _sites(name="A\x1b[2J\x1b[31m")}))
    assert "must not contain control characters" in message
    assert fmt("A\x1b[31mred\r") == "A\\x1b[31mred\\x0d"
    shown = table(["site\x07"], [["x\x1b]0;title\x07"]])
    assert "\x1b" not in shown and "\x07" not in shown and "\\x1b]0;title\\x07" in shown
    # a file name reaches the output of `pca`: escaped
    csv = tmp_path / "data\x1b[31m.csv"
    csv.write_text("\n".join(",".join(str((i * j) % 7 + 0.5 * j) for j in range(4)) for i in range(60)))
    code, out, err = _cli(capsys, "pca", "--csv", csv, "--runs", "1", "--k", "2", "--sites", "2")
    assert code == 0 and "\x1b" not in out + err and "data\\x1b[31m.csv" in out


# --- class 11: sweep --out failed after the sweep; no server limits; half-numeric first row taken as a header -------

def test_class11_sweep_outputs_are_checked_before_the_sweep_runs(capsys, tmp_path, monkeypatch):
    import dpcore.cli.sweep as sweep_cli

    def must_not_run(*args, **kwargs):
        raise AssertionError("the sweep ran before its output path was checked")

    monkeypatch.setattr(sweep_cli, "run_sweep", must_not_run)
    base = ("sweep", "--vary", "eps", "--grid", "1", "--runs", "1")
    assert "--out " in _one_line_error(capsys, *base, "--out", tmp_path / "no" / "such" / "dir.csv")
    assert "is a directory" in _one_line_error(capsys, *base, "--summary-out", tmp_path)
    readonly = tmp_path / "readonly.csv"
    readonly.write_text("keep me")
    readonly.chmod(0o444)
    if os.geteuid() != 0:  # root may write anyway
        assert "cannot be written" in _one_line_error(capsys, *base, "--html", readonly)
    assert readonly.read_text() == "keep me"  # never truncated by the check


def test_class11_the_dashboard_server_limits_match_the_library():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    # Streamlit counts both in MB of 10^6 bytes (issue 24: the unit of the browser; tests/test_hostile_surfaces.py)
    assert config["server"]["maxUploadSize"] * 10**6 == limits.MAX_UPLOAD_BYTES
    assert config["server"]["maxMessageSize"] * 10**6 >= limits.MAX_UPLOAD_BYTES
    assert max(limits.MAX_TEXT_BYTES, limits.MAX_SCENARIO_FILE_BYTES) <= limits.MAX_UPLOAD_BYTES
    assert config["client"]["toolbarMode"] == "viewer"  # no "Deploy" button for visitors


def test_class11_a_half_numeric_first_row_is_a_question_not_a_silent_header():
    message = _message(lambda: parse_numeric_csv("id,size,3,4\n1,2,3,4\n5,6,7,8\n"))
    assert "mixes text (row 1, column 1 is 'id') and numbers (column 3 is '3')" in message
    assert "header yes or no" in message
    assert parse_numeric_csv("id,size,3,4\n1,2,3,4\n5,6,7,8\n", header=True).values.shape == (2, 4)
    assert parse_numeric_csv("id,size,x,y\n1,2,3,4\n5,6,7,8\n").header  # all text: a header


# --- class 12: messages in the user's language ----------------------------------------------------------------------

def test_class12_sites_far_apart_get_a_design_not_a_solver_status():
    scenario = scenario_from_dict({"sites": [{"name": "big", "n": limits.MAX_SITE_SIZE, "eps": 1, "delta": 1e-5},
                                             {"name": "small", "n": 1, "eps": 1, "delta": 1e-5},
                                             {"name": "tiny eps", "n": 1000, "eps": 1e-6, "delta": 1e-5}]})
    plan = plan_scenario(scenario)
    assert plan.design.feasible
    assert all("HiGHS" not in (d.reason or "") for d in (plan.design, plan.robust))


def test_class12_a_link_that_is_not_base64url_says_so():
    for value, bad in (("1.@@@@", "'@' at character 3"), ("1.abc*def", "'*' at character 6")):
        message = _message(lambda value=value: scenario_from_query(value))
        assert "is not base64url" in message and bad in message and "cut short" not in message
    assert "cut short" in _message(lambda: scenario_from_query(scenario_to_query(default_scenario())[:40]))


def test_class12_n_1e19_typed_into_the_sites_table_gets_a_message():
    at = app_test("pages/sites.py")
    key = at.data_editor[0].key
    at.session_state[key] = {"edited_rows": {2: {"n": "1e19"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception
    assert "site 3 (C), n: must be an integer from 1 to 1,000,000,000 (got '1e19')" in at.error[0].value
    assert at.dataframe[1].value["N_s"].tolist()[2] == "1e19"  # kept as typed (the marked copy of the table)
    assert at.session_state["scenario"] == default_scenario()


# --- entry points: an unexpected failure is "internal error: ... (please report)", logged, no traceback ------------

def test_the_router_answers_an_unexpected_failure_once_for_every_page(monkeypatch, caplog):
    import pages.shared.widgets as widgets

    at = app_test("pages/noise_design.py")
    at.radio(key="nd_solver").set_value("closed-form").run()

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(widgets, "scenario_sidebar", broken)
    with caplog.at_level(logging.ERROR, logger="dpcore.dashboard"):
        at.run()
    assert not at.exception
    assert at.error[0].value == "internal error: RuntimeError: boom (please report)"
    assert "Traceback" not in at.error[0].value
    assert any(r.exc_info and "boom" in str(r.exc_info[1]) for r in caplog.records)
    monkeypatch.undo()
    at.run()  # the widget the failed run never drew keeps the user's choice
    assert not at.exception and at.radio(key="nd_solver").value == "closed-form"
    assert at.session_state["scenario"] == default_scenario()


def test_the_router_shows_a_library_message_a_page_did_not_catch(monkeypatch):
    import pages.shared.widgets as widgets

    at = app_test("pages/gain.py")

    def refuses(*args, **kwargs):
        raise InputError("N_s must be at most 1,000,000,000")

    monkeypatch.setattr(widgets, "scenario_sidebar", refuses)
    at.run()
    assert not at.exception and at.error[0].value == "N_s must be at most 1,000,000,000"


def test_the_command_line_answers_an_unexpected_failure_in_one_line(capsys, monkeypatch, tmp_path):
    import dpcore.cli.design as design_cli

    def broken(*args, **kwargs):
        raise ZeroDivisionError("float division by zero")

    log = tmp_path / "cli.log"
    monkeypatch.setenv("DPCORE_LOG", str(log))
    monkeypatch.setattr(design_cli, "plan_scenario", broken)
    path = tmp_path / "s.json"
    path.write_text(default_scenario().to_json())
    code, out, err = _cli(capsys, "design", path)
    assert code == 3 and out == ""
    assert err == f"internal error: ZeroDivisionError: float division by zero (please report; details in {log})\n"
    assert "Traceback" in log.read_text() and "ZeroDivisionError" in log.read_text()


def test_otd_vocabulary_does_not_go_with_d(capsys, tmp_path):
    docs = tmp_path / "docs.txt"
    docs.write_text("the cat sat on the mat\n" * 20)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("the\ncat\nsat\non\nmat\n")
    err = _one_line_error(capsys, "otd", "--model", "stm", "--data", docs, "--vocabulary", vocab, "--d", "3")
    assert "--d does not apply with --vocabulary" in err



def test_otd_upload_checks_k_against_the_uploads_d(capsys, tmp_path):
    """K of uploaded documents is checked against D of the vocabulary (12 words), never against the synthetic
    model's default D = 10."""
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(" ".join(words[(i + j) % 12] for j in range(8)) for i in range(60)))
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(words))
    err = _one_line_error(capsys, "otd", "--model", "stm", "--data", docs, "--vocabulary", vocab, "--k", "13")
    assert "K must be <= D = 12 (got K = 13)" in err
