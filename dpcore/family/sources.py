"""A family's data sources (``Family.sources``; issue 33: the one data-source type, grown from the planner's): where a
data set comes from - the family's synthetic model, a data set shipped with dpcore, or an upload - and how it is read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DataSource"]


@dataclass(frozen=True, kw_only=True)
class DataSource:
    """One data source a family offers (``Family.sources``: the planner, its page and command read them): its
    ``label``; the ``fields`` of the family's data settings it fixes (PCA's ``dataset``, capeAGN's ``model``); and
    how its data set is read:
    ``load(content, name, **options)`` for an upload (``types``: the file name endings offered; ``options``: the
    names of the loader's keyword options the page and the command line ask for: ``sigma2``, ``norm_bound``,
    ``vocab_size``, ``vocabulary``, ``rule``), or ``bundled()`` for a data set shipped with dpcore; neither: the
    settings' own data (synthetic, or a bundled set the settings name). ``register(dataset) -> fields``: what the
    data settings of a sweep need to run on a loaded upload (PCA: the key it is kept under for this process; None: a
    sweep cannot run on it)."""

    label: str
    fields: dict[str, Any] = field(default_factory=dict)
    load: Callable[..., Any] | None = None
    bundled: Callable[[], Any] | None = None
    types: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    register: Callable[[Any], dict[str, Any]] | None = None

    @property
    def upload(self) -> bool:
        return self.load is not None
