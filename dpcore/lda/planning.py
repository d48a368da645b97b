"""capeLDA's planner hooks (:class:`dpcore.family.FamilyPlanner`; docs/planner.md).

capeLDA and the conventional scheme release M2 and the projected M3 of the documents' word counts with Gaussian noise
per unique entry (docs/math/lda.md): the aggregate of each stage carries std sigma_2, sigma_3 (capeLDA: the DP floor
max_s mu_s tau_s of each stage; conventional: sqrt(sum_s mu_s^2 tau_s^2)). At a fixed budget split both scale
together: the curve is measured along a common scale s of (sigma_2, sigma_3) = s (1, rho), on a reference corpus of
the synthetic model (:data:`REFERENCE_DOCUMENTS` documents, one pooled site), the noise added by the same two-stage
flow every LDA algorithm runs (:func:`dpcore.lda.algorithm.two_stage`).
"""

from __future__ import annotations

import numpy as np

from ..cape import conventional_std, dp_floor
from ..cape import stage_taus as cape_stage_taus
from ..cape.guarantee import run_guarantee_records
from ..family import FamilyPlanner, PlannerData, RunContext
from ..scenario import Scenario
from ..seeding import LDA_MODEL_STREAM, PLANNER_SAMPLE_STREAM, planner_rng, stream_rng
from ..tensor import WhiteningError
from ..tensor.release import StageNoise
from .algorithm import two_stage
from .compare import compare_lda
from .guarantees import lda_guarantees
from .problem import synthetic_lda_problem
from .recovery import topic_error
from .sweep import LdaData

__all__ = ["PLANNER", "REFERENCE_DOCUMENTS", "SCALE_DECADES", "SCALE_POINTS", "lda_noise"]

REFERENCE_DOCUMENTS = 5_000
"""Documents of the reference corpus the curve is measured on."""
SCALE_POINTS = 14
"""Noise scales on the curve's grid."""
SCALE_DECADES = (-5.0, -1.5)
"""The grid of the M2 stage's aggregate std: 10^a .. 10^b (M2's entries are word co-occurrence frequencies, at most
1, most far smaller)."""
METRIC = "topic_error"


def prepare(settings: LdaData, dataset: object, seed: int) -> PlannerData:
    """The ground truth (from ``seed``, as a comparison draws it) and a reference corpus of it, pooled."""
    model = settings.synthetic().model(stream_rng(seed, LDA_MODEL_STREAM))
    problem = synthetic_lda_problem(model, [REFERENCE_DOCUMENTS], stream_rng(seed, PLANNER_SAMPLE_STREAM),
                                    doc_length=settings.doc_length)
    path = settings.settings().m3_path(settings.dim)
    data = PlannerData(payload=(model, problem, path), available=None, reference=0.0, settings=settings,
                       key=f"lda|{settings.describe()}|{seed}",
                       description=f"{settings.describe()}; reference corpus of {REFERENCE_DOCUMENTS:,} documents")
    value = run_at(data, np.zeros(2), planner_rng(seed, -1, 0))
    return PlannerData(payload=data.payload, available=None, reference=np.nan if value is None else value,
                       settings=settings, key=data.key, description=data.description)


def lda_noise(scenario: Scenario, settings: LdaData) -> dict[str, np.ndarray]:
    """(sigma_2, sigma_3) of capeLDA (the DP floor of each stage) and of the conventional scheme. Closed form."""
    tau2, tau3 = cape_stage_taus(scenario, "lda", settings.eps_split, dim=settings.dim, alpha0=settings.alpha0)
    mu = scenario.weights()
    return {"cape": np.array([dp_floor(mu, tau2), dp_floor(mu, tau3)]),
            "conv": np.array([conventional_std(mu, tau2), conventional_std(mu, tau3)])}


def scales(data: PlannerData, profile: np.ndarray) -> np.ndarray:
    """:data:`SCALE_POINTS` scales of the M2 stage's std, log-spaced over :data:`SCALE_DECADES`."""
    return np.logspace(*SCALE_DECADES, SCALE_POINTS)


def run_at(data: PlannerData, stds: np.ndarray, rng: np.random.Generator) -> float | None:
    """The topic error of one run whose M2 and M3 aggregates carry noise stds[0] and stds[1] (the pooled corpus, one
    site of weight 1, through :func:`~dpcore.lda.algorithm.two_stage`); None when whitening fails."""
    model, problem, path = data.payload
    settings: LdaData = data.settings
    ctx = RunContext(name="planner", problem=problem, scenario=None, settings=settings.settings(), rng=rng, path=path)
    mode = "independent" if float(stds[0]) > 0 else "none"
    try:
        result = two_stage(ctx, problem.sites, np.ones(1), StageNoise(mode, stds=np.array([stds[0]])),
                           StageNoise(mode, stds=np.array([stds[1]])), "planner")
    except WhiteningError:
        return None
    return float(topic_error(result.topics, model.topics))


def check(data: PlannerData, scenario: Scenario, scheme: str, runs: int, seed: int) -> list[float | None]:
    """``runs`` real runs of ``scheme`` at ``scenario`` (:func:`dpcore.lda.compare_lda`: the ground truth from
    ``seed``, fresh documents per run); None for a run that failed."""
    settings: LdaData = data.settings
    result = compare_lda(scenario, [scheme], spec=settings.synthetic(), runs=runs, seed=seed,
                         settings=settings.settings(), workers=1)
    return [r.topic_error for r in result.records if r.algorithm == scheme]


def guarantees(data: PlannerData, scenario: Scenario) -> list[dict]:
    """The guarantee records (every view) of capeLDA and the conventional scheme at ``scenario``."""
    _, problem, _ = data.payload
    settings: LdaData = data.settings
    proxy = _SizesOnly(problem, scenario.sizes)
    return run_guarantee_records({name: lda_guarantees(name, scenario, proxy, settings.settings())
                                  for name in ("cape", "conv")})


class _SizesOnly:
    """The reference corpus seen with the scenario's document counts (what the guarantees read of a problem: the
    sizes, the vocabulary size and alpha_0)."""

    def __init__(self, problem, sizes: np.ndarray):
        self.sizes = np.asarray(sizes)
        self.dim = problem.dim
        self.alpha0 = problem.alpha0
        self.k = problem.k


def script(data: PlannerData, scenario: Scenario, scheme: str, runs: int, seed: int) -> str:
    """Python source that repeats :func:`check` (``scenario`` defined before it)."""
    s: LdaData = data.settings
    return (f"settings = LdaData(dim={s.dim}, k={s.k}, alpha0={s.alpha0!r}, alpha_shape={s.alpha_shape!r}, "
            f"doc_length={s.doc_length}, eps_split={s.eps_split!r}, n_restarts={s.n_restarts}, n_iter={s.n_iter}, "
            f"path={s.path!r})\n"
            f"result = compare_lda(scenario, [{scheme!r}], spec=settings.synthetic(), runs={runs}, seed={seed}, "
            "settings=settings.settings(), workers=1)\n"
            f"values = [r.topic_error for r in result.records if r.algorithm == {scheme!r}]\n")


PLANNER = FamilyPlanner(metric=METRIC, target_words="topic error", prepare=prepare, noise=lda_noise, scales=scales,
                        run_at=run_at, check=check, guarantees=guarantees, script=script,
                        imports="from dpcore.lda import compare_lda\nfrom dpcore.lda.sweep import LdaData\n",
                        stage_names=("M2", "M3"))
"""capeLDA's planner hooks (``dpcore.lda.FAMILY.planner``)."""
