"""Issue 34's lighter results: the capePCA component images as one heatmap (every image where the mosaic says), and
the results' chart code the computing pages load while idle (the modules exist in the installed Streamlit)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import streamlit as st

from dpcore.pca import align_signs
from pages.shared.chart_code import RESULT_ELEMENTS, _module_paths
from pages.shared.pca_figures import component_images


def test_component_images_are_one_heatmap_with_every_image_in_its_place(rng):
    h, w, k = 7, 5, 8
    true_v = np.linalg.qr(rng.standard_normal((h * w, k)))[0]
    private = -true_v + 0.05 * rng.standard_normal(true_v.shape)  # signs flipped: the figure aligns them
    fig = component_images(SimpleNamespace(k=k, top_vectors=true_v), private, (h, w))
    assert len(fig.data) == 1 and fig.data[0].type == "heatmap"
    z = np.asarray(fig.data[0].z, dtype=float)
    count = min(k, 6)
    assert z.shape == (2 * h + 1, count * (w + 1) - 1)
    aligned = align_signs(true_v[:, :count], private[:, :count])
    for i in range(count):
        cols = slice(i * (w + 1), i * (w + 1) + w)
        np.testing.assert_array_equal(z[:h, cols], true_v[:, i].reshape(h, w))
        np.testing.assert_array_equal(z[h + 1:, cols], aligned[:, i].reshape(h, w))
    gaps = np.isnan(z)
    assert gaps[h].all() and gaps.sum() == z.size - 2 * count * h * w  # only the separating pixels are blank
    assert list(fig.layout.xaxis.ticktext) == [f"#{i + 1}" for i in range(count)]
    assert fig.layout.coloraxis.cmin == -fig.layout.coloraxis.cmax


def test_the_results_chart_code_is_found_in_the_installed_streamlit():
    """A Streamlit that renamed its modules would leave the pages loading nothing before the Run."""
    paths = _module_paths()
    folder = Path(st.__file__).parent / "static"
    assert [p.split("/")[-1].split(".")[0] for p in paths] == list(RESULT_ELEMENTS)
    assert all((folder / p).is_file() for p in paths)
