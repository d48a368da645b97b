"""The schemes the planner answers for (docs/planner.md, "The method"): every entry of a family's algorithm table that
says how (its :class:`~dpcore.family.PlannerScheme`: the closed-form aggregate noise of a run, the ring its values
travel on, how a sentence names it), in table order; the first is the headline's (each family's CAPE). capePCA and
capeAGN: CAPE, discrete CAPE (integers on a ring) and the conventional scheme; capeLDA: CAPE and the conventional
scheme. Nothing here names a scheme: a new row of a table with a ``planner`` is answered for everywhere."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..experiments.families import FAMILIES, PLANNED
from ..family import Algorithm, PlannerData
from ..scenario import Scenario
from ..validation import check_choice

__all__ = ["lead_scheme", "planner_schemes", "scheme_bits", "scheme_noise", "scheme_refusal", "scheme_words",
           "sentence_start"]


def planner_schemes(family: str) -> dict[str, Algorithm]:
    """The table entries the planner answers for, by name, in table order."""
    family = check_choice(family, "algorithm family", tuple(PLANNED))
    return {name: entry for name, entry in FAMILIES[family].algorithms.items() if entry.planner is not None}


def lead_scheme(family: str) -> str:
    """The scheme of the headline: the first of :func:`planner_schemes` (each family's CAPE)."""
    return next(iter(planner_schemes(family)))


def scheme_words(family: str, scheme: str) -> str:
    """How a sentence names ``scheme`` ("capePCA", "discrete capePCA", "the conventional scheme")."""
    entry = planner_schemes(family)[scheme]
    return entry.planner.words or entry.title


def sentence_start(words: str) -> str:
    """``words`` as a sentence starts: a phrase's first letter capitalised ('The conventional scheme', 'Discrete
    capePCA'), a name left as it is written ('capePCA': its first word has a capital already)."""
    first = words.split(" ", 1)[0]
    return words if first != first.lower() else words[:1].upper() + words[1:]


def scheme_noise(family: str, scheme: str, scenario: Scenario, settings: Any) -> np.ndarray:
    """The aggregate noise std per stage of ``scheme`` at ``scenario`` (closed form; an upper bound for discrete
    CAPE)."""
    return np.asarray(planner_schemes(family)[scheme].planner.noise(scenario, settings), dtype=float)


def scheme_bits(family: str, scheme: str, scenario: Scenario, settings: Any) -> int | None:
    """The bits per value of ``scheme``'s values at ``scenario`` (None: float64); an InputError where its design
    cannot be carried out there."""
    ring = planner_schemes(family)[scheme].planner.ring
    return None if ring is None else int(ring(scenario, settings))


def scheme_refusal(family: str, scheme: str, data: PlannerData) -> str | None:
    """Why ``scheme`` cannot run on ``data`` at all (the family's ``refuses`` hook: e.g. a dense-only entry on data
    that take the projected path), or None."""
    return FAMILIES[family].planner.refuses(data, planner_schemes(family)[scheme])
