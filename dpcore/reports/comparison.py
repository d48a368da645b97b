"""Any family's comparison (the single-run contract's :class:`~dpcore.family.Comparison`, docs/architecture.md "The
family contract") as a :class:`~dpcore.reports.Report`, written once for every family (:func:`family_report`): the
summary of every metric, the guarantee of every view (computed by the audit), the bits per value with their sentence,
the scenario, the notes and a bar chart of the family's headline metric, around what is the family's own - its
settings, its story sentences, its reproducing script (and the numbers it prints). :func:`comparison_report` gives
those for any comparison of the contract (its script repeats it with ``dpcore.compare``); the capePCA and capeAGN
pages' reports (:mod:`.pca`, :mod:`.otd`) give their own data forms. Nothing here branches on a family: it reads the
family's tables (``Family.algorithms``, ``Family.metrics``) and its headline metric
(:func:`dpcore.experiments.headline_metric`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..experiments import headline_metric
from ..family import Comparison, Family, families, guarantee_records, ring_sentence
from ..summary import MetricSummary
from .common import Report, plotly_objects, script_text

__all__ = ["bar_figure", "comparison_report", "family_report", "headline_sentence"]


def _data_fields(data: Any) -> dict[str, Any]:
    return {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}


def headline_sentence(family: Family, comparison: Comparison) -> str | None:
    """The family's CAPE algorithm against its non-private reference on the headline metric, from the numbers
    ("capePCA: captured energy 0.81 (non-private 0.83), mean of 4 runs."); None when either did not run."""
    metric = headline_metric(family)
    cape = next((name for name, entry in family.algorithms.items() if entry.title == family.cape), None)
    names = (cape, family.reference)
    if any(name not in comparison.algorithms for name in names):
        return None
    cape_s, ref_s = (comparison.summary(name, metric) for name in names)
    if cape_s.mean is None or ref_s.mean is None:
        return None
    label = family.metrics[metric].label
    return (f"{family.cape}: {label} {cape_s.mean:.4g} ({family.algorithms[family.reference].title} {ref_s.mean:.4g}),"
            f" mean of {cape_s.runs} run{'s' if cape_s.runs != 1 else ''}.")


def bar_figure(family: Family, rows: Sequence[MetricSummary], metric: str) -> Any:
    """The bar chart of every report of a comparison: the mean of ``metric`` per algorithm (``rows``, one summary
    each, in order; whiskers one std), titled and coloured from the family's tables."""
    go = plotly_objects()
    fig = go.Figure(go.Bar(x=[family.algorithms[s.algorithm].title for s in rows], y=[s.mean for s in rows],
                           error_y={"type": "data", "array": [s.std or 0 for s in rows]},
                           marker_color=[family.algorithms[s.algorithm].colour for s in rows]))
    fig.update_layout(title=f"{family.metrics[metric].label}: mean over runs (whiskers: one std)", height=420)
    return fig


def _figure(family: Family, comparison: Comparison) -> Any:
    metric = headline_metric(family)
    return bar_figure(family, [comparison.summary(name, metric) for name in comparison.algorithms], metric)


def _numbers(family: Family, comparison: Comparison) -> dict[str, list[list[float | None]]]:
    return {name: [[r.metric(m) for m in family.metrics] for r in comparison.records if r.algorithm == name]
            for name in comparison.algorithms}


def family_report(comparison: Comparison, *, kind: str, title: str, settings: dict[str, Any], story: Sequence[str],
                  closing: str, script: str, numbers: dict[str, Any] | None = None) -> Report:
    """The report of any family's ``comparison``: its rows (one per algorithm and metric of the family's table, with
    the bits per value), every view's guarantee, the scenario, the notes and the bar chart, from the comparison; the
    summary is the family's ``story`` sentences (computed from the numbers), the bits-per-value sentence when a ring
    was used, and ``closing`` (the data and runs in words). ``kind``, ``title``, ``settings`` and ``script`` are the
    family's; ``numbers`` what its script prints (None: every run's metrics by algorithm, a failed run's as None)."""
    family = families()[comparison.family]
    titles = {name: entry.title for name, entry in family.algorithms.items()}
    results = [{"algorithm": titles[s.algorithm], "metric": family.metrics[s.metric].label, "mean": s.mean,
                "std": s.std, "runs": s.runs, "failed": s.failed,
                "bits_per_value": comparison.bits_per_value.get(s.algorithm)} for s in comparison.summaries]
    summary = [s for s in (*story, ring_sentence(comparison.bits_per_value, titles)) if s]
    summary.append(closing)
    return Report(kind=kind, title=title, summary=tuple(summary), settings=settings, seed=comparison.seed,
                  results=results, numbers=_numbers(family, comparison) if numbers is None else numbers,
                  guarantees=guarantee_records(comparison.guarantees), scenario=comparison.scenario.to_dict(),
                  figures=(lambda: _figure(family, comparison),), notes=comparison.notes, script=script)


def comparison_report(comparison: Comparison, data: Any) -> Report:
    """The report of ``comparison``, run on the data settings ``data`` (a dataclass of the family's data type,
    ``Family.sweep.data``; its fields are the script's arguments)."""
    family = families()[comparison.family]
    kind = type(data)
    fields = _data_fields(data)
    settings = {"algorithm_family": family.name, "data": {"type": kind.__name__, **fields},
                "algorithms": list(comparison.algorithms), "runs": comparison.runs}
    scenario = comparison.scenario
    body = (f"scenario = scenario_from_dict(json.loads({scenario.to_json(None)!r}))\n"
            f"data = {kind.__name__}(**{fields!r})\n"
            f"comparison = compare({family.name!r}, scenario, data, {tuple(comparison.algorithms)!r}, "
            f"runs={comparison.runs}, seed={comparison.seed}, workers=1)\n"
            "numbers = {name: [[r.metric(m) for m in METRICS] for r in comparison.records if r.algorithm == name] "
            "for name in comparison.algorithms}\n")
    imports = (f"from dpcore import compare\nfrom dpcore.family import families\nfrom dpcore.scenario import "
               f"scenario_from_dict\nfrom {kind.__module__} import "
               f"{kind.__name__}\n\nMETRICS = families()[{family.name!r}].metrics\n")
    shown = ", ".join(family.algorithms[n].title for n in comparison.algorithms)
    return family_report(comparison, kind=f"{family.cape} comparison", title=f"{family.cape}: {shown}",
                         settings=settings, story=[s for s in (headline_sentence(family, comparison),) if s],
                         closing=f"{family.label}; {scenario.n_sites} sites, N = {scenario.total_n:,}; "
                         f"{comparison.runs} runs, seed {comparison.seed}.",
                         script=script_text(f"a {family.cape} comparison", imports, body))
