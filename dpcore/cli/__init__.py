"""Command line: ``python -m dpcore <command> ...``.

Installed with ``pip install .``, the same command is ``dpcore ...``. Each command lives in its own module with
``register(subparsers)`` that adds its parser and sets ``func``; ``func(args)`` returns the exit code. A family's
own run command (``pca``, ``otd``, ``lda``: one run body, :mod:`dpcore.cli.family_command`) is registered for every
family whose table entry gives one (``Family.command`` with its hooks), a new family's too. Numeric flags
are typed by :mod:`dpcore.cli.options` (ranges from :mod:`dpcore.limits`, checked before any work).

Exit codes: 0 done, 1 done but the design is infeasible (``design``), 2 bad input (one line on stderr: a flag, a
file, a scenario), 3 an internal error (one line ``internal error: ... (please report)``; the traceback goes to the
log file named there, ``$DPCORE_LOG`` or ``dpcore-cli.log`` in the temporary folder), 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
import tempfile
from typing import Any, NoReturn

from ..family import ring_sentence
from ..outfiles import check_output
from ..textio import json_ready, printable
from ..validation import InputError

COMMAND_MODULES = ("design", "otd", "pca", "lda", "sweep", "plan", "compare")
LOG_ENV = "DPCORE_LOG"
log = logging.getLogger("dpcore.cli")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``error: argument --runs: must be ...``), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {printable(message)} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone (a name of COMMAND_MODULES): a fresh ``dpcore otd``
    process then imports the otd command's module only, not the sweeps', the planner's and the others'."""
    parser = _Parser(
        prog="dpcore" if os.path.basename(sys.argv[0]) == "dpcore" else "python -m dpcore",
        description="Distributed differentially private PCA and tensor decomposition with correlated noise (CAPE).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES if command not in COMMAND_MODULES else (command,):
        importlib.import_module(f"{__name__}.{name}").register(sub)
    if command not in COMMAND_MODULES:  # every other family's own run command, from the family table
        importlib.import_module(f"{__name__}.family_command").register_families(sub, skip=COMMAND_MODULES)
    return parser


def _command_of(argv: list[str]) -> str | None:
    """The command ``argv`` names (its first argument, when it is a command's name), else None (``--help``, a typo:
    the parser of every command answers)."""
    return argv[0] if argv and argv[0] in COMMAND_MODULES else None


def print_json(data: Any) -> None:
    """JSON on stdout; non-finite numbers become null so any JSON reader accepts it
    (:func:`~dpcore.textio.json_ready`)."""
    json.dump(json_ready(data), sys.stdout, indent=2)
    sys.stdout.write("\n")


def print_guarantees(guarantees: dict[str, Any], robust_hint: str | None = None) -> None:
    """The guarantee of every view of every algorithm (:class:`dpcore.cape.guarantee.Guarantee`), one line each;
    '(eps, delta)-DP' only where the audit certifies it. ``robust_hint`` names the algorithm that --collusion makes
    collusion-robust, printed when one of its views is not certified."""
    print("privacy (exact, every stage composed; certified = every site keeps its promise in that view):")
    width = max((len(name) for name in guarantees), default=0)
    failing = False
    for name, views in guarantees.items():
        for i, g in enumerate(views):
            print(f"  {(name if i == 0 else ''):<{width}}  {printable(g.label())}")
            failing |= name == robust_hint and not g.certified
    if failing:
        print(f"  {robust_hint}'s aggregator can learn more than promised: --collusion C uses the collusion-robust "
              "design, which keeps every view with up to C colluders within the promise")


def print_rings(bits: dict[str, int | None], table: dict[str, Any]) -> None:
    """The sentence on how the algorithms' values travelled (integers on a ring of ``bits`` bits, or float64;
    :func:`dpcore.family.ring_sentence`), when one of them used a ring. ``table``: the family's algorithm table."""
    sentence = ring_sentence(bits, {name: entry.title for name, entry in table.items()})
    if sentence:
        print(sentence)


def say(text: str) -> None:
    """One line on stderr, terminal control characters escaped (names and cells come from the user)."""
    print(printable(text), file=sys.stderr)


def _log_file() -> str:
    return os.environ.get(LOG_ENV) or os.path.join(tempfile.gettempdir(), "dpcore-cli.log")


def _log_internal_error(exc: BaseException) -> str | None:
    """Log the traceback of an unexpected exception to the log file; its path, or None when it cannot be written."""
    path = _log_file()
    try:
        check_output(f"the log file (${LOG_ENV})", path)  # a FIFO or a device would block or swallow the log
        handler = logging.FileHandler(path, encoding="utf-8")
    except (OSError, InputError):
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.propagate = False
    try:
        log.error("internal error in %s", " ".join(sys.argv), exc_info=exc)
    finally:
        log.removeHandler(handler)
        handler.close()
    return path


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    first = first if len(first) <= 200 else first[:197] + "..."
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(_command_of(sys.argv[1:] if argv is None else argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a bad flag (reported on one line by _Parser.error)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        say(f"error: {exc}")
        return 2
    except OSError as exc:
        say(f"error: {exc.strerror or exc}: {exc.filename}" if exc.filename else f"error: {exc}")
        return 2
    except MemoryError:
        say("error: not enough memory for this computation; use fewer sites, samples, features or runs")
        return 2
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    except Exception as exc:  # the last line of defence: one line for the user, the traceback in the log
        where = _log_internal_error(exc)
        detail = f"; details in {where}" if where else ""
        say(f"internal error: {_short(exc)} (please report{detail})")
        return 3
