"""Bits per value of a comparison's algorithms (docs/math/discrete.md, "The gap to the continuous design"): an
algorithm whose releases travel as integers on a ring of 2^b (the discrete design, ``bits_per_value`` of its result)
reports b; the others send float64 values (None). What the pages, the command line and the reports show of it is
derived here from the results, never written by hand."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["FLOAT_VALUES", "bits_label", "ring_sentence", "widest_ring"]

FLOAT_VALUES = "float64"
"""How the values of an algorithm without a ring travel (its ``bits_per_value`` is None)."""


def widest_ring(bits: Iterable[int | None]) -> int | None:
    """The widest ring among runs (or stages) of one algorithm; None when none ran on a ring."""
    rings = [int(b) for b in bits if b is not None]
    return max(rings) if rings else None


def bits_label(bits: int | None) -> str:
    """A table cell: the ring's bits, or :data:`FLOAT_VALUES`."""
    return FLOAT_VALUES if bits is None else str(int(bits))


def ring_sentence(bits: Mapping[str, int | None], titles: Mapping[str, str]) -> str | None:
    """One sentence on how the values travel, from ``bits`` (algorithm name -> bits per value, None: float64) and
    their ``titles``; None when no algorithm used a ring."""
    rings = {name: b for name, b in bits.items() if b is not None}
    if not rings:
        return None
    where = "; ".join(f"{titles.get(name, name)} sends integers, summed exactly modulo 2^{b} ({b} bits per value)"
                      for name, b in rings.items())
    rest = len(bits) - len(rings)
    others = "" if rest == 0 else (f"; the other algorithm{'s' if rest > 1 else ''} send{'' if rest > 1 else 's'} "
                                   f"{FLOAT_VALUES} values")
    return f"{where}{others}."
