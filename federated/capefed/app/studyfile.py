"""The files of a study (docs/federated.md, "A study every site approves"): the study the aggregator proposes
(``capefed-study-v1``, :mod:`dpcore.federation.study`), a site's approval of it (``capefed-approval-v1``: the study's
digest, the site and its Ed25519 signature) and the approved study the aggregator runs (``capefed-signed-study-v1``:
the study and every site's approval), each read with a bound and every field checked."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from . import dp
from .trust import Roster, TrustError, verify_approvals

__all__ = ["APPROVAL_FORMAT", "SIGNED_FORMAT", "SignedStudy", "read_approval", "read_signed_study", "read_study",
           "write_approval", "write_signed_study"]

APPROVAL_FORMAT = "capefed-approval-v1"
SIGNED_FORMAT = "capefed-signed-study-v1"
MAX_APPROVAL_BYTES = 4096


class StudyFileError(ValueError):
    """A study, approval or approved study that cannot be read; the message names the file and the check."""


def _load(path: str | Path, limit: int, what: str) -> object:
    try:
        return dp.load_json(dp.read_file(path, limit, what), f"{what} {path}", max_bytes=limit)
    except dp.InputError as exc:
        raise StudyFileError(str(exc)) from None


def read_study(path: str | Path) -> dp.Study:
    """A study file, parsed and checked (:func:`dpcore.federation.parse_study`)."""
    doc = _load(path, dp.MAX_STUDY_BYTES, "the study")
    try:
        return dp.parse_study(json.dumps(doc))
    except dp.InputError as exc:
        raise StudyFileError(f"{path}: {exc}") from None


def write_approval(path: str | Path, study: dp.Study, name: str, signature: bytes) -> None:
    Path(path).write_text(json.dumps({"format": APPROVAL_FORMAT, "study": study.digest, "title": study.title,
                                      "site": name, "signature": signature.hex()}, indent=1) + "\n")


def read_approval(path: str | Path) -> tuple[str, str, bytes]:
    """(study digest, site, signature) of an approval file."""
    doc = _load(path, MAX_APPROVAL_BYTES, "the approval")
    if not isinstance(doc, dict) or doc.get("format") != APPROVAL_FORMAT or not all(
            isinstance(doc.get(k), str) for k in ("study", "site", "signature")):
        raise StudyFileError(f"{path} is not an approval ({APPROVAL_FORMAT!r} with study, site and signature)")
    try:
        signature = bytes.fromhex(doc["signature"])
    except ValueError:
        raise StudyFileError(f"{path}: the signature is not hexadecimal") from None
    return doc["study"], doc["site"][:64], signature


@dataclass(frozen=True, kw_only=True)
class SignedStudy:
    """A study and every site's approval (signatures in the order of the sites' sorted names)."""

    study: dp.Study
    signatures: list[bytes]

    def check(self, roster: Roster) -> None:
        try:
            verify_approvals(roster, self.study.digest, sorted(self.study.names), self.signatures)
        except TrustError as exc:
            raise StudyFileError(str(exc)) from None


def write_signed_study(path: str | Path, study: dp.Study, approvals: dict[str, bytes]) -> None:
    missing = sorted(set(study.names) - set(approvals))
    if missing:
        raise StudyFileError(f"no approval of site(s) {', '.join(missing)}: every site of the study signs it")
    Path(path).write_text(json.dumps({"format": SIGNED_FORMAT, "study": dp.load_json(study.text, "study"),
                                      "approvals": {n: approvals[n].hex() for n in sorted(study.names)}},
                                     indent=1) + "\n")


def read_signed_study(path: str | Path) -> SignedStudy:
    doc = _load(path, dp.MAX_STUDY_BYTES + 64 * 1024, "the approved study")
    if not isinstance(doc, dict) or doc.get("format") != SIGNED_FORMAT or not isinstance(doc.get("approvals"), dict):
        raise StudyFileError(f"{path} is not an approved study "
                             f"({SIGNED_FORMAT!r}: python -m capefed.ops.study collect)")
    try:
        study = dp.parse_study(json.dumps(doc.get("study")))
    except dp.InputError as exc:
        raise StudyFileError(f"{path}: {exc}") from None
    approvals = doc["approvals"]
    signatures = []
    for name in sorted(study.names):
        value = approvals.get(name)
        try:
            signatures.append(bytes.fromhex(value) if isinstance(value, str) else b"")
        except ValueError:
            signatures.append(b"")
    return SignedStudy(study=study, signatures=signatures)
