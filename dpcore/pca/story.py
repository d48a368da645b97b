"""What the capePCA page shows (docs/dashboard.md, "capePCA"): its opening setting, the one-click cases where CAPE
stops helping, and the sentences that read them off the results.

The opening setting is MNIST (the 5,000 bundled images, D = 784) over 10 equal sites of 500 images, eps = 4 and
delta = 1e-5 per site with the analytic calibration, K = 5. The conventional scheme's aggregate carries sqrt(10) = 3.2
times CAPE's noise standard deviation, which at this budget swamps most of the top-5 directions (conv captures under a
third of the non-private energy), while CAPE's noise stays below the K-th eigenvalue's detection edge (the page's
noise warning stays silent) and capePCA captures nearly nine tenths: CAPE closes well over half of the conventional
scheme's gap (the dashboard's rule; tests/test_page_capepca.py checks it with a margin from the run-to-run spread).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..cape import NoiseDesign, design_collusion_robust
from ..data import Dataset
from ..scenario import Scenario, equal_sites_scenario, sites_words
from ..scenario.breakdown import BREAKDOWN_KINDS, breakdown_variations
from ..summary import (
    MEET_SHARE,
    Claim,
    GapClosure,
    claim_text,
    gap_closure,
    paired_claim,
    shown_share,
    small_difference,
)
from .compare import PcaComparison, compare_pca
from .metrics import noise_spectral_norm
from .setup import PcaSetup, prepare_pca

__all__ = ["BREAKDOWN_KINDS", "OPENING", "BreakdownCase", "CaseResult", "PcaStory", "breakdown_cases",
           "opening_closure", "run_breakdown", "setting_sentence", "story_sentence"]


@dataclass(frozen=True, kw_only=True)
class PcaStory:
    """A setting of the capePCA page: bundled data set, equal sites, budget, K, runs, algorithms, and the one sentence
    that says what the user is looking at."""

    dataset: str
    sites: int
    site_size: int
    eps: float
    delta: float
    calibration: str
    k: int
    runs: int
    algorithms: tuple[str, ...]
    shrink: int
    preprocessing: str
    headline: str
    """``shrink``: the factor by which "where CAPE stops helping" divides the samples per site and eps."""

    def scenario(self, seed: int = 0) -> Scenario:
        """The story's equal sites (replace-one neighbours)."""
        return equal_sites_scenario(self.sites, self.site_size, self.eps, self.delta, calibration=self.calibration,
                                    neighbouring="replace-one", seed=seed)


OPENING = PcaStory(
    dataset="mnist", sites=10, site_size=500, eps=4.0, delta=1e-5, calibration="analytic", k=5, runs=5,
    algorithms=("cape", "conv", "local", "nonpriv"), shrink=10, preprocessing="max-norm",
    headline="Ten sites each hold 500 MNIST images (D = 784 pixels) and promise eps = 4, delta = 1e-5; the "
    "bars show how much of the data's energy each method's top-5 directions capture (the non-private pool is the "
    "best possible, 0 means no information): capePCA comes close to it, the conventional scheme (every site adds "
    "its own noise) falls far short.",
)


@dataclass(frozen=True, kw_only=True)
class BreakdownCase:
    """One variation of the opening setting: its sites and budgets, and for collusion the number of colluders the
    collusion-robust design guards against (capePCA then uses that design)."""

    kind: str
    title: str
    scenario: Scenario
    collusion: int | None = None

    def design(self) -> NoiseDesign | None:
        """The collusion-robust design for ``collusion`` colluders, or None for the scenario's own design."""
        if self.collusion is None:
            return None
        tau = self.scenario.taus("pca")
        return design_collusion_robust(tau, self.scenario.weights(), self.collusion, names=self.scenario.names)


def breakdown_cases(story: PcaStory = OPENING, seed: int = 0) -> tuple[BreakdownCase, ...]:
    """The opening setting changed in one way each: the samples per site and eps divided by the story's ``shrink``, one
    site holding most of the samples (the others a fifth of the opening size each, the total kept), and the
    collusion-robust design against S - 1 colluding sites (every site but one)."""
    variations = breakdown_variations(story.scenario(seed), site_size=story.site_size, eps=story.eps,
                                      shrink=story.shrink, minority_divisor=5)
    return tuple(BreakdownCase(kind=kind, title=BREAKDOWN_KINDS[kind], scenario=scenario, collusion=colluders)
                 for kind, scenario, colluders in variations)


@dataclass(frozen=True, kw_only=True)
class CaseResult:
    """A case's comparison: mean and standard error of the captured energy per algorithm, and why the curves meet."""

    case: BreakdownCase
    setup: PcaSetup
    comparison: PcaComparison
    mean: dict[str, float]
    se: dict[str, float]
    sentence: str
    claims: tuple[Claim, ...] = ()


def _energies(comparison: PcaComparison) -> dict[str, np.ndarray]:
    return {name: np.array([r.captured_energy for r in runs]) for name, runs in comparison.results.items()}


def _share(value: float, best: float) -> str:
    return f"{100 * value / best:.0f}%" if best > 0 else "n/a"


TITLES = {"cape": "capePCA", "conv": "conv", "local": "local", "nonpriv": "the non-private pool",
          "none": "no information"}


def _claims(case: BreakdownCase, values: dict[str, np.ndarray]) -> tuple[Claim, ...]:
    """The comparisons a case's sentence makes, each by the paired test (:func:`dpcore.summary.paired_claim`):
    capePCA against conv; the private curves against no information (captured energy 0; few samples, small eps);
    local against capePCA (one dominant site)."""
    def claim(a: str, b: str) -> Claim:
        other = np.zeros_like(values[a]) if b == "none" else values[b]
        return paired_claim(a, values[a], b, other, larger_is_better=True)

    out = [claim("cape", "conv")] if {"cape", "conv"} <= set(values) else []
    if case.kind in ("few samples", "small eps"):
        out += [claim(name, "none") for name in ("cape", "conv", "local") if name in values]
    if case.kind == "dominant site" and {"local", "cape"} <= set(values):
        out.append(claim("local", "cape"))
    return tuple(out)


def _why(case: BreakdownCase, setup: PcaSetup, mean: dict[str, float], claims: tuple[Claim, ...]) -> str:
    """Why the curves meet in this case, or that they do not, from its scenario, design and results; every comparison
    is a claim of the paired test (:func:`_claims`)."""
    problem, privacy = setup.problem, setup.privacy
    best = mean.get("nonpriv", problem.optimal_energy)
    shares = ", ".join(f"{TITLES[n]} {_share(mean[n], best)}" for n in ("cape", "conv", "local") if n in mean)
    captured = f"of the non-private energy, {shares} are captured"
    versus = next((c for c in claims if c.a == "cape" and c.b == "conv"), None)
    verdict = "" if versus is None else claim_text(versus, TITLES) + "."
    scen = privacy.scenario
    if case.kind in ("few samples", "small eps"):
        edge = noise_spectral_norm(problem.dim, privacy.design.output_std)
        lam = float(problem.eigenvalues[problem.k - 1])
        what = (f"with N_s = {int(scen.sizes[0]):,} samples per site (N = {scen.total_n:,})"
                if case.kind == "few samples" else f"with eps = {scen.eps[0]:g} per site")
        head = (f"{what[0].upper()}{what[1:]} the noise that even pooled data need has spectral norm about "
                f"2 sqrt(D) tau_c = {edge:.3g}, {edge / lam:.1f} times the K-th eigenvalue of A ({lam:.3g}); "
                f"{captured}. CAPE removes only the conventional scheme's extra noise, never the noise pooled data "
                "need. ")
        if versus is not None and versus.relation != "better":
            return head + f"Here the curves meet: {verdict}"
        if versus is not None and small_difference(versus.mean_a, versus.mean_b, best, 0.0):
            return head + (f"Here the curves nearly meet: {verdict[:-1]}, but by only "
                           f"{100 * abs(versus.mean_a - versus.mean_b) / best:.1f}% of the non-private energy (under "
                           f"{100 * MEET_SHARE:.0f}%): too little to see, and both capture next to nothing.")
        return head + f"Here CAPE still helps: {verdict}"
    if case.kind == "dominant site":
        big = int(np.argmax(scen.sizes))
        ratio = float(privacy.tau[big]) / float(privacy.design.output_std)
        share = 100 * scen.sizes[big] / scen.total_n
        head = (f"The largest site ({scen.names[big]}) holds {share:.0f}% of the samples: alone it "
                f"needs noise tau_s = {privacy.tau[big]:.3g}, only {ratio:.2f} times CAPE's tau_c = "
                f"{privacy.design.output_std:.3g}; {captured}. ")
        local = next((c for c in claims if c.a == "local"), None)
        if local is not None and local.relation != "worse":
            return head + ("When one site holds nearly all the data, pooling the others adds little, with or without "
                           f"CAPE: {claim_text(local, TITLES)}.")
        if local is not None and small_difference(local.mean_a, local.mean_b, best, 0.0):
            return head + ("When one site holds nearly all the data, pooling the others adds little, with or without "
                           f"CAPE: {claim_text(local, TITLES)}, but by only "
                           f"{100 * abs(local.mean_a - local.mean_b) / best:.1f}% of the non-private energy (under "
                           f"{100 * MEET_SHARE:.0f}%).")
        return head + (f"Pooling the others still helps: {claim_text(local, TITLES)}." if local else verdict)
    design = privacy.design
    plain = float(privacy.tau.max()) / scen.n_sites  # equal sites: the plain design's tau_c = tau_s / S
    conv_std = privacy.conventional_std
    gain, plain_gain = conv_std**2 / design.output_std**2, conv_std**2 / plain**2
    head = (f"Guarding against {case.collusion} colluding sites of {scen.n_sites} (the collusion-robust design) raises "
            f"CAPE's noise from tau_c = {plain:.3g} to {design.output_std:.3g}, against the conventional scheme's "
            f"{conv_std:.3g}: the variance gain falls from {plain_gain:.0f} to {gain:.1f} (S - c); {captured}. "
            "Colluders who pool their own noise can subtract it, so the others must add noise as if those sites were "
            "not there. ")
    if versus is None or versus.relation == "unclear":
        return head + f"Against S - 1 colluders CAPE is the conventional scheme: {verdict}"
    return head + (f"Over these runs the results still differ ({verdict[:-1]}), although both aggregates carry the "
                   "same noise variance: more runs would tell whether the difference lasts.")


def run_breakdown(dataset: Dataset, story: PcaStory = OPENING, *, seed: int = 0, runs: int = 3,
                  progress: Callable[[float, str], None] | None = None) -> tuple[CaseResult, ...]:
    """Every case of :func:`breakdown_cases` on ``dataset`` with the story's K, preprocessing and algorithms,
    ``runs`` runs each (seeded by ``seed``), with the sentence that says why the curves meet."""
    cases = breakdown_cases(story, seed)
    out = []
    for i, case in enumerate(cases):
        setup = prepare_pca(dataset, case.scenario, story.k, preprocessing=story.preprocessing, seed=seed,
                            allow_replacement=False, design=case.design())

        def tick(done: int, total: int, label: str, i: int = i, title: str = case.title) -> None:
            if progress is not None:
                progress((i + done / total) / len(cases), f"{title}: {label}")

        comparison = compare_pca(setup.problem, setup.privacy, story.algorithms, runs, seed, progress=tick)
        values = _energies(comparison)
        mean = {name: float(v.mean()) for name, v in values.items()}
        se = {name: float(v.std(ddof=1)) / math.sqrt(v.size) if v.size > 1 else 0.0 for name, v in values.items()}
        claims = _claims(case, values)
        out.append(CaseResult(case=case, setup=setup, comparison=comparison, mean=mean, se=se,
                              sentence=_why(case, setup, mean, claims), claims=claims))
    return tuple(out)


def opening_closure(comparison: PcaComparison) -> GapClosure | None:
    """The gap closure of capePCA against conv on the captured energy (non-private: nonpriv; no information: 0), from
    paired runs; None when one of cape, conv, nonpriv was not run or there is a single run."""
    values = _energies(comparison)
    if not {"cape", "conv", "nonpriv"} <= set(values) or values["cape"].size < 2:
        return None
    return gap_closure(values["cape"], values["conv"], values["nonpriv"], 0.0, larger_is_better=True)


def story_sentence(comparison: PcaComparison) -> str:
    """One sentence on a comparison: capePCA's captured energy against conv's and the non-private pool's, and the
    share of the conventional scheme's gap to the non-private result that capePCA closes."""
    values = _energies(comparison)
    if not {"cape", "conv"} <= set(values):
        return ""
    cape, conv = float(values["cape"].mean()), float(values["conv"].mean())
    text = f"capePCA's top directions capture {cape:.3g} of the energy against {conv:.3g} for the conventional scheme"
    claim = paired_claim("cape", values["cape"], "conv", values["conv"], larger_is_better=True)
    if "nonpriv" in values:
        best = float(values["nonpriv"].mean())
        text += f" and {best:.3g} for the non-private pool"
        if claim.relation != "better":
            return text + f"; over {claim.runs} runs capePCA is not clearly better than the conventional scheme."
        if best > conv:  # the share of the three numbers printed (dpcore.summary.shown_share)
            text += f"; capePCA closes {100 * shown_share(cape, conv, best):.0f}% of the conventional scheme's gap"
    return text + "."


def setting_sentence(data_words: str, dim: int, scenario: Scenario, k: int) -> str:
    """What the capePCA page will run, in one sentence computed from its inputs: '10 sites each hold 500 samples of
    MNIST (D = 784) and promise eps = 4, delta = 1e-05; the bars show how much of the data's energy each method's
    top-5 directions capture (the non-private pool is the best possible, 0 means no information).'"""
    return (f"{sites_words(scenario, f'samples of {data_words} (D = {dim})')}; the bars show how much of the data's "
            f"energy each method's top-{k} directions capture (the non-private pool is the best possible, 0 means no "
            "information).")
