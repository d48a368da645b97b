"""What the Topic models page shows (docs/dashboard.md, "Topic models"; docs/math/lda.md): its opening setting, the
one-click setting where CAPE stops helping, the corpus on which paper 004's configurations 3 and 4 are usable, and
the sentences that read paper 004's regime comparisons (Remarks 5.1-5.3) off observed curves.

The opening setting is the issue-13 corpus (K = 5, D = 100, alpha_0 = 1, 50 words per document, 20,000 documents) over
20 equal sites of 1,000 documents with delta = 1e-6: with S = 20 the conventional scheme carries sqrt(20) = 4.5 times
capeLDA's noise, so capeLDA closes about three quarters of its gap to the non-private result (the story rule of the
dashboard asks for half; tests/test_page_topic_models.py checks it with a margin from the run-to-run spread).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..scenario import Scenario, sites_words
from ..summary import MEET_SHARE, Claim, claim_text, paired_claim, shown_share, small_difference
from .curves import LdaCurve
from .problem import LdaSpec

__all__ = ["BREAKDOWN", "OPENING", "REGIME_DOCS", "REGIME_GRID", "REGIME_SPEC", "REMARKS", "TEXT_GRID", "TopicStory",
           "breakdown_sentence", "corpus_words", "headline_eps", "lda_claim", "no_headline_sentence",
           "regime_sentences", "run_values", "setting_sentence", "story_sentence"]


@dataclass(frozen=True, kw_only=True)
class TopicStory:
    """A setting of the page: the synthetic corpus, the equal sites, the budget and what the user should see."""

    name: str
    spec: LdaSpec
    sites: int
    docs_per_site: int
    eps: float
    delta: float
    grid: tuple[float, ...]
    runs: int
    algorithms: tuple[str, ...]
    headline: str
    explanation: str = ""


OPENING = TopicStory(
    name="opening", spec=LdaSpec(), sites=20, docs_per_site=1000, eps=30.0, delta=1e-6,
    grid=(3.0, 10.0, 30.0, 100.0), runs=5, algorithms=("cape", "conv", "local", "nonpriv", "random"),
    headline="Twenty sites each hold 1,000 documents of a 5-topic corpus; the chart shows how far each private "
    "method's topics are from the true ones (0 = perfect, about 1.6 = random topics) as the privacy budget eps of "
    "every site grows.",
)
BREAKDOWN = TopicStory(
    name="few documents", spec=LdaSpec(), sites=20, docs_per_site=100, eps=30.0, delta=1e-6,
    grid=(3.0, 10.0, 30.0, 100.0), runs=3, algorithms=("cape", "conv", "local", "pooled", "nonpriv", "random"),
    headline="The same corpus with only 100 documents per site.",
    explanation="With 100 documents per site the noise that hides one document even from the pooled corpus of 2,000 "
    "documents (its standard deviation falls like 1/N) is large against the topics' signal in M2. CAPE removes only "
    "the extra noise of the conventional scheme (a factor sqrt(S) in standard deviation), never the noise pooled "
    "data need, so where pooled data fail it cannot help; the sentence under the chart says, from the runs, where "
    "that happens here. A different limit: when one site holds most documents, that site alone is almost as good "
    "as capeLDA (its own sensitivity is nearly the pooled one).",
)
TEXT_GRID = (300.0, 1000.0, 3000.0, 10000.0)
"""The eps of a text corpus's curve until the user sets it: on the bundled Python documentation (2,208 documents over
20 sites, K = 8) every method is near random topics up to eps = 300 and capeLDA closes about a third of the
conventional scheme's gap at 3,000 and over half at 10,000 (:func:`headline_eps` picks the eps the headline reads)."""
REGIME_SPEC = LdaSpec(dim=6, k=2, alpha0=1.0, alpha_shape="dirichlet", doc_length=10)
"""A corpus on which all four configurations are usable: K = 2 topics over D = 6 words with distinct alpha (distinct
whitened eigenvalues), 100,000 documents of 10 words at one curator (:data:`REGIME_DOCS`)."""
REGIME_DOCS = 100_000
REGIME_GRID = (10.0, 100.0, 1000.0, 10000.0)


def _mean(curve: LdaCurve, name: str, eps: float) -> float:
    return float(curve.at(name, eps)["mean"])


TITLES = {"cape": "capeLDA", "conv": "the conventional scheme", "local": "one site alone", "pooled": "pooled",
          "nonpriv": "the non-private result", "random": "random topics"}


def run_values(curve: LdaCurve, name: str, eps: float) -> np.ndarray:
    """Topic error of ``name`` per run at ``eps`` (NaN for runs without topics): the paired values of the claims."""
    rows = curve.records[(curve.records["algorithm"] == name) & (curve.records["eps"] == float(eps))]
    return rows.sort_values("run")["topic_error"].to_numpy(dtype=float)


def lda_claim(curve: LdaCurve, a: str, b: str, eps: float) -> Claim:
    """The paired claim of ``a`` against ``b`` at ``eps`` (smaller error is better)."""
    return paired_claim(a, run_values(curve, a, eps), b, run_values(curve, b, eps), larger_is_better=False)


def _telling(curve: LdaCurve, eps: float) -> bool:
    """At ``eps`` the chart shows what CAPE buys: capeLDA is clearly better than the conventional scheme (paired test)
    by at least :data:`~dpcore.summary.MEET_SHARE` of the way from the non-private result to random topics (without
    random topics in the run: of the conventional scheme's gap to the non-private result)."""
    names = set(curve.algorithms)
    if not {"cape", "conv"} <= names or lda_claim(curve, "cape", "conv", eps).relation != "better":
        return False
    cape, conv = _mean(curve, "cape", eps), _mean(curve, "conv", eps)
    best = _mean(curve, "nonpriv", eps) if "nonpriv" in names else 0.0
    worst = _mean(curve, "random", eps) if "random" in names else conv
    return not small_difference(cape, conv, best, worst)


def headline_eps(curve: LdaCurve, preferred: float) -> float | None:
    """The eps of the grid the headline reads: the one nearest ``preferred`` (the story's eps) when the chart shows
    what CAPE buys there (:func:`_telling`), else the telling eps where capeLDA closes the largest share of the
    conventional scheme's gap; None when no eps of the grid shows it (:func:`no_headline_sentence` says why).
    The Python documentation corpus (2,208 documents) over eps = 3 to 100 was random topics for every method, and the
    headline at eps = 100 said that capeLDA 'closes 2% of the gap' (issue 29)."""
    nearest = min(curve.grid, key=lambda e: abs(math.log(e / preferred)))
    if _telling(curve, nearest):
        return float(nearest)
    telling = [float(e) for e in curve.grid if _telling(curve, e)]
    if not telling:
        return None

    def closed(eps: float) -> float:
        conv, best = _mean(curve, "conv", eps), _mean(curve, "nonpriv", eps) if "nonpriv" in curve.algorithms else 0.0
        return (conv - _mean(curve, "cape", eps)) / (conv - best) if conv > best else 0.0

    return max(telling, key=closed)


def story_sentence(curve: LdaCurve, eps: float) -> str:
    """One sentence on the opening chart at ``eps``: capeLDA against conventional, local and the non-private result,
    the paired test of capeLDA against the conventional scheme, and (when capeLDA is clearly better) the share of the
    conventional scheme's gap to the non-private result that capeLDA closes (of the numbers printed); then the eps of
    the grid where the chart shows no visible difference."""
    names = set(curve.algorithms)
    if not {"cape", "conv"} <= names:
        return ""
    cape, conv = _mean(curve, "cape", eps), _mean(curve, "conv", eps)
    parts = [f"At eps = {eps:g} capeLDA's topic error is {cape:.3g} against {conv:.3g} for the conventional scheme"]
    if "local" in names:
        parts.append(f" and {_mean(curve, 'local', eps):.3g} for one site alone")
    claim = lda_claim(curve, "cape", "conv", eps)
    if claim.relation != "better":
        parts.append(f"; over {claim.runs} runs capeLDA is not clearly better than the conventional scheme")
    elif "nonpriv" in names and not math.isnan(cape) and not math.isnan(conv):
        best = _mean(curve, "nonpriv", eps)
        if conv > best:
            target = (f"the non-private {best:.3g}" if curve.reference == "truth" else
                      "the non-private topics (the reference here)")
            parts.append(f"; it closes {100 * shown_share(cape, conv, best):.0f}% of the conventional scheme's gap to "
                         f"{target}")
    quiet = [f"{e:g}" for e in curve.grid if e != eps and not _telling(curve, e)]
    if quiet and claim.relation == "better":
        parts.append(f". At eps = {', '.join(quiet)} the chart shows no visible difference between capeLDA and the "
                     f"conventional scheme (under {100 * MEET_SHARE:.0f}% of the way from the non-private result to "
                     "random topics, or not clear over the runs)")
    return "".join(parts) + "."


def no_headline_sentence(curve: LdaCurve) -> str:
    """Why no eps of the grid shows what CAPE buys (when :func:`headline_eps` is None), from the runs: where every
    private curve is at random topics, and that elsewhere capeLDA and the conventional scheme differ by too little."""
    if not {"cape", "conv"} <= set(curve.algorithms):
        return ""
    at_random, _ = breakdown_sentence(curve)
    grid = ", ".join(f"{e:g}" for e in curve.grid)
    text = (f"At no eps of this chart ({grid}) does capeLDA differ visibly from the conventional scheme: the "
            f"difference is not clear over the runs or under {100 * MEET_SHARE:.0f}% of the way from the non-private "
            "result to random topics. ")
    if at_random:
        text += at_random + " "
    return text + ("CAPE removes only the conventional scheme's extra noise (a factor sqrt(S) in standard "
                   "deviation), never the noise the pooled documents need, and with this few documents per site that "
                   "noise swamps the topics at these eps: a larger eps or more documents per site would show the "
                   "difference.")


def breakdown_sentence(curve: LdaCurve) -> tuple[str, tuple[Claim, ...]]:
    """Where the private curves are at random topics, from the runs: per eps of the grid, the paired claim of each
    private algorithm against random topics, and the sentence that reads them (no curve is said to be at random
    topics unless its claim is not "better")."""
    private = [n for n in curve.algorithms if n in ("cape", "conv", "local", "pooled")]
    if "random" not in curve.algorithms or not private:
        return "", ()
    claims, at_random = [], []
    for eps in curve.grid:
        here = [lda_claim(curve, name, "random", eps) for name in private]
        claims += here
        if all(c.relation != "better" for c in here):
            at_random.append(f"{eps:g}")
    if at_random:
        text = (f"At eps = {', '.join(at_random)} no private curve is clearly better than random topics over "
                f"{claims[0].runs} runs")
    else:
        text = "At every eps of the chart some private curve is clearly better than random topics"
    last = [c for c in claims[-len(private):] if c.relation == "better"]
    if last and at_random:
        text += f"; at eps = {curve.grid[-1]:g}: " + "; ".join(claim_text(c, TITLES) for c in last)
    return text + ".", tuple(claims)


def _compare(curve: LdaCurve, a: str, b: str) -> tuple[int, int, int]:
    """(eps values where both have topics, of which ``a`` is clearly lower, clearly higher) by the paired test."""
    both = wins = losses = 0
    for eps in curve.grid:
        ra, rb = curve.at(a, eps), curve.at(b, eps)
        if ra["runs"] and rb["runs"]:
            both += 1
            relation = lda_claim(curve, a, b, eps).relation
            wins += relation == "better"
            losses += relation == "worse"
    return both, wins, losses


REMARKS: dict[str, tuple[str, str, str, str]] = {
    "5.1": ("2", "1", "Remark 5.1 expects configuration 2 to beat configuration 1 (configuration 1 whitens with a "
            "noisy M2, a sqrt(D) factor)",
            "our configuration 2 takes its whitening basis and its un-whitening from a noisy M2 release (e8) too, so "
            "it carries the same sqrt(D) noise, and its tensor noise is calibrated to the local bound Delta_T, which "
            "adds the whitening's own sensitivity to Delta3"),
    "5.2": ("3", "2", "Remark 5.2 expects configuration 3 to beat configuration 2 when its eigengap condition holds",
            "configuration 3's noise is calibrated to Theorem 4.3's bound 2 sqrt(K) Delta_T / gamma_s per component, "
            "at least 8 sqrt(K) times how far the eigenvectors actually move, so it adds more noise than it protects"),
    "5.3": ("3", "4", "Remark 5.3 expects configuration 3 to beat configuration 4 when N > sqrt(D)",
            "configuration 4 adds noise to D-dimensional topics at a sensitivity that contains configuration 3's, "
            "against K-dimensional eigenvectors for configuration 3"),
}
"""Per remark: the configuration the paper expects to win, the other one, the paper's claim, and why the observed
curves may differ (shown only when they do)."""


def regime_sentences(curve: LdaCurve) -> dict[str, str]:
    """Paper 004's Remarks 5.1-5.3 read off observed curves of configurations 1-4: what the paper says, what the
    curves show (counted over the eps grid where both have topics), and why they differ where they do."""
    out = {}
    for key, (winner, other, paper, why) in REMARKS.items():
        if not {winner, other} <= set(curve.algorithms):
            continue
        both, wins, losses = _compare(curve, winner, other)
        if not both:
            reason = curve.reasons.get(winner) or curve.reasons.get(other) or "neither gave topics"
            out[key] = f"{paper}; on this corpus the two cannot be compared: {reason}."
            continue
        text = (f"{paper}. Observed (paired test over the runs): configuration {winner} is clearly lower at {wins}, "
                f"clearly higher at {losses} of {both} eps values")
        if wins > losses:
            out[key] = text + " (as the paper says)."
        elif losses > wins:
            out[key] = text + f" (unlike the paper): {why}."
        else:
            out[key] = text + " (no clear answer on these runs)."
    return out


def corpus_words(spec: LdaSpec | None, corpus: str | None = None) -> str:
    """What a site's documents are, in words: 'documents of 50 words from K = 5 topics over D = 100 words', or the
    text corpus's name."""
    if spec is None:
        return f"documents of {corpus}" if corpus else "documents"
    return f"documents of {spec.doc_length} words from K = {spec.k} topics over D = {spec.dim} words"


def setting_sentence(words: str, scenario: Scenario, grid: tuple[float, ...], *, truth: bool = True) -> str:
    """What the Topic models page will run, computed from its inputs: the sites and their documents (``scenario``'s
    sizes: for a text corpus, its split), delta, what the error is measured against (the true topics of a synthetic
    corpus, ``truth``; the non-private topics of a text) and the eps of every site along the curve."""
    eps = ", ".join(f"{e:g}" for e in grid)
    delta = sorted({float(d) for d in scenario.delta})
    delta_text = f"{delta[0]:g}" if len(delta) == 1 else f"from {delta[0]:g} to {delta[-1]:g}"
    reference = "the true ones" if truth else "the non-private ones"
    return (f"{sites_words(scenario, words, budgets=False)}, with delta = {delta_text}; the chart shows how far each "
            f"method's topics are from {reference} (0 = the same, 2 = disjoint; random topics carry no information) "
            f"as the eps of every site takes the values {eps}.")
