"""``python -m dpcore pca``: capePCA and its baselines on synthetic, bundled or CSV data - the one run body of every
family's command (:func:`dpcore.cli.family_command.run_family`) with capePCA's flags and hooks
(:mod:`dpcore.pca.command`, :mod:`dpcore.pca.command_run`)."""

from __future__ import annotations

import argparse

from ..pca import FAMILY
from .family_command import register_family


def register(sub: argparse._SubParsersAction) -> None:
    """``dpcore pca``, built from capePCA's argument table (``FAMILY.command``)."""
    register_family(sub, FAMILY)
