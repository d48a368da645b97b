"""Evaluation of a decomposition against a reference (docs/math/capeagn.md, "Metrics"; journal paper, section VI-B):
q_comp, the paper's normalised q_comp and the weight error, with one matching rule."""

from __future__ import annotations

import numpy as np

from ..family import Metric, metric_table

__all__ = ["METRICS", "evaluate", "evaluate_metrics", "match_components", "q_comp", "q_comp_normalised",
           "weight_error"]

def match_components(estimated: np.ndarray, reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every estimated component the nearest reference component: (indices, distances)."""
    dist = np.linalg.norm(estimated[:, None, :] - reference[None, :, :], axis=2)
    idx = np.argmin(dist, axis=1)
    return idx, dist[np.arange(len(idx)), idx]


def q_comp(estimated: np.ndarray, reference: np.ndarray) -> float:
    """q_comp = (1/K) sum_k min_k' ||a_hat_k - a_k'||_2 (journal paper, section VI-B)."""
    return float(match_components(estimated, reference)[1].mean())


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors, dtype=float), where=norms > 0)


def q_comp_normalised(estimated: np.ndarray, reference: np.ndarray) -> float:
    """q_comp of unit-length components, (1/K) sum_k min_k' ||a_hat_k / ||a_hat_k|| - a_k' / ||a_k'|| ||_2: the metric
    of the authors' code, which normalises each recovered component before the distance (their MOG truths have
    unit norm, so normalising the reference too changes nothing there). It ignores the length of a component, so
    it lies in [0, 2] and is smaller than q_comp whenever a private result is too long or too short."""
    return q_comp(_unit_rows(np.asarray(estimated, float)), _unit_rows(np.asarray(reference, float)))


def weight_error(components: np.ndarray, weights: np.ndarray, reference_components: np.ndarray,
                 reference_weights: np.ndarray) -> float:
    """(1/K) sum_k |w_hat_k - w_m(k)| with m(k) the reference component nearest to a_hat_k (q_comp's matching)."""
    idx, _ = match_components(components, reference_components)
    return float(np.mean(np.abs(weights - reference_weights[idx])))


METRICS: dict[str, Metric] = metric_table((
    Metric(name="q_comp", label="q_comp (component error)", words="component error q_comp", higher_is_better=False,
           description="q_comp = (1/K) sum_k min_k' ||a_hat_k - a_k'||_2 (lower is better)",
           compute=lambda components, weights, ref_components, ref_weights: q_comp(components, ref_components)),
    Metric(name="q_comp_normalised", label="q_comp of unit-length components (the paper's)", higher_is_better=False,
           words="component error of unit-length components",
           description="the paper's q_comp: the same distance between unit-length components (lower is better)",
           column="q_comp unit",
           compute=lambda components, weights, ref_components, ref_weights: q_comp_normalised(components,
                                                                                             ref_components)),
    Metric(name="weight_error", label="weight error", words="weight error", higher_is_better=False,
           description="weight error (1/K) sum_k |w_hat_k - w_m(k)| (lower is better)", compute=weight_error,
           column="weight error"),
))
"""Every OTD metric, in the order tables show them, each ``compute(components, weights, reference_components,
reference_weights)``."""


def evaluate_metrics(components: np.ndarray, weights: np.ndarray, reference_components: np.ndarray,
                     reference_weights: np.ndarray) -> dict[str, float]:
    """Every metric of :data:`METRICS` of one decomposition against a reference, by name."""
    return {name: m.compute(components, weights, reference_components, reference_weights)
            for name, m in METRICS.items()}


def evaluate(components: np.ndarray, weights: np.ndarray, reference_components: np.ndarray,
             reference_weights: np.ndarray) -> tuple[float, float]:
    """(q_comp, weight error) with the same matching (:func:`evaluate_metrics` has every metric)."""
    metrics = evaluate_metrics(components, weights, reference_components, reference_weights)
    return metrics["q_comp"], metrics["weight_error"]
