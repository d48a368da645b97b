"""Issue 29, cause 5, and issue 31: a site's privacy ledger. A large recorded mu overflowed every later release (1e200
squared); two concurrent writers lost about half of 80 releases (privacy spent and not counted); an unwritable ledger
path raised out of the site's handler. The classes: every number bounded where it enters and composed in a form that
cannot overflow (MAX_RELEASE_MU, math.hypot); one writer at a time (fcntl.flock on the ledger's lock file, tested
with real processes); every failure of the file system a refusal that names the ledger and the problem, with nothing
recorded or released; the file a keyed chain of events, made once and checked at every read."""

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
from dpcore.federation import (
    LedgerEntry,
    composed_eps,
    composed_mu,
    create_ledger,
    read_ledger,
    reserve_event,
    update_ledger,
)
from dpcore.limits import EPS_RANGE, MAX_LEDGER_EVENTS, MAX_RELEASE_MU
from dpcore.validation import InputError

DELTA = 1e-5
KEY = bytes(range(32))
STUDY = "ab" * 32


def _cost(i: int, mu: float = 0.01) -> LedgerEntry:
    return LedgerEntry(round=f"r{i}", algorithm="capePCA", stage="A", eps=0.5, delta=1e-6, view="aggregator", mu=mu)


def _approve(ledger):
    return [("approve", {"study": STUDY, "title": "t", "rounds": 10_000, "mu": 0.0})]


def _ledger(path, eps_total: float = 1.0):
    """A ledger with its create event and the approval of STUDY."""
    create_ledger(path, KEY, "north", eps_total, DELTA)
    return update_ledger(path, KEY, "north", _approve)


def _reserve(i: int, mu: float = 0.01):
    return lambda ledger: [reserve_event(ledger, f"r{i}", STUDY, "capePCA", [_cost(i, mu)], {}, 10_000)]


def _raw(path) -> dict:
    return json.loads(path.read_text())


def _rewrite(path, doc: dict) -> None:
    path.write_text(json.dumps(doc))


# --- bounded arithmetic ------------------------------------------------------------------------------------------

@given(st.lists(st.floats(0.0, MAX_RELEASE_MU), max_size=300))
def test_the_composition_of_any_allowed_releases_is_exact_and_finite(mus):
    scale = max(mus, default=0.0)  # the sum of squares in exact rational arithmetic, scaled (no underflow)
    exact = scale * math.sqrt(float(sum((Fraction(m) / Fraction(scale)) ** 2 for m in mus))) if scale else 0.0
    assert composed_mu(mus) == pytest.approx(exact, rel=1e-12)
    eps = composed_eps(mus, DELTA)
    assert eps >= 0.0 and not math.isnan(eps)


def test_the_largest_ledger_at_the_largest_mu_composes_without_overflow():
    mus = [MAX_RELEASE_MU] * MAX_LEDGER_EVENTS
    assert composed_mu(mus) == pytest.approx(MAX_RELEASE_MU * math.sqrt(MAX_LEDGER_EVENTS), rel=1e-12)
    assert composed_eps(mus, DELTA) > EPS_RANGE[1]  # far beyond any allowed budget, and still a number


@pytest.mark.parametrize("mu", [1e200, 1e308, MAX_RELEASE_MU * (1 + 1e-9), -1e-9, "x", True, None, [1]])
def test_a_recorded_mu_outside_its_bound_is_refused_where_the_ledger_is_read(tmp_path, mu):
    path = tmp_path / "north.json"
    _ledger(path)
    update_ledger(path, KEY, "north", _reserve(1, 0.1))
    doc = _raw(path)
    doc["events"][-1]["stages"][0]["mu"] = mu
    _rewrite(path, doc)
    with pytest.raises(InputError, match="event 3: stages, stage 1: mu must be"):
        read_ledger(path, KEY, "north")


@pytest.mark.parametrize("text", ["1e999", "NaN", "Infinity", "1" + "0" * 400, "-Infinity"])
def test_non_finite_or_endless_numbers_in_a_ledger_are_refused(tmp_path, text):
    path = tmp_path / "north.json"
    _ledger(path, 10.0)
    update_ledger(path, KEY, "north", _reserve(1, 0.3))
    path.write_text(path.read_text().replace('"mu": 0.3', f'"mu": {text}'))
    with pytest.raises(InputError, match="mu must be|at most 100 are allowed"):
        read_ledger(path, KEY, "north")


@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 10**30)))
def test_a_release_to_record_is_refused_unless_its_mu_is_allowed(mu):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "north.json"
        _ledger(path, EPS_RANGE[1])
        allowed = (not isinstance(mu, float) or math.isfinite(mu)) and 0 <= mu <= MAX_RELEASE_MU
        try:
            after = update_ledger(path, KEY, "north", _reserve(1, mu))
        except InputError as exc:
            assert not allowed or "ledger refuses" in str(exc), str(exc)
            return
        assert allowed and after.events[-1].data["stages"][0]["mu"] == float(mu)


def test_a_release_with_no_noise_in_its_worst_view_is_refused_not_composed(tmp_path):
    path = tmp_path / "north.json"
    _ledger(path)
    with pytest.raises(InputError, match=r"mu must be a finite number from 0 to 1000 \(got inf\)"):
        update_ledger(path, KEY, "north", _reserve(1, math.inf))


def test_a_large_recorded_mu_leaves_later_releases_refused_by_budget_in_words(tmp_path):
    path = tmp_path / "north.json"
    _ledger(path, EPS_RANGE[1])
    big = {"round": "r1", "study": STUDY, "algorithm": "capePCA", "stages": [_cost(1, MAX_RELEASE_MU).cost()],
           "peers": {}}
    update_ledger(path, KEY, "north", lambda ledger: [("reserve", big)])  # beyond the budget, but within the bound
    with pytest.raises(InputError, match="ledger refuses: what it spent and reserved so far composes to eps = 5.0"):
        update_ledger(path, KEY, "north", _reserve(2))


@pytest.mark.parametrize("totals", [(0.0, DELTA), (1e300, DELTA), (math.nan, DELTA), (1.0, 1.0), (1.0, 0.0),
                                    (1.0, -1e-5), (10**400, DELTA)])
def test_the_totals_are_checked_when_a_ledger_is_made(tmp_path, totals):
    with pytest.raises(InputError, match="eps_total|delta_total"):
        create_ledger(tmp_path / "north.json", KEY, "north", *totals)
    assert not (tmp_path / "north.json").exists()


# --- one writer at a time ------------------------------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from dpcore.federation import LedgerEntry, reserve_event, update_ledger
    path, who, count, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    key, study = bytes(range(32)), "ab" * 32
    while not start.exists():  # both writers start together
        time.sleep(0.001)
    for i in range(count):
        cost = LedgerEntry(round=f"{who}-{i}", algorithm="capePCA", stage="A", eps=0.01, delta=1e-7,
                           view="aggregator", mu=0.001)
        update_ledger(path, key, "north", lambda ledger: [
            reserve_event(ledger, f"{who}-{i}", study, "capePCA", [cost], {}, 10_000)])
    print("done")
""")


def test_two_concurrent_writers_of_80_reservations_lose_none(tmp_path):
    """Two real processes record 80 reservations each into one ledger at the same time: all 160 are recorded and the
    chain verifies."""
    path, start = tmp_path / "north.json", tmp_path / "start"
    _ledger(path, 100.0)
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), who, "80", str(start)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for who in ("a", "b")]
    start.touch()
    outputs = [w.communicate(timeout=600) for w in writers]
    assert all(w.returncode == 0 for w in writers), [o[1][-2000:] for o in outputs]
    ledger = read_ledger(path, KEY, "north")
    rounds = sorted(e.data["round"] for e in ledger.of_kind("reserve"))
    assert len(rounds) == 160 and rounds == sorted({f"{who}-{i}" for who in "ab" for i in range(80)})
    assert sorted(os.listdir(tmp_path)) == ["north.json", "north.json.lock", "start"]  # no temporary file left


def test_a_lock_held_too_long_is_a_refusal_not_a_wait_for_ever(tmp_path, monkeypatch):
    import fcntl

    path = tmp_path / "north.json"
    _ledger(path)
    before = path.read_bytes()
    holder = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(holder, fcntl.LOCK_EX)
    monkeypatch.setattr(ledger_module, "LEDGER_LOCK_SECONDS", 0.2)
    try:
        with pytest.raises(InputError, match="stayed locked by another writer .* for more than 0.2 s"):
            update_ledger(path, KEY, "north", _reserve(1))
    finally:
        os.close(holder)
    assert path.read_bytes() == before


def test_a_ledger_is_made_once_and_never_written_over(tmp_path):
    path = tmp_path / "north.json"
    first = _ledger(path)
    before = path.read_bytes()
    with pytest.raises(InputError, match="exists at .* already; a site's ledger is made once"):
        create_ledger(path, KEY, "north", 1.0, DELTA)
    assert path.read_bytes() == before and read_ledger(path, KEY).head == first.head


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
    _ledger(path)
    before = path.read_bytes()
    _fails(monkeypatch, where, code)
    with pytest.raises(InputError, match=f"cannot write the ledger {path}: .*{words}.*releases nothing"):
        update_ledger(path, KEY, "north", _reserve(2))
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["north.json", "north.json.lock"]  # no temporary file left


def test_missing_and_impossible_folders_are_refusals_that_name_them(tmp_path):
    missing = tmp_path / "no-such-folder" / "north.json"
    with pytest.raises(InputError, match=f"cannot lock the ledger {missing}: the folder .* does not exist"):
        update_ledger(missing, KEY, "north", _reserve(1))
    with pytest.raises(InputError, match=f"the ledger {missing} does not exist .the folder .* does not exist."):
        read_ledger(missing, KEY, "north")
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    with pytest.raises(InputError, match="Not a directory"):
        update_ledger(a_file / "north.json", KEY, "north", _reserve(1))
    with pytest.raises(InputError, match="cannot lock the ledger /proc/north.json"):
        create_ledger("/proc/north.json", KEY, "north", 1.0, DELTA)
    assert not missing.parent.exists()


def test_a_ledger_that_is_a_fifo_or_a_folder_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "north.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="is a FIFO|not a regular file"):
        update_ledger(fifo, KEY, "north", _reserve(1))
    folder = tmp_path / "folder.json"
    folder.mkdir()
    with pytest.raises(InputError, match="not a regular file|directory"):
        read_ledger(folder, KEY, "north")
