"""The OTD algorithms (docs/math/capeagn.md), in small groups: the distributed flows (capeAGN and the conventional
scheme), the single-party ones (pooled AGN, AVN, the noisy tensor power method, non-private, one site alone) and the
random reference. Each module defines ``ALGORITHMS``, its rows of the table; :mod:`dpcore.agn.table` collects every
module of this package, ordered by ``position``."""
