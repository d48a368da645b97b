"""The journal paper's privacy-utility figures as sweep presets (docs/experiments.md).

* Fig. 2 (a)-(i), PCA, S = 10 equal sites, delta = 0.01, 10 runs; algorithms capePCA, DPdisPCA, conv, local,
  non-dp pool; metric the captured energy q_CE:
  (a) synthetic (D = 200, K = 50) and (b) MNIST (D = 784, K = 50) over eps in {0.001, 0.01, 0.1, 1, 10},
  N_s = 1000; (d), (e) over N_s in {100, 1000, 4000} at eps = 0.5 / 1; (g), (h) over delta in
  {1e-4, 1e-3, 1e-2} at eps = 1 / 2, N_s = 1000. (c), (f), (i) are Covertype, which is not bundled: those
  presets are listed as unavailable with the reason.
  MNIST: the bundled subset has 5,000 images; S N_s = 10,000 (and 40,000 at N_s = 4000) are drawn with
  replacement, as ``dpcore.data.split_sites`` does, and the result's notes say so.
* Figs. 3-5, OTD, S = 5 equal sites, delta = 0.01, eps split equally between the two stages, 10 runs;
  algorithms capeAGN, conv, local, non-private, random vectors; metric q_comp; MOG (sigma^2 = 0.05) and STM at
  (D, K) in {(10, 5), (50, 10)}; Fig. 3 (MOG) and Fig. 4 (STM) over eps and over N_s, Fig. 5 over delta.
  ``authors-mog-d10-eps`` and ``authors-mog-d50-eps`` run Fig. 3's top row on the authors' synthetic set-up (their
  ground truth, their normalised q_comp as the metric shown; our public norm bound: docs/experiments.md).
  The paper does not print these figures' grids or sample sizes in its text; ours are a choice and say so:
  eps in {0.1, 0.3, 1, 3, 10} at N_s = 10,000; N_s in {1000, 2000, 5000, 10000, 20000} at eps = 1;
  delta in {1e-4, 1e-3, 1e-2} at eps = 1, N_s = 10,000 (at N_s = 1000 every private curve stays near or above
  the random reference at D = 50). The third moment runs on the projected path (no D^3 array; the same noise
  law as the dense path, so the same distribution of results, several times faster).

* LDA (docs/math/lda.md): the synthetic corpus K = 5, D = 100, alpha_0 = 1 (symmetric), 20,000 documents
  of 50 words over S = 5 equal sites (N_s = 4,000), delta = 1e-6; paper 004's configurations 1, 2, 2 with
  propose-test-release, 3 and 4 (one curator, the pooled documents) and capeLDA with its baselines, each over eps in
  {3, 10, 30, 100, 300} (N_s = 4,000) and over N_s in {1000, 2000, 4000, 10000, 20000} (eps = 30). Our grids:
  paper 004 has no experiments.

Every PCA and OTD preset uses the paper's calibration and constants: the **classic** Gaussian calibration, which is
not a guarantee for eps >= 1 (the figures go to eps = 10; the result's notes repeat this caveat), and the published
sensitivities ("as-published" neighbours; replace-one would add sqrt(2) more noise for PCA). The LDA presets use the
analytic calibration (a valid guarantee at every eps) and replace-one-document neighbours (:data:`LDA_CALIBRATION`).

:func:`quick_spec` gives a reduced version a teacher can run in seconds: 3 runs, and for PCA a smaller problem
(digits instead of MNIST, D = 50 instead of 200, K = 10): the shape of the curves, not the paper's numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..scenario import Scenario, equal_sites_scenario
from ..validation import InputError
from .families import default_algorithms
from .spec import LdaData, OtdData, PcaData, SweepSpec

__all__ = ["LDA_CALIBRATION", "PRESET_CALIBRATION", "QUICK", "SweepPreset", "get_preset", "preset_names", "presets",
           "quick_name", "quick_spec"]

PRESET_CALIBRATION = (
    "classic Gaussian calibration (as the paper; not a valid guarantee for eps >= 1, which the figures use) and "
    "the paper's sensitivities (as-published neighbours)"
)
LDA_CALIBRATION = ("analytic Gaussian calibration (a valid guarantee at every eps) and replace-one-document "
                   "neighbours")
QUICK = "3 runs; PCA on a smaller problem (digits instead of MNIST, D = 50 instead of 200, K = 10)"
PAPER_RUNS = 10
FIG2_EPS = (0.001, 0.01, 0.1, 1.0, 10.0)
FIG2_NS = (100, 1000, 4000)
FIG2_DELTA = (1e-4, 1e-3, 1e-2)
OTD_EPS = (0.1, 0.3, 1.0, 3.0, 10.0)
OTD_NS = (1000, 2000, 5000, 10000, 20000)
OTD_SITE_SIZE = 10_000
OTD_DELTA = (1e-4, 1e-3, 1e-2)
AUTHORS_SOURCE = ("our grid; the authors' ground truth (weights proportional to K evenly spaced values from 1 to 10K, "
                  "orthonormal means, sigma^2 = 0.05) and their metric (unit-length components), with our public "
                  "norm bound instead of their per-site largest norm, which is not private")
LDA_EPS = (3.0, 10.0, 30.0, 100.0, 300.0)
LDA_NS = (1000, 2000, 4000, 10000, 20000)
LDA_SITE_SIZE = 4000
LDA_EPS_FIXED = 30.0
LDA_DELTA = 1e-6
LDA_FIGURE = "LDA (our grid, no paper figure)"
"""The LDA presets' label in preset lists: paper 004 has no experiments, so they are not a figure of a paper."""
LDA_CONFIGURATIONS = ("1", "2", "2ptr", "3", "4", "nonpriv", "random")
LDA_CAPE = ("cape", "conv", "local", "pooled", "nonpriv", "random")
COVERTYPE_REASON = ("Covertype (UCI, D = 54, K = 10) is not bundled with this project (the app works offline and "
                    "ships only MNIST and digits); the synthetic and MNIST panels of the same figure row are available")


@dataclass(frozen=True, kw_only=True)
class SweepPreset:
    """One panel of the paper as a sweep: ``spec`` is None when the data are not available (``unavailable``
    says why). ``metric`` is the paper's y axis; ``grid_source`` says whether the grid is the paper's."""

    name: str
    figure: str
    title: str
    metric: str
    spec: SweepSpec | None
    unavailable: str | None = None
    grid_source: str = "the paper's grid"
    calibration: str = PRESET_CALIBRATION

    @property
    def available(self) -> bool:
        return self.spec is not None

    def describe(self, quick: bool = False) -> str:
        """The panel, or with ``quick`` the reduced variant named for what it runs (data set, D, K, runs) and
        what it is reduced from, never the paper's label alone (:func:`quick_name`)."""
        if self.spec is None:
            return f"{self.figure} {self.title}: unavailable - {self.unavailable}"
        if quick:
            return quick_name(self)
        return f"{self.figure} {self.title} ({self.grid_source}; {self.calibration})"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "figure": self.figure, "title": self.title, "metric": self.metric,
                "available": self.available, "unavailable": self.unavailable, "grid_source": self.grid_source,
                "calibration": self.calibration if self.available else None,
                "spec": self.spec.to_dict() if self.spec is not None else None}


def _pca_scenario(eps: float, delta: float, site_size: int) -> Scenario:
    return equal_sites_scenario(10, site_size, eps, delta, calibration="classic", neighbouring="as-published")


def _otd_scenario(eps: float, delta: float, site_size: int) -> Scenario:
    return equal_sites_scenario(5, site_size, eps, delta, calibration="classic", neighbouring="as-published")


def _build() -> dict[str, SweepPreset]:
    out: dict[str, SweepPreset] = {}
    pca_data = {"synthetic": PcaData(dataset="synthetic", k=50, dim=200), "mnist": PcaData(dataset="mnist", k=50)}
    names = {"synthetic": "Synthetic (D = 200, K = 50)", "mnist": "MNIST (D = 784, K = 50)",
             "covertype": "Covertype (D = 54, K = 10)"}
    # (panel letters per data set, parameter, grid, eps per data set, N_s per data set)
    rows = [
        ("abc", "eps", FIG2_EPS, {"synthetic": None, "mnist": None, "covertype": None}, "eps"),
        ("def", "ns", FIG2_NS, {"synthetic": 0.5, "mnist": 1.0, "covertype": 0.1}, "N_s"),
        ("ghi", "delta", FIG2_DELTA, {"synthetic": 1.0, "mnist": 2.0, "covertype": 0.5}, "delta"),
    ]
    for letters, parameter, grid, eps_of, label in rows:
        for letter, dataset in zip(letters, ("synthetic", "mnist", "covertype"), strict=True):
            name = f"fig2{letter}-{dataset}-{parameter}"
            site_size = 500 if dataset == "covertype" else 1000
            fixed = ["S = 10", "delta = 0.01" if parameter != "delta" else None,
                     f"N_s = {site_size}" if parameter != "ns" else None,
                     f"eps = {eps_of[dataset]:g}" if eps_of[dataset] is not None else None]
            title = f"{names[dataset]}: captured energy vs {label} ({', '.join(f for f in fixed if f)})"
            figure = f"Fig. 2({letter})"
            if dataset == "covertype":
                out[name] = SweepPreset(name=name, figure=figure, title=title, metric="captured_energy", spec=None,
                                        unavailable=COVERTYPE_REASON)
                continue
            scenario = _pca_scenario(eps_of[dataset] or 1.0, 0.01, site_size)
            spec = SweepSpec(family="pca", parameter=parameter, grid=grid, algorithms=default_algorithms("pca"),
                             scenario=scenario, data=pca_data[dataset], runs=PAPER_RUNS, seed=0)
            out[name] = SweepPreset(name=name, figure=figure, title=title, metric="captured_energy", spec=spec)
    panels = [("Fig. 3", "mog", "eps", OTD_EPS, "top row"), ("Fig. 3", "mog", "ns", OTD_NS, "bottom row"),
              ("Fig. 4", "stm", "eps", OTD_EPS, "top row"), ("Fig. 4", "stm", "ns", OTD_NS, "bottom row"),
              ("Fig. 5", "mog", "delta", OTD_DELTA, "top row"), ("Fig. 5", "stm", "delta", OTD_DELTA, "bottom row")]
    for figure, model, parameter, grid, row in panels:
        for dim, k in ((10, 5), (50, 10)):
            name = f"{figure.lower().replace('. ', '')}-{model}-d{dim}-{parameter}"
            label = {"eps": "eps", "ns": "N_s", "delta": "delta"}[parameter]
            fixed = ["S = 5", "delta = 0.01" if parameter != "delta" else None,
                     f"N_s = {OTD_SITE_SIZE:,}" if parameter != "ns" else None,
                     "eps = 1" if parameter != "eps" else None]
            extra = ", sigma^2 = 0.05" if model == "mog" else ""
            held = ", ".join(f for f in fixed if f)
            title = f"{model.upper()} (D = {dim}, K = {k}{extra}): q_comp vs {label} ({held})"
            spec = SweepSpec(family="otd", parameter=parameter, grid=grid, algorithms=default_algorithms("otd"),
                             scenario=_otd_scenario(1.0, 0.01, OTD_SITE_SIZE),
                             data=OtdData(model=model, dim=dim, k=k, sigma2=0.05, path="projected"), runs=PAPER_RUNS,
                             seed=0)
            out[name] = SweepPreset(name=name, figure=f"{figure} ({row})", title=title, metric="q_comp", spec=spec,
                                    grid_source="our grid (the paper's text does not give it)")
    for dim, k in ((10, 5), (50, 10)):
        name = f"authors-mog-d{dim}-eps"
        title = (f"MOG (D = {dim}, K = {k}, sigma^2 = 0.05), the authors' ground truth: q_comp of unit-length "
                 f"components vs eps (S = 5, delta = 0.01, N_s = {OTD_SITE_SIZE:,}; public norm bound)")
        spec = SweepSpec(family="otd", parameter="eps", grid=OTD_EPS, algorithms=default_algorithms("otd"),
                         scenario=_otd_scenario(1.0, 0.01, OTD_SITE_SIZE),
                         data=OtdData(model="mog", dim=dim, k=k, sigma2=0.05, path="projected", truth="authors"),
                         runs=PAPER_RUNS, seed=0)
        out[name] = SweepPreset(name=name, figure="Fig. 3 (top row), the authors' set-up", title=title,
                                metric="q_comp_normalised", spec=spec, grid_source=AUTHORS_SOURCE)
    out.update(_lda_presets())
    return out


def _lda_presets() -> dict[str, SweepPreset]:
    """Configurations 1-4 and capeLDA with its baselines over eps and over N_s on the issue-13 corpus."""
    out = {}
    for group, algorithms, what in (("configurations", LDA_CONFIGURATIONS, "paper 004's configurations 1-4"),
                                    ("cape", LDA_CAPE, "capeLDA, conventional, local and pooled")):
        for parameter, grid in (("eps", LDA_EPS), ("ns", LDA_NS)):
            name = f"lda-{group}-{parameter}"
            held = "N_s = 4,000" if parameter == "eps" else "eps = 30"
            label = "eps" if parameter == "eps" else "N_s"
            title = (f"LDA (K = 5, D = 100, alpha_0 = 1, 50 words per document): topic error of {what} vs {label} "
                     f"(S = 5, {held}, delta = 1e-6)")
            scenario = equal_sites_scenario(5, LDA_SITE_SIZE, LDA_EPS_FIXED, LDA_DELTA, calibration="analytic")
            spec = SweepSpec(family="lda", parameter=parameter, grid=grid, algorithms=algorithms, scenario=scenario,
                             data=LdaData(), runs=PAPER_RUNS, seed=0)
            out[name] = SweepPreset(name=name, figure=LDA_FIGURE, title=title, metric="topic_error", spec=spec,
                                    grid_source="our grid (paper 004 has no experiments)",
                                    calibration=LDA_CALIBRATION)
    return out


@lru_cache(maxsize=1)
def _presets() -> dict[str, SweepPreset]:
    return _build()


def presets() -> dict[str, SweepPreset]:
    """Every preset by name, available or not, in the paper's order."""
    return dict(_presets())


def preset_names(available_only: bool = False) -> list[str]:
    return [n for n, p in _presets().items() if p.available or not available_only]


def get_preset(name: str) -> SweepPreset:
    """The preset ``name``; an InputError lists the names when it is unknown (an unavailable preset is returned
    with ``spec`` None: callers say why with ``preset.unavailable``)."""
    table = _presets()
    if name not in table:
        raise InputError(f"unknown preset {name!r}; choose one of {', '.join(table)}", "preset")
    return table[name]


def quick_spec(spec: SweepSpec) -> SweepSpec:
    """A reduced sweep for a curve in seconds (:data:`QUICK`): at most 3 runs; PCA MNIST -> digits and synthetic
    D > 50 -> D = 50, K at most 10. The grid, the scenario and the algorithms are kept."""
    changes: dict[str, Any] = {"runs": min(spec.runs, 3)}
    reduced = spec.data.quick()  # the family's data settings say what a reduced variant runs
    if reduced is not None:
        changes["data"] = reduced
    return spec.replace(**changes)


def _what_runs(spec: SweepSpec) -> str:
    """Data set, D, K and runs of a spec: "digits 8x8, D = 64, K = 10, 3 runs"."""
    data = spec.data
    return f"{data.short_name()}, D = {data.dim}, K = {data.k}, {spec.runs} runs"


def quick_name(preset: SweepPreset, reduced: SweepSpec | None = None) -> str:
    """The reduced variant of ``preset`` (``reduced``, default :func:`quick_spec` of it) named for what it runs,
    with what it is reduced from, e.g. "digits 8x8, D = 64, K = 10, 3 runs (reduced from Fig. 2(b): MNIST,
    D = 784, K = 50, 10 runs)"."""
    reduced = quick_spec(preset.spec) if reduced is None else reduced
    return f"{_what_runs(reduced)} (reduced from {preset.figure}: {_what_runs(preset.spec)})"
