"""The entry of the federated-algorithm table (:mod:`dpcore.federation.algorithms`; docs/federated.md, "One round,
message by message"): what the plan, the aggregator, the sites, the in-process run and the message log need to know
about an algorithm that runs as a federated round. Each module of :mod:`dpcore.federation.families` defines
``ENTRIES`` next to its family's mathematics; nothing outside that module branches on an algorithm's title."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["FederatedAlgorithm", "Published", "StagePlanned"]

StagePlanned = tuple[str, str, Any, Any, tuple[str, ...], tuple[Any, Any, Any]]
"""One planned stage before the noise variant is applied: (stage, statistic, design, audit, warnings,
(sensitivities, eps, delta))."""


@dataclass(frozen=True, kw_only=True)
class Published:
    """The message that publishes a round's output (the message log's last entry of the round)."""

    stage: str
    step: int
    content: str
    shape: tuple[int, ...]
    unique: int
    nbytes: int
    numbers: int


@dataclass(frozen=True, kw_only=True)
class FederatedAlgorithm:
    """One algorithm of the federated round. ``name`` is its title (the round's ``algorithm`` setting), ``stages``
    its stages in order and ``output`` what it publishes, in words; ``key`` the prefix of its keys in node and run
    configurations (``<key>-k`` its K, ``<key>-data`` and ``<key>-n`` a site's data file and sample count).
    ``public_model``: the sites read their data with the round's public model settings (the request carries them).

    Hooks (``settings`` a :class:`~dpcore.federation.RoundSettings`, ``plan`` a
    :class:`~dpcore.federation.RoundPlan`):

    * ``check(settings)`` raises InputError for settings the algorithm cannot run;
    * ``dim_limit(settings)`` the largest D a round allows, ``dim_words(settings)`` what the limit depends on
      ("" or e.g. " on the dense path");
    * ``fixed_dim(settings)``: D is a public setting of the round (not the data's own);
    * ``plan_stages(scenario, settings, dim, collusion)`` every stage's design and audit (:data:`StagePlanned`);
    * ``protocol(plan)`` the round of :mod:`dpcore.cape.protocol` for the plan;
    * ``between(stage, aggregate, plan)`` after every stage but the last: what the aggregator carries to the next
      stages (any object) and the projection the next stage's releases are computed on (W, or None);
    * ``outputs(plan, aggregates, carried, rng)`` the published outputs (``rng()`` the aggregator's generator of
      the last stage, made only when asked for); ``published(plan, outputs)`` their message;
    * ``data_form(model)`` the form of a site's data (a loader's name) for the round's public model;
    * ``synthetic(budget, settings, rng)`` data of a site's shape for a dry run, never its own;
    * ``carried_label`` and ``carried_step``: how the message log names the projection sent to the sites."""

    name: str
    position: int
    stages: tuple[str, ...]
    output: str
    key: str
    public_model: bool
    check: Callable[[Any], None]
    dim_limit: Callable[[Any], int]
    dim_words: Callable[[Any], str]
    fixed_dim: Callable[[Any], bool]
    plan_stages: Callable[[Any, Any, int, int], list[StagePlanned]]
    protocol: Callable[[Any], Any]
    between: Callable[[str, np.ndarray, Any], tuple[Any, np.ndarray | None]]
    outputs: Callable[[Any, Mapping[str, np.ndarray], Any, Callable[[], np.random.Generator]],
                      dict[str, np.ndarray]]
    published: Callable[[Any, Mapping[str, np.ndarray]], Published]
    data_form: Callable[[str], str]
    synthetic: Callable[[Any, Any, np.random.Generator], Any]
    carried_label: str = ""
    carried_step: int = 0
