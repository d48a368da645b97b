"""The noise design the planner answers for (docs/planner.md, "Design and guarantee"), and the guarantee of every
view at an answer.

* ``papers``: each site calibrates its noise to its own (eps_s, delta_s) with the scenario's calibration, as the
  papers do; every release keeps its promise on its own, but the aggregator, who sees every release, may learn more
  (its exact composed eps can exceed eps_s);
* ``aggregator``: *certified against the aggregator*: the same design with every site's noise multiplied by the
  smallest factor k >= 1 at which the audit's exact eps of the release and the aggregator views keeps every site's
  promise (:func:`aggregator_factor`). The runs use the noise of eps'_s with c(eps'_s, delta_s) = k c(eps_s, delta_s)
  in the scenario's calibration (:func:`noise_scenario`); the guarantee is measured against the promised eps_s.

The guarantee records of a scheme at eps' are measured against the promise eps by :func:`promised_records`: a
record names the site with the largest eps_view / eps'_s; since eps'_s <= eps_s for every site,
max_s eps_view,s / eps_s <= (eps_view,w / eps'_w) max_s (eps'_s / eps_s) (equality under the classic calibration,
where eps' = eps / k), so "certified" stays sound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from scipy.optimize import brentq

from ..privacy.calibration import multiplier, privacy_profile
from ..scenario import Scenario, scenario_from_dict
from ..validation import check_choice

__all__ = ["CERTIFIED_VIEWS", "DESIGNS", "FACTOR_LIMIT", "aggregator_factor", "check_design", "design_words",
           "noise_scenario", "promised_records"]

DESIGNS: dict[str, str] = {
    "papers": "the papers' design: each site's noise calibrated to its own (eps, delta)",
    "aggregator": "certified against the aggregator: noise calibrated to the aggregator's exact view",
}
"""The designs the planner answers for (``--design``), the first the default."""
CERTIFIED_VIEWS = ("release", "aggregator")
"""The views the ``aggregator`` design certifies (the coalition view needs the collusion-robust design)."""
FACTOR_LIMIT = 1000.0
"""The largest noise factor the ``aggregator`` design searches (beyond it: unreachable, with that reason)."""
_FACTOR_RTOL = 1e-4
_CERTIFY_RTOL = 1e-9


def check_design(design: str) -> str:
    """``design`` checked against :data:`DESIGNS`."""
    return check_choice(design, "design", tuple(DESIGNS))


def _eps_for(target_multiplier: float, delta: float, calibration: str, eps: float) -> float:
    """eps' <= eps with c(eps', delta) = target_multiplier in ``calibration`` (c falls as eps grows)."""
    if calibration == "classic":
        return eps * multiplier(eps, delta, calibration) / target_multiplier
    low = eps
    while multiplier(low, delta, calibration) < target_multiplier:
        low /= 2.0
    return float(brentq(lambda e: multiplier(e, delta, calibration) - target_multiplier, low, eps, xtol=1e-12,
                        rtol=1e-12))


def noise_scenario(scenario: Scenario, factor: float) -> Scenario:
    """The scenario whose calibrated noise is ``factor`` times ``scenario``'s at every site: eps'_s with
    c(eps'_s, delta_s) = factor c(eps_s, delta_s) in the scenario's calibration (the budgets the runs calibrate to)."""
    if factor <= 1.0:
        return scenario
    sites = [replace(s, eps=_eps_for(factor * multiplier(s.eps, s.delta, scenario.calibration), s.delta,
                                     scenario.calibration, s.eps)) for s in scenario.sites]
    return scenario_from_dict(replace(scenario, sites=tuple(sites)).to_dict())


def _m_for(eps: float, delta: float) -> float:
    """m = Delta / sigma of the Gaussian mechanism whose exact eps at ``delta`` is ``eps`` (privacy profile)."""
    return float(math.exp(brentq(lambda lm: privacy_profile(math.exp(lm), eps) - delta, -30.0, 30.0, xtol=1e-12)))


def promised_records(records: list[dict], run: Scenario, promised: Scenario, factor: float) -> list[dict]:
    """Guarantee records computed at ``run`` (the noise of eps') measured against ``promised`` (module docstring):
    eps stays the exact eps of the named site, ``promised_eps`` its eps_s, ``delta`` its exact delta at eps_s, and
    ``certified`` the sound bound over every site."""
    if run is promised:
        return records
    eps_run = {s.name: s.eps for s in run.sites}
    eps_promised = {s.name: s.eps for s in promised.sites}
    spread = max(eps_run[n] / eps_promised[n] for n in eps_run)
    out = []
    for r in records:
        site = r.get("site")
        if site not in eps_run or r.get("eps") is None:
            out.append({**r, "certified": False})
            continue
        bound = r["eps"] / eps_run[site] * spread
        certified = bool(bound <= 1.0 + _CERTIFY_RTOL)
        delta = float(r["promised_delta"])
        eps_p = eps_promised[site]
        exact_delta = privacy_profile(_m_for(r["eps"], delta), eps_p) if r["eps"] > 0 else 0.0
        why = (f"{r['why'].split(';')[0]}; every site's noise {factor:.4g} times its {promised.calibration} "
               "calibration's (certified against the aggregator: calibrated to the aggregator's exact view)")
        if not certified:
            why += f"; site {site} gets eps {r['eps']:.3g} against the promised {eps_p:.3g}"
        out.append({**r, "promised_eps": eps_p, "delta": exact_delta, "certified": certified, "why": why})
    return out


def _keeps(records: list[dict], run: Scenario, promised: Scenario, factor: float) -> bool:
    views = [r for r in promised_records(records, run, promised, factor) if r["view"] in CERTIFIED_VIEWS]
    return bool(views) and all(r["certified"] for r in views)


def aggregator_factor(scenario: Scenario, records_at: Callable[[Scenario], list[dict]]) -> float | None:
    """The smallest k >= 1 (to a relative 1e-4) at which every site's noise times k keeps every site's promise in the
    release and the aggregator views (``records_at(scenario)``: one scheme's guarantee records there); None beyond
    :data:`FACTOR_LIMIT`."""
    def ok(k: float) -> bool:
        run = noise_scenario(scenario, k)
        return _keeps(records_at(run), run, scenario, k)

    if ok(1.0):
        return 1.0
    low, high = 1.0, 2.0
    while not ok(high):
        low, high = high, high * 4.0
        if high > FACTOR_LIMIT:
            return None
    while high / low - 1.0 > _FACTOR_RTOL:
        mid = math.sqrt(low * high)
        low, high = (low, mid) if ok(mid) else (mid, high)
    return high


def design_words(design: str, factor: float | None = None) -> str:
    """The design in words for a sentence, with the factor when it moved the noise."""
    words = DESIGNS[check_design(design)]
    if design == "aggregator" and factor is not None and factor > 1.0:
        words += f" (noise {factor:.3g} times the calibration's)"
    return words
