"""``python -m dpcore lda``: private topic models - paper 004's four configurations, capeLDA and its baselines - on a
synthetic LDA corpus, the bundled Python-docs corpus or a text file (docs/cli.md, "lda"; docs/math/lda.md): the one
run body of every family's command (:func:`dpcore.cli.family_command.run_family`) with capeLDA's flags and hooks
(:mod:`dpcore.lda.command`, :mod:`dpcore.lda.command_run`)."""

from __future__ import annotations

import argparse

from ..lda import FAMILY
from .family_command import register_family


def register(sub: argparse._SubParsersAction) -> None:
    """``dpcore lda``, built from capeLDA's argument table (``FAMILY.command``)."""
    register_family(sub, FAMILY)
