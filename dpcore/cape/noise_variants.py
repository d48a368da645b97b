"""The noise-variant table: every module of :mod:`dpcore.cape.variants` contributes its ``ENTRIES``
(:class:`~dpcore.cape.variant.NoiseVariant`), collected by :func:`dpcore.registry.collect_table` and ordered by
``position``. The variant audit, the federated round's settings and message log read :data:`NOISE_VARIANTS`; an
unknown name is an error."""

from __future__ import annotations

from ..registry import collect_table, table_entry
from . import variants as _package
from .variant import NoiseVariant

__all__ = ["NOISE_VARIANTS", "federated_variants", "integer_variant", "noise_variant"]

NOISE_VARIANTS: dict[str, NoiseVariant] = collect_table(_package, NoiseVariant, "noise variant")
"""Every noise variant by name, in table order: who makes the zero-sum noise."""


def noise_variant(name: str) -> NoiseVariant:
    """The entry of ``name``; an InputError lists the names when it is unknown."""
    return table_entry(NOISE_VARIANTS, name, "noise variant")


def federated_variants() -> tuple[str, ...]:
    """The variants the Flower round runs (``federated``), in table order: the choices of a round's ``noise``."""
    return tuple(name for name, entry in NOISE_VARIANTS.items() if entry.federated)


def integer_variant() -> NoiseVariant:
    """The variant whose terms are integers on a ring (``integer``; docs/math/discrete.md)."""
    return next(entry for entry in NOISE_VARIANTS.values() if entry.integer)
