"""What a sweep is (docs/experiments.md): a frozen, JSON-serialisable :class:`SweepSpec` - the family, the swept
parameter and its grid, the algorithms, the base scenario, the data (the family's settings type,
``Family.sweep.data``: :class:`~dpcore.pca.sweep.PcaData`, :class:`~dpcore.agn.sweep.OtdData` or
:class:`~dpcore.lda.sweep.LdaData`), the number of runs R and the seed - validated and normalised on construction,
and the scenario of each grid point.

Swept parameters (:data:`PARAMETERS`); every other setting stays at the base scenario's value:

* ``eps``, ``delta``: every site gets the grid value (the papers' equal-budget figures);
* ``ns``: every site gets N_s = the grid value;
* ``sites``: S sites, site s copying the base scenario's site ((s - 1) mod S0) (so equal sites stay equal);
  given weights cannot be extended and are replaced by N_s / N (a note says so);
* ``c``: capePCA/capeAGN use the collusion-robust design with c colluders (gain S - c for equal sites, times
  1/1.01 for its safety margin); the other algorithms do not depend on c.

A target ``tau_c`` of the base scenario is not carried along a sweep (it would not fit other budgets): every grid
point uses the DP floor (a note says so).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from ..agn.sweep import OtdData
from ..lda.sweep import LdaData
from ..limits import MAX_GRID_POINTS, MAX_SITES, MAX_SWEEP_RUNS
from ..pca import SOLVER_DTYPES
from ..pca.sweep import PCA_DATASETS, PcaData
from ..registry import canonical_name
from ..scenario import Scenario, scenario_from_dict
from ..textio import load_json
from ..validation import InputError, check_choice, check_delta, check_epsilon, check_positive_int
from .families import FAMILIES, METRICS, algorithm_table, algorithm_titles

__all__ = [
    "DEFAULT_GRIDS",
    "INTEGER_PARAMETERS",
    "LOG_PARAMETERS",
    "LdaData",
    "PARAMETERS",
    "PARAMETER_LABELS",
    "PCA_DATASETS",
    "SOLVER_DTYPES",
    "SWEPT",
    "Parameter",
    "OtdData",
    "PcaData",
    "SweepSpec",
    "default_grid",
    "parse_grid",
    "scenario_at",
    "spec_from_dict",
    "spec_from_json",
]



@dataclass(frozen=True, kw_only=True)
class Parameter:
    """A parameter a sweep can vary: its ``name`` (``--vary``), ``label`` (tables, the grid's column), the
    ``description`` (help texts), the figure's ``axis_title``, the ``words`` of computed sentences, whether its axis
    is logarithmic and its values integers, and its default grid (None: computed from the scenario)."""

    name: str
    label: str
    description: str
    axis_title: str
    words: str
    log: bool
    integer: bool
    default_grid: tuple[float | int, ...] | None = None


SWEPT: dict[str, Parameter] = {p.name: p for p in (
    Parameter(name="eps", label="eps", description="eps of every site", axis_title="privacy parameter eps (every site)",
              words="the privacy parameter eps", log=True, integer=False, default_grid=(0.01, 0.1, 1.0, 10.0)),
    Parameter(name="delta", label="delta", description="delta of every site",
              axis_title="privacy parameter delta (every site)", words="delta", log=True, integer=False,
              default_grid=(1e-4, 1e-3, 1e-2)),
    Parameter(name="ns", label="N_s", description="N_s, the number of samples of every site",
              axis_title="samples per site N_s", words="the samples per site N_s", log=True, integer=True,
              default_grid=(100, 1000, 4000)),
    Parameter(name="sites", label="S", axis_title="number of sites S", words="the number of sites S", log=False,
              integer=True, description="S, the number of sites (site s copies the base scenario's site (s - 1) "
              "mod S0)"),
    Parameter(name="c", label="c", axis_title="collusion bound c", words="the collusion bound c", log=False,
              integer=True, description="c, the number of colluding sites the CAPE design is robust to "
              "(design_collusion_robust)"),
)}
"""Every parameter a sweep can vary, defined once; the names below are views of it."""
PARAMETERS: dict[str, str] = {name: p.description for name, p in SWEPT.items()}
PARAMETER_LABELS: dict[str, str] = {name: p.label for name, p in SWEPT.items()}
INTEGER_PARAMETERS = tuple(name for name, p in SWEPT.items() if p.integer)
LOG_PARAMETERS = tuple(name for name, p in SWEPT.items() if p.log)
DEFAULT_GRIDS = {name: p.default_grid for name, p in SWEPT.items() if p.default_grid is not None}


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)




def default_grid(parameter: str, scenario: Scenario | None = None) -> tuple[float, ...]:
    """A reasonable grid for ``parameter`` (c: 0..S-1 of the scenario; S: 2..10)."""
    parameter = check_choice(parameter, "parameter", tuple(PARAMETERS))
    if parameter == "c":
        n = 5 if scenario is None else scenario.n_sites
        return tuple(range(max(n, 1)))
    if parameter == "sites":
        return (2, 3, 5, 10)
    return DEFAULT_GRIDS[parameter]


def _check_value(parameter: str, value: Any) -> float | int:
    name = f"grid value ({PARAMETER_LABELS[parameter]})"
    if parameter == "eps":
        return check_epsilon(value, name)
    if parameter == "delta":
        return check_delta(value, name)
    if parameter == "ns":
        return check_positive_int(value, name)
    if parameter == "sites":
        s = check_positive_int(value, name, minimum=2)
        if s > MAX_SITES:
            raise InputError(f"{name} must be at most {MAX_SITES} (got {s})", "grid")
        return s
    return check_positive_int(value, name, minimum=0)


def _normalise_grid(parameter: str, grid: Any) -> tuple[float | int, ...]:
    if isinstance(grid, (str, bytes)) or not isinstance(grid, (Sequence, np.ndarray)):
        raise InputError(f"the grid must be a list of values (got {grid!r})", "grid")
    if len(grid) == 0:
        raise InputError("the grid is empty: give at least one value", "grid")
    values = []
    for v in grid:
        v = v.item() if isinstance(v, np.generic) else v
        try:
            values.append(_check_value(parameter, v))
        except InputError as exc:
            raise InputError(str(exc), "grid") from exc
    if len(set(values)) != len(values):
        repeated = sorted({v for v in values if values.count(v) > 1})
        raise InputError(f"the grid repeats {', '.join(f'{v:g}' for v in repeated)}; give distinct values", "grid")
    if len(values) > MAX_GRID_POINTS:
        raise InputError(f"the grid has {len(values)} values; at most {MAX_GRID_POINTS} are allowed", "grid")
    values.sort()
    if parameter in INTEGER_PARAMETERS:
        return tuple(int(v) for v in values)
    return tuple(float(v) for v in values)


def parse_grid(text: str, parameter: str) -> tuple[float | int, ...]:
    """A grid typed by a user: numbers separated by commas, semicolons or spaces (``1e-3`` allowed), checked for
    ``parameter`` (eps > 0, 0 < delta < 1, integers N_s >= 1, S >= 2, c >= 0), distinct, sorted ascending."""
    parameter = check_choice(parameter, "parameter", tuple(PARAMETERS))
    if text is None or not str(text).strip():
        example = ", ".join(f"{v:g}" for v in default_grid(parameter))
        raise InputError(f"the grid is empty: give the {PARAMETER_LABELS[parameter]} values separated by commas, "
                         f"e.g. {example}", "grid")
    parts = [p for p in str(text).replace(";", ",").replace(" ", ",").split(",") if p.strip()]
    values: list[float | int] = []
    for part in parts:
        try:
            number = float(part)
        except ValueError:
            raise InputError(f"grid value {part.strip()!r} is not a number; separate values by commas, e.g. "
                             "0.1, 1, 10", "grid") from None
        if parameter in INTEGER_PARAMETERS and math.isfinite(number) and number == int(number):
            values.append(int(number))
        else:
            values.append(number)
    return _normalise_grid(parameter, values)


@dataclass(frozen=True, kw_only=True)
class SweepSpec:
    """Everything a sweep depends on; validated and normalised on construction (grid sorted, algorithms
    de-duplicated, settings that do not apply reset), so equal sweeps have equal JSON (:meth:`to_json`, the
    cache key). ``scenario`` is the base scenario; ``seed`` seeds data, split and noise."""

    family: str
    parameter: str
    grid: tuple[float | int, ...]
    algorithms: tuple[str, ...]
    scenario: Scenario
    data: Any  # the family's data settings: an instance of its Family.sweep.data (checked below)
    runs: int = 10
    seed: int = 0

    def __post_init__(self) -> None:
        family = check_choice(self.family, "family", tuple(FAMILIES))
        _set(self, "family", family)
        parameter = check_choice(self.parameter, "parameter", tuple(PARAMETERS))
        _set(self, "parameter", parameter)
        if not isinstance(self.scenario, Scenario):
            raise InputError("the base scenario must be a Scenario", "scenario")
        expected = FAMILIES[family].sweep.data
        if not isinstance(self.data, expected):
            raise InputError(f"a {family} sweep needs {expected.__name__} data settings", "data")
        grid = _normalise_grid(parameter, self.grid)
        if parameter == "c":
            too_many = [c for c in grid if c > self.scenario.n_sites - 1]
            if too_many:
                raise InputError(f"collusion bound c must be at most S - 1 = {self.scenario.n_sites - 1} for the "
                                 f"{self.scenario.n_sites} sites of the scenario (got {too_many[0]})", "grid")
        _set(self, "grid", grid)
        if isinstance(self.algorithms, str):
            raise InputError("algorithms must be a list of names", "algorithms")
        table = algorithm_table(family)
        algorithms = tuple(dict.fromkeys(canonical_name(str(a), table) for a in self.algorithms))
        if not algorithms:
            raise InputError(f"choose at least one algorithm ({', '.join(table)})", "algorithms")
        for a in algorithms:
            check_choice(a, "algorithm", tuple(table))
        _set(self, "algorithms", algorithms)
        runs = check_positive_int(self.runs, "runs")
        if runs > MAX_SWEEP_RUNS:
            raise InputError(f"runs must be at most {MAX_SWEEP_RUNS} (got {runs})", "runs")
        _set(self, "runs", runs)
        _set(self, "seed", check_positive_int(self.seed, "seed", minimum=0))
        self._check_size()

    def _check_size(self) -> None:
        """The data settings' limits at the largest grid point (and, for a family that needs it, the smallest
        site of any grid point)."""
        varied = self.parameter in ("ns", "sites")
        largest = scenario_at(self, self.grid[-1]) if varied else self.scenario
        smallest = int(min(scenario_at(self, v).sizes.min() for v in self.grid) if varied else
                       self.scenario.sizes.min())
        self.data.check_size(largest, smallest)

    # --- conversions --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "parameter": self.parameter, "grid": list(self.grid),
                "algorithms": list(self.algorithms), "runs": self.runs, "seed": self.seed,
                "scenario": self.scenario.to_dict(), "data": asdict(self.data)}

    def to_json(self, indent: int | None = None) -> str:
        """Canonical JSON (sorted keys): equal specs give equal text."""
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True)

    def replace(self, **changes: Any) -> SweepSpec:
        """A validated copy with fields changed (e.g. ``runs=3``)."""
        return replace(self, **changes)

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(METRICS[self.family])

    @property
    def label(self) -> str:
        return PARAMETER_LABELS[self.parameter]

    def describe(self) -> str:
        values = ", ".join(f"{v:g}" for v in self.grid)
        titles = algorithm_titles(self.family)
        return (f"{self.family.upper()} sweep over {self.label} in {{{values}}}; {self.data.describe()}; "
                f"{', '.join(titles[a] for a in self.algorithms)}; {self.runs} runs, seed {self.seed}")


def spec_from_dict(data: Any) -> SweepSpec:
    """A :class:`SweepSpec` from :meth:`SweepSpec.to_dict` output (validated; unknown keys rejected)."""
    if not isinstance(data, dict):
        raise InputError("a sweep specification must be a JSON object", "spec")
    allowed = {"family", "parameter", "grid", "algorithms", "runs", "seed", "scenario", "data"}
    unknown = set(data) - allowed
    if unknown:
        raise InputError(f"unknown sweep field(s): {', '.join(sorted(unknown))}", "spec")
    missing = {"family", "parameter", "grid", "algorithms", "scenario"} - set(data)
    if missing:
        raise InputError(f"missing sweep field(s): {', '.join(sorted(missing))}", "spec")
    family = check_choice(data["family"], "family", tuple(FAMILIES))
    cls = FAMILIES[family].sweep.data
    raw = data.get("data") or {}
    if not isinstance(raw, dict):
        raise InputError("data settings must be a JSON object", "data")
    names = {f for f in cls.__dataclass_fields__}
    bad = set(raw) - names
    if bad:
        raise InputError(f"unknown {family} data setting(s): {', '.join(sorted(bad))}", "data")
    return SweepSpec(family=family, parameter=data["parameter"],
                     grid=tuple(data["grid"]) if isinstance(data["grid"], list) else data["grid"],
                     algorithms=(tuple(data["algorithms"]) if isinstance(data["algorithms"], list)
                                 else data["algorithms"]),
                     scenario=scenario_from_dict(data["scenario"]), data=cls(**raw), runs=data.get("runs", 10),
                     seed=data.get("seed", 0))


def spec_from_json(text: str) -> SweepSpec:
    """A sweep specification from its JSON (the one bounded reader, :func:`dpcore.textio.load_json`)."""
    try:
        data = load_json(text, "sweep specification")
    except InputError as exc:
        raise InputError(str(exc), "spec") from None
    return spec_from_dict(data)


def _cyclic_sites(base: Scenario, n_sites: int) -> list[dict[str, Any]]:
    sites = base.sites
    equal = len({(s.n, s.eps, s.delta) for s in sites}) == 1
    out = []
    for i in range(n_sites):
        src = sites[i % len(sites)]
        if equal:
            name = f"s{i + 1}"
        else:
            name = src.name if i < len(sites) else f"{src.name}#{i // len(sites) + 1}"
        out.append({"name": name, "n": src.n, "eps": src.eps, "delta": src.delta})
    return out


def scenario_at(spec: SweepSpec, value: float | int) -> Scenario:
    """The scenario of one grid point: the base scenario with the swept parameter set (see the module
    docstring), tau_c at the DP floor."""
    data = spec.scenario.to_dict()
    data["tau_c"] = None
    if spec.parameter in ("eps", "delta", "ns"):
        key = {"eps": "eps", "delta": "delta", "ns": "n"}[spec.parameter]
        for entry in data["sites"]:
            entry[key] = int(value) if key == "n" else float(value)
    elif spec.parameter == "sites":
        data["sites"] = _cyclic_sites(spec.scenario, int(value))
    return scenario_from_dict(data)


