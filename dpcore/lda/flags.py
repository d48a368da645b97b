"""capeLDA's command-line flags for its data settings (:class:`~dpcore.lda.sweep.LdaData`; ``sweep`` and ``plan``
read them from ``Family.sweep.flags``, :class:`dpcore.family.Flag`). --k, --d, --doc-length, --split and --path are
declared by the families before it (their help says what they mean here)."""

from __future__ import annotations

from ..family import Flag
from .corpus import ALPHA_SHAPES

__all__ = ["FLAGS", "FLAG_GROUP"]

FLAG_GROUP = "lda corpus"
FLAGS = (
    Flag(name="--alpha0", real=(0.0, 1e12), low_open=True, help="Dirichlet concentration alpha_0 (default 1)"),
    Flag(name="--alpha-shape", choices=tuple(ALPHA_SHAPES), help="symmetric alpha (default) or drawn from a Dirichlet "
         "(distinct whitened eigenvalues)"),
)
"""In the order of the help."""
