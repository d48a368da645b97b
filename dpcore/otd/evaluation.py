"""Evaluation of a decomposition against a reference (docs/math/capeagn.md; journal paper, section VI-B): q_comp
and the weight error with one matching rule."""

from __future__ import annotations

import numpy as np

__all__ = ["METRICS", "evaluate", "match_components", "q_comp"]

METRICS = ("q_comp", "weight_error")


def match_components(estimated: np.ndarray, reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every estimated component the nearest reference component: (indices, distances)."""
    dist = np.linalg.norm(estimated[:, None, :] - reference[None, :, :], axis=2)
    idx = np.argmin(dist, axis=1)
    return idx, dist[np.arange(len(idx)), idx]


def q_comp(estimated: np.ndarray, reference: np.ndarray) -> float:
    """q_comp = (1/K) sum_k min_k' ||a_hat_k - a_k'||_2 (journal paper, section VI-B)."""
    return float(match_components(estimated, reference)[1].mean())


def evaluate(components: np.ndarray, weights: np.ndarray, reference_components: np.ndarray,
             reference_weights: np.ndarray) -> tuple[float, float]:
    """(q_comp, weight error) with the same matching: weight error = (1/K) sum_k |w_hat_k - w_m(k)|,
    m(k) the reference component nearest to a_hat_k."""
    idx, dist = match_components(components, reference_components)
    return float(dist.mean()), float(np.mean(np.abs(weights - reference_weights[idx])))

