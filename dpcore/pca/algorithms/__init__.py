"""One module per PCA algorithm (docs/math/capepca.md). Each module defines its runner and ``ALGORITHM``, its row
of the table; :mod:`dpcore.pca.table` collects every module of this package, ordered by ``position``.
docs/adding-a-baseline.md walks through adding one."""
