"""One module per CAPE solver (docs/math/cape.md, "Generalized CAPE"): the mathematics of the solver and ``ENTRIES``,
its row of the noise-design table (:class:`dpcore.cape.solver.DesignSolver`); :mod:`dpcore.cape.noise_designs`
collects every module of this package, ordered by ``position``."""
