"""The capePCA page's pictures of one run: the top components as images beside the true ones, and the scree plot of a
noisy matrix against the true one (the numbers from dpcore.pca: align_signs, scree)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from dpcore.pca import align_signs, scree

__all__ = ["component_images", "scree_figure"]


def component_images(problem, vectors: np.ndarray, shape: tuple[int, int]) -> go.Figure:
    """The first (at most 6) true top directions over the private ones (signs aligned), as ``shape`` images on one
    colour scale centred at 0. One heatmap of all the images side by side (a blank pixel between them) on one pair
    of axes: the browser draws one trace, not one subplot with its two axes per image."""
    count = min(problem.k, 6)
    true_v = problem.top_vectors[:, :count]
    private_v = align_signs(true_v, vectors[:, :count])
    h, w = shape
    mosaic = np.full((2 * h + 1, count * (w + 1) - 1), np.nan)
    for i in range(count):
        for row, v in ((0, true_v), (1, private_v)):
            mosaic[row * (h + 1):row * (h + 1) + h, i * (w + 1):i * (w + 1) + w] = v[:, i].reshape(h, w)
    limit = float(max(np.abs(true_v).max(), np.abs(private_v).max()))
    fig = go.Figure(go.Heatmap(z=mosaic, coloraxis="coloraxis", hoverongaps=False))
    fig.update_layout(coloraxis={"colorscale": "RdBu", "cmid": 0.0, "cmin": -limit, "cmax": limit,
                                 "colorbar": {"title": {"text": "weight"}, "thickness": 12}})
    fig.update_xaxes(tickvals=[i * (w + 1) + (w - 1) / 2 for i in range(count)],
                     ticktext=[f"#{i + 1}" for i in range(count)], side="top", showgrid=False, zeroline=False)
    fig.update_yaxes(tickvals=[(h - 1) / 2, h + 1 + (h - 1) / 2], ticktext=["true", "private"], autorange="reversed",
                     scaleanchor="x", showgrid=False, zeroline=False)
    return fig


def scree_figure(problem, matrix: np.ndarray, label: str) -> go.Figure:
    """The leading eigenvalues of ``matrix`` (named ``label``) against those of the true pooled A, with K marked."""
    count = min(problem.dim, max(3 * problem.k, 30))
    true_values, noisy_values = scree(problem, matrix, count)
    index = np.arange(1, count + 1)
    fig = go.Figure()
    fig.add_scatter(x=index, y=true_values, mode="lines+markers", name="true A")
    fig.add_scatter(x=index, y=noisy_values, mode="lines+markers", name=label)
    fig.add_vline(x=problem.k + 0.5, line_dash="dot", annotation_text="K")
    fig.update_layout(xaxis_title="eigenvalue index", yaxis_title="eigenvalue")
    return fig
