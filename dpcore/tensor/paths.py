"""Memory budget and the choice of the third-moment path (docs/math/capeagn.md, "Large D: the projected path").

* ``dense``: every site forms its D x D x D moment and D^3 noise tensors, then projects;
* ``projected``: sites compute M3_s(W, W, W) from their samples and add noise sampled already projected. No D^3
  array exists; memory is O(N D + D^2 + K^3) (the D x D second moment stays). The helper and the aggregator sample
  their E3_s and F3_s already projected, using W, which is public after stage 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from ..limits import DEFAULT_MEMORY_BUDGET, EIGH_MAX_DIM, MAX_DENSE_ENTRIES, MAX_PUBLISHED_PROJECTED_K
from ..privacy.symmetric import unique_count_matrix, unique_count_tensor
from ..validation import InputError, check_choice, check_positive_int
from .release import BLOCK_UNIQUE
from .whitening import KRYLOV_BLOCKS, KRYLOV_OVERSAMPLE

__all__ = ["PATHS", "M3Path", "PathChoice", "choose_path", "memory_estimate"]

M3Path = Literal["auto", "dense", "projected"]
PATHS: tuple[M3Path, ...] = get_args(M3Path)


@dataclass(frozen=True, kw_only=True)
class PathChoice:
    path: str
    dense_bytes: int
    projected_bytes: int
    budget: int
    reason: str


def memory_estimate(path: str, dim: int, k: int, n_sites: int) -> int:
    """Bytes of the arrays one run allocates (besides the samples themselves), stated:

    * both paths: the D x D second moment and its copy for the eigensolver (16 D^2; above EIGH_MAX_DIM it is kept
      in float32 and the block Krylov solver reads it without a copy: 4 D^2, plus its basis and products, 2 x D x
      (K + KRYLOV_OVERSAMPLE) KRYLOV_BLOCKS doubles), the noise of one block of the M2 flow (6 arrays of
      S x min(2^18, D(D+1)/2) doubles) and the K^3 tensors;
    * projected adds the published law's covariance, its factor and temporaries (5 m^2 doubles,
      m = C(K+2, 3); K <= MAX_PUBLISHED_PROJECTED_K, the only K where it is used);
    * dense adds the third-moment noise of all sites, drawn at once (6 S D^3 doubles while drawing:
      standard normals and scaled terms) and about 10 D^3 doubles for one site's moment, its
      symmetrisation and projection."""
    block = min(BLOCK_UNIQUE, unique_count_matrix(dim))
    krylov = 16 * dim * (k + KRYLOV_OVERSAMPLE) * KRYLOV_BLOCKS
    second = 4 * dim * dim + krylov if dim > EIGH_MAX_DIM else 16 * dim * dim
    m2 = second + 48 * n_sites * block + 64 * k**3 * max(n_sites, 1)
    if path == "projected":
        covariance = 40 * unique_count_tensor(k) ** 2 if k <= MAX_PUBLISHED_PROJECTED_K else 0
        return int(m2 + covariance)
    return int(m2 + 8 * dim**3 * (6 * n_sites + 10))


def _gib(n: float) -> str:
    if n >= 2**30:
        return f"{n / 2**30:.2f} GiB"
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def choose_path(requested: str, dim: int, k: int, n_sites: int, budget: int = DEFAULT_MEMORY_BUDGET) -> PathChoice:
    """``auto``: dense when its arrays fit ``budget`` (and D^3 <= MAX_DENSE_ENTRIES), else projected.
    ``dense``/``projected`` are forced; an InputError says when even the forced path does not fit."""
    requested = check_choice(requested, "path", PATHS)
    budget = check_positive_int(budget, "memory budget")
    dense = memory_estimate("dense", dim, k, n_sites)
    proj = memory_estimate("projected", dim, k, n_sites)
    dense_ok = dense <= budget and dim**3 <= MAX_DENSE_ENTRIES
    if requested == "dense" and not dense_ok:
        raise InputError(
            f"D = {dim} is too large for the dense path: its D x D x D tensors need about {_gib(dense)}, more than "
            f"the memory budget of {_gib(budget)}. Use the projected path (--path projected or auto), a smaller D, "
            "or a larger budget.", "path")
    if proj > budget:
        raise InputError(
            f"D = {dim} is too large even for the projected path: the D x D second moment needs about "
            f"{_gib(proj)}, more than the memory budget of {_gib(budget)}. Use a smaller D (vocabulary) or raise "
            "the budget.", "D")
    if requested == "dense" or (requested == "auto" and dense_ok):
        why = ("forced" if requested == "dense" else
               f"auto: the dense tensors (about {_gib(dense)}) fit the {_gib(budget)} budget")
        return PathChoice(path="dense", dense_bytes=dense, projected_bytes=proj, budget=budget, reason=why)
    why = ("forced" if requested == "projected" else
           f"auto: the dense tensors would need about {_gib(dense)}, more than the {_gib(budget)} budget")
    return PathChoice(path="projected", dense_bytes=dense, projected_bytes=proj, budget=budget, reason=why)


