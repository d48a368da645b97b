"""Data layer: CSV parser validation, bundled and synthetic data, preprocessing, splitting into sites."""

from __future__ import annotations

import gzip
import pickle

import numpy as np
import pytest

from dpcore.data import (
    BUNDLED,
    load_bundled,
    parse_numeric_csv,
    preprocess,
    site_sizes,
    split_sites,
    synthetic_covariance,
    synthetic_dataset,
    table_to_dataset,
)
from dpcore.validation import InputError

# ----------------------------------------------------------------------------------------------
# parse_numeric_csv: what it accepts
# ----------------------------------------------------------------------------------------------


def test_parse_plain_numbers_without_header():
    t = parse_numeric_csv(b"1,2,3\n4,5.5,-6e-1\n")
    assert not t.header
    assert t.values.dtype == float
    np.testing.assert_array_equal(t.values, [[1, 2, 3], [4, 5.5, -0.6]])
    assert t.columns == ["x1", "x2", "x3"]
    assert t.labels is None and t.dropped_label is None


def test_parse_detects_header_and_keeps_names():
    t = parse_numeric_csv("a,b,c\n1,2,3\n4,5,6\n")
    assert t.header
    assert t.columns == ["a", "b", "c"]
    assert t.values.shape == (2, 3)


def test_parse_forced_header_with_numeric_names():
    t = parse_numeric_csv("10,20\n1,2\n3,4\n", header=True)
    assert t.columns == ["10", "20"]
    np.testing.assert_array_equal(t.values, [[1, 2], [3, 4]])
    # the same file without header=True is read as three samples
    assert parse_numeric_csv("10,20\n1,2\n3,4\n").values.shape == (3, 2)


def test_parse_label_column_by_name_text_labels():
    msg = error_of("x;y;kind\n1;2;cat\n3;4;dog\n")
    assert "row 2, column 3 ('kind')" in msg and "label column" in msg
    t = parse_numeric_csv("x;y;kind\n1;2;cat\n3;4;dog\n", label_column="kind")
    assert t.dropped_label == "kind" and t.delimiter == ";"
    assert t.columns == ["x", "y"]
    assert list(t.labels) == ["cat", "dog"]
    np.testing.assert_array_equal(t.values, [[1, 2], [3, 4]])


def test_parse_label_column_by_position_numeric_labels():
    t = parse_numeric_csv("7,1,2\n3,4,5\n9,0,1\n", label_column=0)
    np.testing.assert_array_equal(t.labels, [7, 3, 9])
    assert t.labels.dtype.kind == "i"
    np.testing.assert_array_equal(t.values, [[1, 2], [4, 5], [0, 1]])
    last = parse_numeric_csv("1,2,0\n3,4,1\n", label_column=-1)
    np.testing.assert_array_equal(last.labels, [0, 1])
    assert last.dropped_label == "x3"


def test_parse_tabs_gzip_and_trailing_blank_lines():
    raw = gzip.compress(b"1\t2\n3\t4\n\n\n")
    t = parse_numeric_csv(raw)
    assert t.delimiter == "\t"
    np.testing.assert_array_equal(t.values, [[1, 2], [3, 4]])


# ----------------------------------------------------------------------------------------------
# parse_numeric_csv: every validation error
# ----------------------------------------------------------------------------------------------


def error_of(content, **kwargs) -> str:
    with pytest.raises(InputError) as info:
        parse_numeric_csv(content, **kwargs)
    return str(info.value)


def test_text_cell_names_row_and_column():
    msg = error_of("a,b,c\n1,2,3\n4,hello,6\n")
    assert "row 3" in msg and "column 2 ('b')" in msg and "'hello'" in msg and "not a number" in msg


def test_first_bad_cell_in_reading_order_and_count():
    msg = error_of("1,2,3\n4,5,z\n7,y,9\n")
    assert msg.startswith("row 2, column 3") and "2 bad cells in total" in msg


def test_code_in_a_cell_is_only_text():
    msg = error_of("1,2\n3,__import__('os').system('echo hacked')\n")
    assert "row 2, column 2" in msg and "not a number" in msg


@pytest.mark.parametrize("cell", ["nan", "NaN", "-nan"])
def test_nan_cells_are_rejected(cell):
    msg = error_of(f"1,2\n3,{cell}\n")
    assert "row 2, column 2" in msg and "missing value" in msg


@pytest.mark.parametrize("cell", ["inf", "-Infinity", "1e400"])
def test_infinite_cells_are_rejected(cell):
    msg = error_of(f"a,b\n1,2\n3,{cell}\n")
    assert "row 3, column 2 ('b')" in msg and "infinite" in msg


def test_empty_cell_and_short_row():
    assert "row 2, column 2 is empty" in error_of("1,2\n3,\n4,5\n")
    assert "row 2, column 2 is empty" in error_of("1,2\n3\n4,5\n")


def test_ragged_long_row():
    msg = error_of("1,2\n3,4\n5,6,7\n")
    assert "row 3 has 3 cells but the first row has 2" in msg


def test_fewer_than_two_rows_or_columns():
    assert "at least 2 rows" in error_of("1,2,3\n")
    assert "1 data row(s)" in error_of("a,b\n1,2\n")
    assert "1 numeric column(s)" in error_of("1\n2\n3\n")
    assert "besides the label column" in error_of("1,0\n2,1\n3,0\n", label_column=1)
    assert "empty" in error_of(b"\n\n")


def test_too_many_cells_states_the_limit():
    content = "\n".join(",".join(["1"] * 10) for _ in range(11))
    msg = error_of(content, max_cells=100)
    assert "11 rows x 10 columns = 110 cells" in msg and "limit of 100 cells" in msg
    assert parse_numeric_csv(content, max_cells=110).values.shape == (11, 10)


def test_too_many_bytes_states_the_limit():
    content = b"1,2\n3,4\n" * 200  # 1,600 bytes
    assert "1,600 bytes, more than the limit of 1,000 bytes" in error_of(content, max_bytes=1000)
    assert "limit of 1,000 bytes" in error_of(content.decode(), max_bytes=1000)
    bomb = gzip.compress(b"0,0\n" * 100_000)  # small compressed, 400 kB decompressed
    assert len(bomb) < 5000
    assert "decompressed file is larger than the limit" in error_of(bomb, max_bytes=10_000)


def test_binary_pickle_and_bad_encoding_are_rejected_unopened():
    payload = pickle.dumps({"x": 1}, protocol=0) + b"\x00\x01"
    assert "binary" in error_of(payload)
    assert "not UTF-8" in error_of("1,2\n3,é\n".encode("latin-1"))
    assert "gzip" in error_of(b"\x1f\x8b\x08garbage")


def test_label_column_errors():
    assert "no column is named 'lab'" in error_of("a,b,c\n1,2,3\n4,5,6\n", label_column="lab")
    assert "no header row" in error_of("1,2,3\n4,5,6\n", header=False, label_column="a")
    assert "outside the 3 columns" in error_of("1,2,3\n4,5,6\n", label_column=3)
    assert "2 columns are named 'a'" in error_of("a,a,b\n1,2,3\n4,5,6\n", label_column="a")
    assert "header must be" in error_of("1,2\n3,4\n", header="yes")


def test_a_first_row_mixing_text_and_numbers_is_a_question_not_a_guess():
    msg = error_of("1,2,x\n1,2,3\n4,5,6\n")
    assert "mixes text (row 1, column 3 is 'x') and numbers (column 1 is '1')" in msg and "header yes or no" in msg
    # half text: before, silently a header (its numbers became column names)
    assert "mixes text" in error_of("name,size,3,4\n1,2,3,4\n5,6,7,8\n")
    assert parse_numeric_csv("name,size,3,4\n1,2,3,4\n5,6,7,8\n", header=True).columns == ["name", "size", "3", "4"]
    assert parse_numeric_csv("1,2,x\n1,2,3\n4,5,6\n", header=True).values.shape == (2, 3)
    # a text label cell given by position does not count; empty cells do not either
    assert parse_numeric_csv("1,2,cat\n3,4,dog\n", label_column=-1).values.shape == (2, 2)
    assert "row 1, column 2 is empty" in error_of("1,,3\n4,5,6\n")


# ----------------------------------------------------------------------------------------------
# Bundled and synthetic data
# ----------------------------------------------------------------------------------------------


def test_bundled_mnist_and_digits():
    mnist = load_bundled("mnist")
    assert mnist.x.shape == (784, 5000) and mnist.image_shape == (28, 28)
    assert np.array_equal(np.bincount(mnist.labels), np.full(10, 500))
    assert mnist.x.min() == 0 and mnist.x.max() == 255
    assert not mnist.x.flags.writeable
    digits = load_bundled("digits")
    assert digits.x.shape == (64, 1797) and digits.image_shape == (8, 8)
    assert set(np.unique(digits.labels)) == set(range(10)) and digits.x.max() == 16
    assert set(BUNDLED) == {"mnist", "digits"}
    with pytest.raises(InputError, match="dataset must be one of"):
        load_bundled("cifar")


def test_synthetic_covariance_is_fixed_and_has_the_spectrum():
    values, basis = synthetic_covariance(6, "power", 2.0)
    np.testing.assert_allclose(values, 1.0 / np.arange(1, 7) ** 2)
    np.testing.assert_allclose(basis.T @ basis, np.eye(6), atol=1e-12)
    exp_values, basis2 = synthetic_covariance(6, "exponential", 0.5)
    np.testing.assert_allclose(exp_values, np.exp(-0.5 * np.arange(6)))
    np.testing.assert_array_equal(basis, basis2)  # the eigenbasis does not depend on the spectrum


def test_synthetic_samples_follow_the_covariance():
    n, dim = 40_000, 5
    data = synthetic_dataset(n, np.random.default_rng(3), dim=dim, spectrum="exponential", decay=0.7)
    values, basis = synthetic_covariance(dim, "exponential", 0.7)
    cov = basis @ np.diag(values) @ basis.T
    sample = data.x @ data.x.T / n
    # each entry's standard error is sqrt((cov_ii cov_jj + cov_ij^2) / n) <= sqrt(2/n); allow 5 of them
    np.testing.assert_allclose(sample, cov, atol=5 * np.sqrt(2.0 / n))
    other = synthetic_dataset(10, np.random.default_rng(4), dim=dim)
    assert not np.allclose(other.x, synthetic_dataset(10, np.random.default_rng(5), dim=dim).x)


# ----------------------------------------------------------------------------------------------
# Preprocessing
# ----------------------------------------------------------------------------------------------


def test_max_norm_centres_then_scales():
    rng = np.random.default_rng(0)
    x = rng.normal(5.0, 2.0, (4, 50))
    p = preprocess(x)
    np.testing.assert_allclose(p.x.mean(axis=1), 0, atol=1e-12)
    norms = np.linalg.norm(p.x, axis=0)
    assert norms.max() == pytest.approx(1.0)
    np.testing.assert_allclose(p.x * p.scale + p.mean[:, None], x)
    assert "not private" in p.note


def test_clip_bounds_every_norm_and_counts():
    x = np.array([[0.0, 3.0, -3.0, 0.5, -0.5], [0.0, 4.0, -4.0, 0.0, 0.0]])  # mean 0
    p = preprocess(x, "clip", scale=2.0)
    norms = np.linalg.norm(p.x, axis=0)
    np.testing.assert_allclose(norms, [0.0, 1.0, 1.0, 0.25, 0.25])
    assert p.n_clipped == 2
    np.testing.assert_allclose(p.x[:, 1], [0.6, 0.8])  # direction kept
    assert "not private" in p.note


def test_preprocess_errors():
    with pytest.raises(InputError, match="identical"):
        preprocess(np.ones((3, 5)))
    with pytest.raises(InputError, match="scale must be > 0"):
        preprocess(np.eye(3), "clip", scale=0)
    with pytest.raises(InputError, match="preprocessing must be one of"):
        preprocess(np.eye(3), "whiten")


# ----------------------------------------------------------------------------------------------
# Site sizes and splits
# ----------------------------------------------------------------------------------------------


def test_equal_sizes():
    sizes = site_sizes(103, 10)
    assert sizes.sum() == 103 and sizes.max() - sizes.min() == 1
    assert list(sizes[:3]) == [11, 11, 11]


def test_skewed_sizes_are_seeded_and_bounded():
    a = site_sizes(1000, 8, "skewed", rng=np.random.default_rng(1), concentration=0.3, min_size=20)
    b = site_sizes(1000, 8, "skewed", rng=np.random.default_rng(1), concentration=0.3, min_size=20)
    c = site_sizes(1000, 8, "skewed", rng=np.random.default_rng(2), concentration=0.3, min_size=20)
    assert a.sum() == 1000 and a.min() >= 20
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.max() > 2 * a.min()  # concentration 0.3 makes them unequal
    with pytest.raises(InputError, match="cannot give 8 sites"):
        site_sizes(100, 8, min_size=20)
    with pytest.raises(InputError, match="needs a random generator"):
        site_sizes(100, 4, "skewed")


def sorted_data(n=100, dim=3):
    labels = np.repeat(np.arange(5), n // 5)
    x = np.vstack([np.arange(n, dtype=float), labels, np.zeros(n)])[:dim]
    return x, labels


def test_split_without_replacement_is_disjoint_and_shuffled():
    x, labels = sorted_data()
    split = split_sites(x, [30, 30, 40], np.random.default_rng(0), labels=labels)
    assert not split.with_replacement and split.message is None
    joined = np.concatenate(split.indices)
    assert joined.size == 100 and np.unique(joined).size == 100
    np.testing.assert_array_equal(split.sizes, [30, 30, 40])
    for site, idx, lab in zip(split.sites, split.indices, split.labels, strict=True):
        np.testing.assert_array_equal(site, x[:, idx])  # columns are the samples
        np.testing.assert_array_equal(lab, labels[idx])
    assert all(np.unique(lab).size >= 3 for lab in split.labels)  # the sorted file was shuffled
    again = split_sites(x, [30, 30, 40], np.random.default_rng(0))
    np.testing.assert_array_equal(again.indices[0], split.indices[0])


def test_split_uses_a_subset_when_sites_need_fewer():
    x, _ = sorted_data()
    split = split_sites(x, [10, 10], np.random.default_rng(0))
    assert np.unique(np.concatenate(split.indices)).size == 20 and not split.with_replacement


def test_split_with_replacement_is_labelled_and_uses_everything():
    x, _ = sorted_data()
    with pytest.raises(InputError, match="need 160 samples but the data set has 100"):
        split_sites(x, [80, 80], np.random.default_rng(0))  # off by default
    split = split_sites(x, [80, 80], np.random.default_rng(0), allow_replacement=True)
    assert split.with_replacement
    assert "m times as far" in split.message and "does not account" in split.message
    assert "with replacement" in split.message and "160" in split.message and "group of m records" in split.message
    counts = np.bincount(np.concatenate(split.indices), minlength=100)
    assert counts.min() >= 1 and counts.sum() == 160
    np.testing.assert_array_equal(split.sizes, [80, 80])
    with pytest.raises(InputError, match="need 160 samples but the data set has 100"):
        split_sites(x, [80, 80], np.random.default_rng(0), allow_replacement=False)


def test_split_by_label_is_non_iid():
    x, labels = sorted_data()
    split = split_sites(x, [20] * 5, np.random.default_rng(0), labels=labels, by_label=True)
    assert split.by_label
    for lab in split.labels:
        assert np.unique(lab).size == 1
    with pytest.raises(InputError, match="needs labels"):
        split_sites(x, [20] * 5, np.random.default_rng(0), by_label=True)


def test_split_errors():
    x, labels = sorted_data()
    with pytest.raises(InputError, match="site size must be an integer >= 1"):
        split_sites(x, [10, 0], np.random.default_rng(0))
    with pytest.raises(InputError, match="got 3 labels for 100 samples"):
        split_sites(x, [10], np.random.default_rng(0), labels=labels[:3])


def test_table_to_dataset_transposes():
    t = parse_numeric_csv("1,2,0\n3,4,1\n5,6,0\n", label_column=-1)
    d = table_to_dataset(t, "mine")
    assert d.x.shape == (2, 3) and d.dim == 2 and d.n_samples == 3
    np.testing.assert_array_equal(d.x[:, 1], [3, 4])
    np.testing.assert_array_equal(d.labels, [0, 1, 0])
    with pytest.raises(InputError, match="image shape"):
        table_to_dataset(t, image_shape=(2, 2))


def test_sizes_from_fractions_gives_every_site_a_sample():
    from dpcore.data import sizes_from_fractions

    assert sizes_from_fractions(1000, np.array([0.2, 0.3, 0.5])).tolist() == [200, 300, 500]
    # exact shares (0.005, 4.9975, 4.9975) round to (0, 5, 5); the empty site takes one from the largest
    assert sizes_from_fractions(10, np.array([0.001, 1.0, 1.0])).tolist() == [1, 4, 5]
