"""The ``key=value`` text of Flower's ``--node-config`` and ``--run-config`` (:func:`node_config_text`), written so
that Flower's parser reads back the same mapping."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from .procgroup import FederationError

__all__ = ["node_config_text"]

_CONFIG_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
_FORBIDDEN = frozenset('"\'\\')


def _toml_value(key: str, value: Any) -> str:
    """One value as Flower reads it back (a TOML boolean, 64-bit integer, finite float or basic string)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise FederationError(f"{key} = {value}: an integer must fit in 64 bits")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FederationError(f"{key} = {value}: a number must be finite")
        return repr(value)
    if isinstance(value, str):
        if any(c.isspace() or c in _FORBIDDEN or ord(c) < 32 or ord(c) == 127 for c in value):
            raise FederationError(f"{key} = {value!r}: Flower's key=value lists cannot hold white space, quotes, "
                                  "backslashes or control characters")
        return f'"{value}"'
    raise FederationError(f"{key}: a value must be a boolean, an integer, a number or a string "
                          f"(got {type(value).__name__})")


def node_config_text(config: Mapping[str, Any]) -> str:
    """``--node-config`` / ``--run-config`` text: space-separated key=value pairs with TOML values, which Flower's
    parser (``flwr.common.config.parse_config_args``) reads back as the same mapping; raises FederationError for a
    key or value it could not carry."""
    for key in config:
        if not isinstance(key, str) or not _CONFIG_KEY.fullmatch(key):
            raise FederationError(f"{key!r}: a configuration key is a letter followed by up to 63 letters, digits, "
                                  "'-' or '_'")
    return " ".join(f"{key}={_toml_value(key, value)}" for key, value in config.items())
