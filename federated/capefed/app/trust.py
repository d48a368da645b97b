"""Who is who in a round: identity keys pinned at registration, and the signed statements every party checks.

* **Identity.** Every party (the helper and each site) holds an Ed25519 key pair (``cryptography``); the public
  halves are collected at registration into the consortium's **roster** (``capefed-roster-v1``: name, role, key),
  which every party and the aggregator keep (pinned). A name is what the roster says a key is called, never what a
  node declares.
* **Statements.** A site's hello carries a statement (canonical JSON: round, name, its reported budget, its fresh
  X25519 key for the round) signed with its identity key. The aggregator forwards the statements unchanged; the
  helper and the other sites verify them against the roster before they seal anything to those keys or recompute
  the plan from those budgets. The helper signs every sealed share (HPKE base mode authenticates the recipient
  only; the ``cryptography`` version pinned has no HPKE auth mode) and every site signs what it sends other sites.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .dp import InputError, load_json, read_file
from .sealing import SealError, check_public_key

__all__ = ["MODES", "ROSTER_FORMAT", "Roster", "Statement", "TrustError", "approval_signature", "load_identity",
           "make_identity", "read_roster", "sign", "signed_statement", "verify", "verify_approvals", "verify_statement",
           "write_roster"]

ROSTER_FORMAT = "capefed-roster-v1"
MAX_ROSTER_BYTES = 256 * 1024
MAX_STATEMENT_CHARS = 4096
_ROLES = ("helper", "site")
_RAW = serialization.Encoding.Raw


class TrustError(ValueError):
    """A key, roster, signature or statement that cannot be trusted; the message names the check."""


def _read_small(path: str | Path, limit: int, what: str) -> bytes:
    """A key or roster file: a regular file of at most ``limit`` bytes, read as every file input is
    (:func:`dpcore.textio.read_file`: a FIFO, device or directory refused before it is read)."""
    try:
        return read_file(path, limit, f"the {what}")
    except InputError as exc:
        raise TrustError(str(exc)) from None


def _json(data: str | bytes, limit: int, what: str) -> Any:
    """JSON by the one bounded reader (:func:`dpcore.textio.load_json`); its refusal as a TrustError."""
    try:
        return load_json(data, what, max_bytes=limit)
    except InputError as exc:
        raise TrustError(str(exc)) from None


def make_identity(path: str | Path) -> str:
    """A fresh Ed25519 identity key written to ``path`` (hex of the raw private key, mode 0600); returns the public
    key as hex (what goes into the roster)."""
    key = Ed25519PrivateKey.generate()
    raw = key.private_bytes(_RAW, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # never readable by others, not for a moment
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (raw.hex() + "\n").encode())
    finally:
        os.close(fd)
    return key.public_key().public_bytes(_RAW, serialization.PublicFormat.Raw).hex()


def load_identity(path: str | Path) -> Ed25519PrivateKey:
    text = _read_small(path, 256, "identity key").decode("ascii", "replace").strip()
    try:
        return Ed25519PrivateKey.from_private_bytes(bytes.fromhex(text))
    except ValueError as exc:
        raise TrustError(f"the identity key {path} is not 32 bytes of hex") from exc


@dataclass(frozen=True)
class Roster:
    """The pinned parties: name -> (role, Ed25519 public key)."""

    parties: dict[str, tuple[str, Ed25519PublicKey]]

    def key(self, name: str, role: str) -> Ed25519PublicKey:
        entry = self.parties.get(name)
        if entry is None:
            raise TrustError(f"{name!r} is not a party of the roster (a stranger's node)")
        if entry[0] != role:
            raise TrustError(f"{name!r} is registered as {entry[0]}, not {role}")
        return entry[1]

    def names(self, role: str) -> list[str]:
        return sorted(n for n, (r, _) in self.parties.items() if r == role)


def write_roster(path: str | Path, parties: dict[str, tuple[str, str]]) -> None:
    """The roster file: {name: (role, public key hex)}."""
    Path(path).write_text(json.dumps({"format": ROSTER_FORMAT, "parties": [
        {"name": n, "role": r, "key": k} for n, (r, k) in sorted(parties.items())]}, indent=1) + "\n")


def read_roster(path: str | Path) -> Roster:
    doc = _json(_read_small(path, MAX_ROSTER_BYTES, "roster"), MAX_ROSTER_BYTES, f"roster {path}")
    if not isinstance(doc, dict) or doc.get("format") != ROSTER_FORMAT or not isinstance(doc.get("parties"), list):
        raise TrustError(f"{path} is not a roster (format {ROSTER_FORMAT!r} with a list of parties)")
    parties: dict[str, tuple[str, Ed25519PublicKey]] = {}
    for entry in doc["parties"]:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("name", "role", "key")):
            raise TrustError(f"the roster {path}: every party needs a name, a role and a key (text)")
        if entry["role"] not in _ROLES or not 0 < len(entry["name"]) <= 64 or entry["name"] in parties:
            raise TrustError(f"the roster {path}: party {entry['name'][:64]!r} has an unknown role or a repeated or "
                             "invalid name")
        try:
            key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(entry["key"]))
        except ValueError as exc:
            raise TrustError(f"the roster {path}: the key of {entry['name']!r} is not an Ed25519 key") from exc
        parties[entry["name"]] = (entry["role"], key)
    return Roster(parties)


def _message(kind: str, parts: tuple[bytes | str, ...]) -> bytes:
    out = [f"capefed-{kind}-v1".encode()]
    for part in parts:
        data = part.encode() if isinstance(part, str) else bytes(part)
        out.append(len(data).to_bytes(8, "big") + data)
    return b"".join(out)


def sign(key: Ed25519PrivateKey, kind: str, *parts: bytes | str) -> bytes:
    """Ed25519 signature over the domain-separated, length-prefixed ``parts``."""
    return key.sign(_message(kind, parts))


def verify(public: Ed25519PublicKey, signature: Any, kind: str, *parts: bytes | str) -> bool:
    if not isinstance(signature, bytes) or len(signature) != 64:
        return False
    try:
        public.verify(signature, _message(kind, parts))
    except InvalidSignature:
        return False
    return True


MODES = ("real", "dry-run")
"""A round's mode: ``real`` (the sites' own data, their ledgers spend) or ``dry-run`` (synthetic data of the study's
shape, nothing spent); every site's statement names it."""


def approval_signature(key: Ed25519PrivateKey, study: str, name: str) -> bytes:
    """Site ``name``'s signature of the study with digest ``study``: its consent to rounds within it."""
    return sign(key, "study-approval", study, name)


def verify_approvals(roster: Roster, study: str, names: list[str], signatures: Any) -> None:
    """Every site of a study signed it: one signature per name (in the order given), each by the key the roster pins
    for that site. Raises TrustError naming the first site whose approval is missing or does not verify."""
    if not isinstance(signatures, list) or len(signatures) != len(names):
        raise TrustError(f"the study needs one approval per site ({len(names)}); got "
                         f"{len(signatures) if isinstance(signatures, list) else 'none'}")
    for name, signature in zip(names, signatures, strict=True):
        if not verify(roster.key(name, "site"), signature, "study-approval", study, name):
            raise TrustError(f"site {name} has not approved study {study[:16]}... (its approval is missing or not "
                             "signed by the key the roster pins for it)")


@dataclass(frozen=True, kw_only=True)
class Statement:
    """A site's signed hello: the round, its name, its reported budget (``SiteBudget.to_dict``), its X25519 key for
    the round (hex), the study it answers for (its digest), the head of its ledger ([id, events, last MAC]), the
    round's mode and the signature."""

    text: str
    round: str
    name: str
    budget: dict[str, Any]
    public_key: bytes
    signature: bytes
    study: str = ""
    ledger: list[Any] | None = None
    mode: str = "real"


def signed_statement(key: Ed25519PrivateKey, round_id: str, name: str, budget: dict[str, Any],
                     public_key: bytes, *, study: str = "", ledger: list[Any] | None = None,
                     mode: str = "real") -> tuple[str, bytes]:
    text = json.dumps({"round": round_id, "name": name, "budget": budget, "key": public_key.hex(), "study": study,
                       "ledger": ledger, "mode": mode}, sort_keys=True, separators=(",", ":"))
    return text, sign(key, "statement", text)


def verify_statement(roster: Roster, text: Any, signature: Any, round_id: str) -> Statement:
    """A site's statement, checked: its size and form, its round, and its signature by the key the roster pins for
    the name it carries. Raises TrustError naming the failed check."""
    if not isinstance(text, str) or len(text) > MAX_STATEMENT_CHARS:
        raise TrustError(f"a site statement must be text of at most {MAX_STATEMENT_CHARS} characters")
    doc = _json(text, MAX_STATEMENT_CHARS, "site statement")
    if (not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or not isinstance(doc.get("budget"), dict)
            or not isinstance(doc.get("key"), str) or not isinstance(doc.get("round"), str)):
        raise TrustError("a site statement needs a round, a name, a budget and a key")
    name = doc["name"][:64]
    public = roster.key(name, "site")
    if not verify(public, signature, "statement", text):
        raise TrustError(f"the statement of site {name} is not signed by the key the roster pins for it")
    if doc["round"] != round_id:
        raise TrustError(f"the statement of site {name} is for round {doc['round'][:80]!r}, not {round_id!r} "
                         "(a replayed hello)")
    try:
        key = bytes.fromhex(doc["key"])
    except ValueError as exc:
        raise TrustError(f"the statement of site {name} carries no valid key") from exc
    try:
        check_public_key(key)
    except SealError as exc:
        raise TrustError(f"the statement of site {name}: {exc}") from exc
    study, ledger, mode = doc.get("study", ""), doc.get("ledger"), doc.get("mode", "real")
    if not isinstance(study, str) or len(study) > 64 or mode not in MODES or not (
            ledger is None or isinstance(ledger, list) and len(ledger) == 3):
        raise TrustError(f"the statement of site {name} names no valid study, ledger head or mode")
    return Statement(text=text, round=doc["round"], name=name, budget=doc["budget"], public_key=key,
                     signature=signature, study=study, ledger=ledger, mode=mode)
