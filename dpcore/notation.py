"""One notation for everything the dashboard shows, and a glossary of the words a newcomer meets.

dpcore's messages and explanations spell the mathematics in plain ASCII (``tau_c``, ``eps_s``, ``sigma_eff``), which
suits a terminal and the command line; the dashboard shows the symbols of docs/math/setting.md ("Notation"):
τ_c, ε_s, σ_eff. :func:`symbolic` turns the one into the other, so a message reads the same everywhere in the
app whichever layer wrote it. Text inside backticks (code, command lines) is left alone.

:data:`GLOSSARY` defines every term of art the pages use (τ_c, DP floor, conventional scheme, helper, σ_eff, ...)
in one line each; the dashboard's Glossary page lists it and the pages use the same words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["GLOSSARY", "SYMBOL_RULES", "Term", "symbolic"]

# (pattern, replacement), applied in this order outside backticks. Word boundaries keep "epsilon" or "deltas" intact.
SYMBOL_RULES: tuple[tuple[str, str], ...] = (
    (r"\bsqrt\(", "√("),
    (r"\bsum_([a-z])\b", r"Σ_\1"),
    (r"\bsum (?=mu_)", "Σ "),
    (r"\btau_", "τ_"),
    (r"\btau\b", "τ"),
    (r"\bsigma_eff\b", "σ_eff"),
    (r"\bsigma_", "σ_"),
    (r"\bsigma\b", "σ"),
    (r"\bmu_", "μ_"),
    (r"\bmu\b", "μ"),
    (r"\beps_", "ε_"),
    (r"\beps\b", "ε"),
    (r"\bDelta_", "Δ_"),
    (r"\bDelta\b", "Δ"),
    (r"\bdelta_", "δ_"),
    (r"\bdelta\b", "δ"),
    (r"\bPhi\b", "Φ"),
    (r"\^2\b", "²"),
    (r"\^3\b", "³"),
    (r"(?<=\s)>=(?=\s)", "≥"),
    (r"(?<=\s)<=(?=\s)", "≤"),
    (r"(?<=\s)!=(?=\s)", "≠"),
)
_COMPILED = tuple((re.compile(pattern), replacement) for pattern, replacement in SYMBOL_RULES)
_CODE = re.compile(r"(`[^`]*`)")
SYMBOLIC_CACHE_ENTRIES = 2048  # the dashboard's texts are mostly the same on every run and in every session


@lru_cache(maxsize=SYMBOLIC_CACHE_ENTRIES)
def symbolic(text: str) -> str:
    """``text`` with the ASCII spelling of the notation replaced by its symbols (:data:`SYMBOL_RULES`), except
    inside backticks: ``"tau_c >= max_s mu_s tau_s"`` becomes ``"τ_c ≥ max_s μ_s τ_s"``. Cached: the pages call
    it on the same texts at every run (a sixth of a Privacy-utility page run's CPU before)."""
    parts = _CODE.split(text)
    for i in range(0, len(parts), 2):  # even parts are outside code spans
        part = parts[i]
        for pattern, replacement in _COMPILED:
            part = pattern.sub(replacement, part)
        parts[i] = part
    return "".join(parts)


@dataclass(frozen=True, kw_only=True)
class Term:
    """A term of art: its name, its symbol (if any), a one-line definition and where the mathematics is."""

    name: str
    symbol: str
    definition: str
    docs: str


GLOSSARY: tuple[Term, ...] = (
    Term(name="differential privacy", symbol="(ε, δ)",
         definition="a promise about one person: whatever is released is almost equally likely whether or not "
         "that person's record is in the data; ε bounds the likelihood ratio (e^ε), δ the small probability "
         "with which the bound may fail",
         docs="docs/math/setting.md"),
    Term(name="privacy budget", symbol="ε_s, δ_s",
         definition="the (ε, δ) a site asks for; smaller ε means more privacy and more noise",
         docs="docs/math/setting.md"),
    Term(name="sensitivity", symbol="Δ_s",
         definition="how far one person can move site s's statistic (for a mean of values in [0, 1]: 1/N_s)",
         docs="docs/math/sensitivities.md"),
    Term(name="neighbouring data sets", symbol="",
         definition="two data sets that differ in one person's record; the relation says what counts as one "
         "change (replace-one: one sample replaced by another)",
         docs="docs/math/mechanisms.md"),
    Term(name="calibration", symbol="c(ε, δ)",
         definition="the rule that turns a budget into a noise level, σ = Δ c(ε, δ): classic (proven for ε < 1) or "
         "analytic (the exact smallest σ, any ε)",
         docs="docs/math/mechanisms.md"),
    Term(name="site noise level", symbol="τ_s",
         definition="τ_s = Δ_s c(ε_s, δ_s), the noise standard deviation site s's release needs on its own",
         docs="docs/math/setting.md"),
    Term(name="weight", symbol="μ_s",
         definition="site s's share in the released weighted average Σ μ_s a_s; μ_s = N_s/N gives the pooled "
         "statistic",
         docs="docs/math/setting.md"),
    Term(name="helper", symbol="e_s",
         definition="the trusted noise helper (the paper's random noise generator): it hands each site a noise "
         "term e_s, and the e_s cancel in the weighted sum (Σ μ_s e_s = 0); it sees no data",
         docs="docs/math/setting.md"),
    Term(name="aggregator", symbol="f_s",
         definition="the untrusted party that combines the releases: it hands each site a noise term f_s, "
         "subtracts it again and publishes the weighted sum",
         docs="docs/math/setting.md"),
    Term(name="site noise", symbol="g_s",
         definition="the noise a site adds of its own; it is the only noise left in the published aggregate",
         docs="docs/math/cape.md"),
    Term(name="aggregate noise", symbol="τ_c",
         definition="the standard deviation of the noise left in the published aggregate, √(Σ μ_s² τ_g,s²)",
         docs="docs/math/cape.md"),
    Term(name="DP floor", symbol="max_s μ_s τ_s",
         definition="the smallest τ_c that keeps every site's budget against someone who sees only the published "
         "aggregate: that observer sees site s behind noise τ_c/μ_s, which must be at least τ_s",
         docs="docs/math/cape.md"),
    Term(name="conventional scheme", symbol="τ_conv",
         definition="no correlated noise: every site adds its full τ_s on its own, so the aggregate carries "
         "τ_conv = √(Σ μ_s² τ_s²)",
         docs="docs/math/cape.md"),
    Term(name="local", symbol="",
         definition="a baseline that uses one site's data only, with that site's own noise (no collaboration)",
         docs="docs/math/capepca.md"),
    Term(name="pooled data", symbol="",
         definition="all records at one trusted curator, who adds noise once to the pooled statistic; CAPE's "
         "published aggregate carries the noise such a curator would add",
         docs="docs/math/cape.md"),
    Term(name="colluders", symbol="c",
         definition="sites that share what they know (their own noise) with each other or with the aggregator; "
         "the audit considers up to c of them",
         docs="docs/math/audit.md"),
    Term(name="view", symbol="",
         definition="what one adversary sees: outside (the published aggregate), aggregator (every release, "
         "knowing f), aggregator with colluders, colluding sites",
         docs="docs/math/audit.md"),
    Term(name="effective noise", symbol="σ_eff",
         definition="the noise left on one site's statistic after an adversary combines everything it sees in "
         "the best way; the view is exactly as private as one release with noise σ_eff",
         docs="docs/math/audit.md"),
    Term(name="effective ε", symbol="ε_eff",
         definition="the ε a view really gives at the site's δ_s, computed exactly from σ_eff; the promise is "
         "kept when ε_eff ≤ ε_s",
         docs="docs/math/audit.md"),
    Term(name="trade-off curve", symbol="",
         definition="for an attacker who must decide 'present' or 'absent' from a release: the best true-positive "
         "rate it can reach at each false-positive rate; for Gaussian noise Φ(Φ⁻¹(FPR) + Δ/σ)",
         docs="docs/math/mechanisms.md"),
)
