"""How a result's values travelled, drawn the same way on the capePCA and capeAGN pages: a "bits per value" column
when an algorithm's releases were integers on a ring (the discrete design), and the sentence that says so, both
derived from the results (dpcore.family.rings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from dpcore.family import bits_label, ring_sentence
from dpcore.notation import symbolic

__all__ = ["BITS_COLUMN", "add_bits_column", "ring_caption"]

BITS_COLUMN = "bits per value"


def add_bits_column(rows: Sequence[dict[str, Any]], names: Sequence[str], bits: Mapping[str, int | None]) -> None:
    """Add :data:`BITS_COLUMN` to the rows of ``names`` (one row per algorithm) when any of them ran on a ring; an
    algorithm with no finished run (absent from ``bits``) gets "-"."""
    if any(b is not None for b in bits.values()):
        for row, name in zip(rows, names, strict=True):
            row[BITS_COLUMN] = bits_label(bits[name]) if name in bits else "-"


def ring_caption(bits: Mapping[str, int | None], titles: Mapping[str, str]) -> None:
    """The sentence on the rings (nothing when no algorithm used one)."""
    sentence = ring_sentence(bits, titles)
    if sentence:
        st.caption(symbolic(sentence))
