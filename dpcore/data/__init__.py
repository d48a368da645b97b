"""Data (docs/data.md): uploaded numeric CSV files, bundled and synthetic data sets, preprocessing, splitting into
sites, uploaded text corpora and the bundled text corpus with its stop words; the shipped files are package data
(:mod:`.shipped`, ``dpcore/data/files/``).

Layout convention: a CSV file has one sample per row (:class:`NumericTable` keeps that layout, because it
describes the file); everything else follows the mathematics (docs/math/setting.md): a data matrix is **D x N,
one sample per column** (:class:`Dataset`, the site matrices X_s). :func:`table_to_dataset` does the single
transpose. Imports only the bottom layer.
"""

from .bundled import BUNDLED, BundledInfo, load_bundled
from .corpora import (
    BUNDLED_CORPORA,
    VOCABULARY_RULES,
    CorpusInfo,
    bundled_vocabulary,
    load_bundled_corpus,
    parse_text_corpus,
    stop_words,
)
from .dataset import Dataset, dataset_from_array, table_to_dataset
from .numeric_csv import (
    LABEL_MAX_CLASSES,
    CsvColumns,
    NumericTable,
    parse_label_column,
    parse_numeric_csv,
    sniff_columns,
)
from .preprocess import FEATURE_SCALINGS, PREPROCESSING, FeatureScaling, Preprocessed, Preprocessing, preprocess
from .shipped import DATA_DIR_ENV, FILES_FOLDER, data_dirs, find_shipped, read_item, read_shipped, shipped_path
from .split import SIZE_SCHEMES, SiteSplit, SizeScheme, apportion, site_sizes, sizes_from_fractions, split_sites
from .synthetic import (
    SPECTRA,
    SYNTHETIC_COVARIANCE_SEED,
    SYNTHETIC_PRESET,
    Spectrum,
    synthetic_covariance,
    synthetic_dataset,
)
from .text import (
    MIN_WORDS,
    NOT_PRIVATE_VOCABULARY,
    Corpus,
    parse_count_csv,
    parse_documents,
    parse_uploaded_documents,
    parse_vocabulary,
    tokenize,
    top_words,
)

__all__ = [
    "BUNDLED",
    "BUNDLED_CORPORA",
    "DATA_DIR_ENV",
    "FEATURE_SCALINGS",
    "FILES_FOLDER",
    "LABEL_MAX_CLASSES",
    "MIN_WORDS",
    "NOT_PRIVATE_VOCABULARY",
    "PREPROCESSING",
    "SIZE_SCHEMES",
    "SPECTRA",
    "SYNTHETIC_COVARIANCE_SEED",
    "SYNTHETIC_PRESET",
    "VOCABULARY_RULES",
    "BundledInfo",
    "Corpus",
    "CsvColumns",
    "CorpusInfo",
    "Dataset",
    "FeatureScaling",
    "NumericTable",
    "Preprocessed",
    "Preprocessing",
    "SiteSplit",
    "SizeScheme",
    "Spectrum",
    "apportion",
    "bundled_vocabulary",
    "data_dirs",
    "dataset_from_array",
    "find_shipped",
    "load_bundled",
    "load_bundled_corpus",
    "parse_count_csv",
    "parse_documents",
    "parse_uploaded_documents",
    "parse_label_column",
    "parse_numeric_csv",
    "parse_text_corpus",
    "parse_vocabulary",
    "preprocess",
    "read_item",
    "read_shipped",
    "shipped_path",
    "site_sizes",
    "sniff_columns",
    "sizes_from_fractions",
    "split_sites",
    "stop_words",
    "synthetic_covariance",
    "synthetic_dataset",
    "table_to_dataset",
    "tokenize",
    "top_words",
]
