"""capeAGN in a sweep (docs/experiments.md; the hooks of :class:`dpcore.family.FamilySweep`): the model settings
:class:`OtdData`, the two stages' designs of a grid point, the preparation of the grid points and one run of them.

Data are drawn afresh per run from the same generator as :func:`dpcore.agn.compare_algorithms` (the ground truth once
from the seed); along ``ns`` every site's samples at a smaller N_s are a prefix of its samples at the largest N_s, and
along ``sites`` the first S sites of the largest S.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from ..cape import stage_taus as cape_stage_taus
from ..family import FamilyPlan, FamilySweep, GridPoint, sweep_points
from ..limits import MAX_OTD_SAMPLES
from ..scenario import Scenario
from ..seeding import OTD_MODEL_STREAM, data_rng, stream_rng
from ..tensor import (
    DEFAULT_ITERATIONS,
    DEFAULT_RESTARTS,
    ESTIMATORS,
    MogSite,
    StmSite,
    WhiteningError,
    check_m3_law,
    choose_path,
)
from ..validation import InputError, check_choice, check_positive, check_positive_int, check_rank
from .evaluation import evaluate_metrics
from .guarantees import otd_guarantees
from .models import DEFAULT_SIGMA2, MODELS, TRUTHS, mog_norm_bound
from .problem import OtdProblem, OtdSettings, SyntheticSpec, synthetic_problem
from .table import ALGORITHMS, run_algorithm

__all__ = ["SWEEP", "OtdData"]


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


@dataclass(frozen=True, kw_only=True)
class OtdData:
    """The model of an OTD sweep (synthetic MOG or STM with D, K, sigma^2 / document length and estimator, and the
    ground truth: ours or the authors' set-up, :data:`~dpcore.agn.models.TRUTHS`) and the capeAGN settings (eps
    split between the stages, power-method restarts and iterations, third-moment path and noise law). Validated and
    normalised on construction."""

    OPTIONS: ClassVar[dict[str, str]] = {"model": "model", "d": "dim", "k": "k", "sigma2": "sigma2",
                                         "doc_length": "doc_length", "estimator": "estimator", "split": "eps_split",
                                         "path": "path", "truth": "truth"}
    """The command line's sweep flags (argparse names) that set these fields."""

    model: str = "mog"
    dim: int = 10
    k: int = 5
    sigma2: float = DEFAULT_SIGMA2
    doc_length: int = 3
    estimator: str = "first"
    eps_split: float = 0.5
    n_restarts: int = DEFAULT_RESTARTS
    n_iter: int = DEFAULT_ITERATIONS
    path: str = "auto"
    m3_noise: str = "published"
    truth: str = "ours"

    def __post_init__(self) -> None:
        model = check_choice(self.model, "model", MODELS)
        _set(self, "truth", check_choice(self.truth, "truth", tuple(TRUTHS)))
        _set(self, "model", model)
        _set(self, "dim", check_positive_int(self.dim, "D", minimum=2))
        _set(self, "k", check_rank(self.k, self.dim))
        if model == "mog":
            _set(self, "sigma2", check_positive(self.sigma2, "sigma^2", allow_zero=True))
            _set(self, "doc_length", 3)
            _set(self, "estimator", "first")
        else:
            _set(self, "sigma2", DEFAULT_SIGMA2)
            _set(self, "doc_length", check_positive_int(self.doc_length, "document length L", minimum=3))
            _set(self, "estimator", check_choice(self.estimator, "estimator", tuple(ESTIMATORS)))
        _set(self, "eps_split", float(self.eps_split))
        self.settings()  # OtdSettings checks the split, iterations, path and noise law
        _set(self, "n_restarts", int(self.n_restarts))
        _set(self, "n_iter", int(self.n_iter))

    def synthetic(self) -> SyntheticSpec:
        return SyntheticSpec(kind=self.model, dim=self.dim, k=self.k, sigma2=self.sigma2, doc_length=self.doc_length,
                             estimator=self.estimator, truth=self.truth)

    def settings(self, collusion: int | None = None) -> OtdSettings:
        return OtdSettings(eps_split=self.eps_split, n_restarts=self.n_restarts, n_iter=self.n_iter,
                           path=self.path, m3_noise=self.m3_noise, collusion=collusion)

    @property
    def scaled_sigma2(self) -> float:
        """sigma^2 / zeta^2 with the public norm bound zeta of :func:`dpcore.agn.mog_norm_bound` (MOG)."""
        return self.sigma2 / mog_norm_bound(self.dim, self.sigma2) ** 2 if self.model == "mog" else 0.0

    def describe(self) -> str:
        what = (f"MOG, sigma^2 = {self.sigma2:g}" if self.model == "mog"
                else f"STM, L = {self.doc_length} words, estimator {self.estimator}")
        truth = "; the authors' ground truth" if self.truth == "authors" else ""
        return f"synthetic {what}; D = {self.dim}, K = {self.k}; eps split {self.eps_split:g}{truth}"

    def short_name(self) -> str:
        """The model in a few words (the reduced variants' names)."""
        return self.model.upper()

    def quick(self) -> OtdData | None:
        """The reduced variant keeps the model (only the runs are fewer)."""
        return None

    def check_size(self, largest: Scenario, smallest_n: int) -> None:
        """Refuse a sweep whose largest grid point draws more samples per run than an OTD sweep may."""
        if largest.total_n > MAX_OTD_SAMPLES:
            raise InputError(f"the largest grid point has N = {largest.total_n:,} samples, more than the "
                             f"{MAX_OTD_SAMPLES:,} an OTD sweep draws per run; use smaller N_s or fewer sites", "grid")


def stage_taus(scenario: Scenario, data: OtdData) -> dict[str, np.ndarray]:
    """tau_s of capeAGN's two stages (M2, then the projected M3)."""
    sigma2 = data.scaled_sigma2 if data.model == "mog" else None
    tau2, tau3 = cape_stage_taus(scenario, data.model, data.eps_split, dim=data.dim, sigma2=sigma2)
    return {"M2 stage": tau2, "M3 stage": tau3}


def plan(spec: Any, scenarios: Sequence[Scenario], design: Callable[[Scenario, float | int], dict]) -> FamilyPlan:
    """The ground truth (drawn once from the seed, as :func:`dpcore.agn.compare_algorithms`), the path, and every
    grid point's settings (along c: the collusion bound)."""
    data: OtdData = spec.data
    if spec.parameter in ("ns", "sites"):
        sizes_max = tuple(int(n) for n in scenarios[-1].sizes)
    else:
        sizes_max = tuple(int(n) for n in spec.scenario.sizes)
    model = data.synthetic().model(stream_rng(spec.seed, OTD_MODEL_STREAM))
    choice = choose_path(data.path, data.dim, data.k, len(sizes_max))
    check_m3_law(data.m3_noise, choice.path, data.k)
    points = tuple(GridPoint(value=value, scenario=scenario,
                             settings=data.settings(int(value) if spec.parameter == "c" else None))
                   for value, scenario in zip(spec.grid, scenarios, strict=True))
    after = ()
    if data.model == "mog":
        zeta = mog_norm_bound(data.dim, data.sigma2)
        after = (f"MOG samples divided by the public bound zeta = sqrt(1 + D sigma^2) + 4 sigma = {zeta:.3g}",)
    return FamilyPlan(points=points, notes_before=(f"data: {data.describe()}; fresh samples in every run, the ground "
                                                   "truth drawn once from the seed; third moment on the "
                                                   f"{choice.path} path ({choice.reason})",),
                      notes_after=after, model=model, sizes_max=sizes_max, path=choice.path)


def _slice_problem(problem: OtdProblem, parameter: str, value: float | int) -> OtdProblem:
    if parameter == "sites":
        return replace(problem, sites=problem.sites[: int(value)])
    if parameter != "ns":
        return problem
    n = int(value)
    sites = []
    for site in problem.sites:
        if isinstance(site, MogSite):
            sites.append(MogSite(site.x[:n], site.sigma2))
        else:
            first = None if site.first is None else site.first[:n]
            sites.append(StmSite(site.counts[:n], first, site.estimator))
    return replace(problem, sites=tuple(sites))


def run(prepared: Any, spec: Any, run_index: int, tick: Callable[[str], bool]) -> list[tuple] | None:
    """One run: fresh samples at the largest sizes, every grid point's view of them, every algorithm evaluated
    against the ground truth; None when ``tick`` asks to stop."""
    data: OtdData = spec.data
    base = synthetic_problem(prepared.model, prepared.sizes_max, data_rng(spec.seed, run_index), data.estimator)
    problems = [_slice_problem(base, spec.parameter, p.value) for p in prepared.points]
    truth = prepared.model

    def evaluate(entry: Any, i: int, rng: np.random.Generator) -> tuple[dict, str]:
        point = prepared.points[i]
        try:
            dec = run_algorithm(entry, problems[i], point.scenario, point.settings, rng, path=prepared.path)
        except WhiteningError:
            return {}, "whitening failed"
        return evaluate_metrics(dec.components, dec.weights, truth.components, truth.weights), "ok"

    return sweep_points(prepared, spec, ALGORITHMS, "otd", run_index, tick, evaluate)


def notes(data: OtdData, algorithms: Sequence[str]) -> tuple[str, ...]:
    """What ``local`` does in this sweep."""
    if "local" in algorithms:
        return ("local: AGN on the least noisy site, the largest for equal budgets (the first when they are equal)",)
    return ()


@dataclass(frozen=True)
class _Model:
    """What the guarantees read of a problem: the model's kind, the (scaled) sigma^2, D and K."""

    kind: str
    sigma2: float | None
    dim: int
    k: int


def guarantees(spec: Any, scenario: Scenario, value: float | int, designs: Any) -> dict[str, tuple]:
    """Every algorithm's guarantees at one grid point (:func:`dpcore.agn.guarantees.otd_guarantees`; the designs are
    the same general or collusion-robust ones its runs use)."""
    data: OtdData = spec.data
    settings = data.settings(int(value) if spec.parameter == "c" else None)
    model = _Model(kind=data.model, sigma2=data.scaled_sigma2 if data.model == "mog" else None, dim=data.dim,
                   k=data.k)
    return {name: otd_guarantees(name, scenario, model, settings) for name in spec.algorithms}


SWEEP = FamilySweep(data=OtdData, stage_taus=stage_taus, plan=plan, run=run, notes=notes, guarantees=guarantees)
"""capeAGN's sweep hooks (``dpcore.agn.FAMILY.sweep``)."""
