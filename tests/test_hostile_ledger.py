"""Issue 29, cause 5: a site's privacy ledger. A large recorded mu overflowed every later release (1e200 squared);
two concurrent writers lost about half of 80 releases (privacy spent and not counted); an unwritable ledger path
raised out of the site's handler. The classes: every number bounded where it enters and composed in a form that
cannot overflow (MAX_RELEASE_MU, math.hypot); one writer at a time (fcntl.flock on the ledger's lock file, tested
with real processes); every failure of the file system a refusal that names the ledger and the problem, with nothing
recorded or released."""

from __future__ import annotations

import errno
import json
import math
import os
import subprocess
import sys
import textwrap
from fractions import Fraction

import pytest
from conftest import ROOT
from hypothesis import given
from hypothesis import strategies as st

import dpcore.federation.ledger as ledger_module
from dpcore.federation import LedgerEntry, composed_eps, composed_mu, read_ledger, spend, update_ledger, write_ledger
from dpcore.limits import EPS_RANGE, MAX_LEDGER_RELEASES, MAX_RELEASE_MU
from dpcore.validation import InputError

DELTA = 1e-5


def _entry(i: int, mu: float = 0.01) -> LedgerEntry:
    return LedgerEntry(round=f"r{i}", algorithm="capePCA", stage="A", eps=0.5, delta=1e-6, view="aggregator", mu=mu)


def _document(mus) -> dict:
    return {"format": "capefed-ledger-v1", "site": "north", "eps_total": 1.0, "delta_total": DELTA,
            "entries": [dict(vars(_entry(i)), mu=m) for i, m in enumerate(mus)]}


# --- bounded arithmetic ------------------------------------------------------------------------------------------

@given(st.lists(st.floats(0.0, MAX_RELEASE_MU), max_size=300))
def test_the_composition_of_any_allowed_releases_is_exact_and_finite(mus):
    scale = max(mus, default=0.0)  # the sum of squares in exact rational arithmetic, scaled (no underflow)
    exact = scale * math.sqrt(float(sum((Fraction(m) / Fraction(scale)) ** 2 for m in mus))) if scale else 0.0
    assert composed_mu(mus) == pytest.approx(exact, rel=1e-12)
    eps = composed_eps(mus, DELTA)
    assert eps >= 0.0 and not math.isnan(eps)


def test_the_largest_ledger_at_the_largest_mu_composes_without_overflow():
    mus = [MAX_RELEASE_MU] * MAX_LEDGER_RELEASES
    assert composed_mu(mus) == pytest.approx(MAX_RELEASE_MU * math.sqrt(MAX_LEDGER_RELEASES), rel=1e-12)
    assert composed_eps(mus, DELTA) > EPS_RANGE[1]  # far beyond any allowed budget, and still a number


@pytest.mark.parametrize("mu", [1e200, 1e308, MAX_RELEASE_MU * (1 + 1e-9), -1e-9, "x", True, None, [1]])
def test_a_recorded_mu_outside_its_bound_is_refused_where_the_ledger_is_read(tmp_path, mu):
    path = tmp_path / "north.json"
    path.write_text(json.dumps(_document([0.1, mu, 0.2])))
    with pytest.raises(InputError, match="release 2: mu must be"):
        read_ledger(path, "north", 1.0, DELTA)


@pytest.mark.parametrize("text", ["1e999", "NaN", "Infinity", "1" + "0" * 400, "-Infinity"])
def test_non_finite_or_endless_numbers_in_a_ledger_are_refused(tmp_path, text):
    path = tmp_path / "north.json"
    path.write_text(json.dumps(_document([0.1, 0.3])).replace("0.3", text))
    with pytest.raises(InputError, match="mu must be|at most 100 are allowed"):
        read_ledger(path, "north", 1.0, DELTA)


@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 10**30)))
def test_a_release_to_record_is_refused_unless_its_mu_is_allowed(mu):
    ledger = read_ledger("/nonexistent/never-read.json", "north", EPS_RANGE[1], DELTA)
    allowed = not isinstance(mu, float) or math.isfinite(mu)
    allowed = allowed and 0 <= mu <= MAX_RELEASE_MU
    try:
        after = spend(ledger, [_entry(1, mu)])
    except InputError as exc:
        assert not allowed or "ledger refuses" in str(exc), str(exc)
        return
    assert allowed and after.entries[-1].mu == float(mu)


def test_a_release_with_no_noise_in_its_worst_view_is_refused_not_composed():
    ledger = read_ledger("/nonexistent/never-read.json", "north", 1.0, DELTA)
    with pytest.raises(InputError, match=r"mu must be a finite number from 0 to 1000 \(got inf\)"):
        spend(ledger, [_entry(1, math.inf)])


def test_a_large_recorded_mu_leaves_later_releases_refused_by_budget_in_words(tmp_path):
    path = tmp_path / "north.json"
    big = json.dumps(dict(_document([MAX_RELEASE_MU]), eps_total=EPS_RANGE[1]))
    path.write_text(big)
    ledger = read_ledger(path, "north", EPS_RANGE[1], DELTA)
    with pytest.raises(InputError, match="ledger refuses: 1 release.s. so far compose to eps = 5.0"):
        spend(ledger, [_entry(5)])


@pytest.mark.parametrize("totals", [(0.0, DELTA), (1e300, DELTA), (math.nan, DELTA), (1.0, 1.0), (1.0, 0.0),
                                    (1.0, -1e-5), (10**400, DELTA)])
def test_the_configured_totals_are_checked(totals):
    with pytest.raises(InputError, match="total budget"):
        read_ledger("/nonexistent/never-read.json", "north", *totals)


# --- one writer at a time ------------------------------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from dpcore.federation import LedgerEntry, spend, update_ledger
    path, who, count, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    while not start.exists():  # both writers start together
        time.sleep(0.001)
    for i in range(count):
        entry = LedgerEntry(round=f"{who}-{i}", algorithm="capePCA", stage="A", eps=0.01, delta=1e-7,
                            view="aggregator", mu=0.001)
        update_ledger(path, "north", 100.0, 1e-5, lambda ledger: spend(ledger, [entry]))
    print("done")
""")


def test_two_concurrent_writers_of_80_releases_lose_none(tmp_path):
    """Two real processes record 80 releases each into one ledger at the same time: all 160 are recorded."""
    path, start = tmp_path / "north.json", tmp_path / "start"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), who, "80", str(start)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for who in ("a", "b")]
    start.touch()
    outputs = [w.communicate(timeout=600) for w in writers]
    assert all(w.returncode == 0 for w in writers), [o[1][-2000:] for o in outputs]
    ledger = read_ledger(path, "north", 100.0, 1e-5)
    rounds = sorted(e.round for e in ledger.entries)
    assert len(rounds) == 160 and rounds == sorted({f"{who}-{i}" for who in "ab" for i in range(80)})
    assert sorted(os.listdir(tmp_path)) == ["north.json", "north.json.lock", "start"]  # no temporary file left


def test_a_lock_held_too_long_is_a_refusal_not_a_wait_for_ever(tmp_path, monkeypatch):
    import fcntl

    path = tmp_path / "north.json"
    holder = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(holder, fcntl.LOCK_EX)
    monkeypatch.setattr(ledger_module, "LEDGER_LOCK_SECONDS", 0.2)
    try:
        with pytest.raises(InputError, match="stayed locked by another writer .* for more than 0.2 s"):
            update_ledger(path, "north", 1.0, DELTA, lambda ledger: spend(ledger, [_entry(1)]))
    finally:
        os.close(holder)
    assert not path.exists()


def test_an_update_may_only_add_releases(tmp_path):
    path = tmp_path / "north.json"
    update_ledger(path, "north", 1.0, DELTA, lambda ledger: spend(ledger, [_entry(1), _entry(2)]))
    before = path.read_bytes()
    with pytest.raises(InputError, match="may only add releases"):
        update_ledger(path, "north", 1.0, DELTA, lambda ledger: spend(
            read_ledger("/nonexistent/never-read.json", "north", 1.0, DELTA), [_entry(3)]))
    assert path.read_bytes() == before


# --- file-system failures are refusals ------------------------------------------------------------------------------

def _fails(monkeypatch, where: str, code: int) -> None:
    def failing(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    if where == "create":
        monkeypatch.setattr(ledger_module.tempfile, "NamedTemporaryFile", failing)
    elif where == "rename":
        monkeypatch.setattr(ledger_module.os, "replace", failing)
    else:
        monkeypatch.setattr(ledger_module.os, "fsync", failing)


@pytest.mark.parametrize("where, code, words", [
    ("create", errno.EROFS, "Read-only file system"), ("create", errno.ENOSPC, "No space left on device"),
    ("create", errno.EACCES, "Permission denied"), ("rename", errno.EROFS, "Read-only file system"),
    ("sync", errno.EIO, "Input/output error"), ("sync", errno.EDQUOT, "quota exceeded")])
def test_a_failing_write_is_a_refusal_and_keeps_the_old_ledger(tmp_path, monkeypatch, where, code, words):
    path = tmp_path / "north.json"
    update_ledger(path, "north", 1.0, DELTA, lambda ledger: spend(ledger, [_entry(1)]))
    before = path.read_bytes()
    _fails(monkeypatch, where, code)
    with pytest.raises(InputError, match=f"cannot write the ledger {path}: .*{words}.*releases nothing"):
        update_ledger(path, "north", 1.0, DELTA, lambda ledger: spend(ledger, [_entry(2)]))
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["north.json", "north.json.lock"]  # no temporary file left


def test_missing_and_impossible_folders_are_refusals_that_name_them(tmp_path):
    missing = tmp_path / "no-such-folder" / "north.json"
    with pytest.raises(InputError, match=f"cannot lock the ledger {missing}: .*releases nothing"):
        update_ledger(missing, "north", 1.0, DELTA, lambda ledger: spend(ledger, [_entry(1)]))
    with pytest.raises(InputError, match=f"the folder {missing.parent} does not exist"):
        write_ledger(missing, read_ledger(missing, "north", 1.0, DELTA))
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    with pytest.raises(InputError, match="Not a directory"):
        update_ledger(a_file / "north.json", "north", 1.0, DELTA, lambda ledger: spend(ledger, [_entry(1)]))
    with pytest.raises(InputError, match="cannot write the ledger /proc/north.json: No such file or directory"):
        write_ledger("/proc/north.json", read_ledger(missing, "north", 1.0, DELTA))
    assert not missing.parent.exists()


def test_a_site_with_an_unwritable_ledger_refuses_and_the_round_releases_nothing(tmp_path):
    """In a round (in memory): one site's ledger is in a folder that does not exist. The site refuses, naming its
    ledger and the problem; the round stops, releases nothing, and no exception leaves a handler."""
    import copy

    from capefed.demo import prepare_demo
    from capefed.memory import InMemoryTransport, party_node
    from capefed.rounds import run_round, settings_from_run_config

    demo = prepare_demo(tmp_path / "data", noise="helper")
    nodes = copy.deepcopy(list(demo.nodes))
    for node in nodes:
        if node["role"] == "site":
            node["ledger"] = str(tmp_path / f"{node['name']}-ledger.json")
    south = next(n for n in nodes if n.get("name") == "south")
    south["ledger"] = str(tmp_path / "gone" / "south-ledger.json")
    outcome = run_round(InMemoryTransport([party_node(n) for n in nodes]),
                        settings_from_run_config(demo.run_config, "capePCA", "ledger/unwritable"))
    assert outcome.status == "stopped" and outcome.aggregates == {} and outcome.outputs == {}
    assert "site south" in outcome.reason and "ledger" in outcome.reason and "gone" in outcome.reason
