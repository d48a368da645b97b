"""Payloads as Flower records (configuration values in one ConfigRecord, arrays in one ArrayRecord), and the one
guarded decoder every party reads a received record with.

:func:`from_records` checks everything before it allocates anything: the record holds only the two expected parts,
every configuration value is of an allowed type and size, every array is a NumPy array of float64 or uint64 whose
declared shape, dtype and .npy header agree, within ``dpcore.limits`` (MAX_WIRE_*), and whose data are exactly as
long as the header says. Only then is it read, with ``numpy.frombuffer`` over the bytes already received: a 100-byte
message that claims 10^9 numbers is refused, never allocated. Any failure is a :class:`WireError` naming the field;
the aggregator turns it into a refusal of the party that sent it, a node into a refusal of the request
(:mod:`capefed.app.server_app`, :mod:`capefed.app.client_app`).
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
from flwr.app import Array, ArrayRecord, ConfigRecord, RecordDict
from numpy.lib import format as npy

from . import dp
from .messages import Payload

__all__ = ["ARRAY_DTYPES", "WireError", "decode_array", "from_records", "to_records"]

_CONFIG, _ARRAYS = "config", "arrays"
ARRAY_DTYPES = ("float64", "uint64")
"""The array types a message may carry: numbers, and masked releases (ring elements)."""
_NUMPY = "numpy.ndarray"
_SCALARS = (bool, int, float, str, bytes)
_MAX_KEY = 256


class WireError(ValueError):
    """A received record that is not a message of this protocol; the text names what is wrong."""


def to_records(payload: Payload) -> RecordDict:
    records = RecordDict({_CONFIG: ConfigRecord(dict(payload.config))})
    if payload.arrays:
        records[_ARRAYS] = ArrayRecord({k: Array(np.ascontiguousarray(v)) for k, v in payload.arrays.items()})
    return records


def _scalar(key: str, value: Any) -> None:
    if isinstance(value, str) and len(value) > dp.MAX_WIRE_TEXT:
        raise WireError(f"the text {key!r} has more than {dp.MAX_WIRE_TEXT:,} characters")
    if isinstance(value, bytes) and len(value) > dp.MAX_WIRE_BYTES:
        raise WireError(f"the bytes {key!r} are more than {dp.MAX_WIRE_BYTES:,}")
    if isinstance(value, float) and not math.isfinite(value):
        raise WireError(f"the number {key!r} is not finite")


def _config(record: Any) -> dict[str, Any]:
    if not isinstance(record, ConfigRecord):
        raise WireError("the configuration part is not a ConfigRecord")
    if len(record) > dp.MAX_WIRE_VALUES:
        raise WireError(f"the message holds {len(record):,} configuration values; at most {dp.MAX_WIRE_VALUES:,}")
    out = {}
    for key, value in record.items():
        if not isinstance(key, str) or len(key) > _MAX_KEY:
            raise WireError(f"a configuration key must be text of at most {_MAX_KEY} characters")
        if isinstance(value, list):
            if len(value) > dp.MAX_WIRE_LIST:
                raise WireError(f"the list {key!r} has {len(value):,} items; at most {dp.MAX_WIRE_LIST:,}")
            kinds = {type(v) for v in value}
            if len(kinds) > 1 or not kinds <= set(_SCALARS):
                raise WireError(f"the list {key!r} must hold values of one type (bool, int, float, str or bytes)")
            for item in value:
                _scalar(key, item)
            out[key] = list(value)
        elif type(value) in _SCALARS:
            _scalar(key, value)
            out[key] = value
        else:
            raise WireError(f"the value {key!r} is of type {type(value).__name__}; bool, int, float, str, bytes or a "
                            "list of one of them is allowed")
    return out


def decode_array(key: str, array: Any, most: int = dp.MAX_WIRE_ARRAY_NUMBERS) -> np.ndarray:
    """One Flower Array as a NumPy array of at most ``most`` numbers, after every check of the module docstring."""
    if not isinstance(array, Array):
        raise WireError(f"the array {key!r} is not a Flower Array")
    if array.stype != _NUMPY or array.dtype not in ARRAY_DTYPES:
        raise WireError(f"the array {key!r} must be a NumPy array of {' or '.join(ARRAY_DTYPES)} (got "
                        f"{str(array.stype)[:40]!r}, {str(array.dtype)[:40]!r})")
    shape = tuple(array.shape)
    if len(shape) > dp.MAX_WIRE_ARRAY_DIMS or any(isinstance(d, bool) or not isinstance(d, int) or d < 0
                                                  for d in shape):
        raise WireError(f"the array {key!r} has an invalid shape (at most {dp.MAX_WIRE_ARRAY_DIMS} non-negative "
                        "dimensions)")
    count = math.prod(shape)
    if count > min(most, dp.MAX_WIRE_ARRAY_NUMBERS):
        raise WireError(f"the array {key!r} declares {count:,} numbers; at most {dp.MAX_WIRE_ARRAY_NUMBERS:,} in one "
                        f"array and {dp.MAX_WIRE_NUMBERS:,} in one message")
    data = array.data
    if not isinstance(data, bytes):
        raise WireError(f"the array {key!r} carries no bytes")
    stream = io.BytesIO(data)
    try:
        version = npy.read_magic(stream)
        reader = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f"version {version}")
        header_shape, fortran, dtype = reader(stream, max_header_size=dp.MAX_NPY_HEADER_BYTES)
    except Exception as exc:  # noqa: BLE001 - numpy parses the header with the tokenizer: any failure is a refusal
        raise WireError(f"the array {key!r} has no valid .npy header ({type(exc).__name__})") from exc
    expected = np.dtype(array.dtype).newbyteorder("<")
    if tuple(header_shape) != shape or fortran or dtype != expected:
        raise WireError(f"the array {key!r}: its .npy header ({dtype}, {header_shape}) differs from what it declares "
                        f"({array.dtype}, {shape})")
    offset = stream.tell()
    if len(data) - offset != count * expected.itemsize:
        raise WireError(f"the array {key!r} declares {count:,} numbers but carries {len(data) - offset:,} bytes")
    return np.frombuffer(data, dtype=expected, count=count, offset=offset).reshape(shape).copy()


def from_records(records: Any) -> Payload:
    """A received message as a Payload, every part checked (module docstring); raises WireError."""
    if not isinstance(records, RecordDict):
        raise WireError("the message content is not a RecordDict")
    extra = [k for k in records if k not in (_CONFIG, _ARRAYS)]
    if extra:
        raise WireError(f"the message holds unexpected records: {', '.join(map(str, extra))[:200]}")
    config = _config(records[_CONFIG]) if _CONFIG in records else {}
    arrays: dict[str, np.ndarray] = {}
    if _ARRAYS in records:
        record = records[_ARRAYS]
        if not isinstance(record, ArrayRecord) or len(record) > dp.MAX_WIRE_ARRAYS:
            raise WireError(f"the arrays part must be an ArrayRecord of at most {dp.MAX_WIRE_ARRAYS} arrays")
        left = dp.MAX_WIRE_NUMBERS
        for key, array in record.items():
            if not isinstance(key, str) or len(key) > _MAX_KEY:
                raise WireError(f"an array name must be text of at most {_MAX_KEY} characters")
            arrays[key] = decode_array(key, array, left)
            left -= arrays[key].size
    return Payload(config, arrays)
