"""The gains of CAPE over independent noise: one table of their names and definitions, the headline of a scenario,
and how the gain moves as site sizes become unequal (Proposition 1; docs/math/cape.md, "Gains").

:data:`GAINS` names every gain the project computes, with its symbol, a one-line definition and the function that
computes it for a scenario. Exactly one of them is the **headline**, the CAPE gain G of the scenario as it is
(its weights, budgets and tau_c): :func:`headline_of` turns a design into the sentence every page shows, "the
aggregate carries G times less noise variance than if each site added its own". The others answer narrower
questions and are shown only beside their definitions.

With equal budgets, tau_s = c / N_s for a mean (Delta_s = 1/N_s). Three gains along a path of sizes:

* ``prop1``: Proposition 1, G(n) = (N^2 / S^2) sum_s 1/N_s^2 - the equally weighted average with
  tau_c = tau_pooled = c / N. For unequal sizes that tau_c is BELOW the DP floor max_s tau_s / S, so
  the released aggregate breaks the smallest site's budget (the audit's outside view shows it).
* ``floor_equal``: the same equally weighted average with tau_c at the DP floor:
  G = sum_s (N_min / N_s)^2 <= S.
* ``size_weights``: weights mu_s = N_s / N, tau_c at the floor c / N: G = S for every n.

Paths of sizes (:data:`SIZE_PATHS`; not the algorithm families of :data:`dpcore.experiments.FAMILIES`):
:func:`imbalanced_sizes` (one slider from equal sizes, 0, to the most unequal sizes of a path, 1) and
:func:`dirichlet_sizes` (random shares with a concentration, seeded).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..data.split import apportion
from ..limits import MAX_DRAWS
from ..scenario import Scenario
from ..validation import InputError, check_choice, check_positive, check_positive_int
from .audit import default_collusion
from .design import NoiseDesign, dp_floor, gain_bounds, gain_equal_weights, generalized_gain, scenario_budgets
from .solvers.general import solve_general
from .solvers.robust import solve_collusion_robust

__all__ = [
    "GAINS",
    "HEADLINE_GAIN",
    "SIZE_PATHS",
    "GainCurves",
    "GainDefinition",
    "Headline",
    "ScenarioGains",
    "dirichlet_gain_quantiles",
    "dirichlet_sizes",
    "gain_curves",
    "gain_equal_weights_at_floor",
    "headline_gain",
    "headline_of",
    "imbalanced_sizes",
    "scenario_gains",
]

SIZE_PATHS: dict[str, str] = {
    "one-large": "S-1 sites shrink together while one grows; 1 gives (1, ..., 1, N-S+1), Proposition 1's maximiser",
    "geometric": "sizes in geometric progression; at 1 the largest site has N-S+1 times the extra samples of "
    "the smallest",
}


def _check_total(total: int, n_sites: int) -> tuple[int, int]:
    n_sites = check_positive_int(n_sites, "S")
    total = check_positive_int(total, "N")
    if total < n_sites:
        raise InputError(f"need at least one sample per site: N = {total} < S = {n_sites}", "N")
    return total, n_sites


def imbalanced_sizes(total: int, n_sites: int, imbalance: float, path: str = "one-large") -> np.ndarray:
    """Sizes summing to N: equal at ``imbalance`` 0, the most unequal sizes of the path of sizes ``path`` (a key of
    :data:`SIZE_PATHS`) at 1.

    one-large: extra samples (beyond 1 per site) in shares 1 - t for S-1 sites and 1 - t + t S for the last.
    geometric: shares r^(s/(S-1)), s = 0..S-1, with r = (N-S+1)^t.
    """
    total, n_sites = _check_total(total, n_sites)
    path = check_choice(path, "size path", tuple(SIZE_PATHS))
    t = float(imbalance)
    if not 0.0 <= t <= 1.0:
        raise InputError(f"imbalance must be in [0, 1] (got {imbalance!r})", "imbalance")
    if n_sites == 1:
        return np.array([total])
    if path == "one-large":
        shares = np.full(n_sites, 1.0 - t)
        shares[-1] = 1.0 - t + t * n_sites
    else:
        ratio = float(total - n_sites + 1) ** t
        shares = ratio ** (np.arange(n_sites) / (n_sites - 1))
    return apportion(total, shares)


def dirichlet_sizes(
    total: int, n_sites: int, concentration: float, rng: np.random.Generator, draws: int = 1
) -> np.ndarray:
    """``draws`` x S integer sizes: 1 sample per site plus the rest split by Dirichlet(alpha, ..., alpha)
    shares. Large alpha gives nearly equal sizes, small alpha very unequal ones."""
    total, n_sites = _check_total(total, n_sites)
    alpha = check_positive(concentration, "concentration")
    draws = check_positive_int(draws, "draws")
    if draws > MAX_DRAWS:
        raise InputError(f"draws must be at most {MAX_DRAWS} (got {draws})", "draws")
    shares = rng.dirichlet(np.full(n_sites, alpha), size=draws)
    # alpha << 1 can give all-zero rows in floating point; those rows put everything on one site
    zero = shares.sum(axis=1) <= 0
    shares[zero, 0] = 1.0
    return apportion(total, shares)


def gain_equal_weights_at_floor(sizes: np.ndarray) -> float:
    """Gain of the equally weighted average with tau_c at the DP floor: sum_s (N_min / N_s)^2 (equal budgets)."""
    n = np.asarray(sizes, dtype=float)
    if n.ndim != 1 or n.size == 0 or np.any(n <= 0):
        raise InputError("site sizes must be positive numbers")
    return float(np.sum((n.min() / n) ** 2))


@dataclass(frozen=True, kw_only=True)
class GainCurves:
    """Gains along a path of sizes (one entry per imbalance value)."""

    imbalance: np.ndarray
    sizes: np.ndarray  # (len(imbalance), S)
    prop1: np.ndarray
    floor_equal: np.ndarray
    size_weights: np.ndarray


def gain_curves(total: int, n_sites: int, imbalances: np.ndarray, path: str = "one-large") -> GainCurves:
    """The three gains of the module docstring along ``imbalances`` (values in [0, 1])."""
    imbalances = np.asarray(imbalances, dtype=float)
    sizes = np.array([imbalanced_sizes(total, n_sites, t, path) for t in imbalances])
    floor_equal = np.array([gain_equal_weights_at_floor(row) for row in sizes])
    size_weights = np.full(len(imbalances), float(n_sites))
    return GainCurves(imbalance=imbalances, sizes=sizes, prop1=gain_equal_weights(sizes), floor_equal=floor_equal,
                      size_weights=size_weights)


def dirichlet_gain_quantiles(
    total: int, n_sites: int, concentrations: np.ndarray, draws: int, seed: int,
    quantiles: tuple[float, ...] = (0.1, 0.5, 0.9),
) -> np.ndarray:
    """Quantiles of Proposition 1's G over ``draws`` Dirichlet size vectors per concentration.

    Returns an array (len(concentrations), len(quantiles)); one generator seeded with ``seed`` is used
    in the order of ``concentrations``, so a seed reproduces the figure."""
    rng = np.random.default_rng(check_positive_int(seed, "seed", minimum=0))
    out = np.empty((len(concentrations), len(quantiles)))
    for i, alpha in enumerate(concentrations):
        g = gain_equal_weights(dirichlet_sizes(total, n_sites, alpha, rng, draws))
        out[i] = np.quantile(g, quantiles)
    return out


@dataclass(frozen=True, kw_only=True)
class ScenarioGains:
    """The gains of one scenario (mean statistic, the scenario's budgets unless said otherwise)."""

    n_sites: int
    total: int
    prop1: float  # Proposition 1, sizes only (equal budgets, weights 1/S, tau_c = tau_pooled)
    prop1_min: float
    prop1_max: float
    floor_equal: float  # weights 1/S, tau_c at the DP floor, equal budgets
    generalized: float  # the scenario's weights, budgets and tau_c (floor when unset)
    tau_c: float
    tau_floor: float
    below_floor: bool
    size_weights: float  # weights N_s/N with the scenario's budgets, tau_c at the floor


def scenario_gains(scenario: Scenario, statistic: str = "mean") -> ScenarioGains:
    """Proposition 1 for the scenario's sizes beside the generalized gain with its weights and budgets."""
    sizes = scenario.sizes
    low, high = gain_bounds(scenario.total_n, scenario.n_sites)
    tau = scenario.taus(statistic)
    mu = scenario.weights()
    floor = dp_floor(mu, tau)
    tau_c = floor if scenario.tau_c is None else float(scenario.tau_c)
    size_mu = sizes / sizes.sum()
    return ScenarioGains(
        n_sites=scenario.n_sites,
        total=scenario.total_n,
        prop1=gain_equal_weights(sizes),
        prop1_min=low,
        prop1_max=high,
        floor_equal=gain_equal_weights_at_floor(sizes),
        generalized=generalized_gain(mu, tau, tau_c),
        tau_c=tau_c,
        tau_floor=floor,
        below_floor=tau_c < floor * (1 - 1e-9),
        size_weights=generalized_gain(size_mu, tau, dp_floor(size_mu, tau)),
    )


# ----------------------------------------------------------------------------------------------
# The named gains and the headline
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class Headline:
    """The headline gain of a design of the mean (docs/math/cape.md, "Gains"): G = tau_conv^2 / tau_c^2.

    ``gain`` is None when there is no feasible design; ``below_floor`` flags a tau_c under the DP floor, where the
    gain is real but the published aggregate breaks the budget of ``floor_site``."""

    gain: float | None
    tau_c: float
    tau_conv: float
    tau_floor: float
    floor_site: str
    below_floor: bool
    reason: str | None

    @property
    def value_text(self) -> str:
        """The gain as the pages print it: three significant digits and a times sign, or 'none'."""
        return "none" if self.gain is None else f"{self.gain:.3g}×"

    @property
    def sentence(self) -> str:
        """The one headline sentence, in the same words on every page (markdown)."""
        if self.gain is None:
            return f"No CAPE design exists for this scenario: {self.reason}"
        text = (f"The aggregate carries **{self.gain:.3g} times less noise variance** than if each site added its "
                "own.")
        if self.below_floor:
            text += (f" But tau_c = {self.tau_c:.4g} is below the DP floor {self.tau_floor:.4g}: the published "
                     f"aggregate breaks site {self.floor_site}'s budget.")
        return text


def headline_of(design: NoiseDesign) -> Headline:
    """The headline of a design (of the mean, by the general solver, for the scenario's tau_c)."""
    weights, tau = design.weights, design.tau
    setter = design.names[int(np.argmax(weights * tau))]
    return Headline(gain=design.gain if design.feasible else None, tau_c=float(design.tau_c),
                    tau_conv=design.tau_conv, tau_floor=design.tau_floor, floor_site=setter,
                    below_floor=design.below_floor, reason=design.reason)


def headline_gain(scenario: Scenario) -> Headline:
    """The scenario's headline: the general solver's design of the mean at the scenario's tau_c (the DP floor when
    unset). The dashboard computes the same design as part of its plan and calls :func:`headline_of`."""
    budgets = scenario_budgets(scenario, scenario.taus("mean"))
    return headline_of(solve_general(budgets, scenario.tau_c, "balanced", 1.0))


def _cape_gain(scenario: Scenario, collusion: int | None) -> float | None:
    return headline_gain(scenario).gain


def _prop1_gain(scenario: Scenario, collusion: int | None) -> float | None:
    return float(gain_equal_weights(scenario.sizes))


def _floor_equal_gain(scenario: Scenario, collusion: int | None) -> float | None:
    return gain_equal_weights_at_floor(scenario.sizes)


def _pooled_weights_gain(scenario: Scenario, collusion: int | None) -> float | None:
    tau = scenario.taus("mean")
    mu = scenario.sizes / scenario.total_n
    return generalized_gain(mu, tau, dp_floor(mu, tau))


def _robust_gain(scenario: Scenario, collusion: int | None) -> float | None:
    if scenario.n_sites < 2:
        return None
    c = default_collusion(scenario.n_sites) if collusion is None else int(collusion)
    design = solve_collusion_robust(scenario_budgets(scenario, scenario.taus("mean")), c, None)
    return design.gain if design.feasible else None


@dataclass(frozen=True, kw_only=True)
class GainDefinition:
    """One named gain: ``function(scenario, collusion)`` computes it for a scenario (mean statistic); ``latex`` is
    its formula; ``private`` says whether the aggregate it assumes keeps every site's budget."""

    name: str
    title: str
    symbol: str
    definition: str
    latex: str
    private: bool
    function: Callable[[Scenario, int | None], float | None]

    def of(self, scenario: Scenario, collusion: int | None = None) -> float | None:
        return self.function(scenario, collusion)


HEADLINE_GAIN = "cape"
GAINS: dict[str, GainDefinition] = {g.name: g for g in (
    GainDefinition(
        name="cape", title="CAPE gain", symbol="G",
        definition="how many times less noise variance the aggregate carries than if each site added its own: "
        "the conventional aggregate variance Σ μ_s² τ_s² over τ_c², with this scenario's weights, budgets and τ_c",
        latex=r"G=\frac{\sum_s\mu_s^2\tau_s^2}{\tau_c^2}", private=True, function=_cape_gain),
    GainDefinition(
        name="prop1", title="Proposition 1 gain", symbol="G(n)",
        definition="the paper's gain for sizes n: equal weights 1/S, equal budgets, and τ_c at the pooled level c/N; "
        "when sizes differ that τ_c is below the DP floor, so this aggregate would break the smallest site's budget",
        latex=r"G(n)=\frac{N^2}{S^2}\sum_s\frac1{N_s^2}", private=False, function=_prop1_gain),
    GainDefinition(
        name="floor_equal", title="equal-weight gain at the DP floor", symbol="G_floor",
        definition="equal weights 1/S and equal budgets with τ_c raised to the DP floor, so that the aggregate is "
        "private: at most S, and smaller the more the sizes differ",
        latex=r"G_{\mathrm{floor}}=\sum_s\Big(\frac{N_{\min}}{N_s}\Big)^2", private=True,
        function=_floor_equal_gain),
    GainDefinition(
        name="pooled_weights", title="pooled-weight gain", symbol="G_pool",
        definition="weights μ_s = N_s/N (the pooled statistic) with this scenario's budgets and τ_c at the DP floor; "
        "exactly S when every site has the same budget",
        latex=r"G_{\mathrm{pool}}=\frac{\sum_s N_s^2\tau_s^2}{\max_s N_s^2\tau_s^2}", private=True,
        function=_pooled_weights_gain),
    GainDefinition(
        name="robust", title="collusion-robust gain", symbol="G_c",
        definition="the CAPE gain of the collusion-robust calibration, which keeps every site's promise even "
        "against the aggregator with up to c colluding sites; S − c for equal sites",
        latex=r"G_c=\frac{\sum_s\mu_s^2\tau_s^2}{\tau_{c,\mathrm{robust}}^2}", private=True,
        function=_robust_gain),
)}
