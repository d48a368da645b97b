"""Test certificates and node keys for a federation with TLS and SuperNode authentication (``python -m
capefed.ops.launch --secure``, the deployment tests, a consortium's trial: ``python -m capefed.ops.certificates --host
ADDRESS --out DIR north east south helper``), made with the ``cryptography`` library.

A real consortium uses its own PKI instead: the SuperLink's certificate signed by a CA every institution trusts
(with the SuperLink's host name or address in subjectAltName), and one ECDSA key pair per SuperNode in OpenSSH
format, whose public half the federation's operator registers (``flwr supernode register``); see
docs/federated.md.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .opsfiles import CommandError, give, owner_for, write_private

__all__ = ["SecurityFiles", "main", "make_security_files"]

VALID_DAYS = 2


@dataclass(frozen=True, kw_only=True)
class SecurityFiles:
    """The CA certificate (what SuperNodes and the CLI trust), the SuperLink's certificate and key, and every
    node's OpenSSH key pair (private, public) by node name."""

    ca_certificate: Path
    server_certificate: Path
    server_key: Path
    node_keys: dict[str, tuple[Path, Path]]


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write(path: Path, data: bytes, private: bool = False) -> Path:
    if private:  # the owner's alone from the moment the file exists, not once written
        return write_private(path, data, None, replace=True)
    path.write_bytes(data)
    return path


def make_security_files(directory: str | Path, node_names: list[str], host: str = "127.0.0.1") -> SecurityFiles:
    """A throw-away CA, a SuperLink certificate for ``host``, localhost and 127.0.0.1 (the SuperLink itself listens
    on loopback behind ``capefed.ops.gateway``, which verifies it there) and ECDSA P-384 keys per node."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP384R1())
    start, end = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=VALID_DAYS)
    ca = (x509.CertificateBuilder().subject_name(_name("capefed loopback CA")).issuer_name(_name("capefed loopback CA"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(start).not_valid_after(end)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .sign(ca_key, hashes.SHA384()))
    server_key = ec.generate_private_key(ec.SECP384R1())
    addresses = dict.fromkeys([ipaddress.ip_address(host), ipaddress.ip_address("127.0.0.1")])
    names = [x509.DNSName("localhost"), *(x509.IPAddress(a) for a in addresses)]
    server = (x509.CertificateBuilder().subject_name(_name("localhost")).issuer_name(ca.subject)
              .public_key(server_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(start).not_valid_after(end)
              .add_extension(x509.SubjectAlternativeName(names), critical=False)
              .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
              .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
              .sign(ca_key, hashes.SHA384()))
    pem = serialization.Encoding.PEM
    files = SecurityFiles(
        ca_certificate=_write(directory / "ca.crt", ca.public_bytes(pem)),
        server_certificate=_write(directory / "superlink.pem", server.public_bytes(pem)),
        server_key=_write(directory / "superlink.key", server_key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()), private=True),
        node_keys={},
    )
    for name in node_names:
        key = ec.generate_private_key(ec.SECP384R1())
        private = _write(directory / f"node-{name}", key.private_bytes(
            pem, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()), private=True)
        public = _write(directory / f"node-{name}.pub", key.public_key().public_bytes(
            serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH) + f" {name}\n".encode())
        files.node_keys[name] = (private, public)
    return files


def main(argv: list[str] | None = None) -> int:
    import argparse  # noqa: PLC0415

    parser = argparse.ArgumentParser(
        prog="python -m capefed.ops.certificates",
        description=f"A throw-away CA, the SuperLink's certificate and key, and one node key pair per name (valid "
                    f"{VALID_DAYS} days): for a trial, not a consortium's lasting PKI.")
    parser.add_argument("--host", required=True, help="the SuperLink's public IP address (gateway's --listen host)")
    parser.add_argument("--out", required=True, help="directory for the files")
    parser.add_argument("nodes", nargs="*", help="node names (one OpenSSH ECDSA P-384 key pair each; a site makes its "
                                                  "own with python -m capefed.ops.keys)")
    parser.add_argument("--owner", help="the user the private keys belong to (default, run as root: capefed)")
    args = parser.parse_args(argv)
    try:
        files = make_security_files(args.out, args.nodes, host=args.host)
        owner = owner_for(args.owner)
        for private in (files.server_key, *(pair[0] for pair in files.node_keys.values())):
            give(private, owner, 0o600)
    except (ValueError, CommandError) as exc:
        parser.error(str(exc))
    print(f"CA certificate {files.ca_certificate}; SuperLink certificate {files.server_certificate} (for "
          f"{args.host} and 127.0.0.1) and key {files.server_key}; node keys "
          + ", ".join(f"{name}: {pair[0].name}(.pub)" for name, pair in files.node_keys.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
