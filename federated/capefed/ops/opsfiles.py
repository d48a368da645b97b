"""What the operators' commands share (``python -m capefed.ops.keys|roster|ledger|study|nodes``; docs/federated.md,
"Deploying it"): one line on standard error and exit status 2 for anything refused, files written with the mode and
owner a service needs (a key readable by the service's user and nobody else), and the site's ``node.env`` read as
systemd reads an ``EnvironmentFile=``."""

from __future__ import annotations

import grp
import os
import pwd
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..app import dp

__all__ = ["SERVICE_USER", "CommandError", "node_config", "read_env_file", "run_command", "write_private"]

SERVICE_USER = "capefed"
"""The user every service unit runs as (``User=capefed``); install.sh creates it."""
MAX_ENV_BYTES = 64 * 1024


class CommandError(Exception):
    """A refusal of an operator's command: its one line."""


def run_command(prog: str, main: Callable[[], int]) -> int:
    """Run ``main``; a refusal (CommandError, a file or input refused by dpcore, an OSError) is one line on standard
    error and exit status 2, never a traceback."""
    try:
        return main()
    except (CommandError, dp.InputError, ValueError, OSError) as exc:
        text = getattr(exc, "strerror", None) and f"{exc.strerror}: {getattr(exc, 'filename', '')}" or str(exc)
    except Exception as exc:  # noqa: BLE001 - a library's failure (Flower's client, ...) is still one line
        text = f"{type(exc).__name__}: {exc}"
    print(f"{prog}: {' '.join(text.split())[:2000]}", file=sys.stderr)
    return 2


def _ids(owner: str) -> tuple[int, int]:
    try:
        user = pwd.getpwnam(owner)
    except KeyError:
        raise CommandError(f"there is no user {owner!r} on this host (federated/deploy/install.sh makes it)") from None
    return user.pw_uid, grp.getgrgid(user.pw_gid).gr_gid


def owner_for(owner: str | None) -> str | None:
    """The owner files are given: ``owner`` when given; run as root, the service user; else none (the caller's)."""
    if owner is not None:
        return owner
    return SERVICE_USER if os.geteuid() == 0 else None


def write_private(path: str | Path, data: bytes, owner: str | None, mode: int = 0o600, *, replace: bool = False
                  ) -> Path:
    """Write ``data`` to a new file readable (and with 0o600 writable) by ``owner`` alone (root: chown to it). Refuses
    to write over an existing file unless ``replace``."""
    path = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if replace else os.O_EXCL) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        raise CommandError(f"{path} exists already; it is never written over (move it away first)") from None
    try:
        os.fchmod(fd, 0o600)  # a replaced file others could read is the owner's alone before the data goes in
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    give(path, owner, mode)
    return path


def give(path: str | Path, owner: str | None, mode: int) -> None:
    """Set a file's mode and (when ``owner`` is named and this process may) its owner and group."""
    os.chmod(path, mode)
    if owner is not None:
        uid, gid = _ids(owner)
        if os.geteuid() == 0:
            os.chown(path, uid, gid)
        elif os.stat(path).st_uid != uid:
            raise CommandError(f"{path} must belong to {owner}; run this command as root")


def read_env_file(path: str | Path) -> dict[str, str]:
    """An ``EnvironmentFile=`` as systemd reads it: ``KEY=VALUE`` lines, ``#`` and ``;`` comments, values in single
    or double quotes (quotes removed), leading and trailing white space dropped."""
    text = dp.decode_text(dp.read_file(path, MAX_ENV_BYTES, "the environment file"), f"the environment file {path}")
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key.replace("_", "").isalnum() or key[0].isdigit():
            raise CommandError(f"{path}, line {number}: not KEY=VALUE")
        try:
            words = shlex.split(value.strip(), posix=True)
        except ValueError as exc:
            raise CommandError(f"{path}, line {number}: {exc}") from None
        out[key] = " ".join(words)
    return out


def node_config(env_file: str | Path) -> dict[str, Any]:
    """The node configuration a SuperNode started from ``env_file`` gets (its ``CAPEFED_NODE_CONFIG``), parsed as
    Flower parses ``--node-config``."""
    from flwr.common.config import parse_config_args  # noqa: PLC0415

    text = read_env_file(env_file).get("CAPEFED_NODE_CONFIG")
    if not text:
        raise CommandError(f"{env_file} sets no CAPEFED_NODE_CONFIG")
    try:
        return dict(parse_config_args([text]))
    except Exception as exc:  # noqa: BLE001 - Flower's parser raises several kinds for a malformed value
        raise CommandError(f"{env_file}: CAPEFED_NODE_CONFIG is not a node configuration: {exc}") from None
