"""One widget of a family's declared data form (``Family.form``; :func:`dpcore.family.form.page_form` reads it) and
the rule of the fields that follow from the chosen algorithms (``Family.form_rule``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["FormField", "FormRule"]


@dataclass(frozen=True, kw_only=True)
class FormField:
    """One widget of a family's declared data form: the data type's ``field``; ``key``, its link key after the page's
    prefix (None: ``<family>_<field>``, the key of an undeclared form); ``label``, ``help``; ``default`` (None: the
    data type's); a number's range ``low``..``high``, or ``choices`` (value -> words: a list to choose from; a value
    that names one of the family's data sources with a loader is an upload, ``Family.sources``); ``enabled_if``
    (field, values): drawn but disabled unless that field has one of those values."""

    field: str
    label: str
    key: str | None = None
    help: str = ""
    default: Any = None
    low: float | None = None
    high: float | None = None
    choices: dict[str, str] | None = None
    enabled_if: tuple[str, tuple[Any, ...]] | None = None


FormRule = Callable[[dict[str, Any], tuple[str, ...]], dict[str, Any]]
"""``rule(values, chosen) -> fields``: the data settings' fields that follow from the form's values and the chosen
algorithms (capeAGN: the dense third-moment path where a chosen algorithm has no projected sampler)."""
