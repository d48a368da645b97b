"""What a sweep's figure says, in one sentence each (docs/experiments.md, "Reading a figure").

* :func:`figure_sentence`: what the user is looking at, with the grid point where CAPE's advantage is largest and
  the share of the conventional scheme's gap to the non-private result that CAPE closes there,
  ``closed = (q_CAPE - q_conv) / (q_nonprivate - q_conv)`` (signs follow the metric: lower is better for
  q_comp and the topic error).
* :func:`meeting_points` and :func:`meeting_sentence`: where CAPE stops helping. CAPE and the conventional scheme
  see common random numbers within a run, so their **paired** differences d_r = q_CAPE,r - q_conv,r give a
  95% t-interval for the mean difference; the curves *meet* at a grid point when that interval contains 0 (nothing
  else: a sentence never says they meet where the figure's own interval excludes 0). Where the interval excludes 0
  but CAPE's mean advantage is below :data:`~dpcore.summary.MEET_SHARE` of the figure's range, they *come close*
  without meeting, and the sentence says so with the interval. Why is read off the same numbers: the design's gain
  G at that point (near 1: correlated noise removes nothing, e.g. one dominant site or S - 1 colluders), and where
  CAPE and conv sit between the no-information reference (random vectors or topics; for PCA the worst mean on the
  figure: noise swamps the signal for everyone) and the non-private result (noise is negligible for everyone).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import stdtrit  # the t quantile scipy.stats.t.ppf computes, without importing scipy.stats (1-3 s)

from ..summary import MEET_SHARE, shown_share
from .families import FAMILIES, algorithm_titles
from .families import metric as metric_of
from .results import SweepResult
from .spec import PARAMETER_LABELS, SWEPT, PcaData

__all__ = ["STOP_CASES", "MeetingPoint", "StopCase", "figure_sentence", "gain_sentence", "gap_closed",
           "meeting_points", "meeting_sentence", "reference_name"]

VISIBLE_COST = 0.2
"""The headline point is one where privacy visibly costs the conventional scheme: it lies at least this share of
the way from the non-private result to the no-information reference (issue 11's "large" effect)."""
NO_GAIN = 1.2
"""A design gain G below this removes too little noise to matter (G = 1: the conventional scheme's noise)."""
SWAMPED = 0.25
"""CAPE within this share of the range from the worst result on the figure: the noise swamps the signal."""
NEGLIGIBLE = 0.75
"""conv beyond this share of the range towards the non-private result: noise barely matters for anyone."""

_REASON_ORDER = ("no-gain", "swamped", "negligible", "spread")


def reference_name(family: str) -> str:
    """The non-private algorithm of a family (the ceiling of every curve)."""
    return FAMILIES[family].reference


def _no_information(result: SweepResult, metric: str) -> np.ndarray:
    """Per grid point, the result that carries no information: the random reference where the sweep has one
    (random vectors or topics), else the worst mean anywhere on the figure (PCA: the private methods at the
    smallest eps, close to a random subspace)."""
    floor = FAMILIES[result.spec.family].no_information
    if floor is not None and floor in result.spec.algorithms:
        return _means(result, floor, metric)
    values = result.summary[result.summary["metric"] == metric]["mean"].to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    worst = (values.min() if metric_of(metric).higher_is_better else values.max()) if values.size else math.nan
    return np.full(len(result.spec.grid), worst)


def _means(result: SweepResult, algorithm: str, metric: str) -> np.ndarray:
    return result.summary_of(algorithm, metric)["mean"].to_numpy(dtype=float)


def _has(result: SweepResult, *algorithms: str) -> bool:
    return all(a in result.spec.algorithms for a in algorithms)


def gap_closed(result: SweepResult, metric: str) -> np.ndarray:
    """Per grid point, the share of the conventional scheme's gap to the non-private result that CAPE closes:
    (q_CAPE - q_conv) / (q_nonprivate - q_conv); NaN where the gap is zero or a mean is missing."""
    ref = reference_name(result.spec.family)
    cape, conv, top = (_means(result, a, metric) for a in ("cape", "conv", ref))
    gap = top - conv
    with np.errstate(divide="ignore", invalid="ignore"):
        closed = (cape - conv) / gap
    return np.where(np.abs(gap) > 0, closed, np.nan)


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def figure_sentence(result: SweepResult, metric: str) -> str:
    """One sentence: what the figure shows and, when it has CAPE, conv and the non-private curve, where CAPE's
    advantage is largest (the share of the gap it closes there)."""
    spec = result.spec
    titles = algorithm_titles(spec.family)
    better = "higher" if metric_of(metric).higher_is_better else "lower"
    what = (f"Each curve is one algorithm's mean {metric_of(metric).words} ({better} is better) over "
            f"{result.runs_done} runs against {SWEPT[spec.parameter].words}, with its 95% interval shaded")
    ref = reference_name(spec.family)
    if not _has(result, "cape", "conv", ref):
        return what + "."
    closed = gap_closed(result, metric)
    cape_m, conv_m, top_m = (_means(result, a, metric) for a in ("cape", "conv", ref))
    floor = _no_information(result, metric)
    sign = 1.0 if metric_of(metric).higher_is_better else -1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        conv_loss = (top_m - conv_m) / (top_m - floor)  # share of the way from non-private to no information
    useful = (conv_loss >= VISIBLE_COST) & (sign * (cape_m - floor) > 0) & np.isfinite(closed)
    if not useful.any():
        useful = np.isfinite(closed)
    if not useful.any():
        return what + "."
    i = int(np.nanargmax(np.where(useful, closed, -np.inf)))
    value = spec.grid[i]
    cape, conv, top = (_means(result, a, metric)[i] for a in ("cape", "conv", ref))
    share = shown_share(cape, conv, top)  # of the three numbers printed (dpcore.summary.shown_share)
    return (f"{what}. At {PARAMETER_LABELS[spec.parameter]} = {value:g}, {titles['cape']} reaches {_fmt(cape)}, "
            f"the conventional scheme (each site adds its own noise) {_fmt(conv)} and the non-private result "
            f"{_fmt(top)}: correlated noise closes {100 * share:.0f}% of the gap that privacy costs the "
            "conventional scheme.")


@dataclass(frozen=True, kw_only=True)
class MeetingPoint:
    """A grid point where CAPE and the conventional scheme meet (``meets``: the 95% interval of their paired
    difference contains 0) or come close without meeting (the interval excludes 0, the advantage is below
    :data:`~dpcore.summary.MEET_SHARE` of the figure's range), with why (``reason``: ``no-gain``, ``swamped``,
    ``negligible`` or ``spread``: within the run-to-run spread, or for a close point a small difference) and the
    numbers the sentence uses."""

    value: float
    cape: float
    conv: float
    difference: float
    half_width: float
    gain: float
    reason: str
    meets: bool = True


def _paired(result: SweepResult, metric: str, value: float) -> tuple[float, float]:
    """Mean and 95% half-width of the paired difference q_CAPE - q_conv over the runs both finished."""
    t = result.table
    rows = t[(t["value"] == float(value)) & (t["metric"] == metric) & (t["status"] == "ok")]
    cape = rows[rows["algorithm"] == "cape"].set_index("run")["result"]
    conv = rows[rows["algorithm"] == "conv"].set_index("run")["result"]
    d = (cape - conv).dropna().to_numpy(dtype=float)
    if d.size == 0:
        return math.nan, math.nan
    if d.size == 1:
        return float(d[0]), math.nan
    half = float(stdtrit(d.size - 1, 0.975)) * float(d.std(ddof=1)) / math.sqrt(d.size)
    return float(d.mean()), half


def meeting_points(result: SweepResult, metric: str) -> list[MeetingPoint]:
    """The grid points where CAPE and conv meet (module docstring), each with its reason."""
    spec = result.spec
    ref = reference_name(spec.family)
    if not _has(result, "cape", "conv", ref):
        return []
    higher = metric_of(metric).higher_is_better
    floor = _no_information(result, metric)
    cape_m, conv_m, top_m = (_means(result, a, metric) for a in ("cape", "conv", ref))
    gains = result.gains.groupby("value")["gain"].min()  # OTD / LDA: the smaller of the two stages' gains
    out = []
    for i, value in enumerate(spec.grid):
        span = abs(top_m[i] - floor[i])
        if not (np.isfinite(cape_m[i]) and np.isfinite(conv_m[i]) and span > 0):
            continue
        diff, half = _paired(result, metric, value)
        advantage = diff if higher else -diff
        covered = math.isnan(half) or abs(diff) <= half  # the 95% interval contains 0: the curves meet
        if not (covered or advantage < MEET_SHARE * span):
            continue
        toward = 1.0 if higher else -1.0  # position 0: no information, 1: the non-private result
        position = {a: toward * (m - floor[i]) / span for a, m in (("cape", cape_m[i]), ("conv", conv_m[i]))}
        gain = float(gains.get(float(value), math.nan))
        if gain < NO_GAIN:
            reason = "no-gain"
        elif position["cape"] < SWAMPED:
            reason = "swamped"
        elif position["conv"] > NEGLIGIBLE:
            reason = "negligible"
        else:
            reason = "spread"
        out.append(MeetingPoint(value=float(value), cape=float(cape_m[i]), conv=float(conv_m[i]), difference=diff,
                                half_width=half, gain=gain, reason=reason, meets=covered))
    return out


def _why(point: MeetingPoint, cape_title: str) -> str:
    """Why the curves meet (or come close) at ``point``, from its reason."""
    return {
        "no-gain": (f"The design's gain G is only {point.gain:.2f} there: the aggregate carries almost as much noise "
                    "variance as if each site added its own (one site holds most of the data, or the design must "
                    "resist S - 1 colluders), so correlated noise has nothing to cancel."),
        "swamped": (f"Even with G = {point.gain:.3g} times less noise variance than the conventional scheme, the "
                    f"noise swamps the signal: {cape_title} does little or no better than a result that carries no "
                    "information (random directions). "
                    "Too small an eps or too few samples per site: every private method fails alike."),
        "negligible": ("The noise is already small for every method: the conventional scheme is close to the "
                       "non-private result, so there is little left for correlated noise to win."),
        "spread": ("The difference is within the run-to-run spread at this number of runs." if point.meets else
                   "The difference is real over these runs but small against the figure's range."),
    }[point.reason]


def meeting_sentence(result: SweepResult, metric: str) -> str:
    """Where the CAPE and conventional curves meet on this figure and why, in words (or that they do not): "meet" only
    where the 95% interval of the paired difference contains 0; where it excludes 0 but the advantage is small, that
    they come close without meeting, with the interval."""
    spec = result.spec
    titles = algorithm_titles(spec.family)
    points = meeting_points(result, metric)
    label = PARAMETER_LABELS[spec.parameter]
    meet = [p for p in points if p.meets]
    close = [p for p in points if not p.meets]
    if not points:
        return (f"{titles['cape']} stays clearly ahead of the conventional scheme at every {label} on this figure "
                "(the 95% interval of their paired difference excludes 0 everywhere).")
    first = min(meet or close, key=lambda p: _REASON_ORDER.index(p.reason))  # the most telling reason first
    ci = "" if math.isnan(first.half_width) else f" ± {_fmt(first.half_width)}"
    at = (f"At {label} = {first.value:g}, {titles['cape']} {_fmt(first.cape)} against conv {_fmt(first.conv)} "
          f"(paired difference {_fmt(first.difference)}{ci}, 95% interval")
    near = ", ".join(f"{p.value:g}" for p in close)
    share = f"{100 * MEET_SHARE:.0f}%"
    if meet:
        head = (f"The curves meet at {label} = {', '.join(f'{p.value:g}' for p in meet)} (the 95% interval of the "
                f"paired difference contains 0 there). {at}).")
        if close:
            head += (f" At {label} = {near} they come within {share} of the figure's range but do not meet (the "
                     "interval excludes 0).")
    else:
        head = (f"The curves do not meet on this figure: the 95% interval of their paired difference excludes 0 at "
                f"every {label}. At {label} = {near} they come within {share} of the figure's range without meeting. "
                f"{at}, which excludes 0).")
    return f"{head} {_why(first, titles['cape'])}"


def gain_sentence(result: SweepResult) -> str | None:
    """When the CAPE design's gain G is the same at every grid point (to 0.1%, per stage), one sentence saying so
    (a chart of a flat line adds nothing); None when G changes along the grid (then draw it)."""
    gains = result.gains
    parts = []
    for design in dict.fromkeys(gains["design"]):
        g = gains.loc[gains["design"] == design, "gain"].to_numpy(dtype=float)
        if g.size == 0 or not np.all(np.isfinite(g)) or g.max() - g.min() > 1e-3 * abs(g.max()):
            return None
        parts.append(f"{design}: G = {g[0]:.4g}" if len(dict.fromkeys(gains["design"])) > 1 else f"G = {g[0]:.4g}")
    label = PARAMETER_LABELS[result.spec.parameter]
    return (f"The CAPE design's gain is the same at every {label} ({', '.join(parts)}): the aggregate carries G times "
            "less noise variance than if each site added its own noise, whatever the value on the x axis.")


@dataclass(frozen=True, kw_only=True)
class StopCase:
    """A setting where the CAPE and conventional curves meet: a stored preset (``preset``), or a sweep of the
    user's scenario (``parameter``, ``data``, ``algorithms``, ``runs``; the grid is the parameter's default for
    the scenario). The figure's own numbers say why (:func:`meeting_sentence`)."""

    label: str
    preset: str | None = None
    parameter: str | None = None
    data: PcaData | None = None
    algorithms: tuple[str, ...] = ()
    runs: int = 0


STOP_CASES: dict[str, StopCase] = {
    "eps": StopCase(label="too small ε (Fig. 2(b), MNIST: ε = 0.001 to 0.1)", preset="fig2b-mnist-eps"),
    # Fig. 4's STM at D = 50 meets at N_s = 1000 in every realisation tried (the stored streams, the former ones and
    # three others); Fig. 3's MOG at D = 50 met there in one of five (CAPE stays significantly ahead, both swamped).
    "ns": StopCase(label="too few samples per site (Fig. 4, STM D = 50: N_s = 1000)", preset="fig4-stm-d50-ns"),
    "c": StopCase(label="S - 1 colluders (your scenario, c = 0 to S - 1; runs live, seconds)",
                  parameter="c", data=PcaData(dataset="synthetic", k=10, dim=50),
                  algorithms=("cape", "conv", "nonpriv"), runs=5),
}
"""The cases the Privacy-utility page offers behind "Show where CAPE stops helping" (docs/dashboard.md)."""
