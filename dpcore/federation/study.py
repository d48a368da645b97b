"""A study: everything that decides what a consortium's rounds release, in one document every site signs before its
data are used (docs/federated.md, "A study every site approves").

The document (``capefed-study-v1``, canonical JSON) holds the title and who proposes it; the number of rounds of each
algorithm; per algorithm its public round settings (:class:`~dpcore.federation.RoundSettings` but the run number:
stages, K, solver, the colluders c the design is made against, the drop-outs it survives, the noise variant,
calibration, capeAGN's model, path, law and split) with D and a description of the data; per site its per-round
(eps, delta), its weight, its N_s per algorithm and its total eps over the whole study at the study's ``total_delta``.
Its **digest** is SHA-256 of the canonical text: what every site signs and what every round names.

:func:`parse_study` reads a study with every field checked and bounded, plans every algorithm's round for it
(:func:`dpcore.federation.plan_round`: a study whose design is refused is refused) and checks that every site's
stated total is the exact composition of all its rounds (mu-GDP: :func:`dpcore.federation.accounts.rounds_budget`).
:func:`round_problem` is what a site checks of every round against the study it signed: the algorithm is one of the
study's, every setting is the study's, and every site's reported values are the study's.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..cape.audit import AuditRow, default_collusion
from ..cape.helper_free import variant_audit
from ..limits import DELTA_RANGE, MAX_SITES, MAX_STUDY_BYTES, MAX_STUDY_ROUNDS
from ..scenario import Site
from ..textio import load_json
from ..validation import InputError
from .accounts import LedgerEntry, composed_eps, composed_mu
from .guard import release_entry
from .plan import ROUND_STAGES, RoundPlan, RoundSettings, SiteBudget, plan_round

__all__ = ["STUDY_FORMAT", "Exposure", "Study", "StudyAlgorithm", "parse_study", "round_problem", "site_exposure",
           "study_text"]

STUDY_FORMAT = "capefed-study-v1"
MAX_TITLE = 200
MAX_DESCRIPTION = 2000
_SETTINGS = tuple(f for f in RoundSettings.__dataclass_fields__ if f not in ("algorithm", "run"))
_INTS = ("k", "n_restarts", "n_iter", "dropouts", "collusion")
_TOTAL_RTOL = 1e-9


@dataclass(frozen=True, kw_only=True)
class StudyAlgorithm:
    """One algorithm of a study: its round settings (run 0), D and what the data are."""

    settings: RoundSettings
    dim: int
    data: str


@dataclass(frozen=True, kw_only=True)
class Study:
    """A parsed study: its fields, every algorithm's plan, its canonical text and digest."""

    title: str
    proposer: str
    rounds: int
    total_delta: float
    algorithms: dict[str, StudyAlgorithm]
    sites: tuple[Site, ...]
    counts: dict[str, dict[str, int]]
    totals: dict[str, float]
    plans: dict[str, RoundPlan]
    text: str
    digest: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.sites)

    def budgets(self, algorithm: str) -> tuple[SiteBudget, ...]:
        """Every site's reported values for a round of ``algorithm`` (sorted by name, as a plan holds them)."""
        dim = self.algorithms[algorithm].dim
        return tuple(sorted((SiteBudget(site=replace(s, n=self.counts[s.name][algorithm]), dim=dim)
                             for s in self.sites), key=lambda b: b.name))

    def costs(self, name: str) -> list[LedgerEntry]:
        """Site ``name``'s worst-case cost of one round of every algorithm (stage by stage)."""
        return [release_entry(plan, stage, name, "") for plan in self.plans.values() for stage in plan.stages]

    def total_mu(self, name: str) -> float:
        """The composition of every stage of every round of the study at site ``name``."""
        return composed_mu([c.mu for c in self.costs(name)] * self.rounds)


def _fail(what: str) -> InputError:
    return InputError(f"the study: {what}")


def _text(value: Any, where: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise _fail(f"{where} must be text of 1 to {limit} characters")
    return value


def _int(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _fail(f"{where} must be an integer from {low:,} to {high:,} (got {value!r:.40})")
    return value


def _num(value: Any, where: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            isinstance(value, int) or math.isfinite(value)) or not low <= value <= high:
        raise _fail(f"{where} must be a finite number from {low:g} to {high:g} (got {value!r:.40})")
    return float(value)


def _settings(algorithm: str, raw: Any) -> RoundSettings:
    if not isinstance(raw, dict) or set(raw) != set(_SETTINGS):
        raise _fail(f"{algorithm}: the settings must hold exactly {', '.join(_SETTINGS)}")
    for key, value in raw.items():
        if isinstance(value, (dict, list)) or (isinstance(value, str) and len(value) > 64):
            raise _fail(f"{algorithm}: the setting {key} must be a number, a short text or null")
        if key in _INTS and (isinstance(value, bool) or not isinstance(value, int)):
            raise _fail(f"{algorithm}: the setting {key} must be an integer")
        if isinstance(value, float) and not math.isfinite(value):
            raise _fail(f"{algorithm}: the setting {key} must be finite")
    try:
        return RoundSettings(algorithm=algorithm, run=0, **raw).validated()
    except (TypeError, ValueError) as exc:
        raise _fail(f"{algorithm}: {exc}") from None


def _algorithms(raw: Any) -> dict[str, StudyAlgorithm]:
    if not isinstance(raw, dict) or not raw or not set(raw) <= set(ROUND_STAGES):
        raise _fail(f"algorithms must name one or more of {', '.join(ROUND_STAGES)}")
    out = {}
    for name, entry in raw.items():
        if not isinstance(entry, dict) or set(entry) != {"settings", "dim", "data"}:
            raise _fail(f"{name} must hold its settings, dim and data")
        out[name] = StudyAlgorithm(settings=_settings(name, entry["settings"]),
                                   dim=_int(entry["dim"], f"{name}: dim", 2, 10**6),
                                   data=_text(entry["data"], f"{name}: data", MAX_DESCRIPTION))
    return out


def _sites(raw: Any, algorithms: Sequence[str]) -> tuple[tuple[Site, ...], dict[str, dict[str, int]],
                                                          dict[str, float]]:
    if not isinstance(raw, list) or not 2 <= len(raw) <= MAX_SITES:
        raise _fail(f"sites must list 2 to {MAX_SITES} sites")
    sites, counts, totals = [], {}, {}
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or set(entry) != {"name", "eps", "delta", "weight", "n", "total_eps"}:
            raise _fail(f"site {i + 1} must hold name, eps, delta, weight, n and total_eps")
        name = _text(entry["name"], f"site {i + 1}: name", 64)
        if name in counts:
            raise _fail(f"site {name} is listed twice")
        weight = entry["weight"]
        weight = None if weight is None else _num(weight, f"site {name}: weight", 0.0, 1e6)
        n = entry["n"]
        if not isinstance(n, dict) or set(n) != set(algorithms):
            raise _fail(f"site {name}: n must give N_s for exactly {', '.join(algorithms)}")
        counts[name] = {a: _int(v, f"site {name}: n of {a}", 1, 10**12) for a, v in n.items()}
        sites.append(Site(name=name, n=1, eps=_num(entry["eps"], f"site {name}: eps", 1e-6, 1e4),
                          delta=_num(entry["delta"], f"site {name}: delta", DELTA_RANGE[0], 0.5), weight=weight))
        totals[name] = _num(entry["total_eps"], f"site {name}: total_eps", 0.0, 1e300)
    return tuple(sites), counts, totals


def _plans(study: Study) -> dict[str, RoundPlan]:
    plans = {}
    for name, algorithm in study.algorithms.items():
        plan = plan_round(study.budgets(name), algorithm.settings)
        if plan.refusal:
            raise _fail(f"its {name} rounds cannot run: {plan.refusal}")
        plans[name] = plan
    return plans


def canonical(document: Mapping[str, Any]) -> str:
    """The canonical text of a study document (what its digest is taken of)."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), allow_nan=False)


@functools.lru_cache(maxsize=8)
def parse_study(text: str) -> Study:
    """A study from its text (module docstring): every field checked, every algorithm planned, every site's total
    the composition of its rounds; InputError naming the first problem."""
    if not isinstance(text, str) or len(text.encode()) > MAX_STUDY_BYTES:
        raise _fail(f"must be text of at most {MAX_STUDY_BYTES:,} bytes")
    doc = load_json(text, "study", max_bytes=MAX_STUDY_BYTES)
    keys = {"format", "title", "proposer", "rounds", "total_delta", "algorithms", "sites"}
    if not isinstance(doc, dict) or doc.get("format") != STUDY_FORMAT or set(doc) != keys:
        raise _fail(f"a study ({STUDY_FORMAT!r}) holds exactly {', '.join(sorted(keys))}")
    algorithms = _algorithms(doc["algorithms"])
    site_list, counts, totals = _sites(doc["sites"], list(algorithms))
    text = canonical(doc)
    study = Study(title=_text(doc["title"], "title", MAX_TITLE), proposer=_text(doc["proposer"], "proposer", MAX_TITLE),
                  rounds=_int(doc["rounds"], "rounds", 1, MAX_STUDY_ROUNDS),
                  total_delta=_num(doc["total_delta"], "total_delta", DELTA_RANGE[0], 0.5), algorithms=algorithms,
                  sites=site_list, counts=counts, totals=totals, plans={}, text=text,
                  digest=hashlib.sha256(text.encode()).hexdigest())
    study = replace(study, plans=_plans(study))
    for name, stated in totals.items():
        total = composed_eps([study.total_mu(name)], study.total_delta)
        if not math.isclose(stated, total, rel_tol=_TOTAL_RTOL, abs_tol=1e-12):
            raise _fail(f"site {name}'s total_eps is {stated:.6g}; its {study.rounds} round(s) of "
                        f"{', '.join(algorithms)} compose to {total:.6g} at delta = {study.total_delta:g}")
    return study


def study_text(*, title: str, proposer: str, rounds: int, total_delta: float,
               algorithms: Mapping[str, tuple[RoundSettings, int, str]], sites: Sequence[Site],
               counts: Mapping[str, Mapping[str, int]]) -> str:
    """A study's canonical text from its parts, every site's total computed (what ``python -m capefed.ops.study
    propose`` writes); checked by :func:`parse_study`. ``algorithms``: name -> (settings, D, description of the
    data); ``counts``: site -> algorithm -> N_s. A setting's collusion None becomes the default ceil(S/3) - 1."""
    entries = {}
    for name, (settings, dim, data) in algorithms.items():
        s = settings.to_dict()
        s.pop("algorithm")
        s.pop("run")
        if s["collusion"] is None:
            s["collusion"] = default_collusion(len(sites))
        entries[name] = {"settings": s, "dim": dim, "data": data}
    site_entries = [{"name": s.name, "eps": s.eps, "delta": s.delta, "weight": s.weight,
                     "n": dict(counts[s.name]), "total_eps": 0.0} for s in sites]
    doc = {"format": STUDY_FORMAT, "title": title, "proposer": proposer, "rounds": rounds, "total_delta": total_delta,
           "algorithms": entries, "sites": site_entries}
    draft = Study(title=title, proposer=proposer, rounds=rounds, total_delta=total_delta,
                  algorithms=_algorithms(entries), sites=tuple(sites),
                  counts={k: dict(v) for k, v in counts.items()}, totals={}, plans={}, text="", digest="")
    draft = replace(draft, plans=_plans(draft))
    for entry in site_entries:
        entry["total_eps"] = composed_eps([draft.total_mu(entry["name"])], total_delta)
    text = canonical(doc)
    parse_study(text)
    return text


def round_problem(study: Study, settings: RoundSettings, budgets: Sequence[SiteBudget]) -> str | None:
    """Why a round is outside ``study``, naming the check, or None: its algorithm is one of the study's, every
    setting but the run number is the study's (collusion None: the default for the study's sites) and the sites and
    every value they report (N_s, eps_s, delta_s, weight, D) are the study's."""
    entry = study.algorithms.get(settings.algorithm)
    if entry is None:
        return f"the study runs {', '.join(study.algorithms)}, not {settings.algorithm}"
    given = settings if settings.collusion is not None else replace(
        settings, collusion=default_collusion(len(budgets)))
    for field in _SETTINGS:
        mine, theirs = getattr(given, field), getattr(entry.settings, field)
        if mine != theirs:
            return f"the round's {field} is {mine!r}; the study says {theirs!r}"
    names = sorted(b.name for b in budgets)
    if names != sorted(study.names):
        return f"the round's sites are {', '.join(names)}; the study's are {', '.join(sorted(study.names))}"
    expected = {b.name: b.to_dict() for b in study.budgets(settings.algorithm)}
    for b in budgets:
        if b.to_dict() != expected[b.name]:
            return (f"site {b.name} reports N_s = {b.site.n}, eps = {b.site.eps:g}, delta = {b.site.delta:g}, weight "
                    f"= {b.site.weight}, D = {b.dim}; the study says N_s = {expected[b.name]['n']}, eps = "
                    f"{expected[b.name]['eps']:g}, delta = {expected[b.name]['delta']:g}, weight = "
                    f"{expected[b.name]['weight']}, D = {expected[b.name]['dim']}")
    return None


@dataclass(frozen=True, kw_only=True)
class Exposure:
    """What a study would expose of one site: per algorithm and stage the audit of every view of its release (the
    design's colluders c + drop-outs, the round's noise variant) and the worst view's cost; one round's and the whole
    study's composition."""

    site: str
    views: dict[str, dict[str, tuple[AuditRow, ...]]]
    costs: list[LedgerEntry]
    round_mu: float
    total_mu: float
    round_eps: float
    total_eps: float
    total_delta: float


def site_exposure(study: Study, name: str) -> Exposure:
    if name not in study.names:
        raise _fail(f"it has no site {name} (its sites: {', '.join(study.names)})")
    views: dict[str, dict[str, tuple[AuditRow, ...]]] = {}
    for algorithm, plan in study.plans.items():
        views[algorithm] = {}
        for stage in plan.stages:
            report = variant_audit(stage.design, stage.sensitivities, stage.eps, stage.delta, plan.design_collusion,
                                   variant=plan.settings.noise)
            views[algorithm][stage.stage] = tuple(r for r in report.rows if r.site == name)
    costs = study.costs(name)
    round_mu = composed_mu([c.mu for c in costs])
    return Exposure(site=name, views=views, costs=costs, round_mu=round_mu, total_mu=study.total_mu(name),
                    round_eps=composed_eps([round_mu], study.total_delta),
                    total_eps=composed_eps([study.total_mu(name)], study.total_delta),
                    total_delta=study.total_delta)
