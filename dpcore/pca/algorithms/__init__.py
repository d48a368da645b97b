"""One module per PCA algorithm (docs/math/capepca.md). Each module defines its runner and ``ENTRIES``, its rows
of the table (:class:`dpcore.family.Algorithm`); :mod:`dpcore.pca.table` collects every module of this package,
ordered by ``position``.
docs/adding-a-baseline.md walks through adding one."""
