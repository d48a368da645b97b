"""A site's privacy ledger: a persistent record of every release it made (round, algorithm, stage, the stage's
promised eps and delta, the worst audited view and its sigma_eff against the release's sensitivity), the exact
composition of all of them, and the refusal of a release that would exceed the site's configured total budget
(docs/federated.md, "Each site keeps its own budget").

**Exact composition.** Every release is a Gaussian mechanism in each audited view: sensitivity Delta, noise
sigma_eff, so it is mu-GDP with mu = Delta / sigma_eff (Dong, Roth and Su, "Gaussian differential privacy"). Gaussian
mechanisms compose exactly: k of them are the Gaussian mechanism with mu = sqrt(sum_i mu_i^2). The ledger records each
release's worst view (the smallest sigma_eff / Delta of every audited view, so it bounds any single adversary) and
reports the composed (eps, delta_total) from the Gaussian privacy profile
(:func:`dpcore.privacy.calibration.exact_eps`).

**Bounded arithmetic.** Every number is checked where it enters (a ledger read back, a release to record, the
configured totals): mu of one release at most :data:`~dpcore.limits.MAX_RELEASE_MU` (a release beyond it exceeds
every total budget a ledger may hold), eps and delta of a release and the totals in their ranges. The composition is
``math.hypot`` of the mu_i, which never overflows (squaring 1e200 did), and at most
:data:`~dpcore.limits.MAX_LEDGER_RELEASES` releases are composed.

**Files.** The ledger is JSON (``capefed-ledger-v1``) read as every file input is (:func:`dpcore.textio.read_file`:
a regular file only, never blocking on a FIFO, bounded by :data:`~dpcore.limits.MAX_LEDGER_BYTES`) and parsed by the
one bounded reader (:func:`dpcore.textio.load_json`), every field checked. It is written atomically (a temporary file
in the same directory, flushed and synced, renamed over the old one, the directory synced), so a crash never leaves
half a ledger. :func:`update_ledger` is the one way to record releases: it holds an exclusive lock
(``fcntl.flock`` on ``<ledger>.lock`` beside the ledger) across read, check and write, so concurrent writers (two
rounds answered at once) never lose a release, and waits at most :data:`~dpcore.limits.LEDGER_LOCK_SECONDS`. A
failure (an unwritable path, a read-only disk, a missing folder, a damaged file, a lock held too long) is an
InputError naming the ledger and the problem: the release is refused and nothing is recorded or sent. A release is
recorded before it is sent.
"""

from __future__ import annotations

import errno
import fcntl
import json
import math
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..limits import (
    DELTA_RANGE,
    EPS_RANGE,
    LEDGER_LOCK_SECONDS,
    MAX_LEDGER_BYTES,
    MAX_LEDGER_RELEASES,
    MAX_RELEASE_MU,
)
from ..privacy.calibration import exact_eps
from ..textio import MissingFile, file_kind, load_json, read_file
from ..validation import InputError

__all__ = ["LEDGER_FORMAT", "MAX_LEDGER_BYTES", "MAX_LEDGER_RELEASES", "Ledger", "LedgerEntry", "composed_eps",
           "composed_mu", "read_ledger", "spend", "update_ledger", "write_ledger"]

LEDGER_FORMAT = "capefed-ledger-v1"
LOCK_SUFFIX = ".lock"
"""The lock file of ledger ``x.json`` is ``x.json.lock`` beside it."""
_TEXT = 300
_LOCK_POLL_SECONDS = 0.01


@dataclass(frozen=True, kw_only=True)
class LedgerEntry:
    """One release: which round, algorithm and stage, the stage's promised (eps, delta), the worst audited view and
    mu = Delta / sigma_eff in it."""

    round: str
    algorithm: str
    stage: str
    eps: float
    delta: float
    view: str
    mu: float


@dataclass(frozen=True, kw_only=True)
class Ledger:
    """A site's ledger: its configured total budget (eps_total at delta_total) and every release so far."""

    site: str
    eps_total: float
    delta_total: float
    entries: tuple[LedgerEntry, ...] = ()

    @property
    def mu(self) -> float:
        """sqrt(sum_i mu_i^2): the composition of every release, exactly (mu-GDP)."""
        return composed_mu([e.mu for e in self.entries])

    @property
    def spent(self) -> float:
        """The composed eps at delta_total."""
        return composed_eps([e.mu for e in self.entries], self.delta_total)

    def to_dict(self) -> dict[str, Any]:
        return {"format": LEDGER_FORMAT, "site": self.site, "eps_total": self.eps_total,
                "delta_total": self.delta_total, "entries": [asdict(e) for e in self.entries]}


def composed_mu(mus: Sequence[float]) -> float:
    """sqrt(sum_i mu_i^2) by ``math.hypot``, which scales and never overflows (it is inf only when the true value
    exceeds the largest float)."""
    return math.hypot(*(float(m) for m in mus))


def composed_eps(mus: Sequence[float], delta: float) -> float:
    """eps at ``delta`` of the composition of Gaussian mechanisms with mu_i = Delta_i / sigma_i (exact)."""
    mu = composed_mu(mus)
    if mu == 0.0:
        return 0.0
    if not math.isfinite(mu):
        return math.inf
    return exact_eps(1.0, mu, float(delta))


def _number(data: dict[str, Any], key: str, where: str, low: float, high: float) -> float:
    """A finite number in [low, high] (no OverflowError for an integer of many digits: the range is compared
    before any conversion)."""
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: {key} must be a number (got {type(value).__name__})")
    if not (isinstance(value, int) or math.isfinite(value)) or not low <= value <= high:
        raise InputError(f"{where}: {key} must be a finite number from {low:g} to {high:g} (got {value!r:.40})")
    return float(value)


def _text(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or len(value) > _TEXT:
        raise InputError(f"{where}: {key} must be text of at most {_TEXT} characters")
    return value


def _entry(data: Any, where: str) -> LedgerEntry:
    """One release, every field checked (a release to record and a release read back alike)."""
    if not isinstance(data, dict):
        raise InputError(f"{where}: must be an object")
    return LedgerEntry(round=_text(data, "round", where), algorithm=_text(data, "algorithm", where),
                       stage=_text(data, "stage", where), eps=_number(data, "eps", where, 0.0, EPS_RANGE[1]),
                       delta=_number(data, "delta", where, 0.0, 1.0), view=_text(data, "view", where),
                       mu=_number(data, "mu", where, 0.0, MAX_RELEASE_MU))


def _totals(site: str, eps_total: float, delta_total: float) -> tuple[float, float]:
    """The configured total budget, checked: eps_total in EPS_RANGE, delta_total in DELTA_RANGE (1 excluded)."""
    where = f"site {site}: the ledger's total budget"
    eps = _number({"eps_total": eps_total}, "eps_total", where, *EPS_RANGE)
    delta = _number({"delta_total": delta_total}, "delta_total", where, *DELTA_RANGE)
    if delta >= DELTA_RANGE[1]:
        raise InputError(f"{where}: delta_total must be below 1 (got {delta!r})")
    return eps, delta


def read_ledger(path: str | Path, site: str, eps_total: float, delta_total: float) -> Ledger:
    """The ledger at ``path`` (an empty one if the file does not exist yet), checked: its kind and size, JSON, format,
    site and every entry. The configured totals are the site's (a file written under other totals is refused)."""
    path = Path(path)
    eps_total, delta_total = _totals(site, eps_total, delta_total)
    empty = Ledger(site=site, eps_total=eps_total, delta_total=delta_total)
    try:
        content = read_file(path, MAX_LEDGER_BYTES, "the ledger")
    except MissingFile:
        return empty
    data = load_json(content, f"ledger {path}", max_bytes=MAX_LEDGER_BYTES)
    if not isinstance(data, dict) or data.get("format") != LEDGER_FORMAT:
        raise InputError(f"{path} is not a privacy ledger (format {LEDGER_FORMAT!r})")
    if data.get("site") != site:
        raise InputError(f"the ledger {path} belongs to site {str(data.get('site'))[:64]!r}, not {site!r}")
    for key, value in (("eps_total", eps_total), ("delta_total", delta_total)):
        if data.get(key) != value:
            raise InputError(f"the ledger {path} was kept for {key} = {data.get(key)!r:.40}; the site is configured "
                             f"with {value!r} (a budget is not reset by changing the configuration)")
    entries = data.get("entries")
    if not isinstance(entries, list) or len(entries) > MAX_LEDGER_RELEASES:
        raise InputError(f"the ledger {path} must hold a list of at most {MAX_LEDGER_RELEASES:,} releases")
    parsed = tuple(_entry(e, f"the ledger {path}, release {i + 1}") for i, e in enumerate(entries))
    return Ledger(site=site, eps_total=eps_total, delta_total=delta_total, entries=parsed)


def spend(ledger: Ledger, releases: Sequence[LedgerEntry]) -> Ledger:
    """The ledger with ``releases`` added; raises InputError (nothing recorded) when a release is outside the
    ledger's bounds (mu above MAX_RELEASE_MU: no noise left in its worst view), the composition would exceed eps_total
    at delta_total, or a release of the same round and stage is already recorded (a replayed request)."""
    releases = [_entry(asdict(r), f"site {ledger.site}: the release of {r.algorithm} stage {r.stage}"[:200])
                for r in releases]
    done = {(e.round, e.algorithm, e.stage) for e in ledger.entries}
    for r in releases:
        if (r.round, r.algorithm, r.stage) in done:
            raise InputError(f"site {ledger.site} already released {r.algorithm} stage {r.stage} of round {r.round}; "
                             "it does not release the same stage twice")
    if len(ledger.entries) + len(releases) > MAX_LEDGER_RELEASES:
        raise InputError(f"site {ledger.site}: the ledger holds at most {MAX_LEDGER_RELEASES:,} releases")
    after = Ledger(site=ledger.site, eps_total=ledger.eps_total, delta_total=ledger.delta_total,
                   entries=ledger.entries + tuple(releases))
    if after.spent > ledger.eps_total * (1 + 1e-12):
        raise InputError(
            f"site {ledger.site}: its privacy ledger refuses: {len(ledger.entries)} release(s) so far compose to "
            f"eps = {ledger.spent:.4g} at delta = {ledger.delta_total:g}; this round's {len(releases)} release(s) "
            f"would bring it to eps = {after.spent:.4g}, more than the total eps = {ledger.eps_total:g} it was "
            "configured with")
    return after


def _refusal(path: Path, doing: str, exc: OSError) -> InputError:
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOENT and not path.parent.is_dir():
        reason = f"the folder {path.parent} does not exist"
    return InputError(f"cannot {doing} the ledger {path}: {reason}; the site records and releases nothing")


def write_ledger(path: str | Path, ledger: Ledger) -> None:
    """Write the ledger atomically: a temporary file beside it, flushed and synced, renamed over the old one, the
    folder synced. Any failure is an InputError naming the ledger and the problem; the old ledger is left as it was
    and no temporary file remains."""
    path = Path(path)
    text = json.dumps(ledger.to_dict(), indent=1) + "\n"
    try:
        handle = tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp",
                                             delete=False, encoding="utf-8")
    except OSError as exc:
        raise _refusal(path, "write", exc) from None
    try:
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, path)
    except OSError as exc:
        Path(handle.name).unlink(missing_ok=True)
        raise _refusal(path, "write", exc) from None
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Flush the folder's entry of a renamed file to disk (best effort: some file systems refuse a folder's fsync)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``<path>.lock`` (created when missing, a regular file only: a FIFO or device put there is
    refused without blocking), waited for at most LEDGER_LOCK_SECONDS."""
    lock = path.with_name(path.name + LOCK_SUFFIX)
    flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(lock, flags, 0o600)
    except OSError as exc:
        raise _refusal(path, "lock", exc) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"cannot lock the ledger {path}: its lock {lock} is {file_kind(mode)}, not a regular "
                             "file; the site records and releases nothing")
        deadline = time.monotonic() + LEDGER_LOCK_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise InputError(f"the ledger {path} stayed locked by another writer ({lock}) for more than "
                                     f"{LEDGER_LOCK_SECONDS:g} s; the site records and releases nothing") from None
                time.sleep(_LOCK_POLL_SECONDS)
            except OSError as exc:
                raise _refusal(path, "lock", exc) from None
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def update_ledger(path: str | Path, site: str, eps_total: float, delta_total: float,
                  change: Callable[[Ledger], Ledger]) -> Ledger:
    """Record releases: under the ledger's lock, read it (:func:`read_ledger`), apply ``change`` (which returns the
    ledger with releases added by :func:`spend`, or raises InputError to refuse) and write the result
    (:func:`write_ledger`). Returns the ledger written. Nothing is written when anything fails; a change that drops
    or alters a recorded release is refused."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # missing (a new ledger), or a problem read_ledger names
    if mode is not None and not stat.S_ISREG(mode):  # no lock file beside a device, a FIFO or a folder
        raise InputError(f"the ledger {path} is {file_kind(mode)}, not a regular file; the site records and releases "
                         "nothing")
    with _locked(path):
        ledger = read_ledger(path, site, eps_total, delta_total)
        after = change(ledger)
        if (after.site, after.eps_total, after.delta_total) != (ledger.site, ledger.eps_total, ledger.delta_total) or (
                after.entries[:len(ledger.entries)] != ledger.entries):
            raise InputError(f"site {site}: a ledger update may only add releases (the ledger {path} is kept)")
        write_ledger(path, after)
    return after
