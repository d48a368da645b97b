"""The drop-out demonstration's failing site (``python -m capefed.ops.launch --drop SITE``,
``make federated DROP=SITE``): fault injection from outside the Flower app, never part of a deployment.

The chosen site's node runs this worker instead of :mod:`capefed.ops.worker`'s: the same worker (the reviewed
ClientApp, the same check of the run's code package), except that the first message asking this site to release
(the aggregator sends it only once the noise of every stage was set up) is never answered: the worker writes the
``--signal`` file and waits, and the launcher (:class:`capefed.ops.federation.Federation`), which watches for that
file, kills the site's SuperNode and this worker. The site has set up its noise and released nothing, which is the
drop-out a round must survive (docs/federated.md, "Masked releases and one agreed survivor set"). The aggregator, the
helper and the other sites run their production code, unchanged and unaware.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from flwr.app import Context, Message

from ..app.client_app import app as client_app
from ..app.messages import unbundle
from ..app.wire import WireError, from_records
from .deployment import LOOPBACK
from .worker import POLL_SECONDS, secret_from_file, serve

__all__ = ["RELEASE", "asks_to_release", "command", "failing", "fresh_signal", "main", "signal_file"]

RELEASE = "release"
"""The site's action the failing site never answers (``capefed.app.siteflow``: a masked release of a stage)."""
WAIT_SECONDS = 3600.0
"""How long the failing site waits to be killed before it gives up waiting (and still never answers)."""


def asks_to_release(message: Message) -> bool:
    """Whether the aggregator's message asks this site to release (any item of its bundle)."""
    try:
        items = unbundle(from_records(message.content))
    except (WireError, ValueError):
        return False
    return any(action == RELEASE for _, action, _ in items)


def failing(app: Callable[..., Message], signal: Path) -> Callable[..., Message]:
    """``app``, except that a message asking to release writes ``signal`` and is never answered: the call waits to be
    killed (after WAIT_SECONDS the process ends, still without an answer; a raised error would be one)."""

    def answer(message: Message, context: Context) -> Message:
        if asks_to_release(message):
            signal.write_text("asked to release\n")
            time.sleep(WAIT_SECONDS)
            os._exit(1)
        return app(message=message, context=context)

    return answer


def signal_file(workdir: Path, site: str) -> Path:
    """Where the failing site signals that the aggregator asked it to release."""
    return workdir / "dropout" / f"{site}.asked-to-release"


def fresh_signal(workdir: Path, site: str) -> Path:
    """:func:`signal_file`, its folder made and a signal of an earlier run removed."""
    path = signal_file(workdir, site)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    return path


def command(python: str, *, runtime_port: int, signal: Path, secret_file: Path | None = None) -> list[str]:
    """The failing site's worker (what :func:`capefed.ops.deployment.worker_command` is for every other node)."""
    secret = [] if secret_file is None else ["--secret-file", str(secret_file)]
    return [python, "-m", "capefed.ops.dropout", "--runtime", f"{LOOPBACK}:{runtime_port}", "--signal", str(signal),
            *secret]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.ops.dropout", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtime", required=True, help="the SuperNode's Runtime API, host:port")
    parser.add_argument("--signal", required=True, type=Path,
                        help="the file written when the aggregator asks this site to release")
    parser.add_argument("--secret-file", help="the SuperNode's --superexec-auth-secret-file")
    args = parser.parse_args(argv)
    secret = secret_from_file(parser, args.secret_file)
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    serve(args.runtime, secret=secret, poll=POLL_SECONDS, app=failing(client_app, args.signal))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
