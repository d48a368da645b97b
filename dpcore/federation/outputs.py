"""What the aggregator of a federated round makes of the aggregates (docs/federated.md), with the functions the
in-process algorithms use: capePCA's top-K subspace (:func:`dpcore.pca.result.top_subspace`), capeAGN's whitening
(:func:`dpcore.tensor.whitening.whiten`) and its tensor power method with recovery (:mod:`dpcore.tensor.power`)."""

from __future__ import annotations

import numpy as np

from ..pca.result import top_subspace
from ..privacy.symmetric import symmetric_matrix, symmetric_tensor
from ..tensor.power import recover, tensor_power_method
from ..tensor.whitening import Whitening, whiten

__all__ = ["pca_output", "tensor_output", "whitening_output"]


def pca_output(aggregate: np.ndarray, dim: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The top-K eigenvalues and eigenvectors (D x K) of the symmetric aggregate (capePCA's output V_K)."""
    return top_subspace(aggregate, dim, k)


def whitening_output(aggregate: np.ndarray, dim: int, k: int) -> Whitening:
    """W = U D^(-1/2) from the top-K eigenpairs of the aggregated M2 (raises ``WhiteningError``, never NaN)."""
    return whiten(symmetric_matrix(aggregate, dim), k)


def tensor_output(aggregate: np.ndarray, whitening: Whitening, rng: np.random.Generator, *, model: str,
                  scale: float = 1.0, n_restarts: int, n_iter: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Robust tensor power method on the aggregated K x K x K M3~ and recovery for ``model`` ("stm", or "mog" with
    the public norm bound ``scale``): (components K x D, weights K, eigenvalues K)."""
    k = whitening.w.shape[1]
    power = tensor_power_method(symmetric_tensor(aggregate, k), k, rng, n_restarts=n_restarts, n_iter=n_iter)
    comps, weights, _ = recover(whitening, power, model, scale)
    return comps, weights, power.eigenvalues
