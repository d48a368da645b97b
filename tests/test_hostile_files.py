"""Issue 29, cause 4: every file input of the command line, the ledger and the roster blocked for ever on a FIFO
without a writer. The class: every file input reads through one helper (dpcore.textio.read_file / open_regular),
which refuses anything but a regular file (a FIFO, a directory, a device, a socket, or a symbolic link to one) before
it opens it for reading, never blocking. The command line's file inputs are read off its own parser (every option
whose metavar is FILE or PATH and that is not an output, and every positional file), so a new one is tested as soon
as it exists; the library's file inputs (ledger, roster, identity key, a site's data, a message log, the worker's
secret) are a table. Each refusal is checked in a real process with a timeout (an open() that blocks would block the
whole process), and no byte of the FIFO is consumed."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

from dpcore.cli import build_parser

TIMEOUT = 120.0
"""Seconds a refusal may take in a subprocess on a loaded machine (imports of numpy and scipy included; the refusal
itself takes milliseconds: nothing is read)."""
KINDS = ("fifo", "directory", "device", "socket", "link to fifo", "link to device", "link to directory")
WORDS = {"fifo": "is a named pipe (FIFO), not a regular file", "directory": "is a directory, not a regular file",
         "device": "is a character device, not a regular file", "socket": "is a socket, not a regular file"}
WORDS.update({f"link to {k}": WORDS[k] for k in ("fifo", "device", "directory")})


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'federated'}", OPENBLAS_NUM_THREADS="1")


@pytest.fixture
def hostile(tmp_path):
    """name of a kind -> a path of that kind (a FIFO has no writer, a socket is listening)."""
    paths = {"fifo": tmp_path / "input.fifo", "directory": tmp_path / "folder", "device": Path("/dev/zero"),
             "socket": tmp_path / "input.sock"}
    os.mkfifo(paths["fifo"])
    paths["directory"].mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(paths["socket"]))
    server.listen(1)
    for kind in ("fifo", "device", "directory"):
        link = tmp_path / f"link-to-{kind}"
        link.symlink_to(paths[kind])
        paths[f"link to {kind}"] = link
    yield paths
    server.close()


def cli_file_inputs() -> list[tuple[str, str]]:
    """(command, option) of every file the command line reads: an option with metavar FILE or PATH whose help does
    not say it writes, and every positional argument whose help names a file ('' stands for a positional)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = []
    for command, sub_parser in sub.choices.items():
        for action in sub_parser._actions:
            text = (action.help or "").lower()
            if action.option_strings and action.metavar in ("FILE", "PATH") and not text.startswith("write"):
                found.append((command, action.option_strings[0]))
            elif not action.option_strings and "file" in text:
                found.append((command, ""))
    return found


def _text_files(tmp_path: Path) -> tuple[Path, Path]:
    documents, words = tmp_path / "documents.txt", tmp_path / "vocabulary.txt"
    documents.write_text("alpha beta gamma\ndelta alpha beta\ngamma delta alpha\n" * 3)
    words.write_text("alpha\nbeta\ngamma\ndelta\n")
    return documents, words


# What each command needs besides the file under test, so that the file is the first thing it reads: a command
# without a row fails the test (add its minimal settings here).
BASE = {"design": [], "pca": ["--k", "2", "--runs", "1"], "otd": ["--model", "stm"], "lda": ["--vocab", "5"],
        "sweep": ["--vary", "eps", "--grid", "1"], "plan": ["--solve", "n", "--target", "0.5"],
        "compare": ["--family", "otd", "--runs", "1", "--algorithms", "nonpriv"]}
COMPANIONS = {("otd", "--vocabulary"): ["--data", "DOCUMENTS"], ("lda", "--vocabulary"): ["--text", "DOCUMENTS"],
              ("plan", "--data"): ["--algorithm", "otd"],
              ("plan", "--vocabulary"): ["--algorithm", "otd", "--model", "stm", "--data", "DOCUMENTS"]}


def test_the_command_line_reads_these_files():
    """The generated list holds every file input the issue names (and any added since)."""
    inputs = set(cli_file_inputs())
    assert {("design", ""), ("pca", "--csv"), ("pca", "--scenario"), ("otd", "--data"), ("otd", "--vocabulary"),
            ("lda", "--text"), ("lda", "--vocabulary"), ("sweep", "--scenario"), ("sweep", "--csv"),
            ("plan", "--scenario"), ("plan", "--data"), ("plan", "--vocabulary")} <= inputs
    assert not any(option in ("--out", "--summary-out", "--html", "--out-json", "--script") for _, option in inputs)
    assert {command for command, _ in inputs} <= set(BASE), "add the new command's minimal settings to BASE"


_CLI_DRIVER = textwrap.dedent("""
    import contextlib, io, json, sys
    from dpcore.cli import main
    for argv in json.loads(sys.argv[1]):
        print("reading", argv[-1], flush=True)  # the last line says which input blocked, if one did
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue()}), flush=True)
""")


@pytest.mark.parametrize("command, option", cli_file_inputs())
def test_every_command_line_file_input_refuses_what_is_not_a_regular_file(command, option, hostile, tmp_path):
    """Every kind of path for one input, in one real process (an open() that blocked would block it: the timeout
    and its last line say which)."""
    import json

    documents, _ = _text_files(tmp_path)
    companion = [str(documents) if a == "DOCUMENTS" else a for a in COMPANIONS.get((command, option), [])]
    argvs = [[command, *BASE[command], *companion, *([option, str(hostile[k])] if option else [str(hostile[k])])]
             for k in KINDS]
    try:
        done = subprocess.run([sys.executable, "-c", _CLI_DRIVER, json.dumps(argvs)], cwd=ROOT, capture_output=True,
                              text=True, timeout=TIMEOUT, env=_env())
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"blocked: {(exc.stdout or b'').decode()[-300:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(results) == len(KINDS), done.stdout[-2000:]
    for kind, argv, result in zip(KINDS, argvs, results, strict=True):
        err = result["err"]
        assert result["code"] == 2 and result["out"] == "", (kind, argv, result)
        assert err.count("\n") == 1 and err.startswith("error: "), (kind, err)
        assert WORDS[kind] in err and str(hostile[kind]) in err, (kind, err)


LIBRARY_INPUTS = {
    "ledger": ("from dpcore.federation import read_ledger\nread_ledger(PATH, bytes(32), 'north')", "InputError"),
    "ledger update": ("from dpcore.federation import update_ledger\n"
                      "update_ledger(PATH, bytes(32), 'north', lambda ledger: [])", "InputError"),
    "ledger key": ("from dpcore.federation.ledger import read_ledger_key\nread_ledger_key(PATH)", "InputError"),
    "roster": ("from capefed.app.trust import read_roster\nread_roster(PATH)", "TrustError"),
    "identity key": ("from capefed.app.trust import load_identity\nload_identity(PATH)", "TrustError"),
    "a site's data": ("from pathlib import Path\nfrom capefed.app.site import read_bounded\nread_bounded(Path(PATH))",
                      "SiteConfigError"),
    "a site's PCA data": ("from capefed.app.site import load_pca_data\nload_pca_data(PATH, 10)", "SiteConfigError"),
    "message log": ("from capefed.app.messages import read_log\nread_log(PATH)", "InputError"),
    "scenario file": ("from dpcore import load_scenario\nload_scenario(PATH)", "InputError"),
}
_DRIVER = textwrap.dedent("""
    import sys
    for PATH in sys.argv[1:]:
        print("reading", PATH, flush=True)  # the last line says which path blocked, if one did
        try:
    {code}
        except Exception as exc:
            print(f"{{type(exc).__name__}}: {{exc}}", flush=True)
        else:
            print("READ", flush=True)
""")


@pytest.mark.parametrize("reader", list(LIBRARY_INPUTS))
def test_every_library_file_input_refuses_what_is_not_a_regular_file(reader, hostile):
    code, refusal = LIBRARY_INPUTS[reader]
    script = _DRIVER.format(code=textwrap.indent(code, "        "))
    paths = [str(hostile[kind]) for kind in KINDS]
    try:
        done = subprocess.run([sys.executable, "-c", script, *paths], cwd=ROOT, capture_output=True, text=True,
                              timeout=TIMEOUT, env=_env())
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"blocked: {(exc.stdout or b'').decode()[-300:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if not line.startswith("reading ")]
    assert len(lines) == len(KINDS), done.stdout
    for kind, line in zip(KINDS, lines, strict=True):
        assert line.startswith(f"{refusal}: ") and "not a regular file" in line, (kind, line)


@pytest.mark.parametrize("command", [["capefed.ops.worker"], ["capefed.ops.dropout", "--signal", "unused"]])
def test_the_workers_secret_file_is_refused_in_one_line(hostile, command, tmp_path):
    """The worker and the drop-out demonstration's worker read the secret through one reader
    (capefed.ops.worker.secret_from_file)."""
    empty = tmp_path / "empty-secret"
    empty.write_bytes(b"")
    for path, words in [*((hostile[k], f"the secret file {hostile[k]} {WORDS[k]}") for k in ("fifo", "directory",
                                                                                              "device")),
                        (empty, "the secret is empty")]:
        done = subprocess.run([sys.executable, "-m", *command, "--runtime", "127.0.0.1:9", "--secret-file",
                               str(path)], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, env=_env())
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert f"--secret-file: {words}" in done.stderr, done.stderr


def test_a_fifo_swapped_in_after_the_check_cannot_block(tmp_path, monkeypatch):
    """The status is checked before the open and the open descriptor again: a FIFO put in place of the file between
    the two is opened without blocking and refused."""
    import dpcore.textio as textio

    real = tmp_path / "scenario.json"
    real.write_text("{}")
    fifo = tmp_path / "swapped.fifo"
    os.mkfifo(fifo)
    original = textio.os.open

    def swap(path, flags, *args):
        assert flags & os.O_NONBLOCK
        return original(fifo, flags, *args)

    monkeypatch.setattr(textio.os, "open", swap)
    with pytest.raises(textio.InputError, match="is a named pipe .FIFO., not a regular file"):
        textio.read_file(real, 1000, "scenario file")


def test_a_regular_file_larger_than_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    import dpcore.textio as textio

    big = tmp_path / "big.csv"
    with open(big, "wb") as handle:
        handle.truncate(10**9)  # a sparse gigabyte: refused by its size, not read
    monkeypatch.setattr(textio.os, "fdopen", lambda *a, **k: pytest.fail("the file was read"))
    with pytest.raises(textio.InputError, match=r"larger than the limit of 64.0 MB \(1,000,000,000 bytes\)"):
        textio.read_file(big, 64_000_000, "CSV file")
