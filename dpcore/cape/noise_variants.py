"""The noise-variant table: every module of :mod:`dpcore.cape.variants` contributes its ``ENTRIES``
(:class:`~dpcore.cape.variant.NoiseVariant`), collected by :func:`dpcore.registry.collect_table` and ordered by
``position``. The variant audit, the federated round's settings and message log read :data:`NOISE_VARIANTS`; an
unknown name is an error."""

from __future__ import annotations

from ..registry import collect_table, table_entry
from ..validation import InputError, shown
from . import variants as _package
from .variant import NoiseVariant

__all__ = ["NOISE_VARIANTS", "federated_variant", "federated_variants", "integer_variant", "noise_variant"]

NOISE_VARIANTS: dict[str, NoiseVariant] = collect_table(_package, NoiseVariant, "noise variant")
"""Every noise variant by name, in table order: who makes the zero-sum noise."""


def noise_variant(name: str) -> NoiseVariant:
    """The entry of ``name``; an InputError lists the names when it is unknown."""
    return table_entry(NOISE_VARIANTS, name, "noise variant")


def federated_variants() -> tuple[str, ...]:
    """The variants the Flower round runs (``federated``), in table order: the choices of a round's ``noise``."""
    return tuple(name for name, entry in NOISE_VARIANTS.items() if entry.federated)


def federated_variant(name: object, what: str = "noise") -> str:
    """``name`` when the Flower round runs that variant (its entry's ``federated``); else an InputError of one line
    naming the variants it runs (and, for a variant of the table it does not run, saying so). The check of a round's
    ``noise`` setting, wherever it is given (run configuration, ``capefed.ops.launch --noise``, ``make federated
    NOISE=...``)."""
    allowed = federated_variants()
    if isinstance(name, str) and name in allowed:
        return name
    options = ", ".join(repr(a) for a in allowed)
    entry = NOISE_VARIANTS.get(name) if isinstance(name, str) else None
    why = (f"got {name!r}, a variant of the noise-variant table that the Flower round does not run yet"
           if entry is not None else f"got {shown(name)}")
    raise InputError(f"{what} must be one of {options} ({why})", "noise")


def integer_variant() -> NoiseVariant:
    """The variant whose terms are integers on a ring (``integer``; docs/math/discrete.md)."""
    return next(entry for entry in NOISE_VARIANTS.values() if entry.integer)
