"""capeAGN's command-line flags for its data settings (:class:`~dpcore.agn.sweep.OtdData`; ``sweep`` and ``plan``
read them from ``Family.sweep.flags``, :class:`dpcore.family.Flag`)."""

from __future__ import annotations

from ..family import Flag
from ..limits import MAX_DOC_LENGTH, MAX_OTD_DIM, MAX_SIGMA2, SPLIT_RANGE
from ..tensor import ESTIMATORS, PATHS
from .models import DEFAULT_SIGMA2, MODELS, TRUTHS

__all__ = ["FLAGS", "FLAG_GROUP"]

FLAG_GROUP = "otd model (--d, --doc-length, --split and --path also for lda)"
FLAGS = (
    Flag(name="--model", choices=MODELS, help="mog or stm (default mog)"),
    Flag(name="--d", integer=(2, MAX_OTD_DIM), help="dimension D (default 10; lda: vocabulary size, default 100)"),
    Flag(name="--sigma2", real=(0.0, MAX_SIGMA2), help=f"MOG sigma^2 (default {DEFAULT_SIGMA2})"),
    Flag(name="--doc-length", integer=(3, MAX_DOC_LENGTH), help="STM words per document L >= 3 (default 3; lda: 50)"),
    Flag(name="--estimator", choices=tuple(ESTIMATORS), help="STM moment estimator (default first)"),
    Flag(name="--split", real=SPLIT_RANGE, help="share of eps and delta for the first stage (default 0.5)"),
    Flag(name="--path", choices=PATHS, help="third-moment path (default auto)"),
    Flag(name="--truth", choices=tuple(TRUTHS), help="synthetic ground truth: ours (default) or the authors' set-up ("
         + TRUTHS["authors"] + ")"),
)
"""In the order of the help; --k is capePCA's row (the first family's), whose help says what it is here."""
