"""Preparing a sweep (docs/experiments.md): the data, the problem and privacy set-up of every grid point, the
designs and gains, which algorithms cannot change along the swept parameter, and the notes. Prepared sweeps are
cached (:mod:`dpcore.experiments.cache`) without their runs and algorithms, which they do not depend on.

Data: PCA data are prepared once per sweep (the same split as :func:`dpcore.pca.prepare_pca` with the same seed)
and are the same in every run (runs differ in noise); OTD data are drawn afresh per run from the same generator as
:func:`dpcore.otd.compare_algorithms`. For ``ns`` sweeps the samples are nested: every site's data at a smaller N_s
are a prefix of its data at the largest N_s. For ``sites`` sweeps the sites are nested: site s holds the same
samples at every S.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..data import load_bundled, preprocess, split_sites, synthetic_dataset
from ..lda import LdaModel, LdaSettings
from ..limits import MAX_REPLAY_NUMBERS
from ..otd import MixtureModel, OtdSettings, mog_norm_bound
from ..pca import PcaPrivacy, PcaProblem, noise_dominance_note, pca_privacy, pca_problem
from ..privacy.symmetric import unique_count_matrix
from ..scenario import Scenario
from ..seeding import LDA_MODEL_STREAM, OTD_MODEL_STREAM, PCA_SPLIT_STREAM, PCA_SYNTHETIC_STREAM, stream_rng
from ..tensor import check_m3_law, choose_path
from .cache import lookup_plan, store_plan
from .designs import pca_design, sweep_gains
from .families import invariant_algorithms
from .spec import LdaData, OtdData, PcaData, SweepSpec, scenario_at

__all__ = ["GridPoint", "SweepPlan", "algorithm_notes", "sweep_plan"]


@dataclass(frozen=True, eq=False, kw_only=True)
class GridPoint:
    """One grid point: its value and scenario, and (PCA) its problem and privacy set-up or (OTD, LDA) its settings."""

    value: float | int
    scenario: Scenario
    problem: PcaProblem | None = None
    privacy: PcaPrivacy | None = None
    settings: OtdSettings | LdaSettings | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class SweepPlan:
    """What a sweep needs besides its runs and algorithms (cached by :func:`_plan_key`, which leaves those out:
    use the caller's spec for them, never ``spec`` here). ``replay``: PCA standard normals can be replayed across
    grid points; ``model``, ``sizes_max``, ``path``: the OTD or LDA ground truth, the largest site sizes and the
    path."""

    spec: SweepSpec
    points: tuple[GridPoint, ...]
    invariant: frozenset[str]
    notes: tuple[str, ...]
    gains: pd.DataFrame
    replay: bool = False
    model: MixtureModel | LdaModel | None = None
    sizes_max: tuple[int, ...] = ()
    path: str | None = None


def _caveats(spec: SweepSpec, scenarios: list[Scenario]) -> list[str]:
    """Scenario.caveats() condensed over the grid: one line per kind naming the eps values or grid points."""
    notes = []
    if spec.scenario.calibration == "classic":
        loose = sorted({float(s.eps) for sc in scenarios for s in sc.sites if s.eps >= 1.0})
        if loose:
            notes.append(f"classic Gaussian calibration at eps = {', '.join(f'{e:g}' for e in loose)} (>= 1) is not a "
                         "valid (eps, delta) guarantee (it is proven only for eps < 1); it is used here to reproduce "
                         "the papers. Use the analytic calibration for a real guarantee.")
    large = [(v, sc) for v, sc in zip(spec.grid, scenarios, strict=True) if any(s.delta >= 1.0 / s.n for s in sc.sites)]
    if large:
        worst = max((s for _, sc in large for s in sc.sites), key=lambda s: s.delta * s.n)
        notes.append(f"delta is not well below 1/N_s at {spec.label} = {', '.join(f'{v:g}' for v, _ in large)} "
                     f"(e.g. delta = {worst.delta:g} with N_s = {worst.n:,}, 1/N_s = {1 / worst.n:.3g}); a mechanism "
                     "could then release a whole record with probability delta")
    return notes


def _common_notes(spec: SweepSpec, scenarios: list[Scenario]) -> list[str]:
    base = spec.scenario
    notes = [f"{base.calibration} calibration, {base.neighbouring} neighbours"
             + (" (the papers' constants)" if base.neighbouring == "as-published" else "")]
    notes.extend(_caveats(spec, scenarios))
    if base.tau_c is not None:
        notes.append(f"the scenario's target tau_c = {base.tau_c:g} is not used along a sweep: every grid point uses "
                     "the DP floor max_s mu_s tau_s")
    if spec.parameter == "sites" and base.weights_given:
        notes.append("the scenario's weights cannot be extended to other numbers of sites: mu_s = N_s / N is used")
    if spec.parameter == "c":
        title = {"pca": "capePCA", "otd": "capeAGN", "lda": "capeLDA"}[spec.family]
        notes.append(f"{title} uses the collusion-robust design for c colluders at every grid point (gain S - c for "
                     "equal sites, up to its 1% safety margin); the other algorithms do not depend on c")
    shared = {
        "eps": "every algorithm sees the same standard normals at every eps (common random numbers)",
        "delta": "every algorithm sees the same standard normals at every delta (common random numbers)",
        "ns": "nested samples: each site's data at a smaller N_s are a prefix of its data at the largest N_s, and "
              "every algorithm sees the same standard normals at every N_s",
        "sites": "nested sites: site s holds the same samples at every S; conventional, DPdisPCA and local noise "
                 "of a site is shared across S, CAPE's e, f, g draws are laid out by S and fresh at every S",
        "c": "the data and every draw are the same at every c; only the CAPE design's variances change",
    }[spec.parameter]
    notes.append(shared)
    return notes


def _pca_plan(spec: SweepSpec) -> SweepPlan:
    data: PcaData = spec.data
    scenarios = [scenario_at(spec, v) for v in spec.grid]
    # Data for the largest grid point (ns, sites) or the scenario's sizes; smaller points use prefixes.
    sizes_max = scenarios[-1].sizes if spec.parameter in ("ns", "sites") else spec.scenario.sizes
    total = int(np.sum(sizes_max))
    if data.dataset == "synthetic":
        dataset = synthetic_dataset(total, stream_rng(spec.seed, PCA_SYNTHETIC_STREAM), dim=data.dim,
                                    spectrum=data.spectrum, decay=data.decay)
    else:
        dataset = load_bundled(data.dataset)
    prepared = preprocess(dataset.x, data.preprocessing)
    split = split_sites(prepared.x, sizes_max, stream_rng(spec.seed, PCA_SPLIT_STREAM), labels=dataset.labels,
                        allow_replacement=True)
    notes = _common_notes(spec, scenarios)
    notes.insert(0, f"data: {dataset.description}; preprocessing: {prepared.note}")
    if split.message:
        message = split.message
        if spec.parameter == "ns":
            message += (" Smaller N_s use prefixes of these site samples, so repeats can occur at any N_s.")
        notes.append(message)
    points = []
    shared_problem = None
    crowded = []
    for value, scenario in zip(spec.grid, scenarios, strict=True):
        if spec.parameter == "ns":
            problem = pca_problem([x[:, : int(value)] for x in split.sites], data.k)
        elif spec.parameter == "sites":
            problem = pca_problem(list(split.sites[: int(value)]), data.k)
        else:
            if shared_problem is None:
                shared_problem = pca_problem(list(split.sites), data.k)
            problem = shared_problem
        problem = replace(problem, solver_dtype=data.solver_dtype)
        privacy = pca_privacy(scenario, pca_design(spec, scenario, value))
        if noise_dominance_note(problem, privacy):
            crowded.append(value)
        points.append(GridPoint(value=value, scenario=scenario, problem=problem, privacy=privacy))
    if crowded:
        notes.append(f"at {spec.label} = {', '.join(f'{v:g}' for v in crowded)} the aggregate's noise (spectral norm "
                     "about 2 sqrt(D) tau_c) exceeds the K-th eigenvalue of A: there even capePCA recovers mostly "
                     "noise directions")
    recorded = 3 * len(sizes_max) * unique_count_matrix(points[0].problem.dim)  # capePCA's normals of one run
    replay = spec.parameter != "sites" and recorded <= MAX_REPLAY_NUMBERS
    return SweepPlan(spec=spec, points=tuple(points), invariant=invariant_algorithms("pca", spec.parameter),
                     notes=tuple(dict.fromkeys(notes)), gains=sweep_gains(spec), replay=replay)


def _otd_plan(spec: SweepSpec) -> SweepPlan:
    data: OtdData = spec.data
    scenarios = [scenario_at(spec, v) for v in spec.grid]
    if spec.parameter in ("ns", "sites"):
        sizes_max = tuple(int(n) for n in scenarios[-1].sizes)
    else:
        sizes_max = tuple(int(n) for n in spec.scenario.sizes)
    model = data.synthetic().model(stream_rng(spec.seed, OTD_MODEL_STREAM))  # as otd.compare_algorithms
    choice = choose_path(data.path, data.dim, data.k, len(sizes_max))
    check_m3_law(data.m3_noise, choice.path, data.k)
    points = []
    for value, scenario in zip(spec.grid, scenarios, strict=True):
        settings = data.settings(int(value) if spec.parameter == "c" else None)
        points.append(GridPoint(value=value, scenario=scenario, settings=settings))
    notes = _common_notes(spec, scenarios)
    notes.insert(0, f"data: {data.describe()}; fresh samples in every run, the ground truth drawn once from the seed; "
                    f"third moment on the {choice.path} path ({choice.reason})")
    if data.model == "mog":
        zeta = mog_norm_bound(data.dim, data.sigma2)
        notes.append(f"MOG samples divided by the public bound zeta = sqrt(1 + D sigma^2) + 4 sigma = {zeta:.3g}")
    return SweepPlan(spec=spec, points=tuple(points), invariant=invariant_algorithms("otd", spec.parameter),
                     notes=tuple(dict.fromkeys(notes)), gains=sweep_gains(spec), model=model, sizes_max=sizes_max,
                     path=choice.path)


def _lda_plan(spec: SweepSpec) -> SweepPlan:
    data: LdaData = spec.data
    scenarios = [scenario_at(spec, v) for v in spec.grid]
    largest = scenarios[-1] if spec.parameter in ("ns", "sites") else spec.scenario
    sizes_max = tuple(int(n) for n in largest.sizes)
    model = data.synthetic().model(stream_rng(spec.seed, LDA_MODEL_STREAM))  # as lda.compare_lda
    points = [GridPoint(value=v, scenario=sc, settings=data.settings(int(v) if spec.parameter == "c" else None))
              for v, sc in zip(spec.grid, scenarios, strict=True)]
    path = points[0].settings.m3_path(data.dim)
    notes = _common_notes(spec, scenarios)
    notes.insert(0, f"data: {data.describe()}; fresh documents in every run, the ground truth drawn once from the "
                    f"seed; third moment on the {path} path")
    notes.append("configurations 1-4 run on the pooled documents at one curator with the strictest site budget; "
                 "2, 3 and 4 are not DP as published (local sensitivities); a configuration whose condition fails is "
                 "counted as unusable at that point, not averaged in")
    return SweepPlan(spec=spec, points=tuple(points), invariant=invariant_algorithms("lda", spec.parameter),
                     notes=tuple(dict.fromkeys(notes)), gains=sweep_gains(spec), model=model, sizes_max=sizes_max,
                     path=path)


def _plan_key(spec: SweepSpec) -> str:
    data = spec.to_dict()
    del data["runs"]
    del data["algorithms"]
    return json.dumps(data, sort_keys=True)


def algorithm_notes(spec: SweepSpec) -> tuple[str, ...]:
    notes = []
    if spec.family == "pca":
        if "local" in spec.algorithms:
            notes.append("local: Analyze Gauss on the site with the smallest tau_s (the first site when they are "
                         "equal)")
        if "dpdis" in spec.algorithms:
            notes.append(f"DPdisPCA rank R = {spec.data.rank if spec.data.rank is not None else spec.data.k}")
    elif spec.family == "otd" and "local" in spec.algorithms:
        notes.append("local: AGN on the least noisy site, the largest for equal budgets (the first when they are "
                     "equal)")
    elif spec.family == "lda" and "local" in spec.algorithms:
        notes.append("local: Gaussian LDA moments of the largest site alone (the first site when they are equal)")
    return tuple(notes)


def sweep_plan(spec: SweepSpec) -> SweepPlan:
    """The prepared sweep of ``spec`` (cached)."""
    key = _plan_key(spec)
    plan = lookup_plan(key)
    if plan is None:
        plan = {"pca": _pca_plan, "otd": _otd_plan, "lda": _lda_plan}[spec.family](spec)
        store_plan(key, plan)
    return plan
