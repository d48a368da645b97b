"""Files a user names for output (the command line's ``--out``, ``--summary-out``, ``--html``; the stored results of
tools/precompute_presets.py): every path checked before the work that produces it, every file written atomically
(docs/limits.md, "Outputs").

* :func:`check_outputs` - before the work: each output is a regular file or a new one in an existing folder that
  can be written (a directory, a FIFO, a device such as ``/dev/full``, a socket are refused without being opened,
  so a FIFO with no reader cannot block), none is an input of the same command, no two outputs name the same
  file (after following symbolic links, and by device and inode for hard links).
* :func:`write_atomic` - the bytes go to a new temporary file in the target's folder, are flushed to disk, and
  the temporary file is renamed over the target (``os.replace``, atomic within one file system): a failure (disk
  full, interrupted) leaves the old file as it was and no partial file. A file replaced keeps its permission bits;
  a new one gets the process's default (0666 less the umask), as ``open`` would give it.

Every refusal is an :class:`~dpcore.validation.InputError` naming the option, the path, what is wrong and what to
do.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from .textio import file_kind as _kind
from .validation import InputError

__all__ = ["check_output", "check_outputs", "write_atomic"]

_TEMP_PREFIX = ".dpcore-"


def _resolved(option: str, path: str | os.PathLike[str]) -> tuple[Path, os.stat_result | None]:
    """The path with every symbolic link followed, and its status (None: it does not exist yet). Refuses an
    empty name, a directory and anything but a regular file, without opening it."""
    text = os.fspath(path)
    if not str(text).strip():
        raise InputError(f"{option} needs a file name (got an empty one)", option)
    real = Path(os.path.realpath(text))
    try:
        status = os.stat(real)
    except FileNotFoundError:
        status = None
    except OSError as exc:
        raise InputError(f"{option} {text} cannot be written: {exc.strerror or exc}", option) from None
    if status is None:
        if not real.parent.is_dir():
            raise InputError(f"{option} {text}: the folder {real.parent} does not exist; create it first or give "
                             "another file name", option)
        return real, None
    if stat.S_ISDIR(status.st_mode):
        raise InputError(f"{option} {text} is a directory; give a file name", option)
    if not stat.S_ISREG(status.st_mode):
        raise InputError(f"{option} {text} is {_kind(status.st_mode)}, not a regular file; give the name of a "
                         "regular file or of a new one", option)
    return real, status


def _probe_folder(option: str, text: str, folder: Path) -> None:
    """Create and remove a temporary file where :func:`write_atomic` will create one (no permission, a read-only
    file system or no space for a new name refuse here, before the work)."""
    try:
        fd, name = _new_temporary(folder)
    except OSError as exc:
        raise InputError(f"{option} {text} cannot be written: {exc.strerror or exc} (in {folder})", option) from None
    os.close(fd)
    os.unlink(name)


def check_output(option: str, path: str | os.PathLike[str]) -> Path:
    """One output path checked (module docstring): its resolved path. Refuses without opening or truncating."""
    real, status = _resolved(option, path)
    text = os.fspath(path)
    if status is not None and not os.access(real, os.W_OK):
        raise InputError(f"{option} {text} cannot be written: permission denied", option)
    _probe_folder(option, text, real.parent)
    return real


def _same(a: tuple[Path, os.stat_result | None], b: tuple[Path, os.stat_result | None]) -> bool:
    if a[0] == b[0]:
        return True
    return a[1] is not None and b[1] is not None and (a[1].st_dev, a[1].st_ino) == (b[1].st_dev, b[1].st_ino)


def _identity(path: str | os.PathLike[str]) -> tuple[Path, os.stat_result | None]:
    real = Path(os.path.realpath(os.fspath(path)))
    try:
        return real, os.stat(real)
    except OSError:
        return real, None


def check_outputs(outputs: Mapping[str, str | os.PathLike[str] | None],
                  inputs: Mapping[str, str | os.PathLike[str] | None] | None = None) -> dict[str, Path]:
    """Every output of one command checked before its work (module docstring): ``outputs`` and ``inputs`` map an
    option (``"--out"``) to its path or None (not given). Returns the resolved path of every output given."""
    given_inputs = [(option, path, _identity(path)) for option, path in (inputs or {}).items() if path is not None]
    checked: list[tuple[str, str, tuple[Path, os.stat_result | None]]] = []
    for option, path in outputs.items():
        if path is None:
            continue
        text = os.fspath(path)
        real = check_output(option, path)
        here = _identity(real)
        for in_option, in_path, identity in given_inputs:
            if _same(here, identity):
                raise InputError(f"{option} {text} is also the input {in_option} {os.fspath(in_path)}: the command "
                                 "would overwrite what it reads; give another file name", option)
        for other_option, other_text, identity in checked:
            if _same(here, identity):
                raise InputError(f"{option} {text} and {other_option} {other_text} name the same file; give each "
                                 "output its own file", option)
        checked.append((option, text, here))
    return {option: identity[0] for option, _, identity in checked}


def _new_temporary(folder: Path) -> tuple[int, str]:
    """A new file in ``folder`` with a random name, created exclusively with mode 0666 (the umask applies)."""
    for _ in range(100):
        name = os.path.join(folder, f"{_TEMP_PREFIX}{secrets.token_hex(8)}.part")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666), name
        except FileExistsError:  # pragma: no cover - 64 random bits collided
            continue
    raise FileExistsError(f"no free temporary name in {folder}")  # pragma: no cover


def write_atomic(path: str | os.PathLike[str], data: str | bytes, what: str = "output") -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` atomically (module docstring); the resolved path. The target is
    checked again (a regular file or a new one: never a device or a FIFO, whatever happened since the check)."""
    text = os.fspath(path)
    real, status = _resolved(what, path)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    try:
        fd, temporary = _new_temporary(real.parent)
    except OSError as exc:
        raise InputError(f"cannot write {what} {text}: {exc.strerror or exc}", what) from None
    try:
        try:
            if status is not None:
                os.fchmod(fd, stat.S_IMODE(status.st_mode))
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, real)
    except BaseException as exc:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(exc, OSError):
            kept = "the previous file is unchanged" if status is not None else "nothing was written"
            raise InputError(f"cannot write {what} {text}: {exc.strerror or exc}; {kept}", what) from None
        raise
    return real
