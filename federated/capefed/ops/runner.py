"""The operator's run with an exit status: ``python -m capefed.ops.runner APP CONNECTION --run-config '...'``.

``flwr run --stream`` (Flower 1.41) exits 0 once it has streamed a run's logs, whatever became of the run. This
command runs it, reads the run's id from its output, asks the SuperLink for the run's final status (``flwr ls
--run-id N --format json``) and exits 0 only for ``finished:completed``. The ServerApp ends with an error when a
round was refused or stopped (``capefed.app.server_app.RoundsNotReleased``), which Flower records as
``finished:failed``: a cron job or a script then sees the failure.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from ..app.dp import InputError, load_json

__all__ = ["COMPLETED", "main", "run_status"]

COMPLETED = "finished:completed"
_STARTED = re.compile(r"Successfully started run (\d+)")
STATUS_TIMEOUT_SECONDS = 60.0
MAX_STATUS_BYTES = 1_000_000
"""Largest ``flwr ls`` answer read as JSON."""
MAX_LINE_CHARS = 65_536
"""Longest line of ``flwr run``'s output echoed at once (a longer line is echoed in pieces)."""
_SHOWN = 300


def _tail(text: str) -> str:
    return text.strip()[-_SHOWN:].replace("\n", " ")


def run_status(flwr: str, connection: str, run_id: str) -> str:
    """The run's status as the SuperLink reports it (``finished:completed``, ``finished:failed``, ...), or
    ``unknown (...)`` saying why it could not be read: ``flwr ls`` missing, timed out, or answering something that
    is not the JSON of a run (non-UTF-8 bytes are replaced, never raised)."""
    command = [flwr, "ls", connection, "--run-id", run_id, "--format", "json"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, encoding="utf-8", errors="replace",
                              timeout=STATUS_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return f"unknown (flwr ls did not answer within {STATUS_TIMEOUT_SECONDS:g} s)"
    except OSError as exc:
        return f"unknown (flwr ls could not be started: {exc.strerror or exc})"
    try:
        runs = load_json(done.stdout, "flwr ls answer", max_bytes=MAX_STATUS_BYTES)["runs"]
        status = runs[0]["status"]
        if not isinstance(status, str):
            raise TypeError(status)
        return status[:_SHOWN]
    except (InputError, KeyError, IndexError, TypeError):
        return f"unknown (flwr ls said: {_tail(done.stdout + done.stderr)})"


def _stream(command: list[str]) -> tuple[int, str | None]:
    """Run ``flwr run``, echo its output as it comes (non-UTF-8 bytes replaced), return its exit code and the run's
    id (None when it printed none)."""
    run_id = None
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8",
                          errors="replace") as process:
        while True:
            line = process.stdout.readline(MAX_LINE_CHARS)
            if not line:
                break
            sys.stdout.write(line)
            sys.stdout.flush()
            found = _STARTED.search(line)
            if found and run_id is None:
                run_id = found.group(1)
    return process.returncode, run_id


def main(argv: list[str] | None = None) -> int:
    """Exit 0 when the run completed, 1 when it did not (or its status is unknown), 2 when ``flwr`` cannot be run;
    every failure ends with one line, never a traceback."""
    parser = argparse.ArgumentParser(prog="python -m capefed.ops.runner", description=__doc__.split("\n\n")[0])
    parser.add_argument("app", help="the Flower app's directory (federated/)")
    parser.add_argument("connection", help="the SuperLink connection of the operator's flwr configuration")
    parser.add_argument("--run-config", default="", help="run configuration overrides (key=value ...)")
    parser.add_argument("--flwr", default=str(Path(sys.executable).parent / "flwr"), help="the flwr command")
    args = parser.parse_args(argv)
    command = [args.flwr, "run", args.app, args.connection, "--stream"]
    if args.run_config:
        command += ["--run-config", args.run_config]
    try:
        code, run_id = _stream(command)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in an argument
        print(f"capefed.ops.runner: cannot run {args.flwr!r}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return 2
    if code != 0 or run_id is None:
        print(f"capefed.ops.runner: flwr run failed (exit code {code})", file=sys.stderr)
        return 1
    status = run_status(args.flwr, args.connection, run_id)
    print(f"capefed.ops.runner: run {run_id} {status}", flush=True)
    return 0 if status == COMPLETED else 1


if __name__ == "__main__":
    raise SystemExit(main())
