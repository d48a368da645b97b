"""Uploads a researcher can trust (docs/data.md, "Uploads"): the label column detected (properties over generated
tables), the feature scaling before the norm bound, sampling with replacement off by default, and BUNDLED as the one
table of bundled data sets that every list reads."""

from __future__ import annotations

import fnmatch
import tomllib

import numpy as np
import pytest
from conftest import ROOT
from hypothesis import given
from hypothesis import strategies as st

from dpcore.data import (
    BUNDLED,
    FEATURE_SCALINGS,
    LABEL_MAX_CLASSES,
    load_bundled,
    parse_numeric_csv,
    preprocess,
    sniff_columns,
)
from dpcore.validation import InputError

FLOATS = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).filter(lambda v: v != round(v))
WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=8).filter(
    lambda w: w.lower() not in {"nan", "inf", "infinity"})  # words pandas reads as numbers


def _csv(rows: list[list[str]], delimiter: str = ",") -> bytes:
    return "\n".join(delimiter.join(r) for r in rows).encode()


@st.composite
def table_with_text_label(draw):
    n_rows = draw(st.integers(2, 30))
    n_features = draw(st.integers(2, 6))
    position = draw(st.integers(0, n_features))
    classes = draw(st.lists(WORDS, min_size=1, max_size=4, unique=True))
    header = draw(st.booleans())
    rows = []
    for _ in range(n_rows):
        cells = [repr(draw(FLOATS)) for _ in range(n_features)]
        cells.insert(position, draw(st.sampled_from(classes)))
        rows.append(cells)
    if header:
        rows.insert(0, [f"col{j}" for j in range(n_features + 1)])
    return _csv(rows, draw(st.sampled_from([",", ";", "\t"]))), position, header, n_rows


@given(table_with_text_label())
def test_a_text_column_anywhere_is_the_detected_label(case):
    content, position, header, n_rows = case
    found = sniff_columns(content)
    assert found.label == position and found.header == header and found.n_rows == n_rows
    assert "text" in found.reason
    table = parse_numeric_csv(content, header=found.header, label_column=found.label)  # it parses with that label
    assert table.n_samples == n_rows and table.labels is not None


@given(st.integers(4, 40), st.integers(2, 5), st.integers(2, LABEL_MAX_CLASSES), st.booleans(), st.data())
def test_few_whole_numbers_at_an_end_are_the_label(n_rows, n_features, classes, first, data):
    classes = min(classes, n_rows // 2)
    if classes < 2:
        return
    labels = [str(i % classes) for i in range(n_rows)]  # every class present
    rows = []
    for i in range(n_rows):
        cells = [repr(data.draw(FLOATS)) for _ in range(n_features)]
        rows.append([labels[i], *cells] if first else [*cells, labels[i]])
    found = sniff_columns(_csv(rows))
    assert found.label == (0 if first else n_features)
    assert f"{classes} distinct whole numbers" in found.reason


@given(st.integers(2, 30), st.integers(2, 6), st.data())
def test_measurements_alone_have_no_label(n_rows, n_features, data):
    rows = [[repr(data.draw(FLOATS)) for _ in range(n_features)] for _ in range(n_rows)]
    found = sniff_columns(_csv(rows))
    assert found.label is None and not found.header
    assert found.columns == tuple(f"x{j + 1}" for j in range(n_features))


@given(st.binary(max_size=300))
def test_sniffing_arbitrary_bytes_gives_a_result_or_a_message(content):
    try:
        found = sniff_columns(content)
    except InputError as exc:
        assert str(exc)
    else:
        assert found.label is None or 0 <= found.label < len(found.columns)


def test_a_pixel_table_is_not_mistaken_for_labels_and_its_label_is_found():
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (60, 16))
    pixels[:, :3] = 0  # border pixels: constant
    rows = [[str(v) for v in row] + [str(i % 10)] for i, row in enumerate(pixels)]
    found = sniff_columns(_csv(rows))
    assert found.label == 16 and "10 distinct whole numbers in 60 rows" in found.reason


def test_standardise_gives_unit_variance_features_before_the_bound():
    rng = np.random.default_rng(1)
    x = rng.normal([[5.0], [-2.0], [100.0]], [[1.0], [10.0], [1000.0]], (3, 200))
    x = np.vstack([x, np.full((1, 200), 7.0)])  # a constant feature
    p = preprocess(x, features="standardise")
    z = p.x * p.scale  # undo the norm bound
    np.testing.assert_allclose(z[:3].mean(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(z[:3].std(axis=1), 1, rtol=1e-12)
    np.testing.assert_array_equal(z[3], 0)
    assert np.linalg.norm(p.x, axis=0).max() == pytest.approx(1.0)
    assert "standardised (1 constant feature(s) left at 0)" in p.note and "standard deviations" in p.note
    np.testing.assert_allclose(z * p.feature_scale[:, None] + p.mean[:, None], x, rtol=1e-12)


def test_no_feature_scaling_with_a_public_clip_reads_nothing_from_the_data():
    x = np.array([[3.0, 0.3, 10.0], [4.0, 0.4, 0.0]])
    p = preprocess(x, "clip", scale=5.0, features="none")
    np.testing.assert_allclose(p.x, [[0.6, 0.06, 1.0], [0.8, 0.08, 0.0]])
    assert p.n_clipped == 1 and "nothing is read from the data" in p.note
    assert set(FEATURE_SCALINGS) == {"none", "centre", "standardise"}
    with pytest.raises(InputError, match="features"):
        preprocess(x, features="whiten")


def _shipped_patterns() -> list[str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["dpcore.data"]


def test_bundled_is_the_one_table_of_data_sets():
    from dpcore.experiments.spec import PCA_DATASETS, PcaData

    patterns = _shipped_patterns()
    readme = (ROOT / "dpcore" / "data" / "files" / "README.md").read_text()
    for name, info in BUNDLED.items():
        assert any(fnmatch.fnmatch(f"files/{info.file}", p) for p in patterns), info.file
        assert f"`{info.file}`" in readme and info.licence in readme
        data = load_bundled(name)
        assert data.dim == info.dim and data.n_samples == info.samples and data.image_shape == info.image_shape
        assert PCA_DATASETS[name] == info.label and PcaData(dataset=name, k=2).dim == info.dim
    assert set(PCA_DATASETS) == {"synthetic", *BUNDLED}


def test_every_shipped_file_is_package_data():
    """Every file of dpcore/data/files/ that a reader reads (data sets, corpora, stop words, stored results and
    their manifest) matches a package-data pattern of pyproject.toml, so `pip install .` ships it."""
    from dpcore.data import BUNDLED_CORPORA, FILES_FOLDER
    from dpcore.data.corpora import STOP_WORDS_FILE
    from dpcore.experiments.stored import MANIFEST_NAME, STORED_FOLDER, stored_dir

    folder = ROOT / "dpcore" / "data" / FILES_FOLDER
    presets = [p.relative_to(folder).as_posix() for p in (folder / STORED_FOLDER).iterdir()]
    corpora = [f for c in BUNDLED_CORPORA.values() for f in (c.file, c.vocabulary_file)]
    patterns = _shipped_patterns()
    for name in [info.file for info in BUNDLED.values()] + corpora + [STOP_WORDS_FILE, "README.md"] + presets:
        assert (folder / name).is_file() and any(fnmatch.fnmatch(f"{FILES_FOLDER}/{name}", p) for p in patterns), name
    assert f"{STORED_FOLDER}/{MANIFEST_NAME}" in presets and stored_dir() is not None
