"""The memory-light non-private reference (docs/math/capeagn.md, "Online tensor power method"): the online robust
tensor power method of paper 001 (Algorithm 2) on the pooled data, with the whitening taken from products with the
second moment. Neither the D x D x D third moment nor the D x D second moment is formed: memory O(D K) besides the
samples, against O(D^2) for the projected path and O(D^3) for the dense one."""

from __future__ import annotations

from ...family import Algorithm, RunContext
from ...tensor.moments import MogSite, pool_sites
from ...tensor.online import (
    OnlineOracle,
    mog_oracle,
    online_tensor_power_method,
    stm_first_oracle,
    stm_oracle,
    streaming_whitening,
)
from ...tensor.whitening import Whitening
from ..algorithm import decomposition
from ..problem import Decomposition

__all__ = ["ENTRIES", "online_oracle"]


def online_oracle(site: object, whitening: Whitening) -> OnlineOracle:
    """The streamed contractions of the site's whitened third moment: MOG, or STM with its moment estimator."""
    if isinstance(site, MogSite):
        return mog_oracle(site.x, whitening.w, site.sigma2)
    if site.estimator == "first":
        return stm_first_oracle(site.first, whitening.w)
    return stm_oracle(site.counts, whitening.w)


def _online(ctx: RunContext) -> Decomposition:
    site = pool_sites(ctx.problem.sites)
    whitening = streaming_whitening(site.m2_matvec(), site.dim, ctx.problem.k)
    power = online_tensor_power_method(online_oracle(site, whitening), ctx.rng, n_restarts=ctx.settings.n_restarts,
                                       n_iter=ctx.settings.n_iter)
    return decomposition(ctx, whitening, power)


ENTRIES = (
    Algorithm(
        name="online", title="non-private (online)", position=65, colour="#98df8a", private=False,
        description="non-private online tensor power method (paper 001, Alg. 2) on pooled data: streamed power "
        "iterations and whitening, no D x D or D x D x D array (memory O(D K) besides the samples)",
        communication_text="0: a non-private reference computed where the samples are pooled (no protocol message)",
        communication=lambda sizes: 0, run=_online, guarantee="none",
    ),
)
