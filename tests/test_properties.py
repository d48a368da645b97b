"""Property-based tests (Hypothesis) of everything that parses user input: scenario JSON, links, CSV and text
uploads, command-line flags.

The property, everywhere: a generated input either works (and what comes out of it works downstream: a valid
scenario designs, audits and round-trips through its link) or is refused with the library's InputError (or its
ScenarioError) carrying a message; nothing else is raised. Command lines run in a forked child with a memory limit
(RLIMIT_AS) and an alarm, so "refused before the allocation or loop it bounds" is checked, not assumed.

The Hypothesis profile (tests/conftest.py) is derandomized and has no database: every run tries the same inputs.
"""

from __future__ import annotations

import base64
import codecs
import gzip
import json
import math
import os
import resource
import signal
import string
import sys
import traceback
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.cape import plan_scenario
from dpcore.cli import main as cli_main
from dpcore.data import parse_count_csv, parse_documents, parse_numeric_csv, parse_vocabulary
from dpcore.scenario import (
    ScenarioError,
    preset_scenario,
    scenario_from_bytes,
    scenario_from_dict,
    scenario_from_json,
    scenario_from_query,
    scenario_from_rows,
    scenario_to_query,
)
from dpcore.validation import InputError

# --------------------------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------------------------

HUGE = 10**400
numbers = st.one_of(
    st.integers(min_value=-5, max_value=3000),
    st.integers(min_value=-HUGE, max_value=HUGE),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=1e-8, max_value=1e5),
    st.sampled_from([0, 1, 1e-300, 1e300, 1e19, 10**19, 2**63, 2**32, -1, 0.5, 1e-5, 1e-100, 1e-101, 1e4, 1.0001e4]),
    st.text(alphabet="0123456789.e-+naifINF ", max_size=12),
    st.none(),
    st.booleans(),
)
names = st.one_of(st.text(max_size=12), st.sampled_from(["A", "B", "a\x1b[31m", " ", "x" * 101]), numbers)
site = st.fixed_dictionaries(
    {"name": names, "n": numbers, "eps": numbers, "delta": numbers},
    optional={"weight": numbers, "colour": st.text(max_size=3)},
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-HUGE, HUGE) | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)
scenario_dicts = st.fixed_dictionaries(
    {"sites": st.one_of(st.lists(site, min_size=1, max_size=6), json_values)},
    optional={"neighbouring": st.sampled_from(["replace-one", "as-published", "other"]) | json_values,
              "calibration": st.sampled_from(["classic", "analytic", "x"]) | json_values,
              "tau_c": numbers, "seed": numbers, "extra": json_values},
)
plausible_site = st.fixed_dictionaries({
    "name": st.text(alphabet=string.ascii_letters, min_size=1, max_size=6),
    "n": st.integers(min_value=1, max_value=10**9),
    "eps": st.floats(min_value=1e-6, max_value=1e4),
    "delta": st.floats(min_value=1e-100, max_value=0.99),
})
plausible_scenarios = st.fixed_dictionaries(
    {"sites": st.lists(plausible_site, min_size=1, max_size=6, unique_by=lambda s: s["name"])},
    optional={"calibration": st.sampled_from(["classic", "analytic"]),
              "neighbouring": st.sampled_from(["replace-one", "as-published"]),
              "tau_c": st.floats(min_value=1e-20, max_value=1e20), "seed": st.integers(0, 2**32 - 1)},
)


def _refused(exc: BaseException) -> None:
    """A refusal must be the library's InputError with a message."""
    assert isinstance(exc, InputError), f"{type(exc).__name__}: {exc}"
    assert str(exc).strip(), "an InputError without a message"


def _works_downstream(scenario) -> None:
    """What the pages and commands do with a valid scenario: sums, caveats, tau_s of every statistic, the plan
    (design, audit, robust design), and the link and JSON round trips."""
    assert 1 <= scenario.total_n <= 100 * 10**9
    scenario.caveats()
    for statistic in ("mean", "pca", "stm-m3"):
        assert np.all(np.isfinite(scenario.taus(statistic))) and np.all(scenario.taus(statistic) > 0)
    try:
        plan = plan_scenario(scenario)
    except InputError as exc:  # e.g. tau_c outside 1e-6..1e6 times the floor
        _refused(exc)
    else:
        design = plan.design
        assert design.feasible or design.reason, "an infeasible design without a reason"
        if design.feasible:
            assert math.isfinite(design.gain) and np.all(np.isfinite(design.var_g))
    assert scenario_from_query(scenario_to_query(scenario)) == scenario
    assert scenario_from_json(scenario.to_json()) == scenario


# --------------------------------------------------------------------------------------------------------------
# Scenario JSON and links
# --------------------------------------------------------------------------------------------------------------

@settings(max_examples=200)
@given(scenario_dicts)
def test_scenario_dicts_are_valid_or_refused_with_a_message(data):
    try:
        scenario = scenario_from_dict(data)
    except Exception as exc:  # noqa: BLE001 - the property is about what is raised
        _refused(exc)
        assert isinstance(exc, ScenarioError) and exc.errors
    else:
        _works_downstream(scenario)


@settings(max_examples=60)
@given(plausible_scenarios)
def test_valid_scenarios_work_downstream(data):
    try:
        scenario = scenario_from_dict(data)
    except ScenarioError as exc:  # a weight or name clash, a delta of 0.99 >= ... : refused in words
        _refused(exc)
    else:
        _works_downstream(scenario)


def _mutations(text: str) -> st.SearchStrategy[str]:
    """Text cut short, characters replaced or inserted, brackets multiplied."""
    n = len(text)
    return st.one_of(
        st.integers(0, n).map(lambda i: text[:i]),
        st.tuples(st.integers(0, max(n - 1, 0)), st.characters()).map(lambda t: text[:t[0]] + t[1] + text[t[0] + 1:]),
        st.tuples(st.integers(0, n), st.text(max_size=5)).map(lambda t: text[:t[0]] + t[1] + text[t[0]:]),
        st.integers(1, 2000).map(lambda k: "[" * k + text + "]" * k),
        st.integers(1, 300).map(lambda k: text.replace("1000", "1" + "0" * k, 1)),
    )


DEFAULT_JSON = preset_scenario("default").to_json()


@settings(max_examples=150)
@given(st.one_of(st.text(max_size=200), json_values.map(json.dumps), scenario_dicts.map(json.dumps),
                 _mutations(DEFAULT_JSON)))
def test_scenario_json_text_is_valid_or_refused_with_a_message(text):
    try:
        scenario = scenario_from_json(text)
    except Exception as exc:  # noqa: BLE001
        _refused(exc)
    else:
        _works_downstream(scenario)


@settings(max_examples=80)
@given(st.one_of(st.binary(max_size=200), st.text(max_size=100).map(lambda t: t.encode("utf-16")),
                 st.text(max_size=100).map(lambda t: t.encode("latin-1", errors="replace")),
                 st.just(codecs.BOM_UTF8 + DEFAULT_JSON.encode()), st.just(DEFAULT_JSON.encode("utf-16"))))
def test_uploaded_scenario_bytes_are_valid_or_refused_with_a_message(raw):
    try:
        scenario = scenario_from_bytes(raw)
    except Exception as exc:  # noqa: BLE001
        _refused(exc)
    else:
        _works_downstream(scenario)


GOOD_LINK = scenario_to_query(preset_scenario("default"))
BASE64URL = string.ascii_letters + string.digits + "-_"


def _packed(text: str) -> str:
    return "1." + base64.urlsafe_b64encode(zlib.compress(text.encode("utf-8"))).decode().rstrip("=")


@settings(max_examples=150)
@given(st.one_of(
    st.text(max_size=80),
    st.text(alphabet=BASE64URL + "@*=/+. %", max_size=80).map(lambda t: "1." + t),
    _mutations(GOOD_LINK),
    st.one_of(json_values.map(json.dumps), scenario_dicts.map(json.dumps), _mutations(DEFAULT_JSON)).map(_packed),
    st.lists(st.text(max_size=10), max_size=3),
))
def test_links_are_valid_or_refused_with_a_message(value):
    try:
        scenario = scenario_from_query(value)
    except Exception as exc:  # noqa: BLE001
        _refused(exc)
    else:
        _works_downstream(scenario)


table_cells = st.one_of(numbers.map(str), numbers, st.text(max_size=6), st.none(), st.just(float("nan")))


@settings(max_examples=80)
@given(st.lists(st.fixed_dictionaries({"name": table_cells, "n": table_cells, "eps": table_cells,
                                       "delta": table_cells, "weight": table_cells}), max_size=5),
       table_cells, table_cells)
def test_sites_table_rows_are_valid_or_listed_per_cell(rows, tau_c, seed):
    errors, scenario = scenario_from_rows(rows, tau_c=tau_c, seed=seed)
    assert (scenario is None) == bool(errors)
    assert all(str(e) for e in errors)
    if scenario is not None:
        _works_downstream(scenario)


# --------------------------------------------------------------------------------------------------------------
# CSV and text uploads
# --------------------------------------------------------------------------------------------------------------

csv_cells = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
    st.integers(-10**6, 10**6).map(str),
    st.text(alphabet="abc ,;\"\t-+.eE019naifINF", max_size=6),
    st.just(""),
    st.sampled_from(["nan", "inf", "1e400", "1" * 50, "x"]),
)


@st.composite
def csv_files(draw) -> bytes | str:
    rows = draw(st.lists(st.lists(csv_cells, min_size=1, max_size=5), min_size=0, max_size=7))
    delimiter = draw(st.sampled_from([",", ";", "\t"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(delimiter.join(row) for row in rows)
    form = draw(st.sampled_from(["text", "utf-8", "bom", "utf-16", "latin-1", "gzip", "garbage"]))
    if form == "text":
        return text
    if form == "utf-8":
        return text.encode("utf-8")
    if form == "bom":
        return codecs.BOM_UTF8 + text.encode("utf-8")
    if form == "utf-16":
        return text.encode("utf-16")
    if form == "latin-1":
        return (text + "\u00e9").encode("latin-1", errors="replace")
    if form == "gzip":
        return gzip.compress(text.encode("utf-8"))
    return draw(st.binary(max_size=300))


@settings(max_examples=150)
@given(csv_files(), st.sampled_from([None, True, False, "yes"]),
       st.sampled_from([None, 0, 1, -1, 7, "x1", "a", "", True, 2.5]))
def test_csv_uploads_parse_or_are_refused_with_a_message(content, header, label_column):
    try:
        table = parse_numeric_csv(content, header=header, label_column=label_column)
    except Exception as exc:  # noqa: BLE001
        _refused(exc)
    else:
        assert table.values.ndim == 2 and table.n_samples >= 2 and table.dim >= 2
        assert np.all(np.isfinite(table.values))
        assert len(table.columns) == table.dim
        assert table.labels is None or len(table.labels) == table.n_samples


words = st.text(alphabet="abcdefg '\u2019,.\n\t0123", max_size=400)


@settings(max_examples=80)
@given(st.one_of(words, words.map(lambda t: t.encode("utf-8")), words.map(lambda t: t.encode("utf-16")),
                 st.binary(max_size=200)),
       st.one_of(st.none(), st.integers(-3, 30), st.sampled_from([10**9, 2.5, "10", True])),
       st.sampled_from([None, ("a", "b"), ("abc", "de", "fg")]))
def test_text_uploads_parse_or_are_refused_with_a_message(content, vocab_size, vocabulary):
    for parse in (lambda: parse_documents(content, vocab_size=vocab_size, vocabulary=vocabulary),
                  lambda: parse_vocabulary(content),
                  lambda: parse_count_csv(content, vocab_size=vocab_size if vocabulary is None else None,
                                          vocabulary=vocabulary)):
        try:
            result = parse()
        except Exception as exc:  # noqa: BLE001
            _refused(exc)
        else:
            if isinstance(result, tuple):  # a vocabulary
                assert len(result) >= 2 and len(set(result)) == len(result)
            else:
                assert result.counts.shape == (result.n, result.dim) and result.n >= 2


# --------------------------------------------------------------------------------------------------------------
# Command-line flags, each command line in a forked child with a memory limit and an alarm
# --------------------------------------------------------------------------------------------------------------

EXTRA_MEMORY = 1 << 30  # the child may grow by at most 1 GiB of address space
CHILD_SECONDS = 20


def _run_limited(argv: list[str], tmp_path) -> tuple[int, str]:
    """``python -m dpcore argv`` in a forked child limited to EXTRA_MEMORY more address space and CHILD_SECONDS;
    returns (exit status, or -signal, stderr)."""
    err_path = tmp_path / "stderr.txt"
    with open("/proc/self/status") as status:
        vm_kib = int(next(line for line in status if line.startswith("VmSize:")).split()[1])
    pid = os.fork()
    if pid == 0:  # child: never returns into pytest
        code = 4
        try:
            limit = vm_kib * 1024 + EXTRA_MEMORY
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fd, 2)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            sys.stderr = os.fdopen(2, "w", closefd=False)  # not pytest's capture objects
            sys.stdout = os.fdopen(1, "w", closefd=False)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)  # not pytest-timeout's handler: the alarm kills
            signal.alarm(CHILD_SECONDS)
            code = cli_main(argv)
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001 - anything escaping main is a failure of the property
            traceback.print_exc()
            sys.stderr.flush()
            code = 5
        finally:
            os._exit(code if isinstance(code, int) else 6)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code, err_path.read_text(errors="replace") if err_path.exists() else ""


hostile_values = st.one_of(
    st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e9", "1000000000", "1e12", "100000", "2.5", "abc", "",
                     "1" * 60, "0x10", "1_000", "\x1b[31m", "-0", "1e-400", "4294967296", "65537"]),
    st.integers(1, 3).map(str),
)
COMMANDS = {
    "design": ["--collusion", "--e-scale", "--dim", "--sigma2", "--statistic", "--solver"],
    "pca": ["--sites", "--eps", "--delta", "--k", "--runs", "--seed", "--site-size", "--concentration", "--dim",
            "--decay", "--rank", "--scale"],
    "otd": ["--d", "--k", "--sites", "--ns", "--eps", "--delta", "--runs", "--seed", "--memory-budget", "--split",
            "--restarts", "--iterations", "--sigma2", "--doc-length"],
    "sweep": ["--runs", "--seed", "--sites", "--ns", "--eps", "--delta", "--k", "--dim", "--d", "--sigma2", "--grid"],
}
# Small valid settings that every command line starts from, so that what passes the checks finishes quickly.
BASE = {
    "design": [],
    "pca": ["--dataset", "digits", "--runs", "1", "--k", "2", "--sites", "2"],
    "otd": ["--model", "mog", "--d", "4", "--k", "2", "--sites", "2", "--ns", "200", "--runs", "1", "--restarts", "2",
            "--iterations", "5", "--algorithms", "cape"],
    "sweep": ["--vary", "eps", "--grid", "1", "--runs", "1", "--sites", "2", "--ns", "50", "--dim", "5", "--k", "2",
              "--algorithms", "cape"],
}


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory):
    """The scenario file of ``design`` command lines; every base command line runs once here first, so that the
    modules they import on first use are loaded before the children fork (each child then starts warm)."""
    path = tmp_path_factory.mktemp("cli") / "scenario.json"
    path.write_text(preset_scenario("default").to_json(), encoding="utf-8")
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    try:
        for command, base in BASE.items():
            assert cli_main([command, *([str(path)] if command == "design" else []), *base]) in (0, 1)
    finally:
        sys.stdout.close()
        sys.stdout, sys.stderr = saved
    return str(path)


@settings(max_examples=60)
@given(data=st.data())
def test_command_lines_run_or_are_refused_in_one_line_within_limits(data, scenario_file, tmp_path_factory):
    command = data.draw(st.sampled_from(sorted(COMMANDS)))
    flags = data.draw(st.lists(st.sampled_from(COMMANDS[command]), min_size=1, max_size=3, unique=True))
    argv = [command] + (["/nonexistent.json"] if command == "design" and data.draw(st.booleans()) else
                        [scenario_file] if command == "design" else []) + BASE[command]
    for flag in flags:
        argv += [flag, data.draw(hostile_values)]
    code, err = _run_limited(argv, tmp_path_factory.mktemp("run"))
    assert code in (0, 1, 2), f"{argv}: exit {code}; stderr: {err[-500:]}"
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), f"{argv}: {err[-500:]}"
        assert "\x1b" not in err
    assert "Traceback" not in err and "internal error" not in err
