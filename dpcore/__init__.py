"""dpcore: distributed differentially private PCA and tensor decomposition with correlated noise (CAPE).

Subpackages follow the papers (docs/architecture.md has the map; docs/math/ the mathematics) and import strictly
downward:

* bottom layer: :mod:`~dpcore.validation` (InputError and checks), :mod:`~dpcore.limits` (every size limit),
  :mod:`~dpcore.linalg` (the eigen-solver), :mod:`~dpcore.seeding` (random streams keyed by name),
  :mod:`~dpcore.summary` (the result summary type);
* :mod:`~dpcore.privacy` - calibration, privacy profile, sensitivities, symmetric, zero-sum and AVN noise;
* :mod:`~dpcore.data` - CSV uploads, bundled and synthetic data, preprocessing, site splits, text corpora;
* :mod:`~dpcore.scenario` - the shared input, validated once, and its JSON, table and link forms;
* :mod:`~dpcore.cape` - noise designs, gains, the audit, explanations, plans, capeAGN stages, protocol rounds;
* :mod:`~dpcore.pca` - capePCA and its baselines (one algorithm table);
* :mod:`~dpcore.otd` - capeAGN and its baselines (one algorithm table);
* :mod:`~dpcore.experiments` - privacy-utility sweeps, the paper's presets, figures;
* :mod:`~dpcore.cli` - ``python -m dpcore`` / ``dpcore``.

Every function that draws noise takes a ``numpy.random.Generator``.
"""

__version__ = "0.1.0"
