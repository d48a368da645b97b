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

The file is JSON (``capefed-ledger-v1``), read with a size bound and every field checked, and written atomically
(a temporary file in the same directory, flushed and synced, then renamed over the old one), so a crash never leaves
half a ledger. A release is recorded before it is sent.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..limits import MAX_LEDGER_BYTES, MAX_LEDGER_RELEASES
from ..privacy.calibration import exact_eps
from ..validation import InputError

__all__ = ["LEDGER_FORMAT", "MAX_LEDGER_BYTES", "MAX_LEDGER_RELEASES", "Ledger", "LedgerEntry", "composed_eps",
           "read_ledger", "spend", "write_ledger"]

LEDGER_FORMAT = "capefed-ledger-v1"
_TEXT = 300


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
        return math.sqrt(math.fsum(e.mu**2 for e in self.entries))

    @property
    def spent(self) -> float:
        """The composed eps at delta_total."""
        return composed_eps([e.mu for e in self.entries], self.delta_total)

    def to_dict(self) -> dict[str, Any]:
        return {"format": LEDGER_FORMAT, "site": self.site, "eps_total": self.eps_total,
                "delta_total": self.delta_total, "entries": [asdict(e) for e in self.entries]}


def composed_eps(mus: Sequence[float], delta: float) -> float:
    """eps at ``delta`` of the composition of Gaussian mechanisms with mu_i = Delta_i / sigma_i (exact)."""
    mu = math.sqrt(math.fsum(float(m) ** 2 for m in mus))
    if mu == 0.0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    return exact_eps(1.0, mu, float(delta))


def _number(data: dict[str, Any], key: str, where: str, *, positive: bool = False) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise InputError(f"{where}: {key} must be a finite number (got {value!r})")
    if float(value) < 0 or (positive and float(value) <= 0):
        raise InputError(f"{where}: {key} must be {'> 0' if positive else '>= 0'} (got {value!r})")
    return float(value)


def _text(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or len(value) > _TEXT:
        raise InputError(f"{where}: {key} must be text of at most {_TEXT} characters")
    return value


def read_ledger(path: str | Path, site: str, eps_total: float, delta_total: float) -> Ledger:
    """The ledger at ``path`` (an empty one if the file does not exist yet), checked: its size, JSON, format, site
    and every entry. The configured totals are the site's (a file written under other totals is refused)."""
    path = Path(path)
    empty = Ledger(site=site, eps_total=float(eps_total), delta_total=float(delta_total))
    try:
        with open(path, "rb") as handle:
            if not os.path.isfile(path):
                raise InputError(f"the ledger {path} is not a regular file")
            content = handle.read(MAX_LEDGER_BYTES + 1)
    except FileNotFoundError:
        return empty
    except OSError as exc:
        raise InputError(f"cannot read the ledger {path}: {exc.strerror}") from exc
    if len(content) > MAX_LEDGER_BYTES:
        raise InputError(f"the ledger {path} has more than {MAX_LEDGER_BYTES:,} bytes")
    try:
        data = json.loads(content)
    except ValueError as exc:
        raise InputError(f"the ledger {path} is not valid JSON: {str(exc)[:200]}") from exc
    if not isinstance(data, dict) or data.get("format") != LEDGER_FORMAT:
        raise InputError(f"{path} is not a privacy ledger (format {LEDGER_FORMAT!r})")
    if data.get("site") != site:
        raise InputError(f"the ledger {path} belongs to site {data.get('site')!r}, not {site!r}")
    for key, value in (("eps_total", eps_total), ("delta_total", delta_total)):
        if data.get(key) != value:
            raise InputError(f"the ledger {path} was kept for {key} = {data.get(key)!r}; the site is configured with "
                             f"{value!r} (a budget is not reset by changing the configuration)")
    entries = data.get("entries")
    if not isinstance(entries, list) or len(entries) > MAX_LEDGER_RELEASES:
        raise InputError(f"the ledger {path} must hold a list of at most {MAX_LEDGER_RELEASES:,} releases")
    parsed = []
    for i, entry in enumerate(entries):
        where = f"the ledger {path}, release {i + 1}"
        if not isinstance(entry, dict):
            raise InputError(f"{where}: must be an object")
        parsed.append(LedgerEntry(round=_text(entry, "round", where), algorithm=_text(entry, "algorithm", where),
                                  stage=_text(entry, "stage", where), eps=_number(entry, "eps", where),
                                  delta=_number(entry, "delta", where), view=_text(entry, "view", where),
                                  mu=_number(entry, "mu", where)))
    return Ledger(site=site, eps_total=float(eps_total), delta_total=float(delta_total), entries=tuple(parsed))


def spend(ledger: Ledger, releases: Sequence[LedgerEntry]) -> Ledger:
    """The ledger with ``releases`` added; raises InputError (nothing recorded) when the composition would exceed
    eps_total at delta_total, or a release of the same round and stage is already recorded (a replayed request)."""
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
            f"eps = "
            f"{ledger.spent:.4g} at delta = {ledger.delta_total:g}; this round's {len(releases)} release(s) would "
            f"bring it to eps = {after.spent:.4g}, more than the total eps = {ledger.eps_total:g} it was configured "
            "with")
    return after


def write_ledger(path: str | Path, ledger: Ledger) -> None:
    """Write the ledger atomically: a temporary file beside it, flushed and synced, renamed over the old one."""
    path = Path(path)
    text = json.dumps(ledger.to_dict(), indent=1) + "\n"
    handle = tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False)
    try:
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
