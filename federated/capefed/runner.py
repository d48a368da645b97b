"""The operator's run with an exit status: ``python -m capefed.runner APP CONNECTION --run-config '...'``.

``flwr run --stream`` (Flower 1.41) exits 0 once it has streamed a run's logs, whatever became of the run. This
command runs it, reads the run's id from its output, asks the SuperLink for the run's final status (``flwr ls
--run-id N --format json``) and exits 0 only for ``finished:completed``. The ServerApp ends with an error when a
round was refused or stopped (``capefed.server_app.RoundsNotReleased``), which Flower records as
``finished:failed``: a cron job or a script then sees the failure.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

__all__ = ["COMPLETED", "main", "run_status"]

COMPLETED = "finished:completed"
_STARTED = re.compile(r"Successfully started run (\d+)")
STATUS_TIMEOUT_SECONDS = 60.0


def run_status(flwr: str, connection: str, run_id: str) -> str:
    """The run's status as the SuperLink reports it (``finished:completed``, ``finished:failed``, ...)."""
    done = subprocess.run([flwr, "ls", connection, "--run-id", run_id, "--format", "json"], capture_output=True,
                          text=True, timeout=STATUS_TIMEOUT_SECONDS)
    try:
        runs = json.loads(done.stdout)["runs"]
        return str(runs[0]["status"])
    except (ValueError, KeyError, IndexError, TypeError):
        return f"unknown (flwr ls said: {(done.stdout + done.stderr).strip()[-300:]})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.runner", description=__doc__.split("\n\n")[0])
    parser.add_argument("app", help="the Flower app's directory (federated/)")
    parser.add_argument("connection", help="the SuperLink connection of the operator's flwr configuration")
    parser.add_argument("--run-config", default="", help="run configuration overrides (key=value ...)")
    parser.add_argument("--flwr", default=str(Path(sys.executable).parent / "flwr"), help="the flwr command")
    args = parser.parse_args(argv)
    command = [args.flwr, "run", args.app, args.connection, "--stream"]
    if args.run_config:
        command += ["--run-config", args.run_config]
    run_id = None
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        for line in process.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            found = _STARTED.search(line)
            if found and run_id is None:
                run_id = found.group(1)
    if process.returncode != 0 or run_id is None:
        print(f"capefed.runner: flwr run failed (exit code {process.returncode})", file=sys.stderr)
        return 1
    status = run_status(args.flwr, args.connection, run_id)
    print(f"capefed.runner: run {run_id} {status}", flush=True)
    return 0 if status == COMPLETED else 1


if __name__ == "__main__":
    raise SystemExit(main())
