"""Payloads as Flower records: configuration values in one ConfigRecord, arrays in one ArrayRecord."""

from __future__ import annotations

import numpy as np
from flwr.app import Array, ArrayRecord, ConfigRecord, RecordDict

from .messages import Payload

__all__ = ["from_records", "to_records"]

_CONFIG, _ARRAYS = "config", "arrays"


def to_records(payload: Payload) -> RecordDict:
    records = RecordDict({_CONFIG: ConfigRecord(dict(payload.config))})
    if payload.arrays:
        records[_ARRAYS] = ArrayRecord({k: _array(v) for k, v in payload.arrays.items()})
    return records


def _array(values: np.ndarray) -> Array:
    return Array(np.ascontiguousarray(values))


def from_records(records: RecordDict) -> Payload:
    config = dict(records.config_records[_CONFIG]) if _CONFIG in records.config_records else {}
    arrays = {}
    if _ARRAYS in records.array_records:
        arrays = {k: v.numpy() for k, v in records.array_records[_ARRAYS].items()}
    return Payload(config, arrays)
