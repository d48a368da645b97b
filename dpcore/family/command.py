"""What a family's own run command (``dpcore pca``, ``dpcore otd``, ``dpcore lda``, ...) needs of the family beyond its
argument table (issue 33; docs/architecture.md, "The family contract"). The run body is written once
(:func:`dpcore.cli.family_command.run_family`): it asks the family's ``prepare`` for a :class:`CommandJob` (the
family's data forms: files read, the scenario built, the data settings filled in), runs ``Family.compare`` once per
scenario of the job (several: capeLDA's ``--eps`` curve), and prints every result through the family's
:class:`CommandView` - what is truly the family's: its story lines, its table's cells, its JSON record and anything
shown after the tables (example topics). The notes, the bits per value, the guarantee of every view, the hint that
``--collusion`` would help and the reasons a run has no metrics are printed by the run body from the
:class:`~dpcore.family.Comparison`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..scenario import Scenario
from .run import Comparison

__all__ = ["CommandJob", "CommandView"]


@dataclass(frozen=True, kw_only=True)
class CommandJob:
    """One invocation of a family's run command, checked and ready to run: ``scenarios`` (one per budget the command
    runs at, in the order shown; usually one), ``data`` (the family's data settings, an instance of its data type or
    of a subclass that carries what only a single run can use: an uploaded file's values, a memory budget),
    ``algorithms`` (None: the family's defaults), ``runs``, ``seed``, ``collusion`` (c of the collusion-robust design,
    None: not asked for), ``workers`` and ``context`` (what the family's view shows that the comparison does not carry:
    the settings as typed)."""

    scenarios: tuple[Scenario, ...]
    data: Any
    algorithms: tuple[str, ...] | None
    runs: int
    seed: int
    collusion: int | None = None
    workers: int | None = None
    context: Any = None


Lines = Callable[[CommandJob, tuple[Comparison, ...]], Sequence[str]]
"""``lines(job, comparisons)``: lines of text, in order."""


@dataclass(frozen=True, kw_only=True)
class CommandView:
    """How a family's run command shows its results: ``header`` (the story lines above the tables: the data, the
    sites, the runs), ``table`` (``table(job, comparison) -> (headers, rows)``: one row per algorithm, the family's own
    cells), ``record`` (``record(job, comparisons) -> dict``: the ``--json`` output), ``budget`` (a line above each
    comparison's table naming its budget, None: no line), ``after`` (lines after everything else, None: none),
    ``names`` ("title": the privacy lines name an algorithm by its table's title; "name": by its name, as the table
    rows do) and ``robust_hint`` (the privacy lines say that ``--collusion`` would make the family's CAPE algorithm
    collusion-robust when one of its views is not certified and the job did not ask for it)."""

    header: Lines
    table: Callable[[CommandJob, Comparison], tuple[list[str], list[list[Any]]]]
    record: Callable[[CommandJob, tuple[Comparison, ...]], dict[str, Any]]
    budget: Callable[[Comparison], str] | None = None
    after: Lines | None = None
    names: str = "title"
    robust_hint: bool = False

    def __post_init__(self) -> None:
        if self.names not in ("title", "name"):
            raise TypeError("CommandView.names must be 'title' or 'name'")
