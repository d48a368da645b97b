"""A capeAGN comparison as a :class:`~dpcore.reports.Report` (the capeAGN page's and ``python -m dpcore otd``'s
result): settings, every view's guarantee (:func:`dpcore.agn.guarantees.comparison_guarantees`), the bits per value
of each algorithm (``bits_per_value`` of the results, None: float64 or no finished run; a summary sentence when one
used a ring), a bar chart, and a script that repeats :func:`dpcore.agn.compare_algorithms` on the same synthetic
model, scenario and seed (uploaded data: the script says which file and settings it needs, and stops)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..agn import ALGORITHMS, FAMILY, METRICS, OtdComparison, SyntheticSpec
from ..agn.guarantees import comparison_guarantees
from ..family import guarantee_records, ring_sentence
from .common import Report, script_text
from .comparison import bar_figure

__all__ = ["otd_report"]


def _numbers(result: OtdComparison) -> dict[str, list]:
    out: dict[str, list] = {name: [] for name in result.algorithms}
    for r in result.records:
        out[r.algorithm].append(None if r.error else [r.metrics.get(m) for m in METRICS])
    return out


def _figure(result: OtdComparison) -> Any:
    return bar_figure(FAMILY, [result.summary(n, "q_comp") for n in result.algorithms], "q_comp")


def otd_report(result: OtdComparison, *, spec: SyntheticSpec | None, source: str, sentence: str = "") -> Report:
    """The report of one capeAGN comparison (``spec``: the synthetic model it ran on, or None for uploaded data
    described by ``source``; ``sentence``: the page's computed sentence, if any)."""
    scenario = result.scenario
    settings = {"algorithm_family": "otd", "data": source, "model": None if spec is None else asdict(spec),
                "settings": asdict(result.settings), "algorithms": list(result.algorithms), "runs": result.runs,
                "path": result.path.path}
    bits = result.bits_per_value()
    rows = [{"algorithm": ALGORITHMS[s.algorithm].title, "metric": METRICS[s.metric].label, "mean": s.mean,
             "std": s.std, "runs": s.runs, "failed": s.failed, "bits_per_value": bits.get(s.algorithm)}
            for s in result.summaries]
    best = result.summary("cape") if "cape" in result.algorithms else None
    summary = [x for x in (sentence,) if x]
    if best is not None and best.mean is not None:
        summary.append(f"capeAGN's mean {METRICS['q_comp'].words} over {best.runs} runs is {best.mean:.3g}"
                       + (f" (conventional scheme: {result.summary('conv', 'q_comp').mean:.3g})"
                          if "conv" in result.algorithms and result.summary("conv").mean is not None else "") + ".")
    summary.append(f"{scenario.n_sites} sites, N = {scenario.total_n:,}; {result.runs} runs, seed {result.seed}; "
                   f"data: {source}.")
    ring = ring_sentence(bits, {name: entry.title for name, entry in ALGORITHMS.items()})
    if ring:
        summary.append(ring)
    if spec is not None:
        body = (f"scenario = scenario_from_dict(json.loads({scenario.to_json(None)!r}))\n"
                f"spec = SyntheticSpec(**{asdict(spec)!r})\n"
                f"settings = OtdSettings(**{asdict(result.settings)!r})\n"
                f"result = compare_algorithms(scenario, {list(result.algorithms)!r}, spec=spec, runs={result.runs}, "
                f"seed={result.seed}, settings=settings, workers=1)\n"
                "numbers = {name: [] for name in result.algorithms}\n"
                "for r in result.records:\n"
                "    numbers[r.algorithm].append(None if r.error else [r.metrics.get(m) for m in METRICS])\n")
    else:
        body = ("numbers = {}\nsys.exit('this comparison ran on uploaded data (" + source.replace("'", "") +
                "): load it with dpcore.agn.upload_problem and call compare_algorithms with the settings in the "
                "report')\n")
    script = script_text("a capeAGN comparison", "from dpcore.agn import METRICS, OtdSettings, SyntheticSpec, "
                         "compare_algorithms\nfrom dpcore.scenario import scenario_from_dict\n", body)
    return Report(kind="capeAGN comparison", title=f"capeAGN on {source}", summary=tuple(summary), settings=settings,
                  seed=result.seed, results=rows, numbers=_numbers(result),
                  guarantees=guarantee_records(comparison_guarantees(result)), scenario=scenario.to_dict(),
                  figures=(lambda: _figure(result),), notes=result.notes, script=script)
