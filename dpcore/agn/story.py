"""What the capeAGN page shows (docs/dashboard.md, "capeAGN"): its opening setting, the one-click cases where CAPE
stops helping, and the sentences that read them off the results.

The opening setting is a single topic model (K = 5 topics over D = 10 words, documents of 3 words) at 100 equal sites
of 2,000 documents, eps = 0.2 and delta = 1e-5 per site (split equally between the two stages), analytic
calibration, 8 runs. With S = 100 the conventional scheme's aggregate carries sqrt(100) = 10 times CAPE's noise
standard deviation: its error goes about half of the way or more to random vectors, while capeAGN closes about four
fifths of the conventional scheme's gap to the non-private result (the dashboard's rule asks for half;
tests/test_page_capeagn.py checks both with a margin from the run-to-run spread). Many documents (200,000 in all)
keep CAPE's own noise small even for a ground truth with a small topic weight; with 50 sites of 1,000 the margin
fell to 2.4 standard errors on some seeds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..cape import stage_taus
from ..privacy import sensitivity_unchecked
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
from .compare import OtdComparison, compare_algorithms
from .problem import OtdSettings, SyntheticSpec

__all__ = ["BREAKDOWN_KINDS", "OPENING", "AgnStory", "BreakdownCase", "CaseResult", "breakdown_cases",
           "opening_closure", "run_breakdown", "setting_sentence", "story_sentence"]


@dataclass(frozen=True, kw_only=True)
class AgnStory:
    """A setting of the capeAGN page: the synthetic model, equal sites, budget, runs, algorithms, and the sentence that
    says what the user is looking at."""

    spec: SyntheticSpec
    sites: int
    site_size: int
    eps: float
    delta: float
    calibration: str
    runs: int
    algorithms: tuple[str, ...]
    shrink: int
    headline: str
    """``shrink``: the factor by which "where CAPE stops helping" divides the samples per site and eps."""

    def scenario(self, seed: int = 0) -> Scenario:
        """The story's equal sites (replace-one neighbours)."""
        return equal_sites_scenario(self.sites, self.site_size, self.eps, self.delta, calibration=self.calibration,
                                    neighbouring="replace-one", seed=seed, name_prefix="site ")


OPENING = AgnStory(
    spec=SyntheticSpec(kind="stm", dim=10, k=5), sites=100, site_size=2000, eps=0.2, delta=1e-5,
    calibration="analytic", runs=8, algorithms=("cape", "conv", "local", "nonpriv", "random"), shrink=25,
    headline="A hundred sites each hold 2,000 short documents (3 words from one of K = 5 topics over D = 10 words) "
    "and promise eps = 0.2, delta = 1e-5; the bars show how far each method's recovered topics are from the true ones "
    "(q_comp: 0 = perfect, random vectors = no information): capeAGN stays close to the non-private result, the "
    "conventional scheme (every site adds its own noise) goes about half of the way to random vectors.",
)


@dataclass(frozen=True, kw_only=True)
class BreakdownCase:
    """One variation of the opening setting: its sites and budgets, and for collusion the number of colluders
    capeAGN's collusion-robust design guards against."""

    kind: str
    title: str
    scenario: Scenario
    collusion: int | None = None


def breakdown_cases(story: AgnStory = OPENING, seed: int = 0) -> tuple[BreakdownCase, ...]:
    """The opening setting changed in one way each: the samples per site and eps divided by the story's ``shrink``, one
    site holding most of the samples (the others a tenth of the opening size each, the total kept), and the
    collusion-robust design against S - 1 colluding sites (every site but one)."""
    variations = breakdown_variations(story.scenario(seed), site_size=story.site_size, eps=story.eps,
                                      shrink=story.shrink, minority_divisor=10)
    return tuple(BreakdownCase(kind=kind, title=BREAKDOWN_KINDS[kind], scenario=scenario, collusion=colluders)
                 for kind, scenario, colluders in variations)


@dataclass(frozen=True, kw_only=True)
class CaseResult:
    """A case's comparison: mean and standard error of q_comp per algorithm, and why the curves meet."""

    case: BreakdownCase
    comparison: OtdComparison
    mean: dict[str, float]
    se: dict[str, float]
    sentence: str
    claims: tuple[Claim, ...] = ()


def _q_comp(comparison: OtdComparison) -> dict[str, np.ndarray]:
    """q_comp per algorithm over its runs (runs whose whitening failed count as random vectors' error of that run,
    the no-information result)."""
    by_run = {(r.algorithm, r.run): r.q_comp for r in comparison.records}
    out = {}
    for name in comparison.algorithms:
        values = []
        for run in range(comparison.runs):
            value = by_run.get((name, run))
            values.append(by_run.get(("random", run), np.nan) if value is None else value)
        out[name] = np.array(values, dtype=float)
    return out


def _reference_means(comparison: OtdComparison) -> tuple[float, float]:
    """(non-private, random vectors) mean q_comp: the ends of the range a difference is measured against (NaN for a
    reference that was not run)."""
    values = _q_comp(comparison)
    return tuple(float(np.nanmean(values[n])) if n in values else np.nan for n in ("nonpriv", "random"))


def _m2_eigenvalue(comparison: OtdComparison) -> float:
    """The K-th eigenvalue of M2 = sum_k w_k a_k a_k^T of the reference: the signal whitening must see."""
    a, w = comparison.reference_components, comparison.reference_weights
    m2 = (a.T * w[None, :]) @ a
    k = a.shape[0]
    return float(np.sort(np.linalg.eigvalsh(m2))[::-1][k - 1])


def _pooled_m2_std(scenario: Scenario, comparison: OtdComparison) -> float:
    """The M2 noise std a trusted curator of all N samples would add at the tightest site's first-stage budget:
    Delta(N) max_s c(a eps_s, a delta_s) - the noise CAPE's aggregate carries (docs/math/capeagn.md)."""
    split = comparison.settings.eps_split
    statistic = f"{comparison.problem.kind}-m2"
    return sensitivity_unchecked(statistic, scenario.total_n, scenario.neighbouring) * float(
        scenario.multipliers(split, split).max())


TITLES = {"cape": "capeAGN", "conv": "conv", "local": "local", "nonpriv": "the non-private result",
          "random": "random vectors"}


def _claims(case: BreakdownCase, values: dict[str, np.ndarray]) -> tuple[Claim, ...]:
    """The comparisons a case's sentence makes, each by the paired test (:func:`dpcore.summary.paired_claim`): capeAGN
    against conv, the private curves against random vectors (few samples, small eps), local against capeAGN (one
    dominant site)."""
    def claim(a: str, b: str) -> Claim:
        return paired_claim(a, values[a], b, values[b], larger_is_better=False)

    out = [claim("cape", "conv")] if {"cape", "conv"} <= set(values) else []
    if case.kind in ("few samples", "small eps") and "random" in values:
        out += [claim(name, "random") for name in ("cape", "conv", "local") if name in values]
    if case.kind == "dominant site" and {"local", "cape"} <= set(values):
        out.append(claim("local", "cape"))
    return tuple(out)


def _verdict(claims: tuple[Claim, ...]) -> str:
    """capeAGN against conv in words, from its claim."""
    first = next((c for c in claims if c.a == "cape" and c.b == "conv"), None)
    return "" if first is None else claim_text(first, TITLES) + "."


def _why(case: BreakdownCase, comparison: OtdComparison, claims: tuple[Claim, ...]) -> str:
    """Why the curves meet in this case, or that they do not, from its scenario and results: every comparison in the
    sentence is a claim of the paired test (:func:`_claims`)."""
    scen = comparison.scenario
    verdict = _verdict(claims)
    if case.kind in ("few samples", "small eps"):
        edge = 2.0 * np.sqrt(comparison.problem.dim) * _pooled_m2_std(scen, comparison)
        lam = _m2_eigenvalue(comparison)
        what = (f"with N_s = {int(scen.sizes[0]):,} documents per site (N = {scen.total_n:,})"
                if case.kind == "few samples" else f"with eps = {scen.eps[0]:g} per site")
        head = (f"{what[0].upper()}{what[1:]} the M2 noise that even pooled data need has spectral norm about "
                f"2 sqrt(D) tau = {edge:.3g}, {edge / lam:.1f} times the K-th eigenvalue of M2 ({lam:.3g}). CAPE "
                "removes only the conventional scheme's extra noise, never the noise pooled data need. ")
        to_random = [c for c in claims if c.b == "random"]
        if to_random and all(c.relation != "better" for c in to_random):
            return head + ("Here every private curve is at random vectors: " +
                           "; ".join(claim_text(c, TITLES) for c in to_random) + ".")
        versus = next((c for c in claims if c.a == "cape" and c.b == "conv"), None)
        above = [claim_text(c, TITLES) for c in to_random if c.relation == "better"]
        tail = f" Still above random vectors: {'; '.join(above)}." if above else ""
        if versus is not None and versus.relation != "better":
            return head + f"Here the curves meet: {verdict}{tail}"
        best, worst = _reference_means(comparison)
        if versus is not None and small_difference(versus.mean_a, versus.mean_b, best, worst):
            return head + (f"Here the curves nearly meet: {verdict[:-1]}, but by only "
                           f"{100 * abs(versus.mean_a - versus.mean_b) / abs(worst - best):.1f}% of the way from the "
                           f"non-private result to random vectors (under {100 * MEET_SHARE:.0f}%): too little to "
                           f"see.{tail}")
        return head + f"Here CAPE still helps: {verdict}{tail}"
    if case.kind == "dominant site":
        tau2, _ = stage_taus(scen, comparison.problem.kind, comparison.settings.eps_split, dim=comparison.problem.dim)
        big = int(np.argmax(scen.sizes))
        pooled = _pooled_m2_std(scen, comparison)
        share = 100 * scen.sizes[big] / scen.total_n
        head = (f"The largest site ({scen.names[big]}) holds {share:.0f}% of the documents: alone its "
                f"M2 needs noise tau_s = {tau2[big]:.3g}, only {tau2[big] / pooled:.2f} times the pooled data's "
                f"{pooled:.3g}. ")
        local = next((c for c in claims if c.a == "local"), None)
        if local is not None and local.relation != "worse":
            return head + ("When one site holds nearly all the data, pooling the others adds little, with or without "
                           f"CAPE: {claim_text(local, TITLES)}.")
        best, worst = _reference_means(comparison)
        if local is not None and small_difference(local.mean_a, local.mean_b, best, worst):
            return head + ("When one site holds nearly all the data, pooling the others adds little, with or without "
                           f"CAPE: {claim_text(local, TITLES)}, but by only "
                           f"{100 * abs(local.mean_a - local.mean_b) / abs(worst - best):.1f}% of the way from the "
                           f"non-private result to random vectors (under {100 * MEET_SHARE:.0f}%).")
        return head + (f"Pooling the others still helps: {claim_text(local, TITLES)}." if local else verdict)
    n = scen.n_sites
    head = (f"Guarding against {case.collusion} colluding sites of {n} (the collusion-robust design) leaves a variance "
            f"gain of S - c = {n - case.collusion} instead of {n}: CAPE must add noise as if the colluders' own noise "
            "were known to the aggregator, so capeAGN's aggregate carries as much noise as the conventional scheme's. ")
    first = next((c for c in claims if c.a == "cape" and c.b == "conv"), None)
    if first is None or first.relation == "unclear":
        return head + f"The results agree: {verdict}"
    return head + (f"Over these runs the results still differ ({verdict[:-1]}), although both aggregates carry the "
                   "same noise variance: more runs would tell whether the difference lasts.")


def run_breakdown(story: AgnStory = OPENING, *, seed: int = 0, runs: int = 4, settings: OtdSettings | None = None,
                  progress: Callable[[float, str], None] | None = None) -> tuple[CaseResult, ...]:
    """Every case of :func:`breakdown_cases` with the story's model and algorithms, ``runs`` runs each (seeded by
    ``seed``), with the sentence that says why the curves meet."""
    settings = OtdSettings() if settings is None else settings
    cases = breakdown_cases(story, seed)
    out = []
    for i, case in enumerate(cases):
        case_settings = replace(settings, collusion=case.collusion)

        def tick(done: int, total: int, label: str, i: int = i, title: str = case.title) -> None:
            if progress is not None:
                progress((i + done / total) / len(cases), f"{title}: {label}")

        comparison = compare_algorithms(case.scenario, story.algorithms, spec=story.spec, runs=runs, seed=seed,
                                        settings=case_settings, progress=tick)
        values = _q_comp(comparison)
        mean = {name: float(np.nanmean(v)) for name, v in values.items()}
        se = {name: float(np.nanstd(v, ddof=1)) / np.sqrt(v.size) if v.size > 1 else 0.0 for name, v in values.items()}
        claims = _claims(case, values)
        out.append(CaseResult(case=case, comparison=comparison, mean=mean, se=se,
                              sentence=_why(case, comparison, claims), claims=claims))
    return tuple(out)


def opening_closure(comparison: OtdComparison) -> GapClosure | None:
    """The gap closure of capeAGN against conv on q_comp (non-private: nonpriv; no information: random vectors), from
    paired runs; None when one of them was not run or there is a single run."""
    values = _q_comp(comparison)
    if not {"cape", "conv", "nonpriv", "random"} <= set(values) or comparison.runs < 2:
        return None
    if not all(np.all(np.isfinite(values[n])) for n in ("cape", "conv", "nonpriv", "random")):
        return None
    return gap_closure(values["cape"], values["conv"], values["nonpriv"], values["random"], larger_is_better=False)


def story_sentence(comparison: OtdComparison) -> str:
    """One sentence on a comparison: capeAGN's q_comp against conv's, the non-private result's and random vectors',
    and the share of the conventional scheme's gap to the non-private result that capeAGN closes."""
    values = _q_comp(comparison)
    if not {"cape", "conv"} <= set(values):
        return ""
    mean = {name: float(np.nanmean(v)) for name, v in values.items()}
    text = f"capeAGN's components are {mean['cape']:.3g} from the reference (q_comp) against {mean['conv']:.3g} for " \
           "the conventional scheme"
    if "nonpriv" in mean:
        text += f", {mean['nonpriv']:.3g} for the non-private result"
    if "random" in mean:
        text += f" and {mean['random']:.3g} for random vectors"
    claim = paired_claim("cape", values["cape"], "conv", values["conv"], larger_is_better=False)
    if claim.relation != "better":
        return text + f"; over {claim.runs} runs capeAGN is not clearly better than the conventional scheme."
    if "nonpriv" in mean and mean["conv"] > mean["nonpriv"]:  # the share of the numbers printed
        closed = shown_share(mean["cape"], mean["conv"], mean["nonpriv"])
        text += (f"; capeAGN closes {100 * closed:.0f}% of the "
                 "conventional scheme's gap")
    return text + "."


def data_words(spec: SyntheticSpec | None, upload: str | None = None) -> str:
    """What a site's samples are, in words: 'short documents (3 words from one of K = 5 topics over D = 10 words)',
    'samples of a mixture of K = 5 Gaussians in D = 10 dimensions', or the uploaded file's name."""
    if spec is None:
        return f"rows of {upload}" if upload else "uploaded samples"
    if spec.kind == "stm":
        return (f"short documents ({spec.doc_length} words from one of K = {spec.k} topics over D = {spec.dim} "
                "words)")
    return f"samples of a mixture of K = {spec.k} Gaussians in D = {spec.dim} dimensions"


def setting_sentence(words: str, scenario: Scenario) -> str:
    """What the capeAGN page will run, computed from its inputs (the sites and their budgets, the data)."""
    return (f"{sites_words(scenario, words)}; the bars show how far each method's recovered components are from the "
            "reference (q_comp: 0 = perfect, random vectors = no information).")
