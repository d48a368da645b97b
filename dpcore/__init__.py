"""dpcore: distributed differentially private PCA and tensor decomposition with correlated noise (CAPE).

Modules follow the papers (see SPEC.md in the project notes and README.md):
``mechanisms`` (Gaussian calibration, symmetric and zero-sum noise), ``sensitivity``, ``scenario``,
``cape`` (noise design, gain), ``audit`` (privacy of the joint view), ``plan`` (design + audit).
Every function that draws noise takes a ``numpy.random.Generator``.
"""

__version__ = "0.1.0"
