"""A family's data settings as a table of widgets (issue 33: the pages' forms read from the family): one
:class:`~dpcore.scenario.settings_link.Setting` per field of the family's data type (``Family.sweep.data``) whose
default is a number, a text or a flag, drawn by any page and checked in a link exactly as drawn; the data type itself
checks the values it is built with (its message names the field)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..scenario.settings_link import Setting
from .descriptor import Family

__all__ = ["data_form"]


def data_form(family: Family, prefix: str) -> dict[str, Setting]:
    """``prefix + field`` -> the Setting of every field of the family's data type with a number, text or flag
    default (fields without one - an optional upload key - are left to the type's default)."""
    out: dict[str, Setting] = {}
    for f in dataclasses.fields(family.sweep.data):
        default: Any = f.default
        if f.init and isinstance(default, (bool, int, float, str)):
            out[f"{prefix}{f.name}"] = Setting(default=default, label=f.name.replace("_", " "))
    return out
