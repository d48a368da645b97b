"""Issue 29, cause 6: the worker's code-package check let unusual zip errors escape; the operator's runner ended with
a traceback on a ``flwr ls`` time-out, a missing ``--flwr`` or non-UTF-8 output. The classes: every failure to read
a code package is a refusal naming the check (capefed.ops.worker.fab_files raises FabError only; code_problem returns
its reason), tested on any mutation of a real package (Hypothesis) and on each kind by name; the runner ends with one
line and an exit status for anything ``flwr`` does (real processes)."""

from __future__ import annotations

import io
import os
import stat
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from capefed.ops import runner
from capefed.ops.worker import MAX_FAB_BYTES, MAX_FAB_MEMBERS, FabError, code_problem, fab_files, installed_files
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st


def _fab(files: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def package() -> bytes:
    return _fab(installed_files())


def test_the_installed_package_is_accepted(package):
    assert code_problem(package) is None


@st.composite
def mutations(draw, base: bytes):
    """A real code package changed in one of the ways a damaged or hostile one differs."""
    data = bytearray(base)
    kind = draw(st.sampled_from(["truncate", "flip", "flags", "method", "sizes", "junk", "count"]))
    headers = [i for i in range(len(data) - 4) if data[i:i + 4] in (b"PK\x03\x04", b"PK\x01\x02")]
    if kind == "truncate":
        return bytes(data[:draw(st.integers(0, len(data) - 1))])
    if kind == "flip":
        for _ in range(draw(st.integers(1, 8))):
            data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
        return bytes(data)
    at = draw(st.sampled_from(headers))
    central = data[at:at + 4] == b"PK\x01\x02"
    if kind == "flags":  # encryption, data descriptors, UTF-8 names, unknown bits
        offset = at + (8 if central else 6)
        data[offset:offset + 2] = struct.pack("<H", draw(st.integers(0, 0xFFFF)))
    elif kind == "method":
        offset = at + (10 if central else 8)
        data[offset:offset + 2] = struct.pack("<H", draw(st.integers(0, 0xFFFF)))
    elif kind == "sizes":
        offset = at + (20 if central else 18) + 4 * draw(st.integers(0, 1))
        data[offset:offset + 4] = struct.pack("<I", draw(st.integers(0, 0xFFFFFFFF)))
    elif kind == "count":
        end = data.rfind(b"PK\x05\x06")
        data[end + 8:end + 12] = struct.pack("<HH", *(draw(st.integers(0, 0xFFFF)),) * 2)
    else:
        data[at:at] = draw(st.binary(min_size=1, max_size=64))
    return bytes(data)


@settings(max_examples=150)
@given(data=st.data())
def test_any_damage_to_a_real_code_package_is_a_reason_never_an_error(package, data):
    content = data.draw(mutations(package))
    problem = code_problem(content)  # must not raise
    assert problem is None or problem.startswith("the run's code package")
    try:
        files = fab_files(content)
    except FabError as exc:
        assert str(exc)
    else:
        assert sum(len(v) for v in files.values()) <= MAX_FAB_BYTES


def _encrypted(base: bytes) -> bytes:
    data = bytearray(base)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        data[at + offset] |= 1
    return bytes(data)


def _utf8_flag_with_latin1_name() -> bytes:
    data = bytearray(_fab({"capefed/caf\u00e9.py": b"x = 1\n"}))
    return bytes(data.replace("caf\u00e9".encode(), b"caf\xe9\xff"))


CASES = {
    "not a zip": (b"not a zip archive", "no end-of-central-directory record"),
    "truncated": (None, "no end-of-central-directory record"),
    "a zip bomb": (_fab({"capefed/bomb.py": b"\0" * (MAX_FAB_BYTES + 1)}), "unpacks to more than 8,388,608 bytes"),
    "many members": (_fab({f"m{i}": b"" for i in range(MAX_FAB_MEMBERS + 1)}, zipfile.ZIP_STORED),
                     f"declares {MAX_FAB_MEMBERS + 1:,} members; at most {MAX_FAB_MEMBERS:,}"),
    "encrypted": (_encrypted(_fab({"capefed/x.py": b"x = 1\n"})), "member 'capefed/x.py' is encrypted"),
    "bzip2": (_fab({"capefed/x.py": b"x = 1\n"}, zipfile.ZIP_BZIP2), "compression method 12; only stored and "
              "deflated"),
    "lzma": (_fab({"capefed/x.py": b"x = 1\n"}, zipfile.ZIP_LZMA), "compression method 14"),
    "non-UTF-8 name": (_utf8_flag_with_latin1_name(), "member name that is not UTF-8"),
    "bad CRC": (None, "Bad CRC-32"),
    "duplicate": (None, "holds the member 'capefed/x.py' twice"),
    "too large": (b"\0" * (MAX_FAB_BYTES + 1), f"has {MAX_FAB_BYTES + 1:,} bytes"),
}


def _case(kind: str, package: bytes) -> bytes:
    content = CASES[kind][0]
    if kind == "truncated":
        return package[: len(package) // 2]
    if kind == "bad CRC":
        data = bytearray(_fab({"capefed/x.py": b"print('hello')\n" * 20}, zipfile.ZIP_STORED))
        data[data.find(b"print")] ^= 1
        return bytes(data)
    if kind == "duplicate":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("capefed/x.py", b"good = 1\n")
            with pytest.warns(UserWarning, match="Duplicate name"):
                archive.writestr("capefed/x.py", b"evil = 1\n")
        return buffer.getvalue()
    return content


@pytest.mark.parametrize("kind", list(CASES))
def test_each_kind_of_unreadable_package_is_refused_naming_the_check(package, kind):
    problem = code_problem(_case(kind, package))
    assert problem is not None and problem.startswith("the run's code package cannot be read: ")
    assert CASES[kind][1] in problem, problem


# --- the operator's runner ------------------------------------------------------------------------------------------

def _flwr(tmp_path: Path, run: str, ls: str) -> Path:
    """A stand-in for the flwr command: ``run`` and ``ls`` do what the shell snippets say."""
    script = tmp_path / "flwr"
    script.write_text(f'#!/bin/sh\nif [ "$1" = run ]; then\n{run}\nfi\n{ls}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


STARTED = 'echo "Successfully started run 42"; exit 0'
LS_ANSWERS = {
    "non-UTF-8": ("printf '\\377\\376 not json\\n'", "unknown (flwr ls said:"),
    "not JSON": ("echo 'Error: connection refused'; exit 1", "unknown (flwr ls said: Error: connection refused)"),
    "nested JSON": ("python3 -c \"print('[' * 5000 + ']' * 5000)\"", "unknown (flwr ls said:"),
    "no runs": ("echo '{\"runs\": []}'", "unknown (flwr ls said:"),
    "status not text": ("echo '{\"runs\": [{\"status\": {\"a\": 1}}]}'", "unknown (flwr ls said:"),
    "huge": ("head -c 3000000 /dev/zero | tr '\\0' ' '; echo '{}'", "unknown (flwr ls said:"),
}


@pytest.mark.parametrize("answer", list(LS_ANSWERS))
def test_the_runner_reads_any_flwr_ls_answer_as_a_status(tmp_path, capsys, answer):
    script, words = LS_ANSWERS[answer]
    assert runner.main(["app", "link", "--flwr", str(_flwr(tmp_path, STARTED, script))]) == 1
    out = capsys.readouterr().out
    assert f"capefed.ops.runner: run 42 {words}" in out
    assert out.strip().splitlines()[-1].startswith("capefed.ops.runner")


def test_a_flwr_ls_that_does_not_answer_is_a_status_not_a_traceback(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner, "STATUS_TIMEOUT_SECONDS", 0.5)
    assert runner.main(["app", "link", "--flwr", str(_flwr(tmp_path, STARTED, "sleep 30"))]) == 1
    assert "capefed.ops.runner: run 42 unknown (flwr ls did not answer within 0.5 s)" in capsys.readouterr().out


def _run_runner(*argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'federated'}")
    return subprocess.run([sys.executable, "-m", "capefed.ops.runner", "app", "link", *argv], capture_output=True,
                          timeout=300, env=env)


@pytest.mark.parametrize("flwr", ["missing", "a directory", "not executable"])
def test_a_flwr_that_cannot_be_run_ends_with_one_line(tmp_path, flwr):
    path = {"missing": tmp_path / "no-such-flwr", "a directory": tmp_path}.get(flwr)
    if flwr == "not executable":
        path = tmp_path / "flwr"
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(0o644)
    done = _run_runner("--flwr", str(path))
    stderr = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in stderr, stderr
    assert stderr.count("\n") == 1 and stderr.startswith(f"capefed.ops.runner: cannot run '{path}'"), stderr


def test_non_utf8_output_of_flwr_run_is_echoed_and_the_run_still_ends_with_its_status(tmp_path):
    run = "printf 'progress \\377\\376 caf\\351\\n'; " + STARTED
    ls = "echo '{\"runs\": [{\"status\": \"finished:completed\"}]}'"
    done = _run_runner("--flwr", str(_flwr(tmp_path, run, ls)))
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0] == "progress \ufffd\ufffd caf\ufffd"
    assert lines[-1] == "capefed.ops.runner: run 42 finished:completed"
