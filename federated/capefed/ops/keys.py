"""A party's keys, in one command (docs/federated.md, "Deploying it", step 2):

    python -m capefed.ops.keys --name north --role site --out /etc/capefed

makes its **identity key** (Ed25519, ``identity.key``: what it signs statements, studies and reservations with; the
public half, ``identity.pub``, goes into the consortium's roster) and its **node key** (ECDSA P-384 in OpenSSH format,
``node.key`` and ``node.key.pub``: Flower's SuperNode authentication; the aggregator's operator registers the public
half), each
readable by the service user alone (run as root: owned by ``capefed``, mode 0600). It never writes over a key, and
prints the line the roster command takes and where the node's public key is.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from ..app.trust import make_identity
from .opsfiles import CommandError, give, owner_for, run_command, write_private

__all__ = ["main", "make_keys"]

IDENTITY_FILE = "identity.key"
IDENTITY_PUBLIC = "identity.pub"
NODE_FILE = "node.key"


def make_keys(folder: str | Path, name: str, owner: str | None = None) -> tuple[str, Path]:
    """The identity key and the node key pair in ``folder``; returns the identity's public key (hex) and the node's
    public key file."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CommandError(f"{folder} is not a folder")
    identity, node = folder / IDENTITY_FILE, folder / NODE_FILE
    for path in (identity, folder / IDENTITY_PUBLIC, node, node.with_suffix(".key.pub")):
        if path.exists():
            raise CommandError(f"{path} exists already; keys are never written over (move it away first)")
    key = ec.generate_private_key(ec.SECP384R1())
    write_private(node, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                          serialization.NoEncryption()), owner)
    public = node.with_suffix(".key.pub")
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                                     serialization.PublicFormat.OpenSSH) + f" {name}\n".encode())
    give(public, owner, 0o644)
    hex_key = make_identity(identity)
    give(identity, owner, 0o600)
    (folder / IDENTITY_PUBLIC).write_text(f"{hex_key}\n")
    give(folder / IDENTITY_PUBLIC, owner, 0o644)
    return hex_key, public


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.ops.keys", description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", required=True, help="this party's name in the roster (a site's or the helper's)")
    parser.add_argument("--role", choices=("site", "helper"), default="site")
    parser.add_argument("--out", default="/etc/capefed", help="the folder for the keys (default: %(default)s)")
    parser.add_argument("--owner", help="the user the keys belong to (default, run as root: capefed)")
    args = parser.parse_args(argv)

    def run() -> int:
        if not 0 < len(args.name) <= 64 or not args.name.replace("-", "").replace("_", "").isalnum():
            raise CommandError(f"--name {args.name[:64]!r}: 1 to 64 letters, digits, '-' or '_'")
        public, node = make_keys(args.out, args.name, owner_for(args.owner))
        print(f"identity: {args.name} {args.role} {public} (in {Path(args.out) / IDENTITY_PUBLIC}: the roster's)")
        print(f"node key: {node} (the aggregator's operator registers it: python -m capefed.ops.nodes register)")
        return 0

    return run_command("capefed.ops.keys", run)


if __name__ == "__main__":
    raise SystemExit(main())
