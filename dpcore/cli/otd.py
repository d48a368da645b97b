"""``python -m dpcore otd``: capeAGN and its baselines on a synthetic model or uploaded data - the one run body of
every family's command (:func:`dpcore.cli.family_command.run_family`) with capeAGN's flags and hooks
(:mod:`dpcore.agn.command`, :mod:`dpcore.agn.command_run`)."""

from __future__ import annotations

import argparse

from ..agn import FAMILY
from .family_command import register_family


def register(sub: argparse._SubParsersAction) -> None:
    """``dpcore otd``, built from capeAGN's argument table (``FAMILY.command``)."""
    register_family(sub, FAMILY)
