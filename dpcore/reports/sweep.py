"""A sweep (the Privacy-utility page's and ``python -m dpcore sweep``'s result, stored presets included) as a
:class:`~dpcore.reports.Report`: the spec, the summary, every view's guarantee at every value
(:meth:`dpcore.experiments.SweepResult.guarantees`), the figure, what it shows in computed sentences, and a script
that runs the same spec again with :func:`dpcore.experiments.run_sweep`."""

from __future__ import annotations

from ..experiments import SweepResult
from .common import Report, script_text

__all__ = ["sweep_report"]


def sweep_report(result: SweepResult, *, metric: str | None = None, sentences: tuple[str, ...] = ()) -> Report:
    """The report of a sweep (``sentences``: what the page's reading says, computed from the numbers)."""
    spec = result.spec
    summary = [s for s in sentences if s] + [f"{spec.describe()}; {result.status()}."]
    numbers = {"table": result.table[["value", "algorithm", "run", "metric", "result"]].to_dict(orient="list")}
    body = (f"spec = spec_from_json({spec.to_json()!r})\n"
            "result = run_sweep(spec, use_cache=False, workers=1)\n"
            "numbers = {'table': result.table[['value', 'algorithm', 'run', 'metric', 'result']].to_dict("
            "orient='list')}\n")
    script = script_text(f"a sweep ({spec.label})", "from dpcore.experiments import run_sweep\n"
                         "from dpcore.experiments.spec import spec_from_json\n", body)

    def figure():
        from ..experiments.figures import curve_figure  # plotly: dpcore's figures extra
        return curve_figure(result, metric) if metric else curve_figure(result)
    return Report(kind="sweep", title=f"Privacy-utility sweep: {spec.label}", summary=tuple(summary),
                  settings=spec.to_dict(), seed=spec.seed, results=result.summary.to_dict(orient="records"),
                  numbers=numbers, guarantees=result.guarantees().to_dict(orient="records"),
                  scenario=spec.scenario.to_dict(), figures=(figure,), notes=result.notes, script=script)
