"""The capePCA page's data: an uploaded CSV sniffed and parsed (cached per content), the prepared sites (cached per
setting), and where the data came from as the report's script rebuilds them. The data key of the page is
("bundled", name) | ("synthetic", D, spectrum, decay) | ("upload", header, label column, file name, dropped ids)."""

from __future__ import annotations

import threading

import streamlit as st

from dpcore.data import (
    CsvColumns,
    NumericTable,
    load_bundled,
    parse_numeric_csv,
    sniff_columns,
    synthetic_dataset,
    table_to_dataset,
)
from dpcore.pca import PcaSetup, prepare_pca
from dpcore.seeding import PCA_SYNTHETIC_STREAM, stream_rng
from pages.shared.ahead import in_background

__all__ = ["NO_LABEL", "cached_setup", "data_source", "parse_upload", "prepare_ahead", "sniff_upload"]

NO_LABEL = -1
"""The label-column choice "none"."""


@st.cache_data(max_entries=4, show_spinner=False)
def sniff_upload(content: bytes, header: str) -> CsvColumns:
    return sniff_columns(content, header={"auto": None, "yes": True, "no": False}[header])


@st.cache_data(max_entries=4, show_spinner=False)
def parse_upload(content: bytes, header: str, label: int, ids: tuple[int, ...] = ()) -> NumericTable:
    flag = {"auto": None, "yes": True, "no": False}[header]
    return parse_numeric_csv(content, header=flag, label_column=None if label == NO_LABEL else label,
                             drop_columns=ids)


@st.cache_resource(max_entries=3, show_spinner=False)  # the Run's progress bar says it (pages/capepca.py)
def cached_setup(data: tuple, upload: bytes | None, scenario_json: str, k: int, features: str, preprocessing: str,
                 scale: float, by_label: bool, allow_replacement: bool, seed: int) -> PcaSetup:
    from dpcore.scenario import scenario_from_json

    scenario = scenario_from_json(scenario_json)
    kind = data[0]
    if kind == "bundled":
        dataset = load_bundled(data[1])
    elif kind == "synthetic":
        _, dim, spectrum, decay = data
        dataset = synthetic_dataset(scenario.total_n, stream_rng(seed, PCA_SYNTHETIC_STREAM), dim=dim,
                                    spectrum=spectrum, decay=decay)
    else:
        _, header, label, name, ids = data
        dataset = table_to_dataset(parse_upload(upload, header, label, ids), name)
    return prepare_pca(dataset, scenario, k, features=features, preprocessing=preprocessing, scale=scale,
                       by_label=by_label, allow_replacement=allow_replacement, seed=seed)


def prepare_ahead(*args) -> threading.Thread:
    """``cached_setup(*args)`` in a background thread of low priority (:func:`pages.shared.ahead.in_background`),
    started when the page has been drawn, so that the first Run finds the data and the site matrices prepared (a Run
    that comes first waits for the same computation: the cache computes each setting once). A failure is left to the
    Run, which computes the setting again and shows what is wrong next to the input."""
    return in_background(lambda: cached_setup(*args), "capepca-prepare-ahead")


def data_source(key: tuple) -> dict:
    """Where the data came from, as the report's script rebuilds them (dpcore.reports.pca.DATA_KINDS)."""
    if key[0] == "bundled":
        return {"kind": "bundled", "name": key[1]}
    if key[0] == "synthetic":
        return {"kind": "synthetic", "dim": key[1], "spectrum": key[2], "decay": key[3]}
    _, header, label, name, ids = key
    return {"kind": "upload", "file": name, "header": {"auto": None, "yes": True, "no": False}[header],
            "label": None if label == NO_LABEL else label, "drop": list(ids)}
