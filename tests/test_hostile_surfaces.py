"""Regression tests for the failure classes of issue 24 (a held-out set of about 250 hostile inputs against the
surfaces added since issue 12 found 34 failures from 12 root causes), one section per class. The Flower parties'
class (node handlers, a site's data file, the helper's dimension) is tested with federated/ (tests/test_federated_*).

Time limits here hold on a loaded machine: work is bounded by counting it (CPU seconds of this process, or a
subprocess timeout of a minute for something that must not block at all), never by a tight wall-clock limit.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.cli import main
from dpcore.outfiles import check_outputs, write_atomic
from dpcore.scenario import default_scenario
from dpcore.validation import InputError


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
    assert code == 2 and out == "", (code, out, err)
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


def _run_cli(*argv, timeout=120, env=None):
    return subprocess.run([sys.executable, "-m", "dpcore", *map(str, argv)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})))


# --- outputs: an output could be the command's own input or another output; /dev/full failed after the work; a FIFO
# with no reader blocked for ever; a failure left half a file --------------------------------------------------------

SWEEP = ("sweep", "--vary", "eps", "--grid", "1", "--runs", "1", "--sites", "2", "--ns", "50", "--dim", "5",
         "--k", "2", "--algorithms", "cape")


@pytest.fixture
def no_sweep(monkeypatch):
    """The sweep must not start: every refusal below comes before the work."""
    import dpcore.cli.sweep as sweep_cli

    def must_not_run(*args, **kwargs):
        raise AssertionError("the sweep ran before its output paths were checked")

    monkeypatch.setattr(sweep_cli, "run_sweep", must_not_run)


def test_an_output_that_is_the_commands_input_is_refused_and_the_input_kept(capsys, tmp_path, no_sweep):
    scenario = tmp_path / "scenario.json"
    scenario.write_text(default_scenario().to_json())
    before = scenario.read_bytes()
    base = ("sweep", "--scenario", scenario, "--vary", "eps", "--grid", "1", "--runs", "1")
    err = _one_line_error(capsys, *base, "--out", scenario)
    assert f"--out {scenario} is also the input --scenario {scenario}" in err
    link = tmp_path / "link.csv"
    link.symlink_to(scenario)
    assert "is also the input --scenario" in _one_line_error(capsys, *base, "--summary-out", link)
    hard = tmp_path / "hard.json"
    os.link(scenario, hard)
    assert "is also the input --scenario" in _one_line_error(capsys, *base, "--html", hard)
    assert scenario.read_bytes() == before


def test_two_outputs_naming_one_file_are_refused(capsys, tmp_path, no_sweep):
    out = tmp_path / "table.csv"
    err = _one_line_error(capsys, *SWEEP, "--out", out, "--summary-out", tmp_path / "." / "table.csv")
    assert "--summary-out" in err and "name the same file" in err
    assert not out.exists()


def test_a_bundled_data_set_is_an_input_of_a_sweep_that_reads_it(capsys, tmp_path, no_sweep):
    from dpcore.data.bundled import BUNDLED

    digits = ROOT / "dpcore" / "data" / "files" / BUNDLED["digits"].file
    err = _one_line_error(capsys, "sweep", "--vary", "eps", "--grid", "1", "--runs", "1", "--dataset", "digits",
                          "--out", digits)
    assert "is also the input the bundled data set digits" in err


def test_devices_fifos_and_directories_are_refused_before_the_work(capsys, tmp_path, no_sweep):
    assert "/dev/full is a character device, not a regular file" in _one_line_error(
        capsys, *SWEEP, "--out", "/dev/full")
    assert "is a character device" in _one_line_error(capsys, *SWEEP, "--html", "/dev/null")
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    assert "is a named pipe (FIFO), not a regular file" in _one_line_error(capsys, *SWEEP, "--out", fifo)
    assert "is a directory" in _one_line_error(capsys, *SWEEP, "--summary-out", tmp_path)
    assert "the folder" in _one_line_error(capsys, *SWEEP, "--out", tmp_path / "missing" / "x.csv")
    assert "needs a file name" in _one_line_error(capsys, *SWEEP, "--out", "")


def test_a_fifo_with_no_reader_does_not_block_the_command(tmp_path):
    """In a real process (an open() on a FIFO without a reader blocks the whole process): refused at once."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    proc = _run_cli(*SWEEP, "--out", fifo, timeout=120)
    assert proc.returncode == 2 and "named pipe (FIFO)" in proc.stderr and proc.stderr.count("\n") == 1
    proc = _run_cli(*SWEEP, "--out", "/dev/full", timeout=120)
    assert proc.returncode == 2 and "/dev/full is a character device" in proc.stderr


def test_the_internal_error_log_never_blocks_on_a_fifo(capsys, monkeypatch, tmp_path):
    import dpcore.cli.design as design_cli

    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    monkeypatch.setenv("DPCORE_LOG", str(fifo))

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(design_cli, "plan_scenario", broken)
    path = tmp_path / "s.json"
    path.write_text(default_scenario().to_json())
    code, out, err = _cli(capsys, "design", path)  # would block in open() before the fix
    assert code == 3 and err == "internal error: ZeroDivisionError: boom (please report)\n"


def test_a_write_that_fails_leaves_the_previous_file_and_no_partial_one(tmp_path, monkeypatch):
    import dpcore.outfiles as outfiles

    target = tmp_path / "table.csv"
    target.write_text("the good table\n")
    target.chmod(0o640)
    real_write = os.write

    def disk_full(fd, data):
        real_write(fd, bytes(data[: len(data) // 2]))  # half the bytes land, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(outfiles.os, "write", disk_full)
    message = _message(lambda: write_atomic(target, "x" * 100_000, "--out"))
    assert "No space left on device" in message and "the previous file is unchanged" in message
    monkeypatch.undo()
    assert target.read_text() == "the good table\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]
    write_atomic(target, "the new table\n", "--out")
    assert target.read_text() == "the new table\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # a replaced file keeps its permission bits
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]


def test_a_completed_sweep_writes_every_output_whole(capsys, tmp_path):
    out, summary = tmp_path / "t.csv", tmp_path / "s.csv"
    out.write_text("old")
    code, stdout, err = _cli(capsys, *SWEEP, "--out", out, "--summary-out", summary)
    assert code == 0, err
    assert out.read_text().startswith("parameter,value,algorithm,run,metric,result,status\n")
    assert summary.read_text().startswith("parameter,value,algorithm,metric,")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv", "t.csv"]


# Property: check_outputs against an independent oracle over small worlds of files, folders, FIFOs and links.
_NAMES = ("a", "b", "c", "d")
_KINDS = ("missing", "file", "dir", "fifo", "link")


@st.composite
def _worlds(draw):
    kinds = {name: draw(st.sampled_from(_KINDS)) for name in _NAMES}
    targets = {name: draw(st.sampled_from([n for n in _NAMES if n != name]))
               for name, kind in kinds.items() if kind == "link"}
    outputs = draw(st.lists(st.sampled_from((*_NAMES, "nofolder/x")), min_size=1, max_size=3))
    inputs = draw(st.lists(st.sampled_from(_NAMES), max_size=2))
    return kinds, targets, outputs, inputs


def _resolve(name, kinds, targets):
    """The name a path ends at and its kind (links followed; a loop or a link to a link's link: 'loop')."""
    seen = set()
    while kinds.get(name) == "link":
        if name in seen:
            return name, "loop"
        seen.add(name)
        name = targets[name]
    return name, kinds.get(name, "nofolder")


def _expected_ok(kinds, targets, outputs, inputs) -> bool:
    ends = []
    for name in outputs:
        end, kind = _resolve(name, kinds, targets)
        if kind not in ("missing", "file"):
            return False
        ends.append(end)
    if len(set(ends)) != len(ends):
        return False
    return not set(ends) & {_resolve(n, kinds, targets)[0] for n in inputs}


@settings(max_examples=300)
@given(_worlds())
def test_output_checks_agree_with_an_oracle_and_change_nothing(world):
    kinds, targets, outputs, inputs = world
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name, kind in kinds.items():
            path = root / name
            if kind == "file":
                path.write_text(f"content of {name}")
            elif kind == "dir":
                path.mkdir()
            elif kind == "fifo":
                os.mkfifo(path)
        for name, target in targets.items():
            (root / name).symlink_to(root / target)
        before = {p.name: (p.is_symlink(), p.is_file() and p.read_text()) for p in root.iterdir()}
        options = {f"--out{i}": root / name for i, name in enumerate(outputs)}
        ok = _expected_ok(kinds, targets, outputs, inputs)
        try:
            resolved = check_outputs(options, {f"--in{i}": root / n for i, n in enumerate(inputs)})
        except InputError as exc:
            assert not ok, (world, str(exc))
            assert {p.name: (p.is_symlink(), p.is_file() and p.read_text()) for p in root.iterdir()} == before
            return
        assert ok, world
        for option, path in resolved.items():
            write_atomic(path, f"written by {option}", option)
        for i, name in enumerate(outputs):
            assert (root / name).read_text() == f"written by --out{i}"
        for name in set(inputs) & set(before):
            assert before[name] == ((root / name).is_symlink(), (root / name).is_file() and (root / name).read_text())
        assert not [p for p in root.iterdir() if p.name.startswith(".dpcore-")]


# --- limits that disagreed: the browser refused uploads above 64,000,000 bytes, the library and the docs allowed
# 64 MiB and messages counted MiB while the browser shows MB ----------------------------------------------------------

def test_one_upload_limit_in_the_browsers_unit_everywhere(tmp_path, capsys):
    import tomllib

    from dpcore import limits
    from dpcore.textio import read_file, size_text

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    # Streamlit's uploader counts server.maxUploadSize in MB of 10^6 bytes (its browser code: 1e3 per unit step)
    assert config["server"]["maxUploadSize"] == limits.MAX_UPLOAD_MB
    assert limits.MAX_UPLOAD_BYTES == config["server"]["maxUploadSize"] * 10**6 == 64_000_000
    assert config["server"]["maxMessageSize"] * 10**6 >= limits.MAX_UPLOAD_BYTES
    assert size_text(limits.MAX_UPLOAD_BYTES) == "64.0 MB" and size_text(limits.MAX_TEXT_BYTES) == "32.0 MB"
    # the docs state the same number in the same unit
    doc = (ROOT / "docs" / "limits.md").read_text()
    assert "| `MAX_UPLOAD_BYTES` (uploads) | 64,000,000 (64 MB) |" in doc and "MiB" not in doc.split("MEMORY")[0]
    # the library and the command line accept exactly that many bytes and refuse one more, in MB
    exact = tmp_path / "exact.csv"
    with open(exact, "wb") as handle:
        handle.truncate(limits.MAX_UPLOAD_BYTES)
    assert len(read_file(exact, limits.MAX_UPLOAD_BYTES, "CSV file")) == limits.MAX_UPLOAD_BYTES
    with open(exact, "ab") as handle:
        handle.write(b"\n")
    err = _one_line_error(capsys, "pca", "--csv", exact)
    assert "is larger than the limit of 64.0 MB" in err
    from dpcore.data import parse_documents

    assert "more than the limit of 32.0 MB" in _message(
        lambda: parse_documents(b"word " * (limits.MAX_TEXT_BYTES // 5 + 1), vocab_size=5))


# --- extreme but allowed values: What eps means crashed for a site with eps above about 710 (e^eps overflowed); a
# Gaussian-mixture upload with values near the float maximum; DPCORE_WORKERS with a non-ASCII digit ------------------

def test_the_dp_tradeoff_bound_holds_at_the_largest_eps():
    import math

    import numpy as np

    from dpcore import limits
    from dpcore.privacy.tradeoff import dp_tradeoff_bound

    eps_max = limits.EPS_RANGE[1]
    assert eps_max == 1e4
    alpha = np.array([0.0, 5e-324, 1e-300, 0.01, 0.5, 1.0])
    # e^eps alpha >= 1 for every positive float alpha at eps = 1e4 (e^-1e4 is far below the smallest float): the bound
    # is delta at alpha = 0 and 1 everywhere else
    np.testing.assert_array_equal(dp_tradeoff_bound(alpha, eps_max, 1e-5), [1e-5, 1, 1, 1, 1, 1])
    # just above the overflow of e^eps (709.78): e^eps alpha written as exp(eps + ln alpha), by hand
    expected = [0.0, math.exp(720.0 + math.log(5e-324)), 1, 1, 1, 1]
    np.testing.assert_allclose(dp_tradeoff_bound(alpha, 720.0, 0.0), expected, rtol=1e-12, atol=0)
    # below the overflow the formula is the textbook one, value for value
    grid = np.linspace(0.0, 1.0, 1001)
    for eps, delta in ((0.1, 1e-5), (1.0, 0.0), (5.0, 1e-3), (700.0, 1e-8)):
        textbook = np.clip(np.minimum(math.exp(eps) * grid + delta, 1 - math.exp(-eps) * (1 - delta - grid)), 0, 1)
        np.testing.assert_allclose(dp_tradeoff_bound(grid, eps, delta), textbook, rtol=1e-12, atol=1e-15)


def test_what_eps_means_draws_a_site_with_the_largest_eps():
    from conftest import app_test

    from dpcore.scenario import scenario_from_dict

    scenario = scenario_from_dict({"sites": [{"name": "A", "n": 1000, "eps": 1e4, "delta": 1e-5},
                                             {"name": "B", "n": 1000, "eps": 800.0, "delta": 1e-5},
                                             {"name": "C", "n": 1000, "eps": 1.0, "delta": 1e-5}]})
    at = app_test()
    at.session_state["scenario"] = scenario
    at.switch_page("pages/epsilon.py").run()
    at.radio(key="eps_source").set_value("scenario").run()  # the page opens on its class demonstration
    for site in ("A", "B"):
        at.selectbox(key="eps_site").set_value(site).run()
        assert not at.exception, [e.value for e in at.exception]
        assert not [e.value for e in at.error if "internal error" in e.value]
        assert at.get("plotly_chart")


@pytest.mark.parametrize("value", ["\u0663", "\u00b2", "\uff13", "3\u200b", "0x3", "3.0", "-1", "9", ""])
def test_dpcore_workers_takes_ascii_digits_only(monkeypatch, value):
    from dpcore import limits
    from dpcore.workers import WORKERS_ENV, worker_count

    monkeypatch.setenv(WORKERS_ENV, value)
    if value == "":
        assert 1 <= worker_count(4) <= 4  # unset or empty: the available CPUs
        return
    message = _message(lambda: worker_count(4))
    assert f"the environment variable {WORKERS_ENV} must be a whole number of worker processes from 1 to " \
           f"{limits.MAX_WORKERS}, written in ASCII digits" in message


def test_dpcore_workers_with_a_non_ascii_digit_is_one_line_on_the_command_line():
    proc = _run_cli("pca", "--runs", "2", "--dim", "5", "--k", "2", env={"DPCORE_WORKERS": "\u00b2"})
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1
    assert "DPCORE_WORKERS must be a whole number" in proc.stderr and "internal error" not in proc.stderr


@pytest.mark.parametrize("scale", [1e307, 1.7e308, 1e200, 1e120])
def test_mog_uploads_near_the_float_maximum_are_refused_where_they_enter(tmp_path, capsys, scale):
    import numpy as np

    from dpcore import limits
    from dpcore.agn import mog_problem
    from dpcore.data import parse_numeric_csv

    rng = np.random.default_rng(3)
    x = rng.standard_normal((200, 4))
    x[7, 2] = scale
    path = tmp_path / "mog.csv"
    np.savetxt(path, x, delimiter=",", fmt="%.17g")
    message = _message(lambda: parse_numeric_csv(path.read_bytes()))
    assert f"row 8, column 3 is {scale:g}, larger in magnitude than {limits.MAX_DATA_MAGNITUDE:g}" in message
    assert f"{scale:g} is larger in magnitude" in _message(
        lambda: mog_problem(x, 2, [0.5, 0.5], np.random.default_rng(0), sigma2=0.1))
    for extra in ((), ("--sigma2", "0.1")):
        err = _one_line_error(capsys, "otd", "--model", "mog", "--data", path, "--k", "2", "--runs", "1", *extra)
        assert "larger in magnitude than 1e+100" in err


def test_mog_uploads_at_the_largest_allowed_magnitude_run(capsys, tmp_path):
    import numpy as np

    from dpcore import limits

    rng = np.random.default_rng(4)
    x = rng.standard_normal((400, 4)) + 3.0 * rng.integers(0, 2, (400, 1))
    x *= limits.MAX_DATA_MAGNITUDE / np.abs(x).max()
    path = tmp_path / "mog.csv"
    np.savetxt(path, x, delimiter=",", fmt="%.17g")
    code, out, err = _cli(capsys, "otd", "--model", "mog", "--data", path, "--k", "2", "--runs", "1")
    assert code == 0, err
    assert "nan" not in out.lower() and "inf" not in out.lower().replace("info", "")


# --- message logs: fields of a plan were not checked at the boundary (text where a number belongs, a norm bound of
# 1e200 or 1e-300, a budget share of 1e-300): the Protocol page showed "internal error ... (please report)" or hung --

@pytest.fixture(scope="module")
def log_document(tmp_path_factory):
    from capefed.ops.demo import message_log_round, prepare_demo, run_in_memory

    from dpcore.federation import LOG_FORMAT

    demo = prepare_demo(tmp_path_factory.mktemp("hostile-log") / "data")
    return {"format": LOG_FORMAT, "rounds": [message_log_round(o.to_dict()) for o in run_in_memory(demo)]}


def _changed(document, round_index, where, **changes):
    import copy

    changed = copy.deepcopy(document)
    plan = changed["rounds"][round_index]["plan"]
    (plan["settings"] if where == "settings" else plan["sites"][0]).update(changes)
    return changed


_MOG = {"model": "mog", "sigma2": 0.05}
_BAD_SETTINGS = [
    (1, dict(_MOG, norm_bound=1e200), "round 2, plan settings: norm_bound must be in [1e-100, 1e+100] (got 1e+200)"),
    (1, dict(_MOG, norm_bound=1e-300), "norm_bound must be in [1e-100, 1e+100] (got 1e-300)"),
    (1, dict(_MOG, norm_bound="1"), "norm_bound must be a number in [1e-100, 1e+100] (got '1')"),
    (1, {"split": 1e-300}, "round 2, plan settings: split must be in [0.01, 0.99] (got 1e-300)"),
    (1, {"split": "0.5"}, "split must be a number in [0.01, 0.99] (got '0.5')"),
    (0, {"k": "3"}, "round 1, plan settings: k must be an integer from 1 to 2,000 (got '3')"),
    (0, {"k": 1e300}, "k must be an integer from 1 to 2,000 (got 1e+300)"),
    (1, {"n_restarts": 10**15}, "n_restarts must be an integer from 1 to 1,000"),
    (1, {"n_iter": "30"}, "n_iter must be an integer from 1 to 1,000 (got '30')"),
    (0, {"collusion": 1.5}, "collusion must be an integer from 0 to 99 (got 1.5)"),
    (0, {"neighbouring": "x"}, "neighbouring must be one of 'replace-one', 'as-published' (got 'x')"),
    (1, dict(_MOG, sigma2=1e300, norm_bound=1.0), "sigma2 must be in [0, 1e+06] (got 1e+300)"),
]


@pytest.mark.parametrize("round_index, changes, expected", _BAD_SETTINGS)
def test_every_plan_setting_is_checked_where_the_log_is_read(log_document, round_index, changes, expected):
    import json

    from dpcore.federation import parse_message_log

    text = json.dumps(_changed(log_document, round_index, "settings", **changes))
    assert expected in _message(lambda: parse_message_log(text))


@pytest.mark.parametrize("changes", [{"eps": 1e300}, {"eps": 1e-300}, {"eps": "one"}, {"n": 10**15}, {"n": "1e19"},
                                     {"delta": 1.0}, {"weight": -1.0}, {"name": "A\x1b[2J"}, {"name": ""}])
def test_a_plan_site_gets_the_scenarios_rules_and_messages(log_document, changes):
    import copy
    import json

    from dpcore.federation import parse_message_log
    from dpcore.scenario import scenario_from_dict

    site = copy.deepcopy(log_document["rounds"][0]["plan"]["sites"][0])
    site.update(changes)
    site.pop("dim")
    if site.get("weight") is None:
        site.pop("weight", None)
    scenario_message = _message(lambda: scenario_from_dict({"sites": [site]}))
    message = _message(lambda: parse_message_log(json.dumps(_changed(log_document, 0, "sites", **changes))))
    assert message == f"round 1, plan {scenario_message}"
    assert "dim must be an integer from 1 to 2,000" in _message(
        lambda: parse_message_log(json.dumps(_changed(log_document, 0, "sites", dim=10**15))))


def _finite_extremes():
    return st.sampled_from([1e200, 1e-300, -1e-300, 1e308, 5e-324, 0.0, -0.0, 2**63, 10**20, -1, 1e100, 1e-100,
                            0.01, 0.99, 1e4, 1e-6])


_VALUES = (_finite_extremes() | st.floats(allow_nan=False) | st.integers(-10**20, 10**20) | st.booleans()
           | st.none() | st.text(max_size=12) | st.just([1]) | st.just({"a": 1}))


@settings(max_examples=120)
@given(data=st.data())
def test_any_value_of_any_plan_field_is_read_or_refused_and_then_planned_without_a_crash(log_document, data):
    """One setting or one site field of a plan replaced by an extreme or mistyped value: the log is refused with an
    InputError, or read with every setting inside its documented range and the protocol's round rebuilt (or the
    round refused in words): never another exception, never a hang (the planning is bounded by the ranges)."""
    import json

    from dpcore import limits
    from dpcore.federation import parse_message_log, round_protocol

    r = data.draw(st.integers(0, 1))
    plan = log_document["rounds"][r]["plan"]
    if data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(plan["settings"])))
        changes = dict(_MOG, norm_bound=1.0) if r == 1 and key in ("sigma2", "norm_bound") else {}
        changes[key] = data.draw(_VALUES)
        document = _changed(log_document, r, "settings", **changes)
    else:
        key = data.draw(st.sampled_from(sorted(plan["sites"][0])))
        document = _changed(log_document, r, "sites", **{key: data.draw(_VALUES)})
    try:
        log = parse_message_log(json.dumps(document))
    except InputError as exc:
        assert str(exc).startswith(f"round {r + 1}"), str(exc)
        return
    settings_ = log.rounds[r].settings
    assert limits.SPLIT_RANGE[0] <= settings_.split <= limits.SPLIT_RANGE[1]
    assert settings_.norm_bound is None or (
        limits.NORM_BOUND_RANGE[0] <= settings_.norm_bound <= limits.NORM_BOUND_RANGE[1])
    assert all(isinstance(getattr(settings_, f), int) for f in ("k", "n_restarts", "n_iter", "run"))
    for logged in log.rounds:
        try:
            round_protocol(logged)
        except InputError:
            pass


def test_the_protocol_page_shows_a_bad_plan_next_to_the_upload(log_document):
    import json

    from conftest import app_test

    at = app_test("pages/protocol.py")
    at.toggle(key="pr_log_show").set_value(True).run()
    at.radio(key="pr_log_source").set_value("an uploaded message log").run()
    content = json.dumps(_changed(log_document, 1, "settings", **dict(_MOG, norm_bound=1e200))).encode()
    at.file_uploader(key="pr_log_upload").set_value(("message-log.json", content, "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert not [e for e in errors if "internal error" in e], errors
    assert any("norm_bound must be in [1e-100, 1e+100] (got 1e+200)" in e for e in errors), errors


def test_a_budget_share_outside_its_range_is_refused_everywhere_it_enters(capsys):
    import time

    from dpcore.agn import OtdSettings
    from dpcore.cape import agn_stage_plans
    from dpcore.lda import LdaSettings
    from dpcore.privacy.calibration import _analytic_multiplier

    for argv in (("otd", "--model", "mog", "--split", "1e-300"), ("lda", "--split", "0.999999"),
                 ("sweep", "--family", "otd", "--vary", "eps", "--split", "1e-200")):
        assert "argument --split: must be a finite number in [0.01, 0.99]" in _one_line_error(capsys, *argv)
    assert "eps split must be in [0.01, 0.99] (got 1e-300)" in _message(lambda: OtdSettings(eps_split=1e-300))
    assert "eps split must be in [0.01, 0.99]" in _message(lambda: LdaSettings(eps_split=0.995))
    assert "the budget split must be in [0.01, 0.99]" in _message(
        lambda: agn_stage_plans(default_scenario(), "stm", 1e-300, dim=10))
    # the calibration's own search is bounded too (it looped for ever on a delta below 1e-300)
    start = time.process_time()
    assert "too small for the analytic calibration" in _message(lambda: _analytic_multiplier(1e-300, 1e-305))
    assert time.process_time() - start < 5


def test_a_norm_bound_outside_its_range_is_refused_on_the_command_line(capsys, tmp_path):
    path = tmp_path / "mog.csv"
    path.write_text("\n".join(f"{i % 7},{i % 5},{i % 3}" for i in range(60)))
    for bound in ("1e-300", "1e200"):
        err = _one_line_error(capsys, "otd", "--model", "mog", "--data", path, "--norm-bound", bound, "--sigma2", "0.1")
        assert "argument --norm-bound: must be a finite number in [1e-100, 1e+100]" in err


# --- stored results: a truncated file, one altered byte, a Git LFS pointer, a gzip bomb or a broken manifest made the
# Privacy-utility page open on an internal error with no figure -------------------------------------------------------

@pytest.fixture
def stored_copy(tmp_path, monkeypatch):
    """A copy of the stored results (dpcore/data/files/presets) that a test may damage, found first
    (DPCORE_DATA_DIR); the caches are cleared before and after."""
    import shutil

    from dpcore.data import DATA_DIR_ENV
    from dpcore.experiments.stored import clear_stored

    shutil.copytree(ROOT / "dpcore" / "data" / "files" / "presets", tmp_path / "presets")
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    clear_stored()
    yield tmp_path / "presets"
    monkeypatch.undo()
    clear_stored()


def _gzip_of(data: bytes) -> bytes:
    import gzip
    import io

    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as handle:
        handle.write(data)
    return out.getvalue()


def _bomb(size: int) -> bytes:
    """gzip of ``size`` zero bytes, written in pieces (about 1,000 times smaller than what it expands to)."""
    import gzip
    import io

    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as handle:
        block = bytes(1 << 20)
        for _ in range(size >> 20):
            handle.write(block)
    return out.getvalue()


def _rewrite_manifest(folder: Path, name: str, **changes) -> None:
    import json

    path = folder / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["presets"][name].update(changes)
    path.write_text(json.dumps(manifest))


def _damage(folder: Path, name: str, kind: str) -> str:
    """Damage preset ``name``'s stored result in ``folder``; the words its status must contain."""
    import hashlib

    from dpcore.experiments.stored import stored_file_name

    path = folder / stored_file_name(name)
    raw = path.read_bytes()
    if kind == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
        return f"has {len(raw) // 2:,} bytes, not the {len(raw):,} recorded"
    if kind == "altered byte":
        changed = bytearray(raw)
        changed[len(raw) // 2] ^= 0x01
        path.write_bytes(bytes(changed))
        return "does not have the SHA-256 recorded"
    if kind == "lfs pointer":
        path.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:" + "ab" * 32 + "\nsize 7825\n")
        return "is a Git LFS pointer"
    if kind == "gzip bomb":  # a bomb whose manifest record was rewritten to match its bytes: the bound stops it
        bomb = _bomb(1 << 30)  # 1 GiB of zeros in 1 MB, five times the bound
        path.write_bytes(bomb)
        _rewrite_manifest(folder, name, file_bytes=len(bomb), file_sha256=hashlib.sha256(bomb).hexdigest())
        return "is larger than the limit of"
    if kind == "bomb within the bound":  # decompresses beyond the recorded table size: stopped at that size
        bomb = _gzip_of(bytes(10_000_000))
        path.write_bytes(bomb)
        _rewrite_manifest(folder, name, file_bytes=len(bomb), file_sha256=hashlib.sha256(bomb).hexdigest())
        return "is larger than the limit of"
    if kind == "not a table":  # consistent digests, but the bytes are not this sweep's table
        text = b"a,b\n1,2\n"
        packed = _gzip_of(text)
        path.write_bytes(packed)
        _rewrite_manifest(folder, name, file_bytes=len(packed), file_sha256=hashlib.sha256(packed).hexdigest(),
                          table_bytes=len(text), table_sha256=hashlib.sha256(text).hexdigest())
        return "is not a table of this sweep"
    if kind == "fifo":
        path.unlink()
        os.mkfifo(path)
        return "is missing"
    if kind == "device":
        path.unlink()
        path.symlink_to("/dev/zero")
        return "is missing"
    manifest = folder / "manifest.json"
    if kind == "manifest cut":
        manifest.write_bytes(manifest.read_bytes()[:5000])
        return "the manifest presets/manifest.json cannot be read: the manifest is not valid JSON"
    if kind == "manifest nested":
        manifest.write_text("[" * 100_000 + "]" * 100_000)
        return "nested 100,000 levels deep"
    if kind == "manifest not an object":
        manifest.write_text("[1, 2]")
        return "is not an object with 'presets' and 'missing'"
    if kind == "record without digest":
        _rewrite_manifest(folder, name, file_sha256=None)
        return "its field 'file_sha256' is missing"
    if kind == "record with a path":
        _rewrite_manifest(folder, name, file="../../../etc/passwd.csv.gz")
        return "is not a .csv.gz file name"
    if kind == "record with text sizes":
        _rewrite_manifest(folder, name, file_bytes="7825")
        return "its field 'file_bytes' is missing or not a int"
    raise AssertionError(kind)


DAMAGES = ["truncated", "altered byte", "lfs pointer", "gzip bomb", "bomb within the bound", "not a table", "fifo",
           "device", "manifest cut", "manifest nested", "manifest not an object", "record without digest",
           "record with a path", "record with text sizes"]


@pytest.mark.parametrize("kind", DAMAGES)
def test_a_damaged_stored_result_is_unavailable_with_its_reason(stored_copy, kind, settled):
    import time
    import tracemalloc

    from dpcore.experiments import get_preset
    from dpcore.experiments.stored import (
        FIRST_FIGURE,
        clear_stored,
        estimate_seconds,
        stored_names,
        stored_result,
        stored_status,
    )
    from dpcore.limits import MAX_SHIPPED_TEXT_BYTES

    words = _damage(stored_copy, FIRST_FIGURE, kind)
    clear_stored()
    start = time.process_time()
    tracemalloc.start()
    try:
        status = stored_status(FIRST_FIGURE)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2.5 * MAX_SHIPPED_TEXT_BYTES  # the 1 GiB bomb is stopped at the bound, never expanded whole
    assert status is not None and words in status, status
    assert stored_result(FIRST_FIGURE) is None and FIRST_FIGURE not in stored_names()
    estimate_seconds(get_preset(FIRST_FIGURE).spec, 2)  # reads only usable records
    assert time.process_time() - start < 60  # CPU seconds: a few on a quiet machine, whatever the load
    if kind.startswith("manifest"):
        assert stored_names() == []
    else:  # the others are intact and still verified
        assert "fig3-mog-d10-ns" in stored_names() and stored_result("fig3-mog-d10-ns") is not None


@pytest.fixture
def no_cached_sweeps():
    """The fallback's live run leaves its result in the process's sweep cache: forget it, so that a later test of
    the same reduced sweep in this process runs it (and sees its progress) instead of taking it from the cache."""
    from dpcore import experiments

    experiments.clear_cache()
    yield
    experiments.clear_cache()


def test_the_page_falls_back_to_a_live_run_when_the_stored_result_is_damaged(stored_copy, no_cached_sweeps):
    import time

    from conftest import app_test

    from dpcore.experiments.stored import FIRST_FIGURE

    _damage(stored_copy, FIRST_FIGURE, "altered byte")
    at = app_test("pages/privacy_utility.py", timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    assert not [e.value for e in at.error if "internal error" in e.value]
    warning = " ".join(w.value for w in at.warning)
    assert "No stored result for this preset" in warning and "does not have the SHA-256 recorded" in warning
    assert at.radio(key="pu_variant").value == "quick"
    deadline = time.monotonic() + 600  # a reduced live run: seconds on a quiet machine
    while any(b.key == "pu_stop" for b in at.button):
        assert time.monotonic() < deadline, "the fallback run did not finish"
        time.sleep(0.3)
        at.run()
    assert not at.exception and not [e.value for e in at.error]
    assert at.get("plotly_chart"), "no figure after the live run"
    assert any("Complete:" in c.value for c in at.caption), [c.value for c in at.caption]


# --- work bounded too late: text corpora and vocabularies were counted after they were tokenised (a 10-million-line
# file was read and split before it was refused); restarts x iterations x K of the power method had no joint bound --

def test_a_ten_million_line_corpus_is_refused_before_it_is_split(monkeypatch, settled):
    import time
    import tracemalloc

    import dpcore.data.text as text_module
    from dpcore import limits
    from dpcore.data import parse_documents, parse_text_corpus

    calls = []
    monkeypatch.setattr(text_module, "tokenize", lambda line: calls.append(line) or [])
    content = b"a\n" * 10_000_000
    start = time.process_time()
    tracemalloc.start()
    try:
        message = _message(lambda: parse_documents(content, vocab_size=5))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert f"has 10,000,000 lines, more than the limit of {limits.MAX_TEXT_LINES:,}" in message
    assert calls == [] and time.process_time() - start < 10  # CPU seconds: 0.1 s quiet (11 s and 1.8 GB before)
    assert peak < 3 * len(content)  # the text itself and its decoding; no list of ten million lines
    assert "lines, more than the limit" in _message(lambda: parse_text_corpus(content, rule="frequent", vocab_size=5))
    # every kind of line break counts, as str.splitlines sees them
    for breaks in ("\n", "\r\n", "\r", "\u2028", "\x85"):
        assert text_module.line_count(breaks.join(["x"] * 7)) == 7 == len(breaks.join(["x"] * 7).splitlines())
        assert text_module.line_count(breaks.join(["x"] * 7) + breaks) == 7


@settings(max_examples=300)
@given(st.lists(st.sampled_from(["a", " ", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029",
                                 "b"]), max_size=60).map("".join))
def test_line_count_is_what_splitlines_counts(text):
    from dpcore.data.text import line_count

    assert line_count(text) == len(text.splitlines())


def test_the_same_corpus_reads_the_same_after_the_change():
    """Tokenising in two passes (count, then index) gives the counts, first words and vocabulary of one pass."""
    from collections import Counter

    import numpy as np

    from dpcore.data import parse_documents, tokenize

    lines = ["The cat sat on the mat", "", "dogs and cats", "the dog ran far far away", "x", "Mat mat cat dog"]
    corpus = parse_documents("\n".join(lines), vocab_size=4, stop_words=frozenset({"the", "on"}))
    docs = [[w for w in tokenize(line) if w not in {"the", "on"}] for line in lines if line.strip()]
    ranked = sorted(Counter(w for d in docs for w in d).items(), key=lambda item: (-item[1], item[0]))
    assert corpus.vocabulary == tuple(w for w, _ in ranked[:4])
    index = {w: i for i, w in enumerate(corpus.vocabulary)}
    dense = np.zeros((len(docs), 4))
    for n, doc in enumerate(docs):
        for w in doc:
            if w in index:
                dense[n, index[w]] += 1
    keep = dense.sum(axis=1) >= 3
    np.testing.assert_array_equal(corpus.counts.toarray(), dense[keep])


def test_a_vocabulary_file_is_bounded_by_its_bytes_before_it_is_split(tmp_path, capsys):
    from dpcore import limits
    from dpcore.data import parse_vocabulary

    big = b"word\n" * (limits.MAX_VOCABULARY_BYTES // 5 + 1)
    assert "more than the limit of 2.0 MB" in _message(lambda: parse_vocabulary(big))
    many = "\n".join(f"w{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i // 676 % 26)}{chr(97 + i // 17576)}"
                     for i in range(limits.MAX_VOCABULARY + 5))
    message = _message(lambda: parse_vocabulary(many))
    assert f"more than the limit of {limits.MAX_VOCABULARY:,} words (the word {limits.MAX_VOCABULARY + 1:,} is on " \
           f"line {limits.MAX_VOCABULARY + 1:,})" in message
    path = tmp_path / "vocab.txt"
    path.write_bytes(big)
    docs = tmp_path / "docs.txt"
    docs.write_text("the cat sat\n" * 10)
    err = _one_line_error(capsys, "otd", "--model", "stm", "--data", docs, "--vocabulary", path)
    assert "vocabulary file" in err and "is larger than the limit of 2.0 MB" in err


def test_restarts_times_iterations_times_k_is_bounded_before_the_loop(capsys):
    import time

    import numpy as np

    from dpcore import limits
    from dpcore.tensor import online_tensor_power_method, tensor_power_method
    from dpcore.tensor.online import mog_oracle
    from dpcore.tensor.power import check_power_work

    rng = np.random.default_rng(0)
    start = time.process_time()
    err = _one_line_error(capsys, "otd", "--model", "mog", "--k", "200", "--d", "300", "--restarts", "1000",
                          "--iterations", "1000")
    assert "the tensor power method would take about 1.6e+15 multiply-adds" in err and "1e+12 allowed" in err
    assert time.process_time() - start < 10  # refused before any sample is drawn
    tensor = np.zeros((60, 60, 60))
    assert "multiply-adds" in _message(lambda: tensor_power_method(tensor, 60, rng, n_restarts=1000, n_iter=1000))
    # online: the flags were not bounded at all, and their product with the data not either
    x = np.ones((10, 4))
    oracle = mog_oracle(x, np.eye(4)[:, :2], 0.1)
    assert "restarts L must be an integer from 1 to 1,000" in _message(
        lambda: online_tensor_power_method(oracle, rng, n_restarts=10**9))
    assert "passes over 10,000,000,000 samples" in _message(
        lambda: online_tensor_power_method(oracle, rng, n_restarts=10, n_iter=1000, batch_size=10**10))
    # the bound is the estimate, exactly: K (N L + N) K^3 in core, K (N + 1) n K (w + L) online
    assert check_power_work(5, 10, 30) == 5 * (30 * 10 + 30) * 5**3
    assert check_power_work(5, 10, 30, samples=1000, width=7) == 5 * 31 * 1000 * 5 * (7 + 10)
    k = int((limits.MAX_POWER_WORK / (1000 * 1001)) ** 0.25)  # the largest K with L = N = 1,000: 31
    assert check_power_work(k, 1000, 1000) <= limits.MAX_POWER_WORK
    assert "multiply-adds" in _message(lambda: check_power_work(k + 1, 1000, 1000))


def test_every_round_setting_has_a_rule_where_a_log_is_read():
    """A setting added to RoundSettings must get its rule here, or a log's plan would drop it silently."""
    from dpcore.federation.log import _SETTING_RULES
    from dpcore.federation.plan import RoundSettings

    assert set(_SETTING_RULES) == set(RoundSettings.__dataclass_fields__)
