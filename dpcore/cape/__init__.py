"""CAPE: correlated noise across sites (docs/math/cape.md, docs/math/audit.md).

Noise designs - equal sites, and the noise-design table (:data:`SOLVERS`, one module per solver in
:mod:`~dpcore.cape.solvers`: the general solver, the published closed form, the collusion-robust calibration) -
their gains, the privacy audit of what colluding parties see jointly, explanations in words, the plan of a
scenario (design + audit), capeAGN's two stages, one protocol round as messages, and what each party of a round
computes (:mod:`~dpcore.cape.parties`: helper, aggregator and site noise, releases, the combination).

Imports the bottom layer, :mod:`dpcore.privacy`, :mod:`dpcore.data` (site sizes) and :mod:`dpcore.scenario`.
Inside the package: design <- solver, solvers.closed_form, solvers.general, coalition (the audit's closed forms) <-
audit <- solvers.robust <- noise_designs <- explain, plan, gain <- stages; protocol <- parties; plan <- attack;
plan, gain <- change.
"""

from .attack import ATTACK_VIEWS, AttackView, attack_sentence, site_attack_views
from .audit import (
    AUDIT_VIEWS,
    VIEWS,
    AuditReport,
    AuditRow,
    AuditView,
    ViewSigma,
    audit_design,
    default_collusion,
    effective_sigma,
    entry_pair_sigma,
    view_sigmas,
)
from .change import ChangeRow, PlanChange, compare_plans
from .design import (
    OBJECTIVES,
    CapeNoise,
    NoiseDesign,
    Objective,
    SiteBudgets,
    conventional_std,
    design_equal,
    dp_floor,
    equal_cape_variances,
    gain_bounds,
    gain_equal_weights,
    generalized_gain,
    noise_from_normals,
    noise_rows,
    sample_noise,
    scenario_budgets,
    site_budgets,
)
from .gain import GAINS, HEADLINE_GAIN, GainDefinition, Headline, headline_gain, headline_of
from .noise_designs import SOLVERS, solver
from .noise_variants import NOISE_VARIANTS, noise_variant
from .plan import Plan, plan_scenario
from .solver import DesignRequest, DesignSolver, FeasibleSettings
from .solvers.closed_form import design_closed_form, solve_closed_form
from .solvers.general import design_general, solve_general
from .solvers.robust import design_collusion_robust, solve_collusion_robust
from .stages import (
    AGN_MODELS,
    STAGE_MODELS,
    StagePlan,
    agn_stage_designs,
    agn_stage_plans,
    agn_stage_taus,
    stage_scenario,
    stage_sensitivities,
    stage_taus,
)
from .variant import NoiseVariant
from .weights import WEIGHT_OBJECTIVES, SuggestedWeights, suggest_weights

__all__ = [
    "AGN_MODELS",
    "ATTACK_VIEWS",
    "AUDIT_VIEWS",
    "GAINS",
    "HEADLINE_GAIN",
    "NOISE_VARIANTS",
    "OBJECTIVES",
    "SOLVERS",
    "STAGE_MODELS",
    "VIEWS",
    "WEIGHT_OBJECTIVES",
    "AuditReport",
    "AttackView",
    "AuditRow",
    "AuditView",
    "CapeNoise",
    "ChangeRow",
    "DesignRequest",
    "DesignSolver",
    "FeasibleSettings",
    "GainDefinition",
    "Headline",
    "NoiseDesign",
    "NoiseVariant",
    "Objective",
    "Plan",
    "PlanChange",
    "SiteBudgets",
    "StagePlan",
    "SuggestedWeights",
    "ViewSigma",
    "agn_stage_designs",
    "agn_stage_plans",
    "agn_stage_taus",
    "attack_sentence",
    "audit_design",
    "compare_plans",
    "conventional_std",
    "default_collusion",
    "design_closed_form",
    "design_collusion_robust",
    "design_equal",
    "design_general",
    "dp_floor",
    "effective_sigma",
    "entry_pair_sigma",
    "equal_cape_variances",
    "gain_bounds",
    "gain_equal_weights",
    "generalized_gain",
    "headline_gain",
    "headline_of",
    "noise_variant",
    "plan_scenario",
    "noise_from_normals",
    "noise_rows",
    "sample_noise",
    "scenario_budgets",
    "site_attack_views",
    "site_budgets",
    "solver",
    "solve_closed_form",
    "solve_collusion_robust",
    "solve_general",
    "stage_scenario",
    "stage_sensitivities",
    "stage_taus",
    "suggest_weights",
    "view_sigmas",
]
