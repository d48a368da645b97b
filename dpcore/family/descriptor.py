"""What a family is, as the layers above it (sweeps, command line, pages) see it: one :class:`Family` per family,
defined in the family's own package (``dpcore.pca.FAMILY``, ``dpcore.agn.FAMILY``, ``dpcore.lda.FAMILY``) and found
by :func:`dpcore.family.catalog.families` (every subpackage with a ``family.py``). Everything that differs between
families is a field here, so nothing above the families branches on a family's name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .entry import Algorithm
from .flags import FamilyCommand, Flag
from .form_field import FormField, FormRule
from .metrics import Metric
from .planner_hooks import FamilyPlanner
from .run import Comparison
from .sources import DataSource
from .sweep import FamilySweep

__all__ = ["Family"]


@dataclass(frozen=True, eq=False, kw_only=True)
class Family:
    """One algorithm family.

    ``name`` ("pca", "otd", "lda": the command line's and the sweeps' key, the family of its streams), ``label``
    (a choice in a list of families), ``description`` (with where its mathematics is), ``cape`` (the CAPE
    algorithm's title), ``algorithms`` and ``metrics`` (its tables), ``reference`` (the non-private algorithm, the
    ceiling of every curve), ``no_information`` (the algorithm that uses no data, or None: the floor is then the worst
    result shown), ``sweep_algorithms`` (a sweep's default curves), ``sweep_sites`` (the number of equal sites of a
    sweep given no scenario), ``sweep`` (what a sweep of this family needs: its data settings and the plan and run
    of its grid points, :class:`~dpcore.family.sweep.FamilySweep`), ``planner`` (None: the planner does not answer
    for it; else what the planner needs: its headline
metric, the closed-form aggregate noise, one run at a given noise, the check; :class:`~dpcore.family.FamilyPlanner`),
    ``compare`` (the one comparison signature, :class:`dpcore.family.run.Compare`: R runs of the chosen algorithms on
    the data the family's data settings describe, a :class:`~dpcore.family.run.Comparison`), ``sources`` (the data
    sources it offers, :class:`~dpcore.family.DataSource`, by name, the first the default) and ``position`` (its place
    in every list of families), ``flags`` (the command-line flags that set its data settings, :class:`Flag`, under the
    heading ``flag_group``: ``sweep`` and ``plan`` build their parsers from them) and ``command`` (the argument table of
    its own run command, ``dpcore pca``, :class:`FamilyCommand`; None: it has none), ``form`` (the data form its sweeps
    show on a page, :class:`~dpcore.family.form.FormField` rows; empty: every field of its data type) and
    ``form_rule`` (fields that follow from the form and the chosen algorithms, :data:`~dpcore.family.form.FormRule`)."""

    name: str
    label: str
    description: str
    cape: str
    algorithms: dict[str, Algorithm]
    metrics: dict[str, Metric]
    reference: str
    no_information: str | None
    sweep_algorithms: tuple[str, ...]
    sweep_sites: int
    sweep: FamilySweep
    compare: Callable[..., Comparison]
    position: int
    planner: FamilyPlanner | None = None
    sources: dict[str, DataSource] = field(default_factory=dict)
    flags: tuple[Flag, ...] = ()
    command: FamilyCommand | None = None
    flag_group: str = ""
    form: tuple[FormField, ...] = ()
    form_rule: FormRule | None = None
