"""Command line: ``python -m dpcore <command> ...``.

Installed with ``pip install .``, the same command is ``dpcore ...``. Each command lives in its own module with
``register(subparsers)`` that adds its parser and sets ``func``; ``func(args)`` returns the exit code. Bad input
exits with status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from typing import Any

from ..validation import InputError

COMMAND_MODULES = ("design", "otd", "pca", "lda", "sweep")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpcore" if os.path.basename(sys.argv[0]) == "dpcore" else "python -m dpcore",
        description="Distributed differentially private PCA and tensor decomposition with correlated noise (CAPE).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def print_json(data: Any) -> None:
    """JSON on stdout; non-finite numbers become null so any JSON reader accepts it."""

    def clean(x: Any) -> Any:
        if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    json.dump(clean(data), sys.stdout, indent=2)
    sys.stdout.write("\n")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc.strerror or exc}: {exc.filename}" if exc.filename else f"error: {exc}", file=sys.stderr)
        return 2
