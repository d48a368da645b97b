"""A capeAGN comparison (the capeAGN page's result) as a :class:`~dpcore.reports.Report`: the one report of a
comparison (:func:`dpcore.reports.comparison.family_report`: rows, every view's guarantee, the bits per value, the bar
chart) of the contract's :class:`~dpcore.family.Comparison` (:func:`dpcore.agn.contract.otd_comparison`), with
capeAGN's own parts - the settings, its story sentences, and a script that repeats
:func:`dpcore.agn.compare_algorithms` on the same synthetic model, scenario and seed (uploaded data: the script says
which file and settings it needs, and stops)."""

from __future__ import annotations

from dataclasses import asdict

from ..agn import METRICS, OtdComparison, SyntheticSpec
from ..agn.contract import otd_comparison
from .common import Report, script_text
from .comparison import family_report

__all__ = ["otd_report"]


def _numbers(result: OtdComparison) -> dict[str, list]:
    out: dict[str, list] = {name: [] for name in result.algorithms}
    for r in result.records:
        out[r.algorithm].append(None if r.error else [r.metrics.get(m) for m in METRICS])
    return out


def otd_report(result: OtdComparison, *, spec: SyntheticSpec | None, source: str, sentence: str = "") -> Report:
    """The report of one capeAGN comparison (``spec``: the synthetic model it ran on, or None for uploaded data
    described by ``source``; ``sentence``: the page's computed sentence, if any)."""
    scenario = result.scenario
    settings = {"algorithm_family": "otd", "data": source, "model": None if spec is None else asdict(spec),
                "settings": asdict(result.settings), "algorithms": list(result.algorithms), "runs": result.runs,
                "path": result.path.path}
    best = result.summary("cape") if "cape" in result.algorithms else None
    story = [x for x in (sentence,) if x]
    if best is not None and best.mean is not None:
        story.append(f"capeAGN's mean {METRICS['q_comp'].words} over {best.runs} runs is {best.mean:.3g}"
                     + (f" (conventional scheme: {result.summary('conv', 'q_comp').mean:.3g})"
                        if "conv" in result.algorithms and result.summary("conv").mean is not None else "") + ".")
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
    return family_report(otd_comparison(result), kind="capeAGN comparison", title=f"capeAGN on {source}",
                         settings=settings, story=story, closing=f"{scenario.n_sites} sites, N = {scenario.total_n:,}; "
                         f"{result.runs} runs, seed {result.seed}; data: {source}.", script=script,
                         numbers=_numbers(result))
