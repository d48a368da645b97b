"""A capeLDA curve (the Topic models page's result) as a :class:`~dpcore.reports.Report`: settings, every view's
guarantee at every eps (:func:`dpcore.lda.guarantees.curve_guarantees`), the curve, and a script that repeats
:func:`dpcore.lda.curves.eps_curve` on the same synthetic corpus, scenario and seed (text corpora: the script says
what it needs, and stops)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..lda import ALGORITHMS, LdaSpec
from ..lda.curves import LdaCurve
from ..lda.guarantees import curve_guarantees
from .common import Report, plotly_objects, script_text

__all__ = ["lda_report"]


def _numbers(curve: LdaCurve) -> dict[str, list]:
    out: dict[str, list] = {}
    for row in curve.records.itertuples():
        out.setdefault(f"{row.algorithm}@{row.eps:g}", []).append(
            None if row.topic_error != row.topic_error else float(row.topic_error))
    return out


def _figure(curve: LdaCurve) -> Any:
    go = plotly_objects()
    fig = go.Figure()
    for name in curve.algorithms:
        rows = curve.summary[curve.summary["algorithm"] == name]
        fig.add_trace(go.Scatter(x=rows["eps"], y=rows["mean"], mode="lines+markers", name=ALGORITHMS[name].title,
                                 line={"color": ALGORITHMS[name].colour}))
    fig.update_xaxes(type="log", title="eps")
    fig.update_yaxes(title="topic error (mean over runs)")
    fig.update_layout(title="Topic error against eps", height=420)
    return fig


def lda_report(curve: LdaCurve, *, spec: LdaSpec | None, source: str, sentence: str = "") -> Report:
    """The report of one topic-error curve (``spec``: the synthetic model, or None for a text corpus described by
    ``source``)."""
    scenario = curve.scenario
    settings: dict[str, Any] = {"algorithm_family": "lda", "data": source,
                                "model": None if spec is None else asdict(spec),
                                "settings": None if curve.settings is None else asdict(curve.settings),
                                "algorithms": list(curve.algorithms), "grid": list(curve.grid), "runs": curve.runs}
    records = []
    for eps in curve.grid:
        for name, views in curve_guarantees(curve, eps).items():
            records += [{"algorithm": name, "eps": eps, **g.to_dict(), "label": g.label()} for g in views]
    summary = [x for x in (sentence,) if x]
    grid = ", ".join(f"{e:g}" for e in curve.grid)
    summary.append(f"{scenario.n_sites} sites, N = {scenario.total_n:,} documents; eps {grid}; {curve.runs} runs, "
                   f"seed {curve.seed}; data: {source}.")
    if spec is not None:
        body = (f"scenario = scenario_from_dict(json.loads({scenario.to_json(None)!r}))\n"
                f"spec = LdaSpec(**{asdict(spec)!r})\n"
                f"settings = LdaSettings(**{asdict(curve.settings)!r})\n"
                f"curve = eps_curve(scenario, {list(curve.algorithms)!r}, {list(curve.grid)!r}, spec=spec, "
                f"runs={curve.runs}, seed={curve.seed}, settings=settings, workers=1)\n"
                "numbers = {}\nfor row in curve.records.itertuples():\n"
                "    numbers.setdefault(f'{row.algorithm}@{row.eps:g}', []).append(\n"
                "        None if row.topic_error != row.topic_error else float(row.topic_error))\n")
    else:
        body = ("numbers = {}\nsys.exit('this curve ran on a text corpus (" + source.replace("'", "") + "): load it "
                "with dpcore.data.parse_text_corpus and dpcore.lda.corpus_lda_problem, then call eps_curve with the "
                "settings in the report')\n")
    script = script_text("a capeLDA curve", "from dpcore.lda import LdaSettings, LdaSpec\nfrom dpcore.lda.curves "
                         "import eps_curve\nfrom dpcore.scenario import scenario_from_dict\n", body)
    rows = curve.summary.to_dict(orient="records")
    return Report(kind="capeLDA curve", title=f"Topic models on {source}", summary=tuple(summary), settings=settings,
                  seed=curve.seed, results=rows, numbers=_numbers(curve), guarantees=records,
                  scenario=scenario.to_dict(), figures=(lambda: _figure(curve),), notes=curve.notes, script=script)
