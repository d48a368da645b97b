"""What PCA runners and guarantee rules share: the options a runner reads (``RunContext.settings`` of the family
contract, :mod:`dpcore.family.entry`) and the one release stage of capePCA and its baselines. The table entries are
:class:`dpcore.family.Algorithm`, collected by :mod:`dpcore.pca.table`."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["STAGE", "PcaOptions"]

STAGE = ("A",)
"""The one release stage of every PCA algorithm (A_s, the second-moment matrix), as guarantees name it; it has the
whole budget (shares (1.0,))."""


@dataclass(frozen=True, kw_only=True)
class PcaOptions:
    """Settings some algorithms read: DPdisPCA's rank R (None: R = K), the local site (None: the site with the
    smallest tau_s), and whether to keep the decomposed matrix (for the scree plot)."""

    rank: int | None = None
    local_site: int | None = None
    keep_matrix: bool = False
