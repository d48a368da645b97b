"""Scenario: the shared input of every page and command (sites, budgets, weights, relation, calibration;
docs/math/setting.md, the file format in docs/cli.md).

The scenario is validated here, at the boundary, and nowhere below: a :class:`Scenario` holds only valid sites,
a known neighbouring relation and calibration, and its derived quantities (sensitivities, noise multipliers,
tau_s) use the unchecked formulas of :mod:`dpcore.privacy`.

JSON format (weights may be omitted, then mu_s = N_s / N; ``tau_c`` null means "the DP floor")::

    {"sites": [{"name": "A", "n": 1000, "eps": 0.5, "delta": 1e-5, "weight": 0.25}, ...],
     "neighbouring": "replace-one", "calibration": "analytic", "tau_c": null, "seed": 7}

:func:`scenario_errors` lists every invalid field at once (site and field named), which the dashboard
uses to mark cells; :func:`scenario_from_dict` raises :class:`ScenarioError` carrying that list.
"""

from __future__ import annotations

import json
import math
import unicodedata
from dataclasses import asdict, dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from ..limits import (
    DELTA_RANGE,
    EPS_RANGE,
    MAX_NUMBER_CHARS,
    MAX_OTD_DIM,
    MAX_SEED,
    MAX_SIGMA2,
    MAX_SITE_NAME_CHARS,
    MAX_SITE_SIZE,
    MAX_SITES,
    TAU_C_RANGE,
)
from ..privacy.calibration import CALIBRATIONS, Calibration, classic_caveat, multiplier
from ..privacy.sensitivity import NEIGHBOURING, STATISTICS, Neighbouring, sensitivity_unchecked
from ..validation import (
    InputError,
    as_float,
    check_choice,
    check_int_range,
    check_range,
    number_text_problem,
    parse_number_text,
    shown,
)

__all__ = ["FieldError", "Scenario", "ScenarioError", "Site", "scenario_errors", "scenario_from_dict", "site_errors"]

SITE_FIELDS = ("name", "n", "eps", "delta", "weight")
SCENARIO_FIELDS = ("sites", "neighbouring", "calibration", "tau_c", "seed")
WEIGHT_TOLERANCE = 1e-6


@dataclass(frozen=True)
class FieldError:
    """One invalid field: ``site`` is the 0-based site index (None for scenario-level fields)."""

    field: str
    message: str
    site: int | None = None
    site_name: str | None = None

    def __str__(self) -> str:
        if self.site is None:
            return f"{self.field}: {self.message}"
        label = f"site {self.site + 1}" + (f" ({self.site_name})" if self.site_name else "")
        return f"{label}, {self.field}: {self.message}"


class ScenarioError(InputError):
    """An invalid scenario; ``errors`` lists every problem found."""

    def __init__(self, errors: list[FieldError]):
        self.errors = list(errors)
        super().__init__("; ".join(str(e) for e in self.errors))


@dataclass(frozen=True, kw_only=True)
class Site:
    """One data holder: ``n`` samples, budget (``eps``, ``delta``), optional aggregation weight mu_s."""

    name: str
    n: int
    eps: float
    delta: float
    weight: float | None = None


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """Sites plus the settings every computation needs. Build with :func:`scenario_from_dict` (which validates);
    every method below trusts the fields."""

    sites: tuple[Site, ...]
    neighbouring: Neighbouring = "replace-one"
    calibration: Calibration = "classic"
    tau_c: float | None = None
    seed: int = 0

    # --- derived quantities -------------------------------------------------------------------
    @property
    def n_sites(self) -> int:
        return len(self.sites)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.sites]

    @property
    def sizes(self) -> np.ndarray:
        return np.array([s.n for s in self.sites], dtype=int)

    @property
    def total_n(self) -> int:
        return int(self.sizes.sum())

    @property
    def eps(self) -> np.ndarray:
        return np.array([s.eps for s in self.sites], dtype=float)

    @property
    def delta(self) -> np.ndarray:
        return np.array([s.delta for s in self.sites], dtype=float)

    @property
    def weights_given(self) -> bool:
        return all(s.weight is not None for s in self.sites)

    def weights(self) -> np.ndarray:
        """mu_s as given, or N_s / N when the scenario omits weights."""
        if self.weights_given:
            return np.array([s.weight for s in self.sites], dtype=float)
        return self.sizes / self.total_n

    def sensitivities(
        self, statistic: str = "mean", *, dim: int | None = None, sigma2: float | None = None
    ) -> np.ndarray:
        """Delta_s of ``statistic`` at every site under the scenario's neighbouring relation.

        The statistic (and, for mog-m3, D and sigma^2) enter here and are checked once; the sites are valid."""
        statistic = check_choice(statistic, "statistic", STATISTICS)
        if statistic == "mog-m3":
            if dim is None or sigma2 is None:
                raise InputError("the mog-m3 sensitivity needs the dimension D and the component variance sigma^2")
            dim = check_int_range(dim, "D", 1, MAX_OTD_DIM)
            sigma2 = check_range(sigma2, "sigma^2", 0.0, MAX_SIGMA2)
        return np.array([sensitivity_unchecked(statistic, s.n, self.neighbouring, dim=dim, sigma2=sigma2)
                         for s in self.sites])

    def multipliers(self, eps_scale: float = 1.0, delta_scale: float = 1.0) -> np.ndarray:
        """c(eps_s * eps_scale, delta_s * delta_scale) per site (the scales, in (0, 1], split a budget into
        stages). No warning: the classic-calibration caveat is reported by :meth:`caveats`."""
        return np.array([multiplier(s.eps * eps_scale, s.delta * delta_scale, self.calibration) for s in self.sites])

    def taus(self, statistic: str = "mean", *, dim: int | None = None, sigma2: float | None = None) -> np.ndarray:
        """tau_s = Delta_s * c(eps_s, delta_s): the noise std each site's own release needs."""
        return self.sensitivities(statistic, dim=dim, sigma2=sigma2) * self.multipliers()

    def caveats(self) -> list[str]:
        """Caveats that apply to this scenario, one line per kind naming the sites concerned:
        classic calibration at eps >= 1 (not a guarantee) and delta not well below 1/N_s."""
        notes = []
        if self.calibration == "classic":
            loose = [s for s in self.sites if classic_caveat(s.eps)]
            if loose:
                values = ", ".join(f"{e:g}" for e in sorted({s.eps for s in loose}))
                notes.append(f"{_sites_label(loose)}: classic Gaussian calibration at eps = {values} is not a valid "
                             "(eps, delta) guarantee (it is proven only for eps < 1); it is used here to reproduce "
                             "the papers. Use the analytic calibration for a real guarantee.")
        large = [s for s in self.sites if s.delta >= 1.0 / s.n]
        if large:
            values = ", ".join(f"{d:g}" for d in sorted({s.delta for s in large}))
            smallest = min(s.n for s in large)
            notes.append(f"{_sites_label(large)}: delta = {values} is not well below 1/N_s (1/{smallest} = "
                         f"{1.0 / smallest:.3g} at the smallest such site); a mechanism could then release a whole "
                         "record with probability delta")
        return notes

    # --- conversions --------------------------------------------------------------------------
    def front_door_problem(self) -> str | None:
        """What makes this Scenario invalid, in one line by :func:`scenario_from_dict`'s rules and messages, or None.
        A Scenario built directly (``dpcore.Scenario(sites=...)``) is not validated; the front door
        (:mod:`dpcore.arguments`) asks every Scenario it is handed."""
        if not isinstance(self.sites, (tuple, list)) or not all(isinstance(s, Site) for s in self.sites):
            return f"sites must be a tuple of dpcore.Site (got {shown(self.sites)})"
        sites = [{k: v for k, v in vars(s).items() if not (k == "weight" and v is None)} for s in self.sites]
        errors, _ = scenario_errors({"sites": sites, "neighbouring": self.neighbouring,
                                     "calibration": self.calibration, "tau_c": self.tau_c, "seed": self.seed})
        return "; ".join(str(e) for e in errors[:5]) + ("; ..." if len(errors) > 5 else "") if errors else None

    def to_dict(self) -> dict[str, Any]:
        sites = []
        for s in self.sites:
            entry = asdict(s)
            if s.weight is None:
                del entry["weight"]
            sites.append(entry)
        return {
            "sites": sites,
            "neighbouring": self.neighbouring,
            "calibration": self.calibration,
            "tau_c": self.tau_c,
            "seed": self.seed,
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def with_sites(self, **changes: Any) -> Scenario:
        """A copy with one field set on every site, e.g. ``with_sites(eps=0.1)``; weights are kept."""
        unknown = set(changes) - set(SITE_FIELDS)
        if unknown:
            raise InputError(f"unknown site field(s): {', '.join(sorted(unknown))}")
        data = self.to_dict()
        for entry in data["sites"]:
            entry.update(changes)
        return scenario_from_dict(data)

    def with_sizes(self, sizes: Any) -> Scenario:
        """A validated copy with site s holding ``sizes[s]`` samples (budgets, weights, settings kept)."""
        sizes = np.asarray(sizes)
        if sizes.shape != (self.n_sites,):
            raise InputError(f"need one size per site ({self.n_sites}), got {sizes.size}", "sizes")
        data = self.to_dict()
        for entry, n in zip(data["sites"], sizes, strict=True):
            entry["n"] = int(n)
        return scenario_from_dict(data)

    def replace(self, **changes: Any) -> Scenario:
        """A validated copy with scenario-level fields changed."""
        data = self.to_dict()
        data.update(changes)
        return scenario_from_dict(data)


def _sites_label(sites: list[Site], shown: int = 6) -> str:
    """'site A' or 'sites A, B, ... and 3 more'."""
    if len(sites) == 1:
        return f"site {sites[0].name}"
    names = ", ".join(s.name for s in sites[:shown])
    more = f" and {len(sites) - shown} more" if len(sites) > shown else ""
    return f"sites {names}{more}"


# ----------------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------------

def _number(value: Any) -> float | None:
    """A real or a numeric text as a float (integers too large for a float become +-inf); None otherwise.
    Never raises: the validator itself must survive any value."""
    if isinstance(value, bool):
        return None
    if isinstance(value, Real):
        return as_float(value)
    if isinstance(value, str):
        if len(value.strip()) > MAX_NUMBER_CHARS:
            return None
        return parse_number_text(value)
    return None


def _got(value: Any) -> str:
    """'(got X)' for a message, with how to write a number when X is text that is not one."""
    hint = number_text_problem(value) if isinstance(value, str) and len(value) <= MAX_NUMBER_CHARS else None
    return f"(got {shown(value)}{'; ' + hint if hint else ''})"


def _in_range(number: float | None, low: float, high: float, *, high_open: bool = False) -> bool:
    if number is None or not math.isfinite(number):
        return False
    return low <= number < high if high_open else low <= number <= high


def _whole(number: float | None, low: int, high: int) -> bool:
    return _in_range(number, low, high) and number == int(number)  # type: ignore[arg-type]


def _name_problem(name: Any) -> str | None:
    if not isinstance(name, str) or not name.strip():
        return "must be a non-empty text"
    if len(name.strip()) > MAX_SITE_NAME_CHARS:
        return f"must be at most {MAX_SITE_NAME_CHARS} characters (got {len(name.strip()):,})"
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        return "must not contain control characters (tabs, line breaks, terminal escape codes)"
    return None


def _site_errors(index: int, raw: Any) -> tuple[list[FieldError], Site | None]:
    if not isinstance(raw, dict):
        return [FieldError("site", f"must be an object with fields {', '.join(SITE_FIELDS)}", index)], None
    errors: list[FieldError] = []
    name = raw.get("name")
    label = name if isinstance(name, str) and _name_problem(name) is None else None

    def bad(fld: str, message: str) -> None:
        errors.append(FieldError(fld, message, index, label))

    for key in raw:
        if key not in SITE_FIELDS:
            bad(shown(key, 40).strip("'"), f"unknown field; allowed: {', '.join(SITE_FIELDS)}")
    problem = _name_problem(name)
    if problem:
        bad("name", problem)
    n = raw.get("n")
    n_num = _number(n)
    if n is None:
        bad("n", f"is missing (number of samples, an integer from 1 to {MAX_SITE_SIZE:,})")
    elif not _whole(n_num, 1, MAX_SITE_SIZE):
        bad("n", f"must be an integer from 1 to {MAX_SITE_SIZE:,} {_got(n)}")
    eps = raw.get("eps")
    eps_num = _number(eps)
    if eps is None:
        bad("eps", f"is missing (privacy parameter, a number from {EPS_RANGE[0]:g} to {EPS_RANGE[1]:g})")
    elif not _in_range(eps_num, *EPS_RANGE):
        bad("eps", f"must be a number from {EPS_RANGE[0]:g} to {EPS_RANGE[1]:g} {_got(eps)}")
    delta = raw.get("delta")
    delta_num = _number(delta)
    if delta is None:
        bad("delta", f"is missing (privacy parameter, a number from {DELTA_RANGE[0]:g} to below 1)")
    elif not _in_range(delta_num, *DELTA_RANGE, high_open=True):
        bad("delta", f"must be a number from {DELTA_RANGE[0]:g} to below 1 {_got(delta)}")
    weight = raw.get("weight")
    weight_num = _number(weight)
    if weight is not None and not _in_range(weight_num, 0.0, 1.0):
        bad("weight", f"must be a number from 0 to 1 or omitted {_got(weight)}")
    if errors:
        return errors, None
    return [], Site(name=name.strip(), n=int(n_num), eps=float(eps_num), delta=float(delta_num), weight=weight_num)


def site_errors(index: int, raw: Any) -> tuple[list[FieldError], Site | None]:
    """The problems of one site given as a dict (the scenario's rules and messages for name, n, eps, delta and
    weight; ``index`` is 0-based), and the Site when there are none. Rules between sites (names, weights summing to
    1) are :func:`scenario_errors`'s."""
    return _site_errors(index, raw)


def scenario_errors(data: Any) -> tuple[list[FieldError], Scenario | None]:
    """All problems of a scenario given as a dict (parsed JSON), and the Scenario when there are none."""
    if not isinstance(data, dict):
        return [FieldError("scenario", "must be a JSON object with a 'sites' list")], None
    errors: list[FieldError] = []
    for key in data:
        if key not in SCENARIO_FIELDS:
            errors.append(FieldError(shown(key, 40).strip("'"),
                                     f"unknown field; allowed: {', '.join(SCENARIO_FIELDS)}"))
    raw_sites = data.get("sites")
    sites: list[Site] = []
    if not isinstance(raw_sites, list) or not raw_sites:
        errors.append(FieldError("sites", "must be a non-empty list of sites"))
        raw_sites = []
    elif len(raw_sites) > MAX_SITES:
        errors.append(FieldError("sites", f"at most {MAX_SITES} sites are supported (got {len(raw_sites)})"))
        raw_sites = []
    for i, raw in enumerate(raw_sites):
        site_errs, site = _site_errors(i, raw)
        errors.extend(site_errs)
        if site is not None:
            sites.append(site)
    if len(sites) == len(raw_sites) and sites:
        names = [s.name for s in sites]
        for i, s in enumerate(sites):
            if names.index(s.name) != i:
                errors.append(FieldError("name", f"duplicates the name of site {names.index(s.name) + 1}", i, s.name))
        given = [s.weight is not None for s in sites]
        if any(given) and not all(given):
            missing = [i for i, g in enumerate(given) if not g]
            for i in missing:
                message = "is missing while other sites have weights (give all or none)"
                errors.append(FieldError("weight", message, i, sites[i].name))
        elif all(given):
            total = sum(s.weight for s in sites)  # type: ignore[misc]
            if abs(total - 1.0) > WEIGHT_TOLERANCE:
                errors.append(FieldError("weights", f"must sum to 1 (they sum to {total:.6g})"))
    neighbouring = data.get("neighbouring", "replace-one")
    if not isinstance(neighbouring, str) or neighbouring not in NEIGHBOURING:
        errors.append(FieldError("neighbouring",
                                 f"must be one of {', '.join(NEIGHBOURING)} (got {shown(neighbouring)})"))
    calibration = data.get("calibration", "classic")
    if not isinstance(calibration, str) or calibration not in CALIBRATIONS:
        errors.append(FieldError("calibration",
                                 f"must be one of {', '.join(CALIBRATIONS)} (got {shown(calibration)})"))
    tau_c = data.get("tau_c")
    tau_num = _number(tau_c)
    if tau_c is not None and not _in_range(tau_num, *TAU_C_RANGE):
        errors.append(FieldError("tau_c", f"must be a number from {TAU_C_RANGE[0]:g} to {TAU_C_RANGE[1]:g}, or null "
                                          f"for the DP floor (got {shown(tau_c)})"))
    seed = data.get("seed", 0)
    seed_num = _number(seed)
    if not _whole(seed_num, 0, MAX_SEED):
        errors.append(FieldError("seed", f"must be an integer from 0 to {MAX_SEED:,} (got {shown(seed)})"))
    else:
        seed = int(seed) if isinstance(seed, Integral) else int(seed_num)  # type: ignore[arg-type]
    if errors:
        return errors, None
    return [], Scenario(sites=tuple(sites), neighbouring=neighbouring, calibration=calibration, tau_c=tau_num,
                        seed=int(seed))


def scenario_from_dict(data: Any) -> Scenario:
    """Validated Scenario from a dict; raises :class:`ScenarioError` listing every invalid field."""
    errors, scenario = scenario_errors(data)
    if errors:
        raise ScenarioError(errors)
    assert scenario is not None
    return scenario
