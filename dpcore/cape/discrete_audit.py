"""The privacy of a discrete design, view by view (docs/math/discrete.md, "The audit").

Every view of the discrete design is a post-processing of its integer terms, and (smoothing lemma) each term is,
within a factor exp(+-h) in every probability, a discrete Gaussian N_Z(x, s^2) centred at a continuous Gaussian of
variance sigma^2 - s^2. A neighbouring data set shifts the view by an integer vector, which an integer shift v of the
terms reproduces; the view is then no more revealing than the Gaussian mechanism of those continuous variances with
shift v, whose m^2 = v^T Sigma^-1 v is the continuous audit's Delta~^2 / sigma_eff^2 (of the continuous twin) plus,
for rounding the real optimum to integers, at most eps_r per changed entry:

    m_s^2 = (Delta~_s / (gamma mu_s))^2 / sigma_eff,s^2 + n eps_r,

and the view is (eps_G(m_s; delta e^-H) + 2H, delta)-DP with H = h times the terms in the view (below 1e-60 here, so
invisible in float64; reported as ``slack``). So each view is a Gaussian mechanism with sigma_s = Delta_s / m_s for
the guarantee machinery (:mod:`dpcore.cape.guarantee`), which composes stages exactly as for continuous designs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..privacy.calibration import exact_delta, exact_eps
from .audit import ViewSigma, default_collusion, view_sigmas
from .discrete import DiscreteDesign
from .guarantee import GUARANTEE_VIEWS, Guarantee, StageViews, compose_guarantees
from .helper_free import variant_view_sigmas
from .noise_variants import integer_variant

__all__ = ["DiscreteAuditRow", "discrete_audit", "discrete_guarantees", "discrete_stage", "discrete_view_sigmas",
           "view_margin"]


def discrete_view_sigmas(dd: DiscreteDesign, collusion: int) -> list[ViewSigma]:
    """sigma_eff of the continuous twin in every audited view (outside, aggregator, aggregator+coalition, sites),
    for the integer variant's construction (the table's ``aggregator_views``), coalitions of up to ``collusion``."""
    return variant_view_sigmas(dd.twin, collusion, variant=integer_variant().name)


def _release_sigmas(design) -> np.ndarray:
    """Each release against the party that knows part of its noise: sqrt(min(v_e, v_f) + v_g)."""
    return np.sqrt(np.clip(np.minimum(design.var_e, design.var_f) + design.var_g, 0.0, None))


def view_margin(dd: DiscreteDesign, site: int, sigma_twin: float) -> float:
    """m_s^2 of one view: (Delta~_s / (gamma mu_s))^2 / sigma_eff^2 + n eps_r (module docstring); inf at exposure."""
    if sigma_twin <= 0:
        return math.inf
    shift = float(dd.integer_sensitivities[site]) / dd.site_scale(site)
    return (shift / sigma_twin) ** 2 + dd.entries * dd.excess


def _proven(v: ViewSigma) -> float:
    return v.sigma_eff if v.exact else float(v.sigma_bound)


def discrete_stage(name: str, dd: DiscreteDesign, collusion: int) -> StageViews:
    """One discrete stage as the guarantee machinery takes it: sensitivities Delta_s and, per view, the sigma_s =
    Delta_s / m_s of a Gaussian mechanism with the view's m_s (``release``, ``aggregator`` and ``coalition`` with up
    to ``collusion`` colluders)."""
    n = dd.n_sites
    size = min(int(collusion), n - 1)
    twin = {"release": _release_sigmas(dd.twin), "aggregator": np.full(n, math.inf),
            "coalition": np.full(n, math.inf)}
    coalitions: list[tuple[int, ...]] = [()] * n
    exact = True
    for v in discrete_view_sigmas(dd, size):
        if v.view == "aggregator":
            twin["aggregator"][v.site] = _proven(v)
        elif v.view == "aggregator+coalition":
            twin["coalition"][v.site] = _proven(v)
            coalitions[v.site] = v.coalition
            exact &= v.exact
    if size == 0:
        twin["coalition"] = twin["aggregator"].copy()
    sens = np.asarray(dd.sensitivities, dtype=float)
    sigmas = {}
    for view in GUARANTEE_VIEWS:
        m2 = np.array([view_margin(dd, s, float(twin[view][s])) for s in range(n)])
        sigmas[view] = np.where(np.isfinite(m2), sens / np.sqrt(m2), 0.0)
    return StageViews(name=name, sensitivities=sens, sigmas=sigmas,
                      exact={"release": True, "aggregator": True, "coalition": exact},
                      coalitions=tuple(coalitions), colluders=size)


def discrete_guarantees(designs: Sequence[DiscreteDesign], stage_names: Sequence[str], *, eps: Any, delta: Any,
                        names: Sequence[str], calibration: str, collusion: int | None = None,
                        shares: Sequence[float] | None = None) -> tuple[Guarantee, ...]:
    """The guarantee of every view of a discrete run whose stages are ``designs``, composed exactly over the stages
    (each view a Gaussian mechanism with the discrete m_s; docs/math/audit.md "Guarantees of a run"). ``collusion``
    None: ceil(S/3) - 1."""
    c = default_collusion(len(names)) if collusion is None else int(collusion)
    stages = [discrete_stage(name, dd, c) for name, dd in zip(stage_names, designs, strict=True)]
    bits = max(dd.ring_bits for dd in designs)
    return compose_guarantees(stages, eps, delta, names, calibration=calibration, collusion=c, shares=shares,
                              scheme=f"discrete CAPE (integer terms, exact sums on a {bits}-bit ring)")


@dataclass(frozen=True, kw_only=True)
class DiscreteAuditRow:
    """One site in one view of a discrete stage: the twin's sigma_eff (statistic units), the view's m (Delta_s /
    sigma of the equivalent Gaussian mechanism), the exact eps at delta_s and delta at eps_s it gives, the eps of the
    same view of the continuous design (``eps_continuous``: the gap), and whether the promise is kept."""

    site: str
    view: str
    coalition: tuple[str, ...]
    sigma_eff: float
    m: float
    eps_eff: float
    delta_eff: float
    eps_continuous: float
    eps: float
    delta: float
    ok: bool
    exact: bool

    def to_dict(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return float(x) if math.isfinite(x) else None

        return {"site": self.site, "view": self.view, "coalition": list(self.coalition),
                "sigma_eff": num(self.sigma_eff), "m": num(self.m), "eps_eff": num(self.eps_eff),
                "delta_eff": float(self.delta_eff), "eps_continuous": num(self.eps_continuous), "eps": self.eps,
                "delta": self.delta, "ok": self.ok, "exact": self.exact}


def discrete_audit(dd: DiscreteDesign, eps: Any, delta: Any, collusion: int | None = None) -> list[DiscreteAuditRow]:
    """Every site in every view of :data:`dpcore.cape.audit.VIEWS` for the discrete design, beside the same view of
    its continuous design with a helper (the papers' CAPE): the promise judged on the discrete m (the proven bound
    where a worst coalition is not certified)."""
    n = dd.n_sites
    c = default_collusion(n) if collusion is None else int(collusion)
    eps = np.broadcast_to(np.asarray(eps, dtype=float), (n,))
    delta = np.broadcast_to(np.asarray(delta, dtype=float), (n,))
    continuous = {(v.site, v.view): v for v in view_sigmas(dd.design, c)}
    names = dd.design.names
    rows = []
    for v in discrete_view_sigmas(dd, c):
        s = v.site
        m = math.sqrt(view_margin(dd, s, _proven(v)))
        sens = float(dd.sensitivities[s])
        sigma = sens / m if math.isfinite(m) else 0.0
        eps_eff = exact_eps(sigma, sens, float(delta[s])) + 2.0 * dd.slack
        cont = continuous.get((s, v.view))
        eps_cont = math.nan if cont is None else exact_eps(_proven(cont), sens, float(delta[s]))
        rows.append(DiscreteAuditRow(
            site=names[s], view=v.view, coalition=tuple(names[t] for t in v.coalition), sigma_eff=v.sigma_eff, m=m,
            eps_eff=eps_eff, delta_eff=exact_delta(sigma, sens, float(eps[s])), eps_continuous=eps_cont,
            eps=float(eps[s]), delta=float(delta[s]), ok=bool(eps_eff <= eps[s] * (1 + 1e-9) + 1e-12), exact=v.exact))
    return rows
