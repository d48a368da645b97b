"""The helper variant: a trusted helper draws the zero-sum terms e_s from the design's law and hands each site its
own (docs/math/cape.md). Without drop-outs its views are exactly the audit's (:func:`dpcore.cape.audit.view_sigmas`);
with sites that dropped out after the noise was set up, every dropped site is in every coalition of the aggregator
(its e_v is what the aggregator must learn to remove it)."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from ...limits import MAX_COALITIONS
from ..audit import ViewSigma, _aggregator_sigmas
from ..design import NoiseDesign
from ..variant import NoiseVariant

__all__ = ["ENTRIES"]


def _helper_views(design: NoiseDesign, size: int, dropped: tuple[int, ...], s: int) -> list[ViewSigma]:
    """The helper variant's aggregator views of survivor s with every dropped site forced into the coalition."""
    var_g = np.clip(design.var_g, 0.0, None)
    cov_e = design.e_mixing @ design.e_mixing.T
    survivors = [t for t in range(design.n_sites) if t != s and t not in dropped]
    base = np.array([sorted(dropped)], dtype=np.int64).reshape(1, len(dropped))
    out = [ViewSigma(site=s, view="aggregator", coalition=tuple(sorted(dropped)),
                     sigma_eff=float(_aggregator_sigmas(cov_e, var_g, s, base)[0]))]
    extra = min(size, len(survivors))
    if extra > 0:
        if math.comb(len(survivors), extra) <= MAX_COALITIONS:
            coals = np.array([sorted(dropped + c) for c in combinations(survivors, extra)], dtype=np.int64)
            sig = _aggregator_sigmas(cov_e, var_g, s, coals)
            best = int(np.argmin(sig))
            out.append(ViewSigma(site=s, view="aggregator+coalition", coalition=tuple(int(t) for t in coals[best]),
                                 sigma_eff=float(sig[best])))
        else:  # greedy, with the proven bound sigma_eff >= tau_g,s
            chosen: list[int] = []
            sigma = math.inf
            for _ in range(extra):
                cands = [t for t in survivors if t not in chosen]
                coals = np.array([sorted(dropped + tuple(chosen) + (t,)) for t in cands], dtype=np.int64)
                sig = _aggregator_sigmas(cov_e, var_g, s, coals)
                best = int(np.argmin(sig))
                chosen.append(cands[best])
                sigma = float(sig[best])
            out.append(ViewSigma(site=s, view="aggregator+coalition", coalition=tuple(sorted(dropped + tuple(chosen))),
                                 sigma_eff=sigma, exact=False, sigma_bound=math.sqrt(var_g[s])))
    return out


ENTRIES = (NoiseVariant(
    name="helper", title="a trusted helper", position=10, helper=True, aggregator_views=_helper_views,
    audit_without_dropouts=True,
    help="A trusted helper draws the zero-sum terms e_s and sends each site its own; it must not collude.",
),)
