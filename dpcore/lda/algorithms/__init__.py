"""The LDA algorithms (docs/math/lda.md), in small groups: the distributed flows (capeLDA and the conventional scheme),
the single-curator ones (pooled Gaussian moments, one site alone, non-private), paper 004's four configurations and
the random reference. Each module defines ``ENTRIES``, its rows of the table
(:class:`dpcore.family.Algorithm`); :mod:`dpcore.lda.table` collects
every module of this package, ordered by ``position``."""
