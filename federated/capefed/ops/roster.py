"""The consortium's roster, one command per step (docs/federated.md, "Deploying it", step 2):

    python -m capefed.ops.roster add /etc/capefed/roster.json north site 3b6a...   # the line capefed.ops.keys printed
    python -m capefed.ops.roster show /etc/capefed/roster.json

``add`` puts one party (name, role, Ed25519 public key in hex) into the roster (``capefed-roster-v1``), making the file
when it does not exist yet; a name already in it, or a key that is not an Ed25519 public key, is refused. ``show``
prints every party with its key's SHA-256 fingerprint, which the parties compare over a channel the aggregator does
not control before each keeps its copy.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..app import dp
from ..app.trust import TrustError, read_roster, write_roster
from .opsfiles import CommandError, run_command

__all__ = ["add_party", "fingerprint", "main"]


def fingerprint(public_hex: str) -> str:
    """SHA-256 of a public key's bytes, in groups of four hexadecimal digits (what the parties read to each other)."""
    digest = hashlib.sha256(bytes.fromhex(public_hex)).hexdigest()[:32]
    return " ".join(digest[i:i + 4] for i in range(0, len(digest), 4))


def _parties(path: Path) -> dict[str, tuple[str, str]]:
    if not path.exists():
        return {}
    try:
        roster = read_roster(path)
    except TrustError as exc:
        raise CommandError(str(exc)) from None
    return {name: (role, key.public_bytes_raw().hex()) for name, (role, key) in roster.parties.items()}


def add_party(path: str | Path, name: str, role: str, public_hex: str) -> dict[str, tuple[str, str]]:
    path = Path(path)
    parties = _parties(path)
    if name in parties:
        raise CommandError(f"{name!r} is in the roster {path} already (as {parties[name][0]})")
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_hex))
    except ValueError:
        raise CommandError(f"the key of {name!r} is not an Ed25519 public key in hex (64 digits)") from None
    parties[name] = (role, public_hex.lower())
    write_roster(path, parties)
    read_roster(path)  # what every party will read: checked
    return parties


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.ops.roster", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add", help="add one party (the line python -m capefed.ops.keys printed)")
    add.add_argument("roster")
    add.add_argument("name")
    add.add_argument("role", choices=("site", "helper"))
    add.add_argument("key", help="its Ed25519 public key: hex, or the identity.pub file capefed.ops.keys wrote")
    show = commands.add_parser("show", help="every party with its key's fingerprint")
    show.add_argument("roster")
    args = parser.parse_args(argv)

    def run() -> int:
        if args.command == "add":
            key = args.key
            if Path(key).is_file():
                key = dp.decode_text(dp.read_file(key, 1024, "the public key"), key).strip()
            add_party(args.roster, args.name, args.role, key)
        parties = _parties(Path(args.roster))
        if not parties:
            raise CommandError(f"{args.roster} holds no party")
        for name, (role, key) in sorted(parties.items()):
            print(f"{name:<16} {role:<6} {fingerprint(key)}")
        return 0

    return run_command("capefed.ops.roster", run)


if __name__ == "__main__":
    raise SystemExit(main())
