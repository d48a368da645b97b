"""capePCA's command-line flags for its data settings (:class:`~dpcore.pca.sweep.PcaData`; ``sweep`` and ``plan``
read them from ``Family.sweep.flags``, :class:`dpcore.family.Flag`)."""

from __future__ import annotations

from ..data import FEATURE_SCALINGS, PREPROCESSING, SPECTRA
from ..family import Flag
from ..limits import DECAY_RANGE, MAX_SYNTHETIC_DIM
from .problem import SOLVER_DTYPES
from .sweep import PCA_DATASETS

__all__ = ["FLAGS", "FLAG_GROUP"]

FLAG_GROUP = "pca data"
FLAGS = (
    Flag(name="--dataset", choices=tuple(PCA_DATASETS), help="synthetic (default), mnist or digits"),
    Flag(name="--csv", metavar="PATH", help="pca: your own numeric CSV, one sample per row (gzip accepted; header and "
         "label column detected unless --header / --label-column say)"),
    Flag(name="--header", choices=("auto", "yes", "no"), help="CSV: is the first row a header?"),
    Flag(name="--label-column", metavar="NAME|POS|auto", help="CSV: column left out of the features (default auto: "
         "detected)"),
    Flag(name="--k", integer=(1, MAX_SYNTHETIC_DIM), help="subspace dimension K (pca, default 10) or components K "
         "(otd, default 5)"),
    Flag(name="--dim", integer=(2, MAX_SYNTHETIC_DIM), help="synthetic D (default 200)"),
    Flag(name="--spectrum", choices=SPECTRA, help="synthetic eigenvalue decay shape (default power)"),
    Flag(name="--decay", real=DECAY_RANGE, help="synthetic decay rate (default 1)"),
    Flag(name="--features", choices=tuple(FEATURE_SCALINGS), help="feature scaling before the norm bound: centre "
         "(default, as the capePCA page and the pca command), none or standardise"),
    Flag(name="--preprocess", choices=tuple(PREPROCESSING), help="max-norm (default) or clip"),
    Flag(name="--rank", integer=(1, MAX_SYNTHETIC_DIM), help="DPdisPCA rank R (default K)"),
    Flag(name="--precision", choices=SOLVER_DTYPES, help="precision of the eigen-decompositions of the noisy matrices "
         "(default float32; float64 reproduces `dpcore pca` exactly)"),
)
"""In the order of the help."""
