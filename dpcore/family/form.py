"""A family's data settings as a table of widgets (issue 33: the pages' forms read from the family): one
:class:`~dpcore.scenario.settings_link.Setting` per field of the family's data type (``Family.sweep.data``) whose
default is a number, a text or a flag, drawn by any page and checked in a link exactly as drawn; the data type itself
checks the values it is built with (its message names the field).

A family may instead declare the form its sweeps show (``Family.form``, :class:`FormField` rows: which fields, their
labels, ranges, choices, help and link keys) and how fields follow from the chosen algorithms (``Family.form_rule``);
:func:`page_form` reads either, so the Privacy-utility page draws every family's form from the family table."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..scenario.settings_link import Setting
from .descriptor import Family
from .form_field import FormField, FormRule

__all__ = ["FormField", "FormRule", "data_form", "page_form"]


def data_form(family: Family, prefix: str) -> dict[str, Setting]:
    """``prefix + field`` -> the Setting of every field of the family's data type with a number, text or flag
    default (fields without one - an optional upload key - are left to the type's default)."""
    out: dict[str, Setting] = {}
    for f in dataclasses.fields(family.sweep.data):
        default: Any = f.default
        if f.init and isinstance(default, (bool, int, float, str)):
            out[f"{prefix}{f.name}"] = Setting(default=default, label=f.name.replace("_", " "))
    return out


def form_key(family: Family, row: FormField, prefix: str) -> str:
    """The widget and link key of a declared field: ``prefix`` + its ``key`` (default ``<family>_<field>``)."""
    return prefix + (row.key or f"{family.name}_{row.field}")


def page_form(family: Family, prefix: str) -> dict[str, tuple[FormField, Setting]]:
    """The family's form on a page whose keys start with ``prefix``: key -> (its :class:`FormField`, its Setting),
    from ``Family.form`` when the family declares one, else every field of its data type (:func:`data_form`, keys
    ``prefix + <family>_<field>``)."""
    if not family.form:
        return {key: (FormField(field=key.removeprefix(f"{prefix}{family.name}_"), label=s.label), s)
                for key, s in data_form(family, f"{prefix}{family.name}_").items()}
    defaults = {f.name: f.default for f in dataclasses.fields(family.sweep.data)}
    out: dict[str, tuple[FormField, Setting]] = {}
    for row in family.form:
        default = defaults[row.field] if row.default is None else row.default
        setting = Setting(default=default, label=row.label, low=row.low, high=row.high,
                          choices=None if row.choices is None else tuple(row.choices))
        out[form_key(family, row, prefix)] = (row, setting)
    return out
