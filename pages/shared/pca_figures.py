"""The capePCA page's pictures of one run: the top components as images beside the true ones, and the scree plot of a
noisy matrix against the true one (the numbers from dpcore.pca: align_signs, scree)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.pca import align_signs, scree

__all__ = ["component_images", "scree_figure"]


def component_images(problem, vectors: np.ndarray, shape: tuple[int, int]) -> go.Figure:
    """The first (at most 6) true top directions over the private ones (signs aligned), as ``shape`` images on one
    colour scale centred at 0."""
    count = min(problem.k, 6)
    true_v = problem.top_vectors[:, :count]
    private_v = align_signs(true_v, vectors[:, :count])
    h, w = shape
    fig = make_subplots(rows=2, cols=count, horizontal_spacing=0.01, vertical_spacing=0.06,
                        row_titles=["true", "private"], subplot_titles=[f"#{i + 1}" for i in range(count)])
    limit = float(max(np.abs(true_v).max(), np.abs(private_v).max()))
    for i in range(count):
        for row_index, v in ((1, true_v), (2, private_v)):
            fig.add_trace(go.Heatmap(z=v[:, i].reshape(h, w), coloraxis="coloraxis"), row=row_index, col=i + 1)
    fig.update_layout(coloraxis={"colorscale": "RdBu", "cmid": 0.0, "cmin": -limit, "cmax": limit,
                                 "colorbar": {"title": {"text": "weight"}, "thickness": 12}})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, autorange="reversed", scaleanchor="x")
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
