"""A site's privacy ledger as a file: an append-only chain of events, each bound to the one before it by a keyed hash,
created once at enrolment and never replaced by a default (docs/federated.md, "The ledger").

**Events.** ``create`` (the site's name and total budget, eps_total at delta_total, and a random nonce: the first
event, and only there), ``approve`` (a study the site signed), ``reserve`` (a round's worst-case cost, written before
the site draws or shares anything for it), ``spend`` (a stage whose release may now be unmasked: written before the
site signs a survivor set holding itself) and ``settle`` (a round is over at this site: its stages are spent or void).
What each event means for the budget is :mod:`dpcore.federation.accounts`; this module keeps the file.

**The chain.** Every event carries ``prev``, the MAC of the event before it ("" for the first), and its own ``mac`` =
HMAC-SHA256(key, format, prev, the canonical JSON of the event), keyed with the site's ledger key (32 random bytes
made at enrolment, :func:`new_ledger_key`; a deployment keeps it in ``/etc/capefed``, read-only to the service). The
ledger's **id** is the MAC of its create event (a fresh nonce makes every ledger's id different); its **head** is the
number of events and the MAC of the last one (:class:`LedgerHead`). Reading a ledger checks every MAC and link: an
edited, inserted, removed or reordered event, a file damaged in any byte or kept with another key is refused, naming
the event. What the chain alone cannot see is a file cut after an event or rolled back to an earlier copy (a valid
prefix): the site reports its head in every statement it signs, and every other site keeps the heads it saw and
refuses a later round in which a site's ledger is shorter, another one, or forked at a length it saw
(:func:`dpcore.federation.accounts.peer_problem`).

**Fail closed.** A missing file is an error (a wrong path, a deleted ledger), never a fresh budget: a ledger exists only
once :func:`create_ledger` made it, and :func:`create_ledger` refuses to write over anything. The file is read as every
file input is (:func:`dpcore.textio.read_file`: a regular file, at most :data:`~dpcore.limits.MAX_LEDGER_BYTES`) and
parsed by the one bounded reader; every field of every event is checked where it is read (numbers within their
ranges before any arithmetic, at most :data:`~dpcore.limits.MAX_LEDGER_EVENTS` events). It is written atomically (a
temporary file beside it, synced, renamed over the old one, the folder synced) under an exclusive lock
(``fcntl.flock`` on ``<ledger>.lock``, waited for at most :data:`~dpcore.limits.LEDGER_LOCK_SECONDS`), so concurrent
writers never lose an event and a crash never leaves half a ledger. Every failure is an InputError naming the ledger and
the problem: the site records and releases nothing.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import hmac
import json
import math
import os
import secrets
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..limits import DELTA_RANGE, EPS_RANGE, LEDGER_LOCK_SECONDS, MAX_LEDGER_BYTES, MAX_LEDGER_EVENTS, MAX_RELEASE_MU
from ..textio import MissingFile, file_kind, load_json, read_file
from ..validation import InputError

__all__ = ["KEY_BYTES", "LEDGER_FORMAT", "LOCK_SUFFIX", "Ledger", "LedgerEvent", "LedgerHead", "check_costs",
           "create_ledger",
           "new_ledger_key", "parse_ledger_key", "read_ledger", "read_ledger_key", "update_ledger"]

LEDGER_FORMAT = "capefed-ledger-v2"
KEY_BYTES = 32
LOCK_SUFFIX = ".lock"
"""The lock file of ledger ``x.json`` is ``x.json.lock`` beside it."""
MAX_TEXT = 300
MAX_ROUNDS = 1_000_000
_HEX64 = frozenset("0123456789abcdef")
_LOCK_POLL_SECONDS = 0.01
_REFUSED = "the site records and releases nothing"


def _number(value: Any, where: str, low: float, high: float) -> float:
    """A finite number in [low, high] (an integer of many digits is compared before any conversion)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where} must be a number (got {type(value).__name__})")
    if not (isinstance(value, int) or math.isfinite(value)) or not low <= value <= high:
        raise InputError(f"{where} must be a finite number from {low:g} to {high:g} (got {value!r:.40})")
    return float(value)


def _count(value: Any, where: str, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        raise InputError(f"{where} must be an integer from 0 to {high:,} (got {value!r:.40})")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise InputError(f"{where} must be text of at most {MAX_TEXT} characters")
    return value


def _hex(value: Any, where: str, size: int = 64, empty: bool = False) -> str:
    if empty and value == "":
        return value
    if not isinstance(value, str) or len(value) != size or not set(value) <= _HEX64:
        raise InputError(f"{where} must be {size} lower-case hexadecimal characters")
    return value


def _texts(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or len(value) > 16:
        raise InputError(f"{where} must be a list of at most 16 stage names")
    return [_text(v, where) for v in value]


def _cost(value: Any, where: str) -> dict[str, Any]:
    """One stage's worst-case cost: its name, the promised (eps, delta), the worst view and mu there."""
    if not isinstance(value, dict) or set(value) != {"stage", "eps", "delta", "view", "mu"}:
        raise InputError(f"{where} must hold stage, eps, delta, view and mu")
    return {"stage": _text(value["stage"], f"{where}: stage"), "eps": _number(value["eps"], f"{where}: eps", 0.0,
                                                                              EPS_RANGE[1]),
            "delta": _number(value["delta"], f"{where}: delta", 0.0, 1.0), "view": _text(value["view"],
                                                                                         f"{where}: view"),
            "mu": _number(value["mu"], f"{where}: mu", 0.0, MAX_RELEASE_MU)}


def check_costs(value: Any, where: str) -> list[dict[str, Any]]:
    """Stages' costs, each field checked (what a reservation records): 1 to 16 stages, mu within MAX_RELEASE_MU."""
    if not isinstance(value, list) or not 1 <= len(value) <= 16:
        raise InputError(f"{where} must be a list of 1 to 16 stages")
    return [_cost(v, f"{where}, stage {i + 1}") for i, v in enumerate(value)]


def _head(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list) or len(value) != 3:
        raise InputError(f"{where} must be [ledger id, events, head]")
    return [_hex(value[0], f"{where}: the ledger id"), _count(value[1], f"{where}: the events", MAX_LEDGER_EVENTS),
            _hex(value[2], f"{where}: the head")]


def _peers(value: Any, where: str) -> dict[str, list[Any]]:
    if not isinstance(value, dict) or len(value) > 256:
        raise InputError(f"{where} must map at most 256 site names to ledger heads")
    return {_text(k, where): _head(v, f"{where} ({str(k)[:64]})") for k, v in value.items()}


def _site(value: Any, where: str) -> str:
    text = _text(value, where)
    if not 0 < len(text) <= 64:
        raise InputError(f"{where} must be a name of 1 to 64 characters")
    return text


def _round(value: Any, where: str) -> str:
    return _text(value, where)


FIELDS: dict[str, dict[str, Callable[[Any, str], Any]]] = {
    "create": {"site": _site, "eps_total": lambda v, w: _number(v, w, *EPS_RANGE),
               "delta_total": lambda v, w: _number(v, w, DELTA_RANGE[0], 1.0 - 1e-12), "nonce": _hex},
    "approve": {"study": _hex, "title": _text, "rounds": lambda v, w: _count(v, w, MAX_ROUNDS),
                "mu": lambda v, w: _number(v, w, 0.0, MAX_RELEASE_MU)},
    "reserve": {"round": _round, "study": _hex, "algorithm": _text, "stages": check_costs, "peers": _peers},
    "spend": {"round": _round, "stage": _text, "peers": _peers},
    "settle": {"round": _round, "spent": _texts, "void": _texts, "reason": _text},
}
"""Every kind of event and its fields, each with its check (the one table the reader and the writer use)."""


@dataclass(frozen=True, kw_only=True)
class LedgerEvent:
    """One event of the chain: its kind, when it was written (seconds since the epoch), its fields (checked by
    :data:`FIELDS`), the MAC of the event before it and its own."""

    kind: str
    time: float
    data: dict[str, Any]
    prev: str
    mac: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "time": self.time, **self.data, "prev": self.prev, "mac": self.mac}


@dataclass(frozen=True, kw_only=True)
class LedgerHead:
    """What a site reports of its ledger in every statement it signs: the ledger's id (the MAC of its create event),
    its number of events and the MAC of the last one."""

    ledger: str
    count: int
    head: str

    def to_list(self) -> list[Any]:
        return [self.ledger, self.count, self.head]

    @staticmethod
    def from_list(value: Any, where: str = "a ledger head") -> LedgerHead:
        ledger, count, head = _head(value, where)
        return LedgerHead(ledger=ledger, count=count, head=head)


@dataclass(frozen=True, kw_only=True)
class Ledger:
    """A verified ledger: where it is and its events, the first of them its create event."""

    path: Path
    events: tuple[LedgerEvent, ...]

    @property
    def site(self) -> str:
        return str(self.events[0].data["site"])

    @property
    def eps_total(self) -> float:
        return float(self.events[0].data["eps_total"])

    @property
    def delta_total(self) -> float:
        return float(self.events[0].data["delta_total"])

    @property
    def head(self) -> LedgerHead:
        return LedgerHead(ledger=self.events[0].mac, count=len(self.events), head=self.events[-1].mac)

    def of_kind(self, kind: str) -> list[LedgerEvent]:
        return [e for e in self.events if e.kind == kind]


def new_ledger_key() -> bytes:
    """A fresh ledger key (32 bytes from the operating system)."""
    return secrets.token_bytes(KEY_BYTES)


def parse_ledger_key(text: str | bytes, where: str = "the ledger key") -> bytes:
    """A ledger key from its file's text: 64 hexadecimal characters (a final newline allowed)."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    text = text.strip()
    if len(text) != 2 * KEY_BYTES or not set(text.lower()) <= _HEX64:
        raise InputError(f"{where} must be {2 * KEY_BYTES} hexadecimal characters (a key made at enrolment)")
    return bytes.fromhex(text)


def read_ledger_key(path: str | Path) -> bytes:
    """The ledger key in ``path`` (a missing or damaged key file is an error, never a new key)."""
    return parse_ledger_key(read_file(path, 256, "the ledger key"), f"the ledger key {path}")


def _canonical(kind: str, when: float, data: Mapping[str, Any]) -> bytes:
    return json.dumps({"kind": kind, "time": when, **data}, sort_keys=True, separators=(",", ":"),
                      allow_nan=False).encode()


def _mac(key: bytes, prev: str, kind: str, when: float, data: Mapping[str, Any]) -> str:
    message = b"\x1f".join((LEDGER_FORMAT.encode(), prev.encode(), _canonical(kind, when, data)))
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _checked(kind: Any, data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """An event's fields, each checked by its kind's table; refuses an unknown kind or a missing or extra field."""
    if kind not in FIELDS:
        raise InputError(f"{where}: unknown kind {str(kind)[:40]!r} (one of {', '.join(FIELDS)})")
    fields = FIELDS[kind]
    if set(data) != set(fields):
        raise InputError(f"{where}: a {kind} event holds exactly {', '.join(fields)}")
    return {name: check(data[name], f"{where}: {name}") for name, check in fields.items()}


def _event(raw: Any, index: int, path: Path) -> tuple[str, float, dict[str, Any], str, str]:
    where = f"the ledger {path}, event {index + 1}"
    if not isinstance(raw, dict) or not {"kind", "time", "prev", "mac"} <= set(raw):
        raise InputError(f"{where} must be an object with kind, time, prev and mac")
    data = {k: v for k, v in raw.items() if k not in ("kind", "time", "prev", "mac")}
    when = _number(raw["time"], f"{where}: time", 0.0, 1e11)
    return (raw["kind"], when, _checked(raw["kind"], data, where), _hex(raw["prev"], f"{where}: prev", empty=True),
            _hex(raw["mac"], f"{where}: mac"))


def _tampered(path: Path, index: int, kind: str, what: str) -> InputError:
    return InputError(f"the ledger {path} fails its check at event {index + 1} ({kind}): {what}. It was edited, "
                      f"reordered or damaged, or is read with another key than its own; {_REFUSED}")


def _missing(path: Path) -> InputError:
    where = f"the folder {path.parent} does not exist" if not path.parent.is_dir() else "no such file"
    return InputError(f"the ledger {path} does not exist ({where}): a site's ledger is made once, at enrolment "
                      f"(python -m capefed.ops.ledger create), and a missing one is never a fresh budget (a wrong path "
                      f"or a deleted ledger); {_REFUSED}")


def read_ledger(path: str | Path, key: bytes, site: str | None = None) -> Ledger:
    """The ledger at ``path``, every event and link checked against ``key``; ``site``: the name its create event must
    hold. A missing file, another site's ledger, a damaged or tampered file: InputError naming it."""
    path = Path(path)
    try:
        content = read_file(path, MAX_LEDGER_BYTES, "the ledger")
    except MissingFile:
        raise _missing(path) from None
    doc = load_json(content, f"ledger {path}", max_bytes=MAX_LEDGER_BYTES)
    if not isinstance(doc, dict) or doc.get("format") != LEDGER_FORMAT or not isinstance(doc.get("events"), list):
        raise InputError(f"{path} is not a privacy ledger (format {LEDGER_FORMAT!r} with a list of events); "
                         f"{_REFUSED}")
    raw = doc["events"]
    if not 1 <= len(raw) <= MAX_LEDGER_EVENTS:
        raise InputError(f"the ledger {path} must hold 1 to {MAX_LEDGER_EVENTS:,} events; {_REFUSED}")
    events, prev = [], ""
    for index, item in enumerate(raw):
        kind, when, data, linked, mac = _event(item, index, path)
        if (kind == "create") != (index == 0):
            raise _tampered(path, index, kind, "a ledger begins with its one create event")
        if linked != prev:
            raise _tampered(path, index, kind, "it does not follow the event before it (an event removed, inserted "
                                               "or moved)")
        if not hmac.compare_digest(mac, _mac(key, prev, kind, when, data)):
            raise _tampered(path, index, kind, "its MAC does not match its content")
        events.append(LedgerEvent(kind=kind, time=when, data=data, prev=prev, mac=mac))
        prev = mac
    ledger = Ledger(path=path, events=tuple(events))
    if site is not None and ledger.site != site:
        raise InputError(f"the ledger {path} belongs to site {ledger.site!r}, not {site!r}; {_REFUSED}")
    return ledger


def _refusal(path: Path, doing: str, exc: OSError) -> InputError:
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOENT and not path.parent.is_dir():
        reason = f"the folder {path.parent} does not exist"
    return InputError(f"cannot {doing} the ledger {path}: {reason}; {_REFUSED}")


def _write(path: Path, events: Sequence[LedgerEvent]) -> None:
    """Write the ledger atomically: a temporary file beside it, flushed and synced, renamed over the old one, the
    folder synced. A failure leaves the old ledger as it was and no temporary file."""
    text = json.dumps({"format": LEDGER_FORMAT, "events": [e.to_dict() for e in events]}, indent=1,
                      allow_nan=False) + "\n"
    try:
        handle = tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp",
                                             delete=False, encoding="utf-8")
    except OSError as exc:
        raise _refusal(path, "write", exc) from None
    try:
        with handle:
            _same_owner(handle.fileno(), path)
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


def _same_owner(fd: int, path: Path) -> None:
    """Give the new file the old ledger's owner and mode (an operator's command run as root must not leave the service
    a ledger it cannot read); best effort where this process may not change the owner."""
    try:
        old = os.stat(path)
    except OSError:
        return
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
    try:
        os.fchown(fd, old.st_uid, old.st_gid)
    except PermissionError:
        pass


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
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # missing, or a problem the reader names
    if mode is not None and not stat.S_ISREG(mode):  # no lock file beside a device, a FIFO or a folder
        raise InputError(f"the ledger {path} is {file_kind(mode)}, not a regular file; {_REFUSED}")
    lock = path.with_name(path.name + LOCK_SUFFIX)
    flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(lock, flags, 0o600)
    except OSError as exc:
        raise _refusal(path, "lock", exc) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"cannot lock the ledger {path}: its lock {lock} is {file_kind(os.fstat(fd).st_mode)}, "
                             f"not a regular file; {_REFUSED}")
        deadline = time.monotonic() + LEDGER_LOCK_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise InputError(f"the ledger {path} stayed locked by another writer ({lock}) for more than "
                                     f"{LEDGER_LOCK_SECONDS:g} s; {_REFUSED}") from None
                time.sleep(_LOCK_POLL_SECONDS)
            except OSError as exc:
                raise _refusal(path, "lock", exc) from None
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _chain(key: bytes, events: list[LedgerEvent], new: Sequence[tuple[str, Mapping[str, Any]]],
           now: Callable[[], float]) -> list[LedgerEvent]:
    prev = events[-1].mac if events else ""
    for kind, data in new:
        where = f"a new {kind} event"
        checked = _checked(kind, dict(data), where)
        if kind == "create" and events:
            raise InputError("a ledger has one create event, its first")
        when = round(float(now()), 3)
        mac = _mac(key, prev, kind, when, checked)
        events.append(LedgerEvent(kind=kind, time=when, data=checked, prev=prev, mac=mac))
        prev = mac
    if len(events) > MAX_LEDGER_EVENTS:
        raise InputError(f"a ledger holds at most {MAX_LEDGER_EVENTS:,} events; {_REFUSED}")
    return events


def create_ledger(path: str | Path, key: bytes, site: str, eps_total: float, delta_total: float,
                  now: Callable[[], float] = time.time) -> Ledger:
    """Make a site's ledger at enrolment: its create event (site, total budget, a fresh nonce). Refuses when anything
    exists at ``path`` already: a ledger is made once and never written over."""
    path = Path(path)
    with _locked(path):
        if os.path.lexists(path):
            raise InputError(f"something exists at {path} already; a site's ledger is made once, at enrolment, and "
                             "never written over")
        data = {"site": site, "eps_total": eps_total, "delta_total": delta_total, "nonce": secrets.token_hex(32)}
        events = _chain(key, [], [("create", data)], now)
        _write(path, events)
    return Ledger(path=path, events=tuple(events))


def update_ledger(path: str | Path, key: bytes, site: str,
                  change: Callable[[Ledger], Sequence[tuple[str, Mapping[str, Any]]]],
                  now: Callable[[], float] = time.time) -> Ledger:
    """Append events: under the ledger's lock, read and verify it (:func:`read_ledger`), ask ``change`` for the events
    to add (it raises InputError to refuse) and write the ledger with them chained on. Returns the ledger written;
    nothing is written when anything fails. Nothing recorded can be changed or dropped: events are only added."""
    path = Path(path)
    with _locked(path):
        ledger = read_ledger(path, key, site)
        new = change(ledger)
        if not new:
            return ledger
        events = _chain(key, list(ledger.events), new, now)
        _write(path, events)
    return Ledger(path=path, events=tuple(events))
