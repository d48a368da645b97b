"""capeAGN's planner hooks (:class:`dpcore.family.FamilyPlanner`; docs/planner.md).

Both stages of capeAGN and of the conventional scheme release an aggregate that is the pooled statistic plus Gaussian
noise per unique entry: M2 with std sigma_2 and the projected M3 with std sigma_3 (capeAGN: the DP floor
max_s mu_s tau_s of each stage; conventional: sqrt(sum_s mu_s^2 tau_s^2); tau_s from the budget split,
docs/math/capeagn.md). At a fixed split the two stages scale together, so the planner's curve is measured along a
common scale s of the stage profile (sigma_2, sigma_3) = s (1, rho), on a reference sample of the synthetic model
(:data:`REFERENCE_SAMPLES` samples, one pooled site), the noise added directly: one conventional release with a
single site of std s and s rho (the same code path as every run, :mod:`dpcore.tensor.release`).
"""

from __future__ import annotations

import numpy as np

from ..cape import conventional_std, dp_floor
from ..cape import stage_taus as cape_stage_taus
from ..cape.guarantee import run_guarantee_records
from ..family import FamilyPlanner, PlannerData, RunContext
from ..scenario import Scenario
from ..seeding import OTD_MODEL_STREAM, PLANNER_SAMPLE_STREAM, planner_rng, stream_rng
from ..tensor import WhiteningError, choose_path, whiten
from ..tensor.release import StageNoise, release_m2, release_m3
from .algorithm import decomposition, m3_law, tpm
from .compare import compare_algorithms
from .evaluation import evaluate_metrics
from .guarantees import otd_guarantees
from .problem import synthetic_problem
from .sweep import OtdData

__all__ = ["PLANNER", "REFERENCE_SAMPLES", "SCALE_DECADES", "SCALE_POINTS", "otd_noise"]

REFERENCE_SAMPLES = 20_000
"""Samples of the reference sample the curve is measured on."""
SCALE_POINTS = 16
"""Noise scales on the curve's grid."""
SCALE_DECADES = (-4.0, -0.5)
"""The grid of the M2 stage's aggregate std: 10^a .. 10^b (samples are scaled to norm <= 1, so M2's entries are at
most 1; past 10^-0.5 whitening fails for every D the tool allows)."""
METRIC = "q_comp"


def prepare(settings: OtdData, dataset: object, seed: int) -> PlannerData:
    """The ground truth (from ``seed``, as a comparison draws it) and a reference sample of it, pooled."""
    model = settings.synthetic().model(stream_rng(seed, OTD_MODEL_STREAM))
    problem = synthetic_problem(model, [REFERENCE_SAMPLES], stream_rng(seed, PLANNER_SAMPLE_STREAM), settings.estimator)
    path = choose_path(settings.path, settings.dim, settings.k, 1).path
    data = PlannerData(payload=(model, problem, path), available=None, reference=0.0, settings=settings,
                       key=f"otd|{settings.describe()}|{seed}",
                       description=f"{settings.describe()}; reference sample of {REFERENCE_SAMPLES:,}")
    value = run_at(data, np.zeros(2), planner_rng(seed, -1, 0))
    return PlannerData(payload=data.payload, available=None, reference=np.nan if value is None else value,
                       settings=settings, key=data.key, description=data.description)


def otd_noise(scenario: Scenario, settings: OtdData) -> dict[str, np.ndarray]:
    """(sigma_2, sigma_3), the aggregate std of the M2 and the M3 stage, of capeAGN (the DP floor of each stage) and of
    the conventional scheme (sqrt(sum_s mu_s^2 tau_s^2)). Closed form: no solver runs."""
    sigma2 = settings.scaled_sigma2 if settings.model == "mog" else None
    tau2, tau3 = cape_stage_taus(scenario, settings.model, settings.eps_split, dim=settings.dim, sigma2=sigma2)
    mu = scenario.weights()
    return {"cape": np.array([dp_floor(mu, tau2), dp_floor(mu, tau3)]),
            "conv": np.array([conventional_std(mu, tau2), conventional_std(mu, tau3)])}


def scales(data: PlannerData, profile: np.ndarray) -> np.ndarray:
    """:data:`SCALE_POINTS` scales of the M2 stage's std, log-spaced over :data:`SCALE_DECADES`."""
    return np.logspace(*SCALE_DECADES, SCALE_POINTS)


def run_at(data: PlannerData, stds: np.ndarray, rng: np.random.Generator) -> float | None:
    """q_comp of one run whose M2 and M3 aggregates carry noise stds[0] and stds[1]: the pooled sample released once
    with that noise (one site, weight 1), whitened, the power method, recovery; None when whitening fails."""
    model, problem, path = data.payload
    settings: OtdData = data.settings
    ctx = RunContext(name="planner", problem=problem, scenario=None, settings=settings.settings(), rng=rng, path=path)
    one = np.ones(1)
    try:
        m2, _ = release_m2(problem.sites, one, StageNoise("independent", stds=np.array([stds[0]])), rng)
        wh = whiten(m2, problem.k)
        m3, _ = release_m3(problem.sites, one, wh.w, StageNoise("independent", stds=np.array([stds[1]])), rng,
                           path=path, law=m3_law(ctx))
    except WhiteningError:
        return None
    dec = decomposition(ctx, wh, tpm(ctx, m3), "planner")
    return float(evaluate_metrics(dec.components, dec.weights, model.components, model.weights)[METRIC])


def check(data: PlannerData, scenario: Scenario, scheme: str, runs: int, seed: int) -> list[float | None]:
    """``runs`` real runs of ``scheme`` at ``scenario`` (:func:`dpcore.otd.compare_algorithms`: the ground truth from
    ``seed``, fresh samples per run at the scenario's N_s); None for a run whose whitening failed."""
    settings: OtdData = data.settings
    result = compare_algorithms(scenario, [scheme], spec=settings.synthetic(), runs=runs, seed=seed,
                                settings=settings.settings(), workers=1)
    return [r.metric(METRIC) for r in result.records if r.algorithm == scheme]


def guarantees(data: PlannerData, scenario: Scenario) -> list[dict]:
    """The guarantee records (every view) of capeAGN and the conventional scheme at ``scenario``."""
    _, problem, _ = data.payload
    settings: OtdData = data.settings
    return run_guarantee_records({name: otd_guarantees(name, scenario, problem, settings.settings())
                                  for name in ("cape", "conv")})


def script(data: PlannerData, scenario: Scenario, scheme: str, runs: int, seed: int) -> str:
    """Python source that repeats :func:`check` (``scenario`` defined before it)."""
    s: OtdData = data.settings
    return (f"settings = OtdData(model={s.model!r}, dim={s.dim}, k={s.k}, sigma2={s.sigma2!r}, "
            f"doc_length={s.doc_length}, estimator={s.estimator!r}, eps_split={s.eps_split!r}, "
            f"n_restarts={s.n_restarts}, n_iter={s.n_iter}, path={s.path!r}, m3_noise={s.m3_noise!r}, "
            f"truth={s.truth!r})\n"
            f"result = compare_algorithms(scenario, [{scheme!r}], spec=settings.synthetic(), runs={runs}, seed={seed}, "
            "settings=settings.settings(), workers=1)\n"
            f"values = [r.metric({METRIC!r}) for r in result.records if r.algorithm == {scheme!r}]\n")


PLANNER = FamilyPlanner(metric=METRIC, target_words="component error q_comp", prepare=prepare, noise=otd_noise,
                        scales=scales, run_at=run_at, check=check, guarantees=guarantees, script=script,
                        imports="from dpcore.otd import compare_algorithms\nfrom dpcore.otd.sweep import OtdData\n",
                        stage_names=("M2", "M3"))
"""capeAGN's planner hooks (``dpcore.otd.FAMILY.planner``)."""
