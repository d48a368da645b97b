"""A run's privacy guarantee as data: per view, the exact (eps, delta) its releases give every site, composed over
every stage, and whether that keeps the promise (docs/math/audit.md, "Guarantees of a run").

Views (:data:`GUARANTEE_VIEWS`):
  release     each site's own releases on their own, against the party that knows part of their noise (the helper
              its e_s, the aggregator its f_s): sigma_s^2 = min(v_e + v_g, v_f + v_g) per stage;
  aggregator  everything the aggregator sees (every release of every site, knowing every f_t): the audit's
              sigma_eff (:func:`dpcore.cape.view_sigmas`);
  coalition   the aggregator with the worst coalition of up to c other sites (the audit's aggregator+coalition
              view, which sees more than the coalition alone).

Every view of every stage is a Gaussian mechanism with sensitivity Delta_s and noise sigma_s (the audit: linear and
Gaussian), so a view of a run is the (adaptive) composition of the stages' Gaussian mechanisms, which is exactly
a Gaussian mechanism with m_s = sqrt(sum_stages (Delta_s / sigma_s)^2) (Dong, Roth and Su 2022, Gaussian
differential privacy, Cor. 3.3; tests/test_guarantee.py checks it against the PRV accountant). Its exact eps at the
promised delta_s and delta at the promised eps_s follow from the privacy profile
(:func:`dpcore.privacy.exact_eps`, :func:`~dpcore.privacy.exact_delta`). ``certified`` is True only when every site
keeps its promise: eps <= eps_s. When the worst coalitions of two stages differ, composing each stage's worst is an
upper bound (``exact`` False); the certificate stays sound.

Families build the stages of a run (:func:`design_stage` for a CAPE noise design, :func:`independent_stage` for
noise each site adds alone, :func:`calibrated_stage` for one curator's calibrated release) and call
:func:`compose_guarantees`; :func:`unprotected`, :func:`no_privacy` and :func:`not_dp` say what the others give.
:func:`guarantee_records` is the JSON form every output carries (``"guarantees": [...]``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..privacy.calibration import classic_caveat, exact_delta, exact_eps, multiplier
from ..scenario import Scenario
from ..textio import site_label
from .audit import ViewSigma, default_collusion, view_sigmas
from .design import NoiseDesign

__all__ = [
    "GUARANTEE_VIEWS",
    "Guarantee",
    "StageViews",
    "basic_guarantees",
    "calibrated_stage",
    "cape_guarantees",
    "certified_label",
    "coalition_size",
    "compose_guarantees",
    "conventional_guarantees",
    "curator_guarantees",
    "design_stage",
    "guarantee_records",
    "guarantee_summary",
    "independent_stage",
    "no_data",
    "no_privacy",
    "not_dp",
    "promises",
    "run_guarantee_records",
    "unprotected",
]

GUARANTEE_VIEWS = ("release", "aggregator", "coalition")
CERTIFY_RTOL = 1e-9
"""A view keeps eps_s when its exact eps is at most eps_s (1 + CERTIFY_RTOL) (the calibration's own margin)."""


@dataclass(frozen=True, kw_only=True)
class Guarantee:
    """What one view of a run learns about the worst-off site: the exact eps at the promised delta and the exact delta
    at the promised eps, composed over every stage (None: no finite bound), the promise, and ``certified`` (every site
    keeps its promise in this view). ``why`` says what the view sees and why it is or is not certified; ``exact``
    is False when eps and delta are upper bounds (a worst coalition that differs between stages or was bounded)."""

    view: str
    colluders: int
    eps: float | None
    delta: float | None
    promised_eps: float | None
    promised_delta: float | None
    certified: bool
    why: str
    site: str | None = None
    exact: bool = True
    short: str = ""
    who: str = ""
    """The sites the line speaks for, in words ('every site', 'site C' (the site closest to its promise, when the
    promises differ), 'site 1 and 9 more'): the guarantee lines name their site (issue 36); empty: ``site`` alone."""
    classic: bool = False
    """Certified although that site's classic calibration at eps >= 1 proves nothing: what is certified is the audit's
    exact eps of the noise actually added, and the line says so."""

    def to_dict(self) -> dict[str, Any]:
        return {"view": self.view, "colluders": self.colluders, "eps": self.eps, "delta": self.delta,
                "certified": self.certified, "why": self.why, "site": self.site, "promised_eps": self.promised_eps,
                "promised_delta": self.promised_delta, "exact": self.exact}

    @property
    def name(self) -> str:
        """'release', 'aggregator', or 'coalition of c'."""
        return f"coalition of {self.colluders}" if self.view == "coalition" else self.view

    def label(self) -> str:
        """One line: '(eps, delta)-DP' only when certified, otherwise the exact numbers against the promise; the sites
        it speaks for (``who``, else ``site``), and for the classic calibration at eps >= 1 why it can be certified."""
        whom = self.who or (site_label(self.site) if self.site else "")
        whom = f" for {whom}" if whom else ""
        if self.certified:
            if self.promised_eps is None:
                return f"{self.name}: uses no data (eps = 0)"
            exact = (f" by the audit's exact eps {self.eps:.4g} of the noise actually added (the classic formula "
                     "itself proves nothing at eps >= 1)" if self.classic else f" (exact eps {self.eps:.4g})")
            rest = ("" if self.who in ("", "every site") else
                    ", the site closest to its promise; every site keeps its own")
            promise = f"({_num(self.promised_eps)}, {_num(self.promised_delta)})"
            return f"{self.name}: {promise}-DP certified{whom}{exact}{rest}"
        if self.eps is None or self.promised_eps is None:
            return f"{self.name}: NOT certified - {self.short or 'no finite bound'} ({self.why})"
        return (f"{self.name}: NOT certified{whom} - eps {_num(self.eps)} > promised {_num(self.promised_eps)} "
                f"(delta at eps {_num(self.promised_eps)}: {_num(self.delta)} > {_num(self.promised_delta)})")


def _num(x: float | None) -> str:
    if x is None:
        return "unbounded"
    return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2g}"


def guarantee_records(guarantees: Sequence[Guarantee]) -> list[dict[str, Any]]:
    """The JSON form of a run's guarantees (``"guarantees"`` of every output)."""
    return [g.to_dict() for g in guarantees]


def run_guarantee_records(guarantees: dict[str, Sequence[Guarantee]]) -> list[dict[str, Any]]:
    """The JSON form of the guarantees of several algorithms: one record per algorithm and view, with "algorithm"."""
    return [{"algorithm": name, **g.to_dict()} for name, views in guarantees.items() for g in views]


def guarantee_summary(guarantees: Sequence[Guarantee]) -> str:
    """A short cell for a table: each view certified with its (eps, delta)-DP, or not certified with its exact eps."""
    parts = []
    for g in guarantees:
        if g.certified:
            parts.append(f"{g.name}: ({_num(g.promised_eps)}, {_num(g.promised_delta)})-DP"
                         if g.promised_eps is not None else f"{g.name}: uses no data")
        elif g.eps is None:
            parts.append(f"{g.name}: {g.short or 'not certified'}")
        else:
            parts.append(f"{g.name}: NOT certified (eps {_num(g.eps)} > {_num(g.promised_eps)})")
    return "; ".join(parts)


def certified_label(guarantees: Sequence[Guarantee]) -> str:
    """'certified in every view', or which views are not."""
    failing = [g.name for g in guarantees if not g.certified]
    return "certified in every view" if not failing else "not certified: " + ", ".join(failing)


@dataclass(frozen=True, kw_only=True)
class StageViews:
    """One released statistic of a run: every site's sensitivity Delta_s and, per view, the noise std sigma_s the view
    leaves each site (a proven lower bound where ``exact`` is False); ``coalitions`` the worst coalition per site."""

    name: str
    sensitivities: np.ndarray
    sigmas: dict[str, np.ndarray]
    exact: dict[str, bool]
    coalitions: tuple[tuple[int, ...], ...] = ()
    colluders: int = 0


def design_stage(name: str, design: NoiseDesign, sensitivities: Any, collusion: int, *,
                 views_of: Callable[[NoiseDesign, int], Sequence[ViewSigma]] | None = None) -> StageViews:
    """The views of one CAPE stage: the release's own noise min(v_e + v_g, v_f + v_g) and the audit's aggregator and
    worst aggregator+coalition sigma_eff with up to ``collusion`` colluders (a feasible design). ``views_of(design,
    c)`` replaces the audit's :func:`~dpcore.cape.view_sigmas` for another way of making the zero-sum noise (e.g. the
    helper-free variant's ``functools.partial(variant_view_sigmas, variant="helper-free")``); it must return
    :class:`~dpcore.cape.ViewSigma` rows with views "aggregator" and "aggregator+coalition"."""
    n = design.n_sites
    size = min(int(collusion), n - 1)
    own = np.sqrt(np.clip(np.minimum(design.var_e, design.var_f) + design.var_g, 0.0, None))
    agg = np.full(n, math.inf)
    coal = np.full(n, math.inf)
    coal_exact = True
    coalitions: list[tuple[int, ...]] = [()] * n
    rows = (view_sigmas(design, size, ("aggregator", "aggregator+coalition")) if views_of is None
            else views_of(design, size))
    for v in rows:
        if v.view == "aggregator":
            agg[v.site] = v.sigma_eff
        elif v.view == "aggregator+coalition":
            coal[v.site] = v.sigma_eff if v.exact else float(v.sigma_bound)
            coal_exact &= v.exact
            coalitions[v.site] = v.coalition
    if size == 0:
        coal = agg.copy()
    sens = np.broadcast_to(np.asarray(sensitivities, dtype=float), (n,)).copy()
    return StageViews(name=name, sensitivities=sens, sigmas={"release": own, "aggregator": agg, "coalition": coal},
                      exact={"release": True, "aggregator": True, "coalition": coal_exact},
                      coalitions=tuple(coalitions), colluders=size)


def independent_stage(name: str, stds: Any, sensitivities: Any) -> StageViews:
    """A stage in which every site adds its own independent noise N(0, stds_s^2) (the conventional scheme): the other
    releases carry nothing about site s, so every view sees sigma_s = stds_s."""
    stds = np.asarray(stds, dtype=float)
    sens = np.broadcast_to(np.asarray(sensitivities, dtype=float), stds.shape).copy()
    return StageViews(name=name, sensitivities=sens, sigmas={v: stds for v in GUARANTEE_VIEWS},
                      exact={v: True for v in GUARANTEE_VIEWS})


def calibrated_stage(name: str, eps: Any, delta: Any, calibration: str) -> StageViews:
    """A release calibrated to (eps_s, delta_s) with sigma = Delta c(eps_s, delta_s) (one site's or a curator's
    Gaussian release): Delta / sigma = 1 / c, the same in every view of the published output."""
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    delta = np.broadcast_to(np.asarray(delta, dtype=float), eps.shape)
    ratio = np.array([multiplier(float(e), float(d), calibration) for e, d in zip(eps, delta, strict=True)])
    return independent_stage(name, ratio, np.ones_like(ratio))


def _composed(stages: Sequence[StageViews], view: str) -> np.ndarray:
    """m_s = sqrt(sum over stages of (Delta_s / sigma_s)^2) per site (inf when a stage exposes the site)."""
    total = np.zeros(stages[0].sensitivities.shape)
    for stage in stages:
        sigma = stage.sigmas[view]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(sigma > 0, stage.sensitivities / np.where(sigma > 0, sigma, 1.0), math.inf)
        total = total + ratio**2
    return np.sqrt(total)


def _view_why(view: str, colluders: int, stage_names: str, scheme: str) -> str:
    sees = {
        "release": f"each site's own releases ({stage_names}) on their own, to the party that made part of their "
                   "noise",
        "aggregator": f"every release of every site ({stage_names}), knowing its own noise f",
        "coalition": f"every release ({stage_names}) and the noise of the worst coalition of up to {colluders} other "
                     "site(s)",
    }[view]
    return f"{scheme}; the {'aggregator' if view != 'release' else 'view'} sees {sees}; composed exactly"


def compose_guarantees(  # long: one pass over the views, each with its worst site and its reason
    stages: Sequence[StageViews], eps: Any, delta: Any, names: Sequence[str], *, calibration: str,
    scheme: str, collusion: int | None = None, views: Sequence[str] = GUARANTEE_VIEWS,
    shares: Sequence[float] | None = None,
) -> tuple[Guarantee, ...]:
    """The guarantee of every view in ``views`` for a run whose releases are ``stages``, against every site's total
    promise (eps_s, delta_s) (``eps``, ``delta``: per site or one value). ``scheme`` names how the noise is made
    (first words of ``why``); ``collusion`` (default: the stages' own) is the c of the coalition view, which is
    left out when c = 0. ``shares``: each stage's share of eps_s, for the classic calibration's caveat (added where a
    stage's eps is >= 1)."""
    n = len(names)
    eps = np.broadcast_to(np.asarray(eps, dtype=float), (n,))
    delta = np.broadcast_to(np.asarray(delta, dtype=float), (n,))
    colluders = max((s.colluders for s in stages), default=0) if collusion is None else int(collusion)
    stage_names = ", ".join(s.name for s in stages)
    caveat = None
    if calibration == "classic" and shares is not None:
        caveat = classic_caveat(float(np.max(eps)) * max(shares))
    out = []
    for view in views:
        if view == "coalition" and colluders == 0:
            continue
        m = _composed(stages, view)
        eps_eff = np.array([exact_eps(1.0 / mi, 1.0, d) if mi > 0 else 0.0 for mi, d in zip(m, delta, strict=True)])
        delta_eff = np.array([exact_delta(1.0 / mi, 1.0, e) if mi > 0 else 0.0 for mi, e in zip(m, eps, strict=True)])
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(eps > 0, eps_eff / eps, math.inf)
        worst = int(np.argmax(ratio))
        certified = bool(np.all(eps_eff <= eps * (1.0 + CERTIFY_RTOL) + 1e-12))
        exact = all(s.exact[view] for s in stages)
        if view == "coalition" and len(stages) > 1:
            exact &= len({s.coalitions[worst] for s in stages if s.coalitions}) <= 1
        why = _view_why(view, colluders, stage_names, scheme)
        if not certified:
            why += (f"; {site_label(str(names[worst]))} gets eps {_num(float(eps_eff[worst]))} at delta "
                    f"{_num(float(delta[worst]))} against the promised {_num(float(eps[worst]))}")
            if view != "release":
                why += "; the collusion-robust design keeps the promise in this view"
            if caveat and view == "release":
                why += f"; {caveat}"
        elif caveat:
            why += "; the exact audit certifies it although the classic formula itself proves nothing at eps >= 1"
        if not exact:
            why += "; eps and delta are upper bounds (the worst coalition differs between stages or was bounded)"
        finite = math.isfinite(float(eps_eff[worst]))
        out.append(Guarantee(view=view, colluders=colluders if view == "coalition" else 0,
                             eps=float(eps_eff[worst]) if finite else None, delta=float(delta_eff[worst]),
                             promised_eps=float(eps[worst]), promised_delta=float(delta[worst]),
                             certified=certified, why=why, site=str(names[worst]), exact=exact,
                             who=_who(names, worst, eps, delta, eps_eff, certified),
                             classic=bool(certified and caveat and classic_caveat(float(eps[worst]) * max(shares)))))
    return tuple(out)


def _who(names: Sequence[str], worst: int, eps: np.ndarray, delta: np.ndarray, eps_eff: np.ndarray,
         certified: bool) -> str:
    """The sites a guarantee line speaks for: every site when all promise the same (certified) or all get the same eps
    over it; else the worst-off site by name, with how many others break their promise too."""
    same_promise = len({(float(e), float(d)) for e, d in zip(eps, delta, strict=True)}) == 1
    site = site_label(str(names[worst]))
    if certified:
        return "every site" if same_promise else site
    over = int(np.sum(eps_eff > eps * (1.0 + CERTIFY_RTOL) + 1e-12))
    same_eps = bool(np.all(np.isfinite(eps_eff))) and float(np.ptp(eps_eff)) <= 1e-6 * float(np.max(eps_eff))
    if over == len(names):
        return "every site" if same_promise and same_eps else f"all {over} sites (the worst: {site})"
    return site if over <= 1 else f"{site} and {over - 1} more"


def unprotected(guarantees: Sequence[Guarantee], view: str, why: str) -> tuple[Guarantee, ...]:
    """``guarantees`` with ``view`` replaced by a view that sees the data in the clear (a trusted curator)."""
    out = [g for g in guarantees if g.view != view]
    first = guarantees[0] if guarantees else None
    out.insert(GUARANTEE_VIEWS.index(view) if view in GUARANTEE_VIEWS else len(out),
               Guarantee(view=view, colluders=0, eps=None, delta=1.0,
                         promised_eps=None if first is None else first.promised_eps,
                         promised_delta=None if first is None else first.promised_delta, certified=False, why=why,
                         short="sees the records in the clear"))
    return tuple(out)


def no_privacy(why: str = "no noise: the result is computed from the data in the clear") -> tuple[Guarantee, ...]:
    """A result with no privacy at all (the non-private reference)."""
    return tuple(Guarantee(view=v, colluders=0, eps=None, delta=1.0, promised_eps=None, promised_delta=None,
                           certified=False, why=why, short="no privacy") for v in ("release", "aggregator"))


def not_dp(eps: float, delta: float, why: str) -> tuple[Guarantee, ...]:
    """A result whose noise is calibrated to a local (data-dependent) sensitivity: not differentially private."""
    return tuple(Guarantee(view=v, colluders=0, eps=None, delta=None, promised_eps=float(eps),
                           promised_delta=float(delta), certified=False, why=why,
                           short="not DP as published (local sensitivity)") for v in ("release", "aggregator"))


def no_data(why: str = "uses no data: random output, nothing to protect") -> tuple[Guarantee, ...]:
    """A result that reads no data (the random reference): eps = 0 in every view."""
    return (Guarantee(view="release", colluders=0, eps=0.0, delta=0.0, promised_eps=None, promised_delta=None,
                      certified=True, why=why),)


def cape_guarantees(designs: Sequence[NoiseDesign], sensitivities: Sequence[Any], stage_names: Sequence[str], *,
                    eps: Any, delta: Any, names: Sequence[str], calibration: str, collusion: int,
                    shares: Sequence[float],
                    views_of: Callable[[NoiseDesign, int], Sequence[ViewSigma]] | None = None,
                    ) -> tuple[Guarantee, ...]:
    """Every view of a CAPE run whose stages have the noise ``designs`` (feasible) for the sensitivities Delta_s of
    each stage, with coalitions of up to ``collusion`` sites; ``designs`` made by the collusion-robust calibration say
    so in ``why``."""
    robust = [d.collusion for d in designs if d.method == "collusion-robust"]
    scheme = ("CAPE correlated noise, collusion-robust design for c = " + str(robust[0]) if robust
              else "CAPE correlated noise (general design: every release meets its promise on its own)")
    stages = [design_stage(name, d, s, collusion, views_of=views_of)
              for name, d, s in zip(stage_names, designs, sensitivities, strict=True)]
    return compose_guarantees(stages, eps, delta, names, calibration=calibration, scheme=scheme, collusion=collusion,
                              shares=shares)


def conventional_guarantees(taus: Sequence[Any], sensitivities: Sequence[Any], stage_names: Sequence[str], *,
                            eps: Any, delta: Any, names: Sequence[str], calibration: str,
                            shares: Sequence[float]) -> tuple[Guarantee, ...]:
    """Every site adds its own independent noise tau_s to each stage: the aggregator learns nothing more about site s
    from the other releases, so both views equal the release's."""
    stages = [independent_stage(name, t, s) for name, t, s in zip(stage_names, taus, sensitivities, strict=True)]
    return compose_guarantees(stages, eps, delta, names, calibration=calibration, collusion=0, shares=shares,
                              scheme="independent noise at every site (the conventional scheme)",
                              views=("release", "aggregator"))


CURATOR_WHY = "one trusted curator holds every record in the clear: nothing protects them from it"


def curator_guarantees(stages: Sequence[StageViews], *, eps: Any, delta: Any, names: Sequence[str], calibration: str,
                       shares: Sequence[float], who: str, trusted: bool = True) -> tuple[Guarantee, ...]:
    """A single party's calibrated releases (``stages``, e.g. :func:`calibrated_stage` per stage): the published
    output's guarantee as the release view; the aggregator view is that party itself, unprotected when ``trusted``
    (it holds the records of others), the release otherwise."""
    out = compose_guarantees(stages, eps, delta, names, calibration=calibration, collusion=0, shares=shares,
                             scheme=who, views=("release", "aggregator"))
    return unprotected(out, "aggregator", f"{who}: {CURATOR_WHY}") if trusted else out


def basic_guarantees(parts: Sequence[float], *, eps: float, delta: float, site: str, valid: bool, who: str,
                     trusted: bool) -> tuple[Guarantee, ...]:
    """Releases whose (eps_i, delta_i) add up by basic composition (a pure-DP or propose-test-release step among
    Gaussian ones): eps = sum of ``parts`` at the promised delta, an upper bound (``exact`` False), certified when
    every part's calibration is ``valid`` and the sum keeps the promise."""
    total = float(sum(parts))
    certified = bool(valid and total <= eps * (1.0 + CERTIFY_RTOL))
    why = f"{who}; basic composition of its releases (eps adds up: an upper bound)"
    if not valid:
        why += "; the classic calibration at eps >= 1 proves nothing for some release"
    release = Guarantee(view="release", colluders=0, eps=total, delta=float(delta), promised_eps=float(eps),
                        promised_delta=float(delta), certified=certified, why=why, site=site, exact=False)
    agg = (Guarantee(view="aggregator", colluders=0, eps=None, delta=1.0, promised_eps=float(eps),
                     promised_delta=float(delta), certified=False, why=f"{who}: {CURATOR_WHY}",
                     short="sees the records in the clear") if trusted
           else Guarantee(**{**release.__dict__, "view": "aggregator"}))
    return release, agg


def promises(scenario: Scenario, shares: Sequence[float]) -> dict[str, Any]:
    """What every view of a run's guarantee is measured against: eps_s, delta_s, the sites' names, the calibration
    and each stage's share of the budget (``shares``, one per stage): the keywords of the ``*_guarantees``
    functions above."""
    return {"eps": scenario.eps, "delta": scenario.delta, "names": scenario.names, "calibration": scenario.calibration,
            "shares": tuple(shares)}


def coalition_size(n_sites: int, collusion: int | None) -> int:
    """c of a run's coalition view: the collusion bound the run was designed for (at most S - 1), else
    ceil(S/3) - 1 (:func:`~dpcore.cape.audit.default_collusion`)."""
    return min(int(collusion), n_sites - 1) if collusion is not None else default_collusion(n_sites)
