"""capeLDA and paper 004's configurations in a sweep (docs/experiments.md; the hooks of
:class:`dpcore.family.FamilySweep`): the corpus settings :class:`LdaData`, the two stages' designs of a grid point,
the preparation of the grid points and one run of them.

Documents are drawn afresh per run from the same generator as :func:`dpcore.lda.compare_lda` (the ground truth once
from the seed); along ``ns`` every site's documents at a smaller N_s are a prefix of its documents at the largest
N_s, and along ``sites`` the first S sites of the largest S.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..cape import stage_taus as cape_stage_taus
from ..family import FamilyPlan, FamilySweep, GridPoint, sweep_points
from ..limits import MAX_LDA_DOCUMENTS, MAX_LDA_WORDS
from ..scenario import Scenario
from ..seeding import LDA_MODEL_STREAM, data_rng, stream_rng
from ..tensor import DEFAULT_ITERATIONS, DEFAULT_RESTARTS, WhiteningError
from ..validation import InputError
from .guarantees import lda_guarantees
from .problem import LdaProblem, LdaSettings, LdaSpec, synthetic_lda_problem
from .recovery import evaluate_topics
from .table import ALGORITHMS, run_algorithm

__all__ = ["SWEEP", "LdaData"]


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


@dataclass(frozen=True, kw_only=True)
class LdaData:
    """The corpus of an LDA sweep (a synthetic LDA model: vocabulary size D, topics K, alpha_0, the shape of alpha,
    words per document) and the settings of capeLDA and its baselines (share of each budget for M2, power-method
    restarts and iterations, third-moment path). Validated on construction (:class:`dpcore.lda.LdaSpec`,
    :class:`dpcore.lda.LdaSettings`)."""

    OPTIONS: ClassVar[dict[str, str]] = {"d": "dim", "k": "k", "alpha0": "alpha0", "alpha_shape": "alpha_shape",
                                         "doc_length": "doc_length", "split": "eps_split", "path": "path"}
    """The command line's sweep flags (argparse names) that set these fields."""

    dim: int = 100
    k: int = 5
    alpha0: float = 1.0
    alpha_shape: str = "symmetric"
    doc_length: int = 50
    eps_split: float = 0.5
    n_restarts: int = DEFAULT_RESTARTS
    n_iter: int = DEFAULT_ITERATIONS
    path: str = "auto"

    def __post_init__(self) -> None:
        spec = self.synthetic()
        _set(self, "dim", int(spec.dim))
        _set(self, "k", int(spec.k))
        _set(self, "alpha0", float(spec.alpha0))
        _set(self, "doc_length", int(spec.doc_length))
        _set(self, "eps_split", float(self.eps_split))
        self.settings()
        _set(self, "n_restarts", int(self.n_restarts))
        _set(self, "n_iter", int(self.n_iter))

    def synthetic(self) -> LdaSpec:
        return LdaSpec(dim=self.dim, k=self.k, alpha0=self.alpha0, alpha_shape=self.alpha_shape,
                       doc_length=self.doc_length)

    def settings(self, collusion: int | None = None) -> LdaSettings:
        return LdaSettings(eps_split=self.eps_split, n_restarts=self.n_restarts, n_iter=self.n_iter, path=self.path,
                           collusion=collusion)

    def describe(self) -> str:
        return f"{self.synthetic().describe()}; eps split {self.eps_split:g}"

    def short_name(self) -> str:
        """The corpus in a few words (the reduced variants' names)."""
        return "LDA corpus"

    def quick(self) -> LdaData | None:
        """The reduced variant keeps the corpus (only the runs are fewer)."""
        return None

    def check_size(self, largest: Scenario, smallest_n: int) -> None:
        """Refuse a sweep with a site of fewer than 3 documents, or whose largest grid point draws more documents or
        words per run than an LDA sweep may."""
        if smallest_n < 3:
            raise InputError("every site needs at least 3 documents for the LDA moments", "grid")
        words = largest.total_n * self.doc_length
        if largest.total_n > MAX_LDA_DOCUMENTS or words > MAX_LDA_WORDS:
            raise InputError(f"the largest grid point has N = {largest.total_n:,} documents of "
                             f"{self.doc_length} words; an LDA sweep draws at most {MAX_LDA_DOCUMENTS:,} "
                             f"documents and {MAX_LDA_WORDS:,} words per run; use smaller N_s or fewer sites",
                             "grid")


def stage_taus(scenario: Scenario, data: LdaData) -> dict[str, np.ndarray]:
    """tau_s of capeLDA's two stages (M2, then the projected M3)."""
    tau2, tau3 = cape_stage_taus(scenario, "lda", data.eps_split, dim=data.dim, alpha0=data.alpha0)
    return {"M2 stage": tau2, "M3 stage": tau3}


def plan(spec: Any, scenarios: Sequence[Scenario], design: Callable[[Scenario, float | int], dict]) -> FamilyPlan:
    """The ground truth (drawn once from the seed, as :func:`dpcore.lda.compare_lda`), the path, and every grid
    point's settings (along c: the collusion bound)."""
    data: LdaData = spec.data
    largest = scenarios[-1] if spec.parameter in ("ns", "sites") else spec.scenario
    sizes_max = tuple(int(n) for n in largest.sizes)
    model = data.synthetic().model(stream_rng(spec.seed, LDA_MODEL_STREAM))
    points = tuple(GridPoint(value=v, scenario=sc, settings=data.settings(int(v) if spec.parameter == "c" else None))
                   for v, sc in zip(spec.grid, scenarios, strict=True))
    path = points[0].settings.m3_path(data.dim)
    return FamilyPlan(
        points=points, model=model, sizes_max=sizes_max, path=path,
        notes_before=(f"data: {data.describe()}; fresh documents in every run, the ground truth drawn once from the "
                      f"seed; third moment on the {path} path",),
        notes_after=("configurations 1-4 run on the pooled documents at one curator with the strictest site budget; "
                     "2, 3 and 4 are not DP as published (local sensitivities); a configuration whose condition fails "
                     "is counted as unusable at that point, not averaged in",))


def _problems(prepared: Any, spec: Any, run_index: int) -> list[LdaProblem]:
    """One run's corpus at the largest sizes, and every grid point's view of it (nested prefixes along N_s, the
    first S sites along S)."""
    data: LdaData = spec.data
    base = synthetic_lda_problem(prepared.model, prepared.sizes_max, data_rng(spec.seed, run_index),
                                 doc_length=data.doc_length)
    if spec.parameter == "ns":
        return [base.head([int(p.value)] * base.n_sites) for p in prepared.points]
    if spec.parameter == "sites":
        return [base.first_sites(int(p.value)) for p in prepared.points]
    return [base] * len(prepared.points)


def run(prepared: Any, spec: Any, run_index: int, tick: Callable[[str], bool]) -> list[tuple] | None:
    """One run: a fresh corpus, every algorithm at every grid point, every metric against the true topics (an
    unusable configuration is counted, not averaged in); None when ``tick`` asks to stop."""
    problems = _problems(prepared, spec, run_index)

    def evaluate(entry: Any, i: int, rng: np.random.Generator) -> tuple[dict, str]:
        point = prepared.points[i]
        try:
            res = run_algorithm(entry, problems[i], point.scenario, point.settings, rng, path=prepared.path)
        except WhiteningError:
            return {}, "whitening failed"
        if not res.usable:
            return {}, "unusable"
        return evaluate_topics(res.topics, prepared.model.topics), "ok"

    return sweep_points(prepared, spec, ALGORITHMS, "lda", run_index, tick, evaluate)


def notes(data: LdaData, algorithms: Sequence[str]) -> tuple[str, ...]:
    """What ``local`` does in this sweep."""
    if "local" in algorithms:
        return ("local: Gaussian LDA moments of the largest site alone (the first site when they are equal)",)
    return ()


@dataclass(frozen=True)
class _Corpus:
    """What the guarantees read of a problem: the document counts, the vocabulary size, alpha_0 and K."""

    sizes: np.ndarray
    dim: int
    alpha0: float
    k: int


def guarantees(spec: Any, scenario: Scenario, value: float | int, designs: Any) -> dict[str, tuple]:
    """Every algorithm's guarantees at one grid point (:func:`dpcore.lda.guarantees.lda_guarantees` with the point's
    document counts)."""
    data: LdaData = spec.data
    settings = data.settings(int(value) if spec.parameter == "c" else None)
    corpus = _Corpus(sizes=scenario.sizes, dim=data.dim, alpha0=data.alpha0, k=data.k)
    return {name: lda_guarantees(name, scenario, corpus, settings) for name in spec.algorithms}


SWEEP = FamilySweep(data=LdaData, stage_taus=stage_taus, plan=plan, run=run, notes=notes, guarantees=guarantees)
"""capeLDA's sweep hooks (``dpcore.lda.FAMILY.sweep``)."""
