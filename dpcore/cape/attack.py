"""What a site's epsilon means to an attacker, for the views of a CAPE plan (docs/math/mechanisms.md, "What eps
means: the attacker's trade-off"; docs/math/audit.md).

Each view of one site is, exactly, one Gaussian release with noise sigma against a shift Delta_s (the audit's
reduction), so an attacker deciding "present" or "absent" for one of the site's records faces the trade-off curve
TPR = Phi(Phi^-1(FPR) + m), m = Delta_s / sigma (:mod:`dpcore.privacy.tradeoff`). Three views, plus the worst
coalition when the plan audits one:

* ``promise``: one release on its own, sigma = tau_s: what the site was promised, (eps_s, delta_s);
* ``aggregator``: everything the aggregator sees, combined in the best way: the audit's sigma_eff;
* ``aggregator+coalition``: the same with up to c colluding sites (only when c >= 1);
* ``pooled``: the published aggregate, sigma = tau_c / mu_s (the audit's outside view), which is what a trusted
  curator holding the pooled data would publish with noise tau_c.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..privacy.calibration import exact_eps
from ..privacy.tradeoff import best_advantage, gaussian_tradeoff, separation
from ..textio import site_label
from ..validation import InputError, check_choice
from .plan import Plan

__all__ = ["ATTACK_VIEWS", "AttackView", "attack_sentence", "site_attack_views"]

ATTACK_VIEWS: dict[str, tuple[str, str, str | None]] = {
    "promise": ("the site's own promise", "one release on its own, with the noise tau_s the site's budget needs", None),
    "aggregator": ("what the aggregator effectively sees",
                   "every release combined in the best way, knowing the f_s: the audit's sigma_eff", "aggregator"),
    "aggregator+coalition": ("the aggregator with colluders",
                             "the same, plus everything the worst coalition of up to c other sites knows",
                             "aggregator+coalition"),
    "pooled": ("pooled data",
               "the published aggregate: what a trusted curator holding all the data would publish with noise tau_c",
               "outside"),
}
"""Each view of an attacker: its label, its description and the view of the audit (:data:`~dpcore.cape.audit.
AUDIT_VIEWS`) whose sigma_eff it has (None: the site's own release, its promise)."""


@dataclass(frozen=True, kw_only=True)
class AttackView:
    """One site's record as an attacker with this view sees it: a release with noise ``sigma`` against a shift
    ``sensitivity``; ``eps_eff`` is the exact eps of that view at the site's delta (the audit's number) and
    ``eps_promised`` the site's eps_s."""

    key: str
    label: str
    description: str
    sigma: float
    sensitivity: float
    eps_eff: float
    eps_promised: float

    @property
    def kept(self) -> bool:
        """The view keeps the promise: eps_eff <= eps_s (the audit's verdict)."""
        return self.eps_eff <= self.eps_promised * (1 + 1e-9) + 1e-12

    @property
    def m(self) -> float:
        """Delta_s / sigma: the record's shift in noise standard deviations."""
        return separation(self.sensitivity, self.sigma)

    def tpr(self, fpr) -> np.ndarray:
        """The best attacker's true-positive rate at false-positive rate ``fpr``."""
        return gaussian_tradeoff(fpr, self.m)

    @property
    def advantage(self) -> float:
        """max TPR - FPR, the most the best attacker gains over guessing."""
        return best_advantage(self.m)


def site_attack_views(plan: Plan, site: str) -> list[AttackView]:
    """The views of :data:`ATTACK_VIEWS` for ``site`` (a name of the plan's scenario), in that order; only the
    promise when the design is infeasible (no audit)."""
    names = list(plan.design.names)
    site = check_choice(site, "site", tuple(names))
    s = names.index(site)
    sens = float(plan.sensitivities[s])
    promised = float(plan.scenario.eps[s])
    tau = float(plan.design.tau[s])
    views = [_view("promise", tau, sens, exact_eps(tau, sens, float(plan.scenario.delta[s])), promised)]
    if plan.audit is None:
        return views
    rows = {r.view: r for r in plan.audit.rows if r.site == site}
    for key, (_, _, audit_view) in ATTACK_VIEWS.items():
        row = rows.get(audit_view) if audit_view is not None else None
        if row is not None:
            views.append(_view(key, float(row.sigma_eff), sens, float(row.eps_eff), promised))
    return views


def _view(key: str, sigma: float, sensitivity: float, eps_eff: float, eps_promised: float) -> AttackView:
    label, description, _ = ATTACK_VIEWS[key]
    return AttackView(key=key, label=label, description=description, sigma=sigma, sensitivity=sensitivity,
                      eps_eff=eps_eff, eps_promised=eps_promised)


def _per_hundred(rate: float) -> str:
    """A rate as "x in 100": whole numbers from 10 on, one decimal below (without a trailing .0)."""
    value = 100.0 * float(rate)
    text = f"{value:.0f}" if value >= 10 else f"{value:.1f}"
    return text.removesuffix(".0")


def attack_sentence(views: list[AttackView], site: str, fpr: float = 0.05) -> str:
    """The trade-off at one false-positive rate in plain words (markdown), e.g. "... catches 7 in 100 ..."."""
    if not 0 < fpr < 1:
        raise InputError(f"the false-positive rate must be in (0, 1) (got {fpr!r})", "false-positive rate")
    if not views:
        raise InputError("no views to describe")
    parts = [f"**{_per_hundred(float(v.tpr(fpr)))}** through {v.label}" for v in views]
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    alpha = _per_hundred(fpr)
    text = (f"Take one person who may or may not be in {site_label(site)}'s data. An attacker who guesses \"present\" "
            f"whenever the release is above a threshold, set so that it wrongly accuses only {alpha} in 100 absent "
            f"people, catches, out of 100 present people, {listed}. A coin that says \"present\" {alpha} times in "
            f"100 catches {alpha}.")
    broken = [v for v in views if not v.kept]
    if broken:
        worst = max(broken, key=lambda v: v.m)
        if math.isinf(worst.m):
            text += f" {worst.label.capitalize()} sees the record exactly: no privacy is left."
        else:
            text += (f" The promise is not kept against {worst.label}: that view is worth eps = "
                     f"{worst.eps_eff:.3g} instead of the promised {worst.eps_promised:g}.")
    return text
