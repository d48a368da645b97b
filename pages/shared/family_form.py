"""A family's data widgets drawn from its data type (dpcore.family.data_form): one widget per field with a number,
text or flag default, each with its Setting's range, so a page offers any family - one added later too - without a
form of its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from dpcore.family import Family, data_form
from dpcore.scenario.settings_link import Setting
from pages.shared.widgets import widget_range

__all__ = ["data_widgets", "field_widgets"]


def field_widgets(form: Mapping[str, Setting], prefix: str, table: Mapping[str, Setting], columns: int = 1) -> dict:
    """One widget per Setting of ``form`` (keys ``prefix + field``; ranges from ``table``), in ``columns`` columns:
    field -> its value."""
    slots = st.columns(columns) if columns > 1 else [st]
    values: dict[str, Any] = {}
    for i, (key, setting) in enumerate(form.items()):
        where = slots[i % len(slots)]
        field = key.removeprefix(prefix)
        if setting.kind == "bool":
            values[field] = where.toggle(setting.label, key=key)
        elif setting.kind == "text":
            values[field] = where.text_input(setting.label, key=key, max_chars=setting.max_chars)
        else:
            values[field] = where.number_input(setting.label, **widget_range(table, key), key=key)
    return values


def data_widgets(family: Family, prefix: str, table: Mapping[str, Setting], columns: int = 1) -> Any:
    """The family's data settings from its widgets (keys ``prefix + field``, each Setting in ``table``), laid out in
    ``columns`` columns; the data type checks the values (an InputError names the field)."""
    return family.sweep.data(**field_widgets(data_form(family, prefix), prefix, table, columns))
