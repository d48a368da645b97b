"""The discrete variant: every term an integer drawn by the exact discrete Gaussian sampler, the zero-sum terms made
by the sites themselves (E~_s = A w~_s - a_s W~, W~ by an exact secure sum on the ring) and every release summed
exactly modulo 2^b (docs/math/discrete.md; :mod:`dpcore.cape.discrete`, :mod:`dpcore.cape.discrete_audit`,
:mod:`dpcore.cape.discrete_flow`). Its construction is the helper-free one, so its aggregator views are the helper-free
views of the design's continuous twin (the integer law in statistic units, variances less the smoothing s^2); the
discrete audit adds the integer-shift excess and the smoothing slack. The Flower round runs it
(:mod:`dpcore.federation.ring`, docs/federated.md)."""

from __future__ import annotations

from ..variant import NoiseVariant
from .secure_sum import ENTRIES as _SECURE_SUM

__all__ = ["ENTRIES"]

ENTRIES = (NoiseVariant(
    name="discrete", title="the sites, on the integers", position=30, helper=False,
    aggregator_views=_SECURE_SUM[0].aggregator_views, integer=True,
    help="Every term an integer from the exact discrete Gaussian sampler; the sites make the zero-sum terms "
    "E~_s = A w~_s - a_s W~ from integer draws and a secure sum W~; the releases add up exactly modulo 2^b.",
),)
